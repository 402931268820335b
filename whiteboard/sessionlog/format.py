"""The session-log file format: a preamble, then framed msgpack records. Qt-free.

docs/session-log.md describes it byte by byte::

    preamble   8 bytes  magic  89 57 42 4C 4F 47 0D 0A  ("\\x89WBLOG\\r\\n")
               2 bytes  format version, u16 big-endian (FORMAT_VERSION)
    record     4 bytes  length of the body, u32 big-endian
               4 bytes  CRC-32 of the 4 length bytes followed by the body, u32 big-endian
               N bytes  body: one msgpack array [kind, t_us, *fields]
    record     ...

The first record is always the HEADER. Every record is self-checking, so a reader can tell a
whole record from a torn one (the writer was killed mid-write) without trusting anything after
it. Times are int64 microseconds since the Unix epoch (UTC).

Decoding is a trust boundary like the network: a log may be damaged or not a log at all.
:func:`decode_record` raises :class:`SessionLogError` and nothing else.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

import msgpack

# \x89 catches 7-bit transfers, \r\n line-ending conversion (the PNG trick); "WBLOG" is for
# people looking at the bytes.
MAGIC = b"\x89WBLOG\r\n"
FORMAT_VERSION = 1  # the framing: preamble and record frames
SCHEMA_VERSION = 1  # the record layouts below; extra trailing fields are allowed within a version
PREAMBLE = struct.Struct(">8sH")
FRAME = struct.Struct(">II")  # length, crc32
# The largest body a reader accepts: a board state of the board's own limit (256 MiB) plus its
# record's few fields. A length above it is corruption, never a record, so a damaged length
# cannot make a reader allocate gigabytes.
MAX_RECORD_BYTES = (256 << 20) + 4096
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1
MAX_KEY_INTS = 16  # as the board's order keys


class SessionLogError(ValueError):
    """A file that is not a usable session log, or a record that is not a valid one. The
    message says what is wrong, for a person (and names the file where there is one)."""


class RecordKind(IntEnum):
    """The first item of every record body. Wire constants: never renumber."""

    HEADER = 0
    DELIVERED = 1
    LOCAL_OP = 2
    MEMBER = 3
    READY = 4
    JOIN_PROGRESS = 5
    STATE_RECEIVED = 6
    STATE_SENT = 7
    FAILURE = 8
    PROTOCOL = 9
    COUNTERS = 10
    END = 11
    UNDELIVERED = 12  # added within schema 1: older readers skip it
    SIDE = 13  # the side channel (issue 19), sampled; likewise
    FOLLOW = 14  # whom this member's window follows; likewise


ParamValue = int | float | str | bool | None
FieldValue = int | float | str | bool


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """Which session a log records, and who recorded it. The first record of every file."""

    kind: ClassVar[RecordKind] = RecordKind.HEADER
    t_us: int  # when recording started
    session_id: str
    app_version: str
    transport: str
    params: Mapping[str, ParamValue]
    group: str  # "ADDR:PORT"
    iface: str | None
    ttl: int
    member_id: int
    member_name: str
    schema_version: int = SCHEMA_VERSION
    # A private session's key id (hex; docs/security.md), never a key; None: in clear. Added
    # within schema 1 as an optional trailing field: older readers ignore it.
    key_id: str | None = None
    # Its drawing key's public half (64 hex digits), by which a replay checks each op's proof
    # as the live member did (whiteboard/security/signing.py); never a secret. Present only
    # with ``key_id``, also as an optional trailing field.
    drawing_key: str | None = None


@dataclass(frozen=True, slots=True)
class DeliveredRecord:
    """A payload the transport delivered (an op, a presence, or something refused later)."""

    kind: ClassVar[RecordKind] = RecordKind.DELIVERED
    t_us: int  # local delivery time
    origin: int
    order_key: tuple[int, ...]
    sent_us: int  # the sender's timestamp
    late: bool
    payload: bytes


@dataclass(frozen=True, slots=True)
class LocalOpRecord:
    """A payload this member handed to the transport to send (an op or a presence)."""

    kind: ClassVar[RecordKind] = RecordKind.LOCAL_OP
    t_us: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class UndeliveredRecord:
    """An op this member sent that the session ended without delivering back: kept by the app
    to be sent again in its next session (whiteboard/app/undelivered.py), where it goes out
    re-issued under a new id (a LOCAL_OP of that session's log)."""

    kind: ClassVar[RecordKind] = RecordKind.UNDELIVERED
    t_us: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class MemberRecord:
    kind: ClassVar[RecordKind] = RecordKind.MEMBER
    t_us: int
    member: int
    state: str  # a MemberState value: joining, active, suspected, left


@dataclass(frozen=True, slots=True)
class ReadyRecord:
    """The local member joined and may send."""

    kind: ClassVar[RecordKind] = RecordKind.READY
    t_us: int


@dataclass(frozen=True, slots=True)
class JoinProgressRecord:
    kind: ClassVar[RecordKind] = RecordKind.JOIN_PROGRESS
    t_us: int
    received: int
    total: int


@dataclass(frozen=True, slots=True)
class StateReceivedRecord:
    """The board another member gave us when joining. ``state`` is kept for replay; it is
    empty if it was larger than a record may be (``size`` is always the real size)."""

    kind: ClassVar[RecordKind] = RecordKind.STATE_RECEIVED
    t_us: int
    size: int
    join_us: int  # from the start of recording (the header's t_us) to the board's arrival
    state: bytes = b""


@dataclass(frozen=True, slots=True)
class StateSentRecord:
    """A joiner asked for our board and the application handed it to the transport."""

    kind: ClassVar[RecordKind] = RecordKind.STATE_SENT
    t_us: int  # when the request reached the application
    request: int
    answer_us: int  # how long the application took to answer (building the snapshot)


@dataclass(frozen=True, slots=True)
class FailureRecord:
    kind: ClassVar[RecordKind] = RecordKind.FAILURE
    t_us: int
    reason: str


@dataclass(frozen=True, slots=True)
class ProtocolRecord:
    """A protocol event: NACKs, retransmissions, image transfers, tokens, decisions..."""

    kind: ClassVar[RecordKind] = RecordKind.PROTOCOL
    t_us: int
    name: str
    fields: Mapping[str, FieldValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CountersRecord:
    """A snapshot of the transport's counters (``Transport.counters()``)."""

    kind: ClassVar[RecordKind] = RecordKind.COUNTERS
    t_us: int
    counters: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EndRecord:
    """The writer was closed properly: its absence means the session ended abruptly."""

    kind: ClassVar[RecordKind] = RecordKind.END
    t_us: int


@dataclass(frozen=True, slots=True)
class SideRecord:
    """A payload of the side channel (a pointer, a laser point, a view: whiteboard/pointer.py)
    from ``origin``, this member's own included, as the writer sampled them (at most
    ``SIDE_RECORDS_HZ`` a second per origin: docs/session-log.md)."""

    kind: ClassVar[RecordKind] = RecordKind.SIDE
    t_us: int
    origin: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class FollowRecord:
    """This member's window began following ``member``'s view (0: it stopped following)."""

    kind: ClassVar[RecordKind] = RecordKind.FOLLOW
    t_us: int
    member: int


Record = (
    SessionHeader
    | DeliveredRecord
    | LocalOpRecord
    | MemberRecord
    | ReadyRecord
    | JoinProgressRecord
    | StateReceivedRecord
    | StateSentRecord
    | FailureRecord
    | ProtocolRecord
    | CountersRecord
    | EndRecord
    | UndeliveredRecord
    | SideRecord
    | FollowRecord
)


def to_us(seconds: float) -> int:
    """Seconds (a float from a clock) as int microseconds; a clock gone wrong (NaN, inf, out
    of range) gives 0 rather than an error, so that recording never stops a session."""
    if not math.isfinite(seconds):
        return 0
    value = round(seconds * 1_000_000)
    return value if INT64_MIN <= value <= INT64_MAX else 0


# -- encoding -------------------------------------------------------------------------------


def record_items(record: Record) -> list[Any]:
    """The msgpack-ready array of ``record``: ``[kind, t_us, *fields]``."""
    head: list[Any] = [int(record.kind), record.t_us]
    match record:
        case SessionHeader():
            return [
                *head, record.schema_version, record.session_id, record.app_version,
                record.transport, dict(record.params), record.group, record.iface, record.ttl,
                record.member_id, record.member_name,
                *([record.key_id] if record.key_id is not None else []),
                *([record.drawing_key] if record.key_id and record.drawing_key else []),
            ]  # fmt: skip
        case DeliveredRecord():
            return [
                *head, record.origin, list(record.order_key), record.sent_us, record.late,
                record.payload,
            ]  # fmt: skip
        case LocalOpRecord() | UndeliveredRecord():
            return [*head, record.payload]
        case MemberRecord():
            return [*head, record.member, record.state]
        case ReadyRecord() | EndRecord():
            return head
        case JoinProgressRecord():
            return [*head, record.received, record.total]
        case StateReceivedRecord():
            return [*head, record.size, record.join_us, record.state]
        case StateSentRecord():
            return [*head, record.request, record.answer_us]
        case FailureRecord():
            return [*head, record.reason]
        case ProtocolRecord():
            return [*head, record.name, dict(record.fields)]
        case CountersRecord():
            return [*head, dict(record.counters)]
        case SideRecord():
            return [*head, record.origin, record.payload]
        case FollowRecord():
            return [*head, record.member]
    raise TypeError(f"not a session-log record: {type(record).__name__}")


def encode_record(record: Record) -> bytes:
    """The msgpack body of ``record``. Raises ``TypeError``/``ValueError``/``OverflowError``
    for a record that cannot be written (a field of the wrong type or out of range)."""
    body: bytes = msgpack.packb(record_items(record), use_bin_type=True)
    return body


def frame(body: bytes) -> bytes:
    """``body`` with its length and CRC in front: one record as it is in the file."""
    if len(body) > MAX_RECORD_BYTES:
        raise ValueError(f"a record of {len(body)} bytes exceeds {MAX_RECORD_BYTES}")
    return FRAME.pack(len(body), frame_crc(len(body), body)) + body


def frame_crc(length: int, body: bytes) -> int:
    """The CRC-32 a frame carries: of its 4 length bytes, then its body (so that a damaged
    length is caught too)."""
    return zlib.crc32(body, zlib.crc32(length.to_bytes(4, "big")))


def preamble(version: int = FORMAT_VERSION) -> bytes:
    return PREAMBLE.pack(MAGIC, version)


# -- decoding -------------------------------------------------------------------------------


def decode_record(body: bytes) -> Record | None:
    """The record in a frame's ``body``; ``None`` for a kind this version does not know (a
    newer writer's), which a reader skips. :class:`SessionLogError` and nothing else on bad
    input."""
    if len(body) > MAX_RECORD_BYTES:
        raise SessionLogError(f"a record of {len(body)} bytes exceeds {MAX_RECORD_BYTES}")
    try:
        items = msgpack.unpackb(
            body,
            raw=False,
            strict_map_key=True,
            max_bin_len=MAX_RECORD_BYTES,
            max_str_len=MAX_RECORD_BYTES,
            max_array_len=1 << 16,
            max_map_len=1 << 12,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack raises several unrelated types on bad input
        raise SessionLogError(f"the record is not valid msgpack ({exc})") from None
    if not isinstance(items, list) or len(items) < 2:
        raise SessionLogError("the record is not an array [kind, t_us, ...]")
    kind, t_us = items[0], items[1]
    if type(kind) is not int:
        raise SessionLogError(f"the record kind must be an int, got {_short(kind)}")
    _int64(t_us, "t_us")
    try:
        known = RecordKind(kind)
    except ValueError:
        return None
    fields = items[2:]
    decoder, arity = _DECODERS[known]
    if len(fields) < arity:
        raise SessionLogError(
            f"a {known.name} record needs {arity} fields after [kind, t_us], got {len(fields)}"
        )
    # Fields past ``arity`` (and the optional ones this version knows) belong to a newer
    # schema of the same version: ignored.
    return decoder(t_us, fields[: arity + _OPTIONAL.get(known, 0)])


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _int64(value: object, name: str) -> int:
    if type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
        raise SessionLogError(f"record field {name!r} must be an int64, got {_short(value)}")
    return value


def _count(value: object, name: str) -> int:
    if type(value) is not int or not 0 <= value <= INT64_MAX:
        raise SessionLogError(f"record field {name!r} must be an int >= 0, got {_short(value)}")
    return value


def _member(value: object, name: str) -> int:
    if type(value) is not int or not 0 <= value <= UINT64_MAX:
        raise SessionLogError(f"record field {name!r} must be a member id, got {_short(value)}")
    return value


def _str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise SessionLogError(f"record field {name!r} must be a string, got {_short(value)}")
    return value


def _bytes(value: object, name: str) -> bytes:
    if not isinstance(value, bytes):
        raise SessionLogError(f"record field {name!r} must be bytes, got {_short(value)}")
    return value


def _bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise SessionLogError(f"record field {name!r} must be true or false, got {_short(value)}")
    return value


def _map(value: object, name: str, allowed: tuple[type, ...]) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, allowed) for k, v in value.items()
    ):
        raise SessionLogError(f"record field {name!r} must be a map of plain values")
    return value


def _order_key(value: object) -> tuple[int, ...]:
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= MAX_KEY_INTS
        or not all(type(v) is int and INT64_MIN <= v <= UINT64_MAX for v in value)
    ):
        raise SessionLogError(
            f"record field 'order_key' must be 1 to {MAX_KEY_INTS} ints, got {_short(value)}"
        )
    return tuple(value)


