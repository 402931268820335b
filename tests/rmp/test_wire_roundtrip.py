"""Every valid packet survives encode then decode unchanged (RR-2100 §4 as docs/rmp-wire.md
lays it out), and the encoding is canonical."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmp import wire
from rmp.wire import (
    MAX_OPTIONS,
    Confirm,
    Data,
    Image,
    Join,
    OptionType,
    Retransmit,
    RmpPacket,
    decode,
    encode,
)
from tests.rmp.strategies import SHAPES, packets, single_option_packets


@pytest.mark.parametrize("name", sorted(single_option_packets))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_each_option_type_alone_round_trips(name: str, data: st.DataObject) -> None:
    packet = data.draw(single_option_packets[name])
    wire = encode(packet)
    assert len(wire) == packet.wire_size
    assert len(wire) % 4 == len(packet.data or b"") % 4  # options end on 32-bit boundaries
    assert decode(wire) == packet


def test_the_single_option_strategies_cover_every_option_type() -> None:
    classes = {
        "Join",
        "Nack",
        "NackRange",
        "Confirm",
        "Remind",
        "Image",
        "Data",
        "Batch",
        "Piece",
        "Intro",
        "Retransmit",
    }
    assert set(single_option_packets) == classes
    # Source is a packet field (RmpPacket.source), not an option record: test_wire_source.py.
    assert {getattr(wire, name).TYPE for name in classes} == set(OptionType) - {OptionType.SOURCE}


@settings(max_examples=400, deadline=None)
@given(packets())
def test_random_combinations_round_trip(packet: RmpPacket) -> None:
    wire = encode(packet)
    assert len(wire) == packet.wire_size
    decoded = decode(wire)
    assert decoded == packet
    assert encode(decoded) == wire
    assert decoded.p_bit == bool(wire[1] & 0x80)


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_shape_round_trips(shape: str, data: st.DataObject) -> None:
    packet = data.draw(packets(shapes=(shape,)))
    assert decode(encode(packet)) == packet


@settings(max_examples=100, deadline=None)
@given(packets(shapes=("data", "image")), st.integers(0, 0xFFFF_FFFF))
def test_a_retransmission_carries_the_original_datagram_verbatim(
    original: RmpPacket, source: int
) -> None:
    """§2.7: the receiver extracts the original packet; its bytes are embedded unchanged."""
    wrapper = RmpPacket(seq=9, timestamp=9, options=(Retransmit(source, original),))
    wire = encode(wrapper)
    assert wire[16 : 16 + len(encode(original))] == encode(original)
    (option,) = decode(wire).options
    assert isinstance(option, Retransmit)
    assert option.source == source and option.packet == original
    assert option.length == len(encode(original))


def test_a_join_answer_carries_the_whole_station_list_at_the_option_limit() -> None:
    """§2.8: the answer lists the last sequence number of every station: one Confirm each."""
    stations = tuple(Confirm(seq=i, source=0x0A00_0000 + i) for i in range(MAX_OPTIONS - 1))
    answer = RmpPacket(seq=3, timestamp=4, options=(Join(2, answer=True), *stations))
    decoded = decode(encode(answer))
    assert decoded == answer
    assert [o for o in decoded.options if isinstance(o, Confirm)] == list(stations)


def test_empty_data_part_is_kept_apart_from_no_data_part() -> None:
    empty = RmpPacket(seq=1, timestamp=0, options=(Data(),), data=b"")
    control = RmpPacket(seq=1, timestamp=0, options=(Confirm(1, 2),))
    assert decode(encode(empty)).data == b""
    assert decode(encode(control)).data is None
    image = RmpPacket(seq=1, timestamp=0, options=(Image(last=True),), data=b"", s_bit=True)
    assert decode(encode(image)) == image


def test_decode_accepts_bytearray_and_memoryview() -> None:
    wire = encode(RmpPacket(seq=1, timestamp=0, options=(Data(),), data=b"abc"))
    assert decode(bytearray(wire)) == decode(memoryview(wire)) == decode(wire)
    assert isinstance(decode(memoryview(wire)).data, bytes)
