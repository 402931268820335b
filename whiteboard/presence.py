"""Presence: what a member tells the others about itself, through the same transport as ops.

A member multicasts a :class:`Presence` when it joins and every few seconds after: its name
and colour for the members panel, the health counters its transport keeps (NACKs sent,
retransmissions, late deliveries: only the member itself knows them), and a fingerprint of its
board (how many ops it has applied, the greatest order key, the board hash) so that the others
can tell whether they show the same board.

It travels as a payload like an op, so the transport's order applies to it; it is not an op
(it never touches the board). The two are told apart by the first item of the msgpack array:
an op starts with its kind (an int), a presence with the string ``"wb-presence"``.

Wire format, one msgpack array (version 2)::

    ["wb-presence", 2, name, colour, ops, last_key, hash, nacks, retransmissions, late,
     checkpoint, colour_chosen]

``last_key`` is the order key as an array of ints (empty if the board is empty), ``hash`` the
32-byte SHA-256 of the board's visible state (``Board.hash()``) as bin. ``checkpoint`` is nil
or ``[ops, last_key, hash]``: the fingerprint of the board as it was when it last reached a
checkpoint count (:func:`is_checkpoint`), a point every replica of the session passes, so that
the others can compare it with their own board *at the same point* rather than with the board
they have now (ops still in flight make those differ). ``colour_chosen`` (a bool) says the
person chose the colour, so that a member with a default colour moves off it rather than
waiting for the other to (see :func:`yields_colour`). Version 1, the array without the last
two, still decodes (no checkpoint, a default colour).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import msgpack

from whiteboard.board import Board, OrderKey

MAGIC = "wb-presence"
VERSION = 2
OLD_VERSIONS = (1,)  # still decoded
MAX_NAME = 40  # characters
MAX_PRESENCE_BYTES = 1024
# Checkpoints (is_checkpoint): every CHECKPOINT_OPS ops while the board is small, then ever
# more sparsely, so that hashing the board at each costs a bounded share of applying the ops
# (measured: about 25 us an op on boards of 10,000 to 30,000 strokes of 20 points, some 20% of
# applying them; with 32 and 16 it was 260 us, twice the cost of applying them).
CHECKPOINT_OPS = 256
CHECKPOINT_SHARE = 2
MAX_KEY_INTS = 16
_U63 = 2**63 - 1


class PresenceDecodeError(ValueError):
    """A payload that claims to be a presence but is not a valid one."""


# When a presence is sent (PresenceSchedule): every PRESENCE_S while what it says changes, every
# IDLE_PRESENCE_S otherwise, so an idle session stays quiet (an MTP master may hibernate) yet a
# newcomer learns names within seconds.
PRESENCE_S = 2.0
IDLE_PRESENCE_S = 10.0

# Members' default colours, ARGB: twelve that tell people apart on the white board (each pair at
# least 30 apart in CIELAB, each at least 50 from white: tests/test_presence.py measures it).
MEMBER_COLOURS: tuple[int, ...] = (
    0xFFE53935,  # red
    0xFF1E88E5,  # blue
    0xFF43A047,  # green
    0xFFFB8C00,  # orange
    0xFF8E24AA,  # purple
    0xFF00897B,  # teal
    0xFFD81B60,  # pink
    0xFF6D4C41,  # brown
    0xFF9E9D24,  # olive
    0xFF000000,  # black
    0xFFE040FB,  # magenta
    0xFF1A237E,  # navy
)


def default_colour(member: int, taken: Collection[int] = ()) -> int:
    """A member's default colour: its own place in :data:`MEMBER_COLOURS` (by its member id,
    random per session), or the next one nobody in ``taken`` uses (the colours in the presences
    heard). With every colour taken, its own place's."""
    start = member % len(MEMBER_COLOURS)
    for step in range(len(MEMBER_COLOURS)):
        colour = MEMBER_COLOURS[(start + step) % len(MEMBER_COLOURS)]
        if colour not in taken:
            return colour
    return MEMBER_COLOURS[start]


def yields_colour(me: int, other: int, other_chose: bool = False) -> bool:
    """Whether a member with a default colour moves off the one ``other`` shows too: always
    if ``other`` chose it (a chosen colour never moves); of two defaults, the greater member
    id's, so that the two never both move (and collide again)."""
    return other_chose or me > other


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


