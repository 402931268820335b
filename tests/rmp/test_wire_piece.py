"""The Piece option (our extension, issue 20; docs/rmp-wire.md "Piece"): its rules are checked
on decoding (RmpDecodeError with a readable message) and on building (ValueError)."""

from __future__ import annotations

import re

import pytest

from rmp.fragment import MAX_PIECES
from rmp.wire import Confirm, Piece, Retransmit, RmpDecodeError, RmpPacket, decode, encode

HEAD = bytes.fromhex("40bf000300000000")  # P=1, S=0, seq 3
LAST_HEAD = bytes.fromhex("40ff000300000000")  # S=1


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (HEAD + bytes.fromhex("cd00000200050000") + b"pc", None),
        (LAST_HEAD + bytes.fromhex("cd00000200050000") + b"pc", "S bit (1) must mark the last"),
        (HEAD + bytes.fromhex("cd00000400050000") + b"pc", "S bit (0) must mark the last"),
        (HEAD + bytes.fromhex("cd00000500050000") + b"pc", "numbered from 0 to 4"),
        (LAST_HEAD + bytes.fromhex("cd00000000010000") + b"pc", "run of 1 pieces, not 2..4096"),
        (HEAD + bytes.fromhex("cd00000010010000") + b"pc", "run of 4097 pieces"),
        (HEAD + bytes.fromhex("cd00000000050000"), "empty data part"),
        (HEAD + bytes.fromhex("cd00000000050001") + b"pc", "nonzero padding in the Piece"),
        (HEAD + bytes.fromhex("cd01000000050000") + b"pc", "nonzero padding in the Piece"),
        (HEAD + bytes.fromhex("cd000000000500"), "truncated Piece option at offset 8"),
        (HEAD + bytes.fromhex("4d00000000050000") + b"pc", "must be the final option"),
    ],
)
def test_decoding_checks_a_piece(wire: bytes, message: str | None) -> None:
    if message is None:
        packet = decode(wire)
        assert packet.options == (Piece(2, 5),) and packet.data == b"pc"
        assert encode(packet) == wire
        return
    with pytest.raises(RmpDecodeError, match=re.escape(message)):
        decode(wire)


def test_building_checks_a_piece() -> None:
    with pytest.raises(ValueError, match="S bit"):
        RmpPacket(seq=1, timestamp=0, options=(Piece(0, 2),), data=b"x", s_bit=True)
    with pytest.raises(ValueError, match=r"not 2\.\.4096"):
        RmpPacket(seq=1, timestamp=0, options=(Piece(0, MAX_PIECES + 1),), data=b"x")
    with pytest.raises(ValueError, match="needs a data part"):
        RmpPacket(seq=1, timestamp=0, options=(Piece(0, 2),))
    with pytest.raises(ValueError, match="does not fit in 16 bits"):
        Piece(0, 1 << 16)


def test_a_piece_with_confirmations_is_repaired_whole() -> None:
    piece = RmpPacket(
        seq=9,
        timestamp=5,
        options=(Confirm(3, 0xB2), Piece(1, 3)),
        data=b"x" * 1404,
        source=0xA1,
    )
    wrapped = RmpPacket(seq=4, timestamp=6, options=(Retransmit(0xA1, piece),), source=0xB2)
    assert len(encode(wrapped)) <= 1472  # a piece fills a packet, its repair a datagram
    assert decode(encode(wrapped)).options[-1] == Retransmit(0xA1, piece)
