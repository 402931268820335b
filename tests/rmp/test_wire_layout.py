"""Byte-exact encodings, computed by hand from the diagrams in docs/rmp-wire.md. Each hex string
below also appears verbatim in that document's worked examples, so the document, these tests
and the code cannot drift apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from rmp.wire import (
    Confirm,
    Data,
    Image,
    Join,
    Nack,
    NackRange,
    Piece,
    Remind,
    Retransmit,
    RmpPacket,
    decode,
    encode,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "rmp-wire.md"

STROKE = RmpPacket(seq=0x1234, timestamp=0xDEADBEEF, channel=5, options=(Data(),), data=b"hi")

EXAMPLES: list[tuple[str, RmpPacket, str]] = [
    # byte 0: V=01, channel=000101 -> 0x45; byte 1: P=1 S=0 format=111111 -> 0xbf;
    # Data option: F=1, type 71 (1000111) -> 0xc7, three bytes of padding; the data part "hi".
    ("data packet", STROKE, "45 bf 12 34 de ad be ef c7 00 00 00 68 69"),
    # no options: P=0; S=1; channel 63 -> 0x7f; format 0 -> byte 1 = 0100 0000.
    (
        "bare header",
        RmpPacket(seq=0xFFFF, timestamp=0, channel=63, s_bit=True, format=0),
        "7f 40 ff ff 00 00 00 00",
    ),
    # Join: F=1 type 66 -> 0xc2, join number 3, padding; timestamp 1.0 s -> 0x00010000.
    (
        "join request",
        RmpPacket(seq=1, timestamp=0x0001_0000, options=(Join(3),)),
        "40 bf 00 01 00 01 00 00 c2 03 00 00",
    ),
    # Join answer: F=0 -> 0x42, answer flag is the top bit of byte 2 -> 0x80; then Confirms:
    # F|68 -> 0x44 / 0xc4, a padding byte, sequence number, source identifier.
    (
        "join answer",
        RmpPacket(
            seq=1,
            timestamp=0,
            options=(Join(3, answer=True), Confirm(0x0102, 0x0A00_0001), Confirm(7, 0x0A00_0002)),
        ),
        "40 bf 00 01 00 00 00 00 42 03 80 00 44 00 01 02 0a 00 00 01 c4 00 00 07 0a 00 00 02",
    ),
    # Nack: F|67 -> 0xc3, nack number 2, missing sequence number, source 192.168.0.1.
    (
        "nack",
        RmpPacket(seq=1, timestamp=0, options=(Nack(2, 0xBEEF, 0xC0A8_0001),)),
        "40 bf 00 01 00 00 00 00 c3 02 be ef c0 a8 00 01",
    ),
    # NackRange: F|73 -> 0xc9, a Nack's 8 bytes for the first missing packet, then the count
    # (4: 65534, 65535, 0, 1) and 16 bits of padding.
    (
        "nack range",
        RmpPacket(seq=1, timestamp=0, options=(NackRange(1, 0xFFFE, 0x0A00_0002, 4),)),
        "40 bf 00 01 00 00 00 00 c9 01 ff fe 0a 00 00 02 00 04 00 00",
    ),
    # Remind first (F=0, 69 -> 0x45), a Confirm, then the final Data option and "x".
    (
        "reminder",
        RmpPacket(
            seq=1,
            timestamp=0,
            options=(Remind(7), Confirm(5, 0x0A00_0003), Data()),
            data=b"x",
        ),
        "40 bf 00 01 00 00 00 00 45 07 00 00 44 00 00 05 0a 00 00 03 c7 00 00 00 78",
    ),
    # Image: S=1 in the header (byte 1 = 1111 1111) and Last=1 in the option (0x80).
    (
        "last image part",
        RmpPacket(seq=2, timestamp=0, s_bit=True, options=(Image(last=True),), data=b"img"),
        "40 ff 00 02 00 00 00 00 c6 80 00 00 69 6d 67",
    ),
    # Piece (our extension, issue 20): S=1 on the last piece (byte 1 = 0xff); F|77 -> 0xcd, a
    # zero byte, index 4, count 5, 16 bits of padding; the piece's bytes "pc".
    (
        "last piece of a run",
        RmpPacket(seq=3, timestamp=0, s_bit=True, options=(Piece(4, 5),), data=b"pc"),
        "40 ff 00 03 00 00 00 00 cd 00 00 04 00 05 00 00 70 63",
    ),
    # Retransmit: F|72 -> 0xc8, padding byte, length 14 (0x000e), original source 10.0.0.2,
    # the 14-byte original datagram verbatim, then 2 zero bytes to the 32-bit boundary.
    (
        "retransmission",
        RmpPacket(seq=7, timestamp=0, options=(Retransmit(0x0A00_0002, STROKE),)),
        "40 bf 00 07 00 00 00 00 c8 00 00 0e 0a 00 00 02 "
        "45 bf 12 34 de ad be ef c7 00 00 00 68 69 00 00",
    ),
]


@pytest.mark.parametrize(
    ("packet", "hex_bytes"), [case[1:] for case in EXAMPLES], ids=[case[0] for case in EXAMPLES]
)
def test_encoding_matches_the_hand_computed_bytes(packet: RmpPacket, hex_bytes: str) -> None:
    wire = bytes.fromhex(hex_bytes)
    assert encode(packet) == wire
    assert decode(wire) == packet


@pytest.mark.parametrize("hex_bytes", [case[2] for case in EXAMPLES], ids=[c[0] for c in EXAMPLES])
def test_each_example_is_written_in_the_document(hex_bytes: str) -> None:
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    assert hex_bytes in doc


def test_the_document_states_the_f_bit_polarity_the_code_uses() -> None:
    two = encode(RmpPacket(seq=0, timestamp=0, options=(Confirm(1, 1), Confirm(2, 2))))
    assert two[8] & 0x80 == 0 and two[16] & 0x80 == 0x80  # F=0: more follow; F=1: final
    assert "F = 1 marks the final option" in DOC.read_text(encoding="utf-8")