def _header(t_us: int, f: list[Any]) -> SessionHeader:
    schema, session_id, app_version, transport, params, group, iface, ttl, member, name = f[:10]
    key_id = f[10] if len(f) > 10 else None
    if key_id is not None and not _is_hex(key_id, 16):
        raise SessionLogError(f"record field 'key_id' must be 16 hex digits, got {_short(key_id)}")
    drawing_key = f[11] if len(f) > 11 else None
    if drawing_key is not None and not _is_hex(drawing_key, 64):
        raise SessionLogError(
            f"record field 'drawing_key' must be 64 hex digits, got {_short(drawing_key)}"
        )
    if drawing_key is not None and key_id is None:
        # Only a private session has a drawing key (the encoder never writes one alone).
        raise SessionLogError("record field 'drawing_key' comes without a 'key_id'")
    if iface is not None:
        _str(iface, "iface")
    return SessionHeader(
        t_us,
        _str(session_id, "session_id"),
        _str(app_version, "app_version"),
        _str(transport, "transport"),
        _map(params, "params", (int, float, str, bool, type(None))),
        _str(group, "group"),
        iface,
        _int64(ttl, "ttl"),
        _member(member, "member_id"),
        _str(name, "member_name"),
        _count(schema, "schema_version"),
        key_id,
        drawing_key,
    )


