"""Several payloads in one data packet under a backlog (our extension, rmp/batch.py, issue 18):
the framing, its refusals, and a core that batches what is queued and delivers it in order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmp.batch import MAX_BATCH_BYTES, batch_problem, pack_batch, split_batch
from rmp.wire import (
    HEADER_SIZE,
    Batch,
    Data,
    OptionType,
    RmpDecodeError,
    RmpPacket,
    decode,
    encode,
)
from tests.rmp.core_harness import J, ready_node


@given(st.lists(st.binary(max_size=200), min_size=2, max_size=40))
def test_a_batch_splits_into_the_payloads_packed(payloads: list[bytes]) -> None:
    data = pack_batch(payloads)
    assert batch_problem(data, len(payloads)) is None
    assert split_batch(data, len(payloads)) == payloads
    packet = RmpPacket(seq=1, timestamp=2, options=(Batch(len(payloads)),), data=data)
    assert decode(encode(packet)) == packet


@pytest.mark.parametrize(
    ("count", "data", "problem"),
    [
        (1, pack_batch([b"a"]), "not 2..255"),
        (3, pack_batch([b"a", b"b"]), "ends after 2"),
        (2, pack_batch([b"a", b"b"]) + b"x", "1 bytes follow"),
        (2, pack_batch([b"a", b"bcd"])[:-1], "runs 1 bytes past"),
    ],
)
def test_a_malformed_batch_is_refused_on_decoding_and_building(
    count: int, data: bytes, problem: str
) -> None:
    good = encode(RmpPacket(seq=1, timestamp=2, options=(Data(),), data=data))
    lead = bytes([0x80 | OptionType.BATCH, 0, count >> 8, count & 0xFF])
    forged = good[:HEADER_SIZE] + lead + good[HEADER_SIZE + 4 :]  # the Data option's place
    with pytest.raises(RmpDecodeError, match=problem):
        decode(forged)
    with pytest.raises(ValueError, match=problem):
        RmpPacket(seq=1, timestamp=2, options=(Batch(count),), data=data)


def test_a_backlog_goes_several_strokes_a_packet_and_is_delivered_in_order() -> None:
    sender = ready_node(params={"rate": 10.0})
    strokes = [f"stroke {k}".encode() * 8 for k in range(40)]
    for stroke in strokes:
        sender.send(stroke, 6.0)
    sender.run_until(9.0)
    sent = [s.packet for s in sender.data_sent()]
    assert isinstance(sent[0].options[-1], Data)  # the first went at once, alone
    batches = [p for p in sent if isinstance(p.options[-1], Batch)]
    assert batches and all(len(p.data or b"") <= MAX_BATCH_BYTES for p in batches)
    assert len(sent) < len(strokes) / 4  # ~75 bytes each: about 15 a packet
    # Our own deliveries, and a receiver's, in the order drawn, each under its own key.
    assert sender.delivered_payloads() == strokes
    receiver = ready_node(J)
    for packet in sent:
        receiver.receive(packet, 9.0)
    deliveries = [d for d in receiver.deliveries() if d.origin == sender.core.member_id]
    assert [d.payload for d in deliveries] == strokes
    keys = [d.order_key for d in deliveries]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_a_stroke_drawn_alone_still_goes_as_data() -> None:
    node = ready_node(params={"rate": 10.0})
    node.send(b"one", 6.0)
    node.send(b"two", 7.0)  # the pace allowed it at once: nothing queued behind it
    assert [type(s.packet.options[-1]) for s in node.data_sent()] == [Data, Data]


def test_with_batch_off_a_backlog_goes_one_stroke_a_packet() -> None:
    node = ready_node(params={"rate": 10.0, "batch": False})
    for k in range(5):
        node.send(f"s{k}".encode(), 6.0)
    node.run_until(7.0)
    assert [type(s.packet.options[-1]) for s in node.data_sent()] == [Data] * 5
