"""One flat row per log record: the export schema (docs/session-log.md, "Exported rows").

Every row has every column, ``None`` where it does not apply, so that JSON lines and Parquet
share one schema and a query engine (Spark) reads many sessions as one table. Nested values
that vary by event (protocol event fields, counters, an op's fields) are JSON object text.
An op's row also carries the op itself (``payload``) and what analytics ask of it most: a
stroke's ink length, where a drawing is (``bbox``) and whose work an edit aims at
(``target_authors``), so that nobody has to decode ops to count them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from whiteboard.board import Board, OpDecodeError, SnapshotError, decode_op
from whiteboard.board.geometry import Rect, content_bounds
from whiteboard.board.ops import (
    Blob,
    Clear,
    Erase,
    Image,
    Move,
    Op,
    Redo,
    Reorder,
    Restyle,
    Shape,
    Stroke,
    Text,
    TextEdit,
    Transform,
    Undo,
)
from whiteboard.carry import CarryDecodeError, decode_carried, is_carried
from whiteboard.pointer import PointerDecodeError, SharedView, decode_side
from whiteboard.presence import PresenceDecodeError, decode_presence, is_presence
from whiteboard.replica import (
    UnprovenOpError,
    carried_proven,
    open_payload,
    snapshot_op_proven,
)
from whiteboard.security import OpAuthority
from whiteboard.sessionlog.format import (
    INT64_MAX,
    INT64_MIN,
    CountersRecord,
    DeliveredRecord,
    FailureRecord,
    FollowRecord,
    JoinProgressRecord,
    LocalOpRecord,
    MemberRecord,
    ProtocolRecord,
    Record,
    SessionHeader,
    SideRecord,
    StateReceivedRecord,
    StateSentRecord,
    UndeliveredRecord,
)
from whiteboard.sessionlog.reader import op_authority

Row = dict[str, Any]

# (column, type): the export schema, in column order. Types: string, int64, bool, double,
# binary, list<int64>, list<double>. New columns go at the end, so older readers that select
# columns by name keep working.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("session_id", "string"),
    ("seq", "int64"),
    ("kind", "string"),
    ("t_us", "int64"),
    ("transport", "string"),
    ("local_member", "int64"),
    ("member", "int64"),
    ("state", "string"),
    ("origin", "int64"),
    ("order_key", "list<int64>"),
    ("sent_us", "int64"),
    ("late", "bool"),
    ("payload_kind", "string"),
    ("size_bytes", "int64"),
    ("op_kind", "string"),
    ("op_author", "int64"),
    ("op_counter", "int64"),
    ("op_fields", "string"),
    ("name", "string"),
    ("event_fields", "string"),
    ("received", "int64"),
    ("total", "int64"),
    ("duration_us", "int64"),
    ("request", "int64"),
    ("reason", "string"),
    ("payload", "binary"),
    ("ink_length", "double"),
    ("bbox", "list<double>"),
    ("target_authors", "list<int64>"),
)
BINARY_COLUMNS = frozenset(name for name, kind in COLUMNS if kind == "binary")

# A text's box is estimated, not measured: measuring needs the app's font (Qt), which the
# export must not need. Measured with Qt's default sans serif, a character averages 0.50-0.59
# of the font size across (0.28 for "i", 0.99 for "W") and a line is 1.16 high.
TEXT_CHAR_WIDTH = 0.55  # of the font size, per character of the longest line
TEXT_LINE_HEIGHT = 1.2  # of the font size, per line
_EMPTY: Row = dict.fromkeys(name for name, _ in COLUMNS)


def rows_of(header: SessionHeader, records: Iterator[Record]) -> Iterator[Row]:
    """The header's row (seq 0), then one row per record, numbered on."""
    yield header_row(header)
    authority = op_authority(header)  # a private session's ops are checked as lived
    for seq, record in enumerate(records, start=1):
        yield record_row(header, seq, record, authority)


def header_row(header: SessionHeader) -> Row:
    row = _base(header, 0, header.t_us, "header")
    row["event_fields"] = _json(
        {
            "app_version": header.app_version,
            "group": header.group,
            "private": header.key_id is not None,
            "key_id": header.key_id,
            "drawing_key": header.drawing_key,
            "iface": header.iface,
            "member_name": header.member_name,
            "params": dict(header.params),
            "schema_version": header.schema_version,
            "ttl": header.ttl,
        }
    )
    return row