def is_checkpoint(ops: int) -> bool:
    """Whether a board of ``ops`` ops is at a checkpoint, a count every replica's board passes
    (ops are applied one at a time) and at which each member keeps its board's fingerprint.

    Every ``CHECKPOINT_OPS`` ops up to ``2 * CHECKPOINT_OPS * CHECKPOINT_SHARE``, then at
    multiples of the greatest power of two not over ``ops / CHECKPOINT_SHARE``: about
    ``CHECKPOINT_SHARE`` checkpoints each time the board doubles, so, as hashing costs O(board),
    about ``2 * CHECKPOINT_SHARE`` hashes of an object per op in all. A function of the count
    alone, so that every member picks the same points."""
    if ops <= 0:
        return False
    step = max(CHECKPOINT_OPS, 1 << max(0, (ops // CHECKPOINT_SHARE).bit_length() - 1))
    return ops % step == 0


@dataclass(frozen=True, slots=True)
class Presence:
    name: str
    colour: int  # ARGB
    board: BoardFingerprint
    nacks_sent: int = 0
    retransmissions: int = 0
    late_delivered: int = 0
    # The board at the sender's last checkpoint (is_checkpoint), None before its first.
    checkpoint: BoardFingerprint | None = None
    colour_chosen: bool = False  # chosen by the person, not a default

    def __post_init__(self) -> None:
        if not 1 <= len(self.name) <= MAX_NAME:
            raise ValueError(f"a presence name must be 1-{MAX_NAME} characters")
        if not 0 <= self.colour <= 0xFFFFFFFF:
            raise ValueError("a presence colour must be a 32-bit ARGB value")
        checkpoint_ops = self.checkpoint.ops if self.checkpoint is not None else 0
        counters = (self.nacks_sent, self.retransmissions, self.late_delivered)
        for value in (*counters, self.board.ops, checkpoint_ops):
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


def _gist(presence: Presence) -> tuple[object, ...]:
    """What, when it changes, makes a presence worth sending at once."""
    return (
        presence.name,
        presence.colour,
        presence.board.ops,
        presence.board.last_key,
        presence.nacks_sent,
    )


class PresenceSchedule:
    """When to multicast a presence, for the app and ``whiteboard peer`` alike (no clock of its
    own: the caller asks with its time, every :data:`PRESENCE_S`).

    The first is due at once: sent as the very first payload once the member is ready, so the
    others learn its name and colour with the join and never show a bare member id. After
    that, one whenever what it says changed, and one every ``idle_s`` regardless, so a member
    that joins later learns every name soon."""

    def __init__(self, idle_s: float = IDLE_PRESENCE_S) -> None:
        self.idle_s = idle_s
        self.due = True  # set it to send at the next tick (a newcomer, a new name...)
        self._said: tuple[object, ...] | None = None
        self._sent_at: float | None = None

    def is_due(self, presence: Presence, now: float) -> bool:
        if self.due or self._sent_at is None or _gist(presence) != self._said:
            return True
        return now - self._sent_at >= self.idle_s

    def sent(self, presence: Presence, now: float) -> None:
        self.due = False
        self._said = _gist(presence)
        self._sent_at = now


def encode_presence(presence: Presence) -> bytes:
    board, checkpoint = presence.board, presence.checkpoint
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
            None if checkpoint is None else _fingerprint_to_wire(checkpoint),
            presence.colour_chosen,
        ],
        use_bin_type=True,
    )


def _fingerprint_to_wire(fingerprint: BoardFingerprint) -> list[object]:
    return [
        fingerprint.ops,
        list(fingerprint.last_key or ()),
        bytes.fromhex(fingerprint.board_hash),
    ]


def decode_presence(payload: bytes) -> Presence:
    """The presence in ``payload``; :class:`PresenceDecodeError` and nothing else otherwise."""
    if len(payload) > MAX_PRESENCE_BYTES:
        raise PresenceDecodeError(f"presence of {len(payload)} bytes exceeds {MAX_PRESENCE_BYTES}")
    item = _unpack(payload, "presence", max_array_len=64, max_bin_len=32)
    if not isinstance(item, list) or len(item) not in (10, 12) or item[0] != MAGIC:
        raise PresenceDecodeError("not a presence array")
    version = item[1]
    if version != VERSION and version not in OLD_VERSIONS:
        raise PresenceDecodeError(f"unsupported presence version {version!r}")
    if len(item) != (10 if version == 1 else 12):
        raise PresenceDecodeError(f"not a presence array of version {version}")
    name, colour, ops, key, digest, nacks, retrans, late = item[2:10]
    if not isinstance(name, str):
        raise PresenceDecodeError("presence name or hash has the wrong type")
    ints = (colour, nacks, retrans, late)
    if not all(type(v) is int for v in ints):
        raise PresenceDecodeError("presence counters must be ints")
    board = _fingerprint_from_wire(ops, key, digest)
    checkpoint = None
    colour_chosen = False
    if len(item) == 12:
        if item[10] is not None:
            if not isinstance(item[10], list) or len(item[10]) != 3:
                raise PresenceDecodeError("presence checkpoint must be nil or [ops, key, hash]")
            checkpoint = _fingerprint_from_wire(*item[10])
        colour_chosen = item[11]
        if not isinstance(colour_chosen, bool):
            raise PresenceDecodeError("presence colour_chosen must be a bool")
    try:
        return Presence(name, colour, board, nacks, retrans, late, checkpoint, colour_chosen)
    except ValueError as exc:
        raise PresenceDecodeError(str(exc)) from None


def _unpack(payload: bytes, what: str, max_array_len: int, max_bin_len: int) -> object:
    """A peer's msgpack, with every size bounded (a name is at most 4 bytes a character)."""
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            max_array_len=max_array_len,
            max_map_len=0,
            max_str_len=4 * MAX_NAME,
            max_bin_len=max_bin_len,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack raises several unrelated types on bad input
        raise PresenceDecodeError(f"{what} is not valid msgpack: {exc}") from None


def _fingerprint_from_wire(ops: object, key: object, digest: object) -> BoardFingerprint:
    if not isinstance(digest, bytes) or len(digest) != 32:
        raise PresenceDecodeError("presence name or hash has the wrong type")
    if type(ops) is not int:
        raise PresenceDecodeError("presence counters must be ints")
    if not isinstance(key, list) or len(key) > MAX_KEY_INTS or not all(type(k) is int for k in key):
        raise PresenceDecodeError("presence last key must be an array of at most 16 ints")
    return BoardFingerprint(ops, tuple(key) or None, digest.hex())


__all__ = [
    "IDLE_PRESENCE_S",
    "MAX_NAME",
    "MEMBER_COLOURS",
    "PRESENCE_S",
    "BoardFingerprint",
    "Presence",
    "PresenceDecodeError",
    "PresenceSchedule",
    "decode_presence",
    "default_colour",
    "encode_presence",
    "is_checkpoint",
    "is_presence",
    "yields_colour",
]


# -- the name card a join carries (TransportCore.introduce) ------------------------------------

CARD_MAGIC = "wb-card"


@dataclass(frozen=True, slots=True)
class NameCard:
    """Who a member is, as its join carries it: the members already there name it before it
    can send a presence, and even if it never may (an MTP viewer). Issue 17: a joiner is never
    shown as a bare id, and shows its name from its first join request on."""

    name: str
    colour: int  # ARGB
    colour_chosen: bool = False

    def __post_init__(self) -> None:
        if not 1 <= len(self.name) <= MAX_NAME:
            raise ValueError(f"a name must be 1-{MAX_NAME} characters")
        if not 0 <= self.colour <= 0xFFFFFFFF:
            raise ValueError("a colour must be a 32-bit ARGB value")


def name_card_of(presence: Presence) -> NameCard:
    return NameCard(presence.name, presence.colour, presence.colour_chosen)


def encode_name_card(card: NameCard) -> bytes:
    """At most 4 * MAX_NAME + 24 bytes: within coreapi.MAX_INTRODUCTION."""
    return msgpack.packb(
        [CARD_MAGIC, card.name, card.colour, card.colour_chosen], use_bin_type=True
    )


def decode_name_card(payload: bytes) -> NameCard:
    """The card in ``payload`` (a peer's bytes); :class:`PresenceDecodeError` otherwise."""
    item = _unpack(payload, "name card", max_array_len=4, max_bin_len=0)
    if not isinstance(item, list) or len(item) != 4 or item[0] != CARD_MAGIC:
        raise PresenceDecodeError("not a name card")
    _, name, colour, chosen = item
    if not isinstance(name, str) or type(colour) is not int or not isinstance(chosen, bool):
        raise PresenceDecodeError("a name card's fields have the wrong types")
    try:
        return NameCard(name, colour, chosen)
    except ValueError as exc:
        raise PresenceDecodeError(str(exc)) from None
