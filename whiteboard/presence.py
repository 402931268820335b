"""Presence: what a member tells the others about itself, through the same transport as ops.

A member multicasts a :class:`Presence` when it joins and every few seconds after: its name
and colour for the members panel, the health counters its transport keeps (NACKs sent,
retransmissions, late deliveries: only the member itself knows them), and a fingerprint of its
board (how many ops it has applied, the greatest order key, the board hash) so that the others
can tell whether they show the same board.

It travels as a payload like an op, so the transport's order applies to it; it is not an op
(it never touches the board). The two are told apart by the first item of the msgpack array:
an op starts with its kind (an int), a presence with the string ``"wb-presence"``.

Wire format, one msgpack array::

    ["wb-presence", 1, name, colour, ops, last_key, hash, nacks, retransmissions, late]

``last_key`` is the order key as an array of ints (empty if the board is empty), ``hash`` the
32-byte SHA-256 of the board's visible state (``Board.hash()``) as bin.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgpack

from whiteboard.board import Board, OrderKey

MAGIC = "wb-presence"
VERSION = 1
MAX_NAME = 40  # characters
MAX_PRESENCE_BYTES = 512
MAX_KEY_INTS = 16
_U63 = 2**63 - 1


class PresenceDecodeError(ValueError):
    """A payload that claims to be a presence but is not a valid one."""


@dataclass(frozen=True, slots=True)
class BoardFingerprint:
    """Enough of a board to tell whether two replicas agree: the same ops applied (a count and
    the greatest key) and the same visible state (the hash)."""

    ops: int
    last_key: OrderKey | None
    board_hash: str  # hex SHA-256, as Board.hash()

    @classmethod
    def of(cls, board: Board) -> BoardFingerprint:
        return cls(len(board), board.last_key, board.hash())

    def comparable(self, other: BoardFingerprint) -> bool:
        """Whether the two boards applied the same ops, as far as count and last key tell: only
        then must their hashes be equal (while ops are in flight they legitimately differ)."""
        return self.ops == other.ops and self.last_key == other.last_key


@dataclass(frozen=True, slots=True)
class Presence:
    name: str
    colour: int  # ARGB
    board: BoardFingerprint
    nacks_sent: int = 0
    retransmissions: int = 0
    late_delivered: int = 0

    def __post_init__(self) -> None:
        if not 1 <= len(self.name) <= MAX_NAME:
            raise ValueError(f"a presence name must be 1-{MAX_NAME} characters")
        if not 0 <= self.colour <= 0xFFFFFFFF:
            raise ValueError("a presence colour must be a 32-bit ARGB value")
        for value in (self.nacks_sent, self.retransmissions, self.late_delivered, self.board.ops):
            if not 0 <= value <= _U63:
                raise ValueError("presence counters must be 0 .. 2**63-1")


def is_presence(payload: bytes) -> bool:
    """Cheap test on the first bytes: a msgpack array whose first item is the magic string.
    (An op's first item is an int, so no op passes.)"""
    return is_tagged(payload, MAGIC)


def is_tagged(payload: bytes, magic: str) -> bool:
    """Whether ``payload`` is a msgpack array whose first item is the string ``magic`` (of at
    most 31 characters): how the payloads that are not ops announce themselves."""
    head = payload[:16]
    if not head:
        return False
    first = head[0]
    if 0x90 <= first <= 0x9F:  # fixarray
        start = 1
    elif first == 0xDC:  # array 16
        start = 3
    else:
        return False
    tag = bytes([0xA0 | len(magic)]) + magic.encode()
    return head[start : start + len(tag)] == tag


def encode_presence(presence: Presence) -> bytes:
    board = presence.board
    return msgpack.packb(
        [
            MAGIC,
            VERSION,
            presence.name,
            presence.colour,
            board.ops,
            list(board.last_key or ()),
            bytes.fromhex(board.board_hash),
            presence.nacks_sent,
            presence.retransmissions,
            presence.late_delivered,
        ],
        use_bin_type=True,
    )


def decode_presence(payload: bytes) -> Presence:
    """The presence in ``payload``; :class:`PresenceDecodeError` and nothing else otherwise."""
    if len(payload) > MAX_PRESENCE_BYTES:
        raise PresenceDecodeError(f"presence of {len(payload)} bytes exceeds {MAX_PRESENCE_BYTES}")
    try:
        item = msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            max_array_len=64,
            max_map_len=0,
            max_str_len=4 * MAX_NAME,
            max_bin_len=32,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack raises several unrelated types on bad input
        raise PresenceDecodeError(f"presence is not valid msgpack: {exc}") from None
    if not isinstance(item, list) or len(item) != 10 or item[0] != MAGIC:
        raise PresenceDecodeError("not a presence array")
    _, version, name, colour, ops, key, digest, nacks, retrans, late = item
    if version != VERSION:
        raise PresenceDecodeError(f"unsupported presence version {version!r}")
    if not isinstance(name, str) or not isinstance(digest, bytes) or len(digest) != 32:
        raise PresenceDecodeError("presence name or hash has the wrong type")
    ints = (colour, ops, nacks, retrans, late)
    if not all(type(v) is int for v in ints):
        raise PresenceDecodeError("presence counters must be ints")
    if not isinstance(key, list) or len(key) > MAX_KEY_INTS or not all(type(k) is int for k in key):
        raise PresenceDecodeError("presence last key must be an array of at most 16 ints")
    try:
        return Presence(
            name,
            colour,
            BoardFingerprint(ops, tuple(key) or None, digest.hex()),
            nacks,
            retrans,
            late,
        )
    except ValueError as exc:
        raise PresenceDecodeError(str(exc)) from None


__all__ = [
    "MAX_NAME",
    "BoardFingerprint",
    "Presence",
    "PresenceDecodeError",
    "decode_presence",
    "encode_presence",
    "is_presence",
]
