"""The Source option [extension]: the sender's 32-bit identifier, first in every packet."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmp import Confirm, Data, Remind, Retransmit, RmpDecodeError, RmpPacket, decode, encode


@given(st.integers(1, 2**32 - 1), st.booleans(), st.booleans())
def test_source_round_trips_with_and_without_other_options(
    source: int, remind: bool, data: bool
) -> None:
    options = (Remind(3),) if remind else ()
    options += (Confirm(7, 99), Data()) if data else ()
    packet = RmpPacket(
        seq=5, timestamp=1234, options=options, data=b"x" if data else None, source=source
    )
    wire = encode(packet)
    assert decode(wire) == packet
    assert wire[8] & 0x7F == 74 and wire[12:16] == source.to_bytes(4, "big")
    assert bool(wire[8] & 0x80) == (not options)  # F=1 only when it is the only option


def test_source_alone_is_a_complete_packet_with_the_p_bit_set() -> None:
    wire = encode(RmpPacket(seq=0, timestamp=0, source=0x01020304))
    assert wire == bytes.fromhex("40bf000000000000ca00000001020304")
    assert decode(wire).source == 0x01020304


def test_a_retransmitted_packet_keeps_its_own_source() -> None:
    original = RmpPacket(seq=9, timestamp=1, options=(Data(),), data=b"stroke", source=7)
    wrapper = RmpPacket(seq=0, timestamp=2, options=(Retransmit(7, original),), source=8)
    again = decode(encode(wrapper))
    assert again.source == 8
    inner = again.options[0]
    assert isinstance(inner, Retransmit) and inner.packet.source == 7


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (
            bytes.fromhex(
                "40bf00000000000045000000ca00000001020304"  # Remind (F=0), Source (F=1)
            ),
            "must be the first option",
        ),
        (bytes.fromhex("40bf000000000000ca00000000000000"), "reserved identifier 0"),
        (bytes.fromhex("40bf000000000000ca01000001020304"), "nonzero padding"),
        (bytes.fromhex("40bf000000000000ca0000000102030400"), "ends early"),
        (bytes.fromhex("40bf000000000000ca000000"), "truncated"),
    ],
)
def test_malformed_source_options_are_explained(wire: bytes, message: str) -> None:
    with pytest.raises(RmpDecodeError, match=message):
        decode(wire)