def record_row(
    header: SessionHeader, seq: int, record: Record, authority: OpAuthority | None = None
) -> Row:
    """``authority``: a private session's (reader.op_authority): an op no drawer proved is
    described as ``unproven``, and a board given on joining loses such ops, as the live
    member's replica left them out."""
    row = _base(header, seq, record.t_us, record.kind.name.lower())
    match record:
        case DeliveredRecord():
            row["origin"] = _i64(record.origin)
            key = [_i64(k) for k in record.order_key]
            row["order_key"] = None if None in key else key  # a key beyond int64: no key
            row["sent_us"] = record.sent_us
            row["late"] = record.late
            _describe_payload(row, record.payload, authority)
        case LocalOpRecord() | UndeliveredRecord():
            _describe_payload(row, record.payload, authority)
        case MemberRecord():
            row["member"] = _i64(record.member)
            row["state"] = record.state
        case JoinProgressRecord():
            row["received"] = record.received
            row["total"] = record.total
        case StateReceivedRecord():
            row["size_bytes"] = record.size
            row["duration_us"] = record.join_us
            # The board a joiner started from: replaying its log starts from it. Empty when
            # it was too large for a record (then only its size is known).
            row["payload"] = _proven_state(record.state, authority) or None
        case StateSentRecord():
            row["request"] = record.request
            row["duration_us"] = record.answer_us
        case FailureRecord():
            row["reason"] = record.reason
        case ProtocolRecord():
            row["name"] = record.name
            row["event_fields"] = _json(record.fields)
        case CountersRecord():
            row["event_fields"] = _json(record.counters)
        case SideRecord():  # a pointer, a laser point or a view (whiteboard/pointer.py)
            row["origin"] = _i64(record.origin)
            row["payload"] = record.payload
            row["name"] = _side_kind(record.payload)
        case FollowRecord():
            row["member"] = _i64(record.member)  # 0: stopped following
    return row


def _side_kind(payload: bytes) -> str:
    """``pointer``, ``laser``, ``view``, ``view_asking`` (a view that asks everyone to follow),
    or ``invalid``: what a side row is, for counting without decoding."""
    try:
        message = decode_side(payload)
    except PointerDecodeError:
        return "invalid"
    if isinstance(message, SharedView):
        return "view_asking" if message.asks_follow else "view"
    return message.kind.name.lower()


def date_of(t_us: int) -> str:
    """The UTC date of a time, ``YYYY-MM-DD``: the partition a row goes to (``unknown`` for a
    time no calendar has, which only a broken clock writes)."""
    try:
        return datetime.fromtimestamp(t_us / 1_000_000, UTC).strftime("%Y-%m-%d")
    except (OverflowError, ValueError, OSError):
        return "unknown"


def _base(header: SessionHeader, seq: int, t_us: int, kind: str) -> Row:
    row = dict(_EMPTY)
    row.update(
        session_id=header.session_id,
        seq=seq,
        kind=kind,
        t_us=t_us,
        transport=header.transport,
        local_member=_i64(header.member_id),
    )
    return row


def _proven_state(state: bytes, authority: OpAuthority | None) -> bytes:
    """A board given on joining, without the ops the live member left out for want of a
    drawer's proof (an unusable one as it is: its readers say why)."""
    if authority is None or not state:
        return state
    try:
        board = Board.from_snapshot(state, lambda op, p: snapshot_op_proven(op, p, authority))
    except SnapshotError:
        return state
    return board.snapshot()


def _describe_payload(row: Row, payload: bytes, authority: OpAuthority | None) -> None:
    row["size_bytes"] = len(payload)
    if is_presence(payload):
        try:
            presence = decode_presence(payload)
        except PresenceDecodeError as exc:
            row.update(payload_kind="invalid", reason=str(exc))
            return
        row["payload_kind"] = "presence"
        row["event_fields"] = _json(
            {
                "name": presence.name,
                "colour": presence.colour,
                "ops": presence.board.ops,
                "last_key": list(presence.board.last_key or ()),
                "board_hash": presence.board.board_hash,
                "nacks_sent": presence.nacks_sent,
                "retransmissions": presence.retransmissions,
                "late_delivered": presence.late_delivered,
            }
        )
        return
    kind = "op"
    try:
        # A private session's: what a drawer proved, judged as the member judged it.
        inner, proof = open_payload(payload, authority, row["t_us"] / 1e6)
        if is_carried(inner):
            # An op another member handed on (whiteboard/carry.py): the op itself is
            # described; its kind says it is a hand-on, not the author's own delivery.
            carried = decode_carried(inner)
            op, kind = carried.op, "carried"
            if not carried_proven(carried, authority):
                raise UnprovenOpError("an op handed on without its author's proof")
        else:
            op = decode_op(inner)
            if proof is not None:
                payload = inner  # the op's own bytes, what the Spark replay folds
    except UnprovenOpError as exc:
        row.update(payload_kind="unproven", reason=str(exc))
        return
    except (OpDecodeError, CarryDecodeError) as exc:
        row.update(payload_kind="invalid", reason=str(exc))
        return
    row.update(
        payload_kind=kind,
        op_kind=op.kind.name,
        op_author=_i64(op.id.author),
        op_counter=_i64(op.id.counter),
        op_fields=_json(op_fields(op)),
        payload=payload,
        ink_length=stroke_length(op.points) if isinstance(op, Stroke) else None,
        bbox=op_bbox(op),
        target_authors=target_authors(op),
    )


