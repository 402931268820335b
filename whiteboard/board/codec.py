"""The msgpack wire form of ops: ``[kind, author, counter, *fields]``.

An array rather than a map keeps a 40-point stroke under 1,000 bytes (one datagram) and makes
the layout a fixed contract, tabled in docs/board-model.md. Floats always travel as float64,
so ``decode_op(encode_op(op)) == op`` bit for bit.

Decoding is the board's trust boundary: the bytes come from any host on the multicast group.
:func:`decode_op` therefore bounds every msgpack length before anything is allocated, and turns
every failure into :class:`OpDecodeError` with a message that names the offending field.
"""

from __future__ import annotations

from typing import Any

import msgpack

from whiteboard.board.ops import (
    MAX_BLOB_BYTES,
    MAX_POINTS,
    MAX_TARGETS,
    MAX_TEXT_CHARS,
    OP_TYPES,
    SHAPE_KINDS,
    Blob,
    Clear,
    Erase,
    Image,
    InvalidOpError,
    Move,
    Op,
    OpId,
    OpKind,
    Redo,
    Reorder,
    Restyle,
    Shape,
    Stroke,
    Text,
    TextEdit,
    Transform,
    Undo,
    stroke_from_wire,
)

# The largest op is a BLOB (an image's bytes) with its framing; every other kind stays far
# below (a 20,000-point stroke is ~320 KB).
MAX_OP_BYTES = MAX_BLOB_BYTES + 1024

# Fields after [kind, author, counter], per kind: the wire layout, also used in messages.
WIRE_FIELDS: dict[OpKind, tuple[str, ...]] = {
    OpKind.STROKE: ("points", "colour", "width", "tool"),
    OpKind.LINE: ("x1", "y1", "x2", "y2", "colour", "width", "fill"),
    OpKind.RECT: ("x1", "y1", "x2", "y2", "colour", "width", "fill"),
    OpKind.ELLIPSE: ("x1", "y1", "x2", "y2", "colour", "width", "fill"),
    OpKind.ARROW: ("x1", "y1", "x2", "y2", "colour", "width", "fill"),
    OpKind.TEXT: ("x", "y", "text", "colour", "font_size"),
    OpKind.ERASE: ("targets",),
    OpKind.MOVE: ("targets", "dx", "dy"),
    OpKind.CLEAR: (),
    OpKind.UNDO: ("target_author", "target_counter"),
    OpKind.REDO: ("target_author", "target_counter"),
    # A style field left as it is travels as nil.
    OpKind.RESTYLE: ("targets", "colour", "width", "fill", "opacity", "font_size"),
    OpKind.REORDER: ("targets", "place"),
    OpKind.EDIT_TEXT: ("target_author", "target_counter", "text", "font_size"),
    OpKind.TRANSFORM: ("targets", "a", "b", "c", "d", "e", "f"),
    OpKind.BLOB: ("data",),
    OpKind.IMAGE: ("digest", "x", "y", "width", "height", "opacity"),
}

# Limits handed to msgpack so that a hostile length prefix cannot make it allocate much. They
# are twice the longest array (a stroke's points) and str (a text of 4-byte characters) an op
# may hold, so that a modest overflow still reaches the field checks and their clearer
# messages. The bins are a BLOB's bytes and an IMAGE's digest; nothing in an op is a map or an
# ext (a few small maps are let through only to be refused by name: "must be a msgpack array").
# A bin's length is also bounded by the op's size (MAX_OP_BYTES), checked before unpacking.
UNPACK_LIMITS: dict[str, int] = {
    "max_array_len": 4 * max(MAX_POINTS, MAX_TARGETS),
    "max_str_len": 8 * MAX_TEXT_CHARS,
    "max_bin_len": MAX_BLOB_BYTES,
    "max_map_len": 32,
    "max_ext_len": 0,
}


class OpDecodeError(ValueError):
    """Bytes that are not a valid encoded op. The message says what is wrong, for a log."""


def _flat_ids(ids: tuple[OpId, ...]) -> list[int]:
    flat: list[int] = []
    for author, counter in ids:
        flat.append(author)
        flat.append(counter)
    return flat


def op_to_wire(op: Op) -> list[Any]:
    """The msgpack-ready array of ``op`` (also embedded as is in snapshots)."""
    if not isinstance(op, OP_TYPES):
        raise TypeError(f"not an op: {type(op).__name__}")
    author, counter = op.id
    match op:
        case Stroke():
            return [1, author, counter, op.points, op.colour, op.width, int(op.tool)]
        case Shape():
            return [
                int(op.kind), author, counter,
                op.x1, op.y1, op.x2, op.y2, op.colour, op.width, op.fill,
            ]  # fmt: skip
        case Text():
            return [6, author, counter, op.x, op.y, op.text, op.colour, op.font_size]
        case Erase():
            return [7, author, counter, _flat_ids(op.targets)]
        case Move():
            return [8, author, counter, _flat_ids(op.targets), op.dx, op.dy]
        case Clear():
            return [9, author, counter]
        case Undo():
            return [10, author, counter, op.target.author, op.target.counter]
        case Redo():
            return [11, author, counter, op.target.author, op.target.counter]
        case Restyle():
            return [
                12, author, counter, _flat_ids(op.targets),
                op.colour, op.width, op.fill, op.opacity, op.font_size,
            ]  # fmt: skip
        case Reorder():
            return [13, author, counter, _flat_ids(op.targets), int(op.place)]
        case TextEdit():
            target = op.target
            return [14, author, counter, target.author, target.counter, op.text, op.font_size]
        case Transform():
            return [15, author, counter, _flat_ids(op.targets), *op.matrix]
        case Blob():
            return [16, author, counter, op.data]
        case Image():
            return [17, author, counter, op.digest, op.x, op.y, op.width, op.height, op.opacity]
    raise AssertionError(f"unhandled op type {type(op).__name__}")