def _is_hex(value: object, digits: int) -> bool:
    return (
        isinstance(value, str)
        and len(value) == digits
        and all(c in "0123456789abcdef" for c in value)
    )


def _delivered(t_us: int, f: list[Any]) -> DeliveredRecord:
    origin, key, sent_us, late, payload = f
    return DeliveredRecord(
        t_us,
        _member(origin, "origin"),
        _order_key(key),
        _int64(sent_us, "sent_us"),
        _bool(late, "late"),
        _bytes(payload, "payload"),
    )


def _state_received(t_us: int, f: list[Any]) -> StateReceivedRecord:
    size, join_us, state = f
    return StateReceivedRecord(
        t_us, _count(size, "size"), _int64(join_us, "join_us"), _bytes(state, "state")
    )


def _counters(t_us: int, f: list[Any]) -> CountersRecord:
    counters = _map(f[0], "counters", (int,))
    for name, value in counters.items():
        _int64(value, f"counters.{name}")
    return CountersRecord(t_us, counters)


# Trailing fields added within schema 1 that this version reads (absent in older files).
_OPTIONAL = {RecordKind.HEADER: 2}  # key_id, drawing_key
_DECODERS: dict[RecordKind, tuple[Any, int]] = {
    RecordKind.HEADER: (_header, 10),
    RecordKind.DELIVERED: (_delivered, 5),
    RecordKind.LOCAL_OP: (lambda t, f: LocalOpRecord(t, _bytes(f[0], "payload")), 1),
    RecordKind.MEMBER: (
        lambda t, f: MemberRecord(t, _member(f[0], "member"), _str(f[1], "state")),
        2,
    ),
    RecordKind.READY: (lambda t, f: ReadyRecord(t), 0),
    RecordKind.JOIN_PROGRESS: (
        lambda t, f: JoinProgressRecord(t, _count(f[0], "received"), _count(f[1], "total")),
        2,
    ),
    RecordKind.STATE_RECEIVED: (_state_received, 3),
    RecordKind.STATE_SENT: (
        lambda t, f: StateSentRecord(t, _int64(f[0], "request"), _int64(f[1], "answer_us")),
        2,
    ),
    RecordKind.FAILURE: (lambda t, f: FailureRecord(t, _str(f[0], "reason")), 1),
    RecordKind.PROTOCOL: (
        lambda t, f: ProtocolRecord(
            t, _str(f[0], "name"), _map(f[1], "fields", (int, float, str, bool))
        ),
        2,
    ),
    RecordKind.COUNTERS: (_counters, 1),
    RecordKind.END: (lambda t, f: EndRecord(t), 0),
    RecordKind.UNDELIVERED: (lambda t, f: UndeliveredRecord(t, _bytes(f[0], "payload")), 1),
    RecordKind.SIDE: (
        lambda t, f: SideRecord(t, _member(f[0], "origin"), _bytes(f[1], "payload")),
        2,
    ),
    RecordKind.FOLLOW: (lambda t, f: FollowRecord(t, _member(f[0], "member")), 1),
}


__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_RECORD_BYTES",
    "SCHEMA_VERSION",
    "CountersRecord",
    "DeliveredRecord",
    "EndRecord",
    "FailureRecord",
    "FollowRecord",
    "JoinProgressRecord",
    "LocalOpRecord",
    "MemberRecord",
    "ProtocolRecord",
    "ReadyRecord",
    "Record",
    "RecordKind",
    "SessionHeader",
    "SessionLogError",
    "SideRecord",
    "StateReceivedRecord",
    "StateSentRecord",
    "UndeliveredRecord",
    "decode_record",
    "encode_record",
    "frame",
    "preamble",
    "to_us",
]