def op_fields(op: Op) -> dict[str, Any]:
    """What an op did, in a few numbers: sizes rather than contents (a stroke's point count,
    a text's length). The contents are in the row's ``payload``, for whoever needs them."""
    match op:
        case Stroke():
            return {
                "points": len(op.points) // 2,
                "colour": op.colour,
                "width": op.width,
                "tool": op.tool.name,
            }
        case Shape():
            return {
                "x1": op.x1, "y1": op.y1, "x2": op.x2, "y2": op.y2,
                "colour": op.colour, "width": op.width, "fill": op.fill,
            }  # fmt: skip
        case Text():
            return {
                "x": op.x,
                "y": op.y,
                "chars": len(op.text),
                "colour": op.colour,
                "font_size": op.font_size,
            }
        case Erase():
            return {"targets": len(op.targets)}
        case Move():
            return {"targets": len(op.targets), "dx": op.dx, "dy": op.dy}
        case Restyle():
            style = {"colour": op.colour, "width": op.width, "fill": op.fill}
            style |= {"opacity": op.opacity, "font_size": op.font_size}
            return {"targets": len(op.targets)} | {k: v for k, v in style.items() if v is not None}
        case TextEdit():
            return {"target": str(op.target), "chars": len(op.text), "font_size": op.font_size}
        case Transform():
            return {"targets": len(op.targets), "matrix": list(op.matrix)}
        case Reorder():
            return {"targets": len(op.targets), "place": op.place.name}
        case Blob():
            return {"bytes": len(op.data), "digest": op.digest.hex()}
        case Image():
            return {
                "digest": op.digest.hex(),
                "x": op.x, "y": op.y, "width": op.width, "height": op.height,
                "opacity": op.opacity,
            }  # fmt: skip
        case Undo() | Redo():
            return {"target": str(op.target)}
        case Clear():
            return {}
    return {}


def stroke_length(points: tuple[float, ...]) -> float:
    """The length of a polyline given as flat ``x0, y0, x1, y1, ...``: the sum of its
    segments' lengths, 0 for a dot."""
    return math.fsum(
        math.hypot(points[i + 2] - points[i], points[i + 3] - points[i + 1])
        for i in range(0, len(points) - 2, 2)
    )


def op_bbox(op: Op) -> list[float] | None:
    """``[x0, y0, x1, y1]``: the extent of what a drawing op paints, in board units, pen width
    included, before any move (the app's ``content_bounds``; a text's is estimated, see
    TEXT_CHAR_WIDTH). ``None`` for ops that draw nothing themselves."""
    if isinstance(op, Stroke | Shape | Text | Image):
        return list(content_bounds(op, _estimated_text_rect))
    return None


def _estimated_text_rect(op: Text) -> Rect:
    lines = op.text.split("\n")
    width = TEXT_CHAR_WIDTH * op.font_size * max(len(line) for line in lines)
    height = TEXT_LINE_HEIGHT * op.font_size * len(lines)
    return (op.x, op.y, op.x + width, op.y + height)


def target_authors(op: Op) -> list[int] | None:
    """The author of each target of an ERASE, MOVE, RESTYLE, REORDER or TRANSFORM, in order;
    of an UNDO's, REDO's or EDIT_TEXT's one target. ``None`` for other ops."""
    match op:
        case Erase() | Move() | Restyle() | Reorder() | Transform():
            return [target.author for target in op.targets]
        case Undo() | Redo() | TextEdit():
            return [op.target.author]
    return None


def _i64(value: int) -> int | None:
    return value if INT64_MIN <= value <= INT64_MAX else None


def _json(values: Mapping[str, Any]) -> str:
    return json.dumps(_finite(dict(values)), sort_keys=True, separators=(",", ":"))


def _finite(value: Any) -> Any:
    # JSON has no NaN or infinity: a protocol field that is one becomes null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


__all__ = [
    "BINARY_COLUMNS",
    "COLUMNS",
    "Row",
    "date_of",
    "header_row",
    "op_bbox",
    "op_fields",
    "record_row",
    "rows_of",
    "stroke_length",
    "target_authors",
]