def encode_op(op: Op) -> bytes:
    """The wire bytes of ``op``. Valid ops always fit in :data:`MAX_OP_BYTES`."""
    data: bytes = msgpack.packb(op_to_wire(op), use_bin_type=True)
    return data


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _pairs(name: str, flat: object) -> Any:
    """``[a, b, c, d]`` as ``[(a, b), (c, d)]``: op ids, unchecked (the op checks them)."""
    if not isinstance(flat, tuple | list):
        raise OpDecodeError(
            f"op field {name!r} must be a flat array [author, counter, ...] of 1..{MAX_TARGETS}"
            f" op ids, got {type(flat).__name__} {_describe(flat)}"
        )
    if len(flat) % 2 or not 2 <= len(flat) <= 2 * MAX_TARGETS:
        raise OpDecodeError(
            f"op field {name!r} must be a flat array [author, counter, ...] of 1..{MAX_TARGETS}"
            f" op ids, got {len(flat)} numbers"
        )
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def op_from_wire(item: object) -> Op:
    """The op of an unpacked wire array; raises :class:`OpDecodeError` if it is not valid."""
    if not isinstance(item, tuple | list):
        raise OpDecodeError(
            f"an op must be a msgpack array [kind, author, counter, ...], "
            f"got {type(item).__name__} {_describe(item)}"
        )
    if len(item) < 3:
        raise OpDecodeError(
            f"an op must be a msgpack array [kind, author, counter, ...], got {len(item)} items"
        )
    raw_kind = item[0]
    if not isinstance(raw_kind, int) or isinstance(raw_kind, bool):
        raise OpDecodeError(
            f"op field 'kind' must be an int, got {type(raw_kind).__name__} {_describe(raw_kind)}"
        )
    try:
        kind = OpKind(raw_kind)
    except ValueError:
        raise OpDecodeError(
            f"op field 'kind' must be a known op kind 1..{max(OpKind)}, got {raw_kind}"
        ) from None
    fields = WIRE_FIELDS[kind]
    if len(item) != 3 + len(fields):
        layout = ", ".join(("kind", "author", "counter", *fields))
        raise OpDecodeError(
            f"an op of kind {kind.name} must be an array of {3 + len(fields)} items "
            f"[{layout}], got {len(item)} items"
        )
    # Unchecked values from the wire: each op's __post_init__ checks and converts them.
    op_id: Any = (item[1], item[2])
    values: Any = item[3:]
    try:
        if kind is OpKind.STROKE:
            return stroke_from_wire(*item[1:])
        if kind in SHAPE_KINDS:
            return Shape(op_id, kind, *values)
        if kind is OpKind.TEXT:
            return Text(op_id, *values)
        if kind is OpKind.ERASE:
            return Erase(op_id, _pairs("targets", values[0]))
        if kind is OpKind.MOVE:
            return Move(op_id, _pairs("targets", values[0]), *values[1:])
        if kind is OpKind.CLEAR:
            return Clear(op_id)
        if kind is OpKind.UNDO:
            return Undo(op_id, values)
        if kind is OpKind.REDO:
            return Redo(op_id, values)
        if kind is OpKind.RESTYLE:
            return Restyle(op_id, _pairs("targets", values[0]), *values[1:])
        if kind is OpKind.REORDER:
            return Reorder(op_id, _pairs("targets", values[0]), *values[1:])
        if kind is OpKind.EDIT_TEXT:
            return TextEdit(op_id, values[:2], *values[2:])
        if kind is OpKind.TRANSFORM:
            return Transform(op_id, _pairs("targets", values[0]), values[1:])
        if kind is OpKind.BLOB:
            return Blob(op_id, *values)
        return Image(op_id, *values)
    except InvalidOpError as error:
        raise OpDecodeError(str(error)) from None


def decode_op(data: bytes) -> Op:
    """The op encoded in ``data``. Raises :class:`OpDecodeError`, and nothing else, if invalid."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise OpDecodeError(f"op data must be bytes, got {type(data).__name__}")
    if len(data) > MAX_OP_BYTES:
        raise OpDecodeError(f"op is {len(data)} bytes, more than the limit of {MAX_OP_BYTES}")
    try:
        item = msgpack.unpackb(
            data, raw=False, strict_map_key=True, use_list=False, **UNPACK_LIMITS
        )
    except msgpack.ExtraData:
        raise OpDecodeError("op data has trailing bytes after the msgpack array") from None
    # msgpack reports bad input through a zoo of types (FormatError, StackError, ValueError,
    # UnicodeDecodeError, TypeError...); whatever it is, the datagram is simply not an op.
    except Exception as error:
        raise OpDecodeError(f"op data is not valid msgpack: {error}") from None
    try:
        return op_from_wire(item)
    except OpDecodeError:
        raise
    # op_from_wire is meant to raise only OpDecodeError; should some oddity slip through, a
    # datagram from the network must still not take the receiving peer down.
    except Exception as error:
        raise OpDecodeError(f"malformed op ({type(error).__name__}: {error})") from None
