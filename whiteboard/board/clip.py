"""Objects on the clipboard (issue 20): what a copy carries between boards, and how pasted
objects become new drawings. Qt-free; the app's clipboard glue is whiteboard/app/clipboard.py.

The clipboard is read from any application, so a clip is untrusted input, decoded as a
datagram is: each op by ``decode_op`` (the trust boundary), only drawing ops, at most
``MAX_CLIP_OBJECTS`` of them in at most ``MAX_CLIP_BYTES``, and a ``ClipError`` a person can
read for anything else. docs/board-model.md has the format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

import msgpack

from whiteboard.board.codec import (
    MAX_OP_BYTES,
    UNPACK_LIMITS,
    OpDecodeError,
    decode_op,
    encode_op,
)
from whiteboard.board.geometry import Rect, TextRect, content_bounds, mapped_rect
from whiteboard.board.model import BoardObject
from whiteboard.board.ops import (
    MAX_COORD,
    MAX_COUNTER,
    MAX_TEXT_CHARS,
    Blob,
    DrawingOp,
    Image,
    InvalidOpError,
    Matrix,
    OpId,
    Shape,
    Stroke,
    Text,
    Transform,
)

# What a clip holds: drawings, each followed by the Transform placing it if it was turned or
# resized (a rotated rectangle is not a rectangle's corners: it travels as drawn, with its
# transform), and before an image the BLOB of its bytes (once per image shown), so that a
# clip pasted into another board brings its pictures.
ClipOp = DrawingOp | Transform | Blob

CLIP_MIME = "application/x-whiteboard-objects"
CLIP_MAGIC = "whiteboard-clip"
CLIP_VERSION = 1
MAX_CLIP_OBJECTS = 10_000
MAX_CLIP_BYTES = 64 << 20  # a 10,000-object clip of long strokes fits; a bigger one is not ours


class ClipError(ValueError):
    """Bytes that are not a clip of ours, or objects that cannot be placed; says which."""


def shown(
    objects: Iterable[BoardObject], blob: Callable[[bytes], bytes | None] = lambda _: None
) -> list[ClipOp]:
    """Each object's drawing where it is shown (its offset applied; one turned or resized
    as drawn, followed by its transform), an image's bytes (``blob`` of its digest, if held)
    before it: what a copy carries and a picture of the selection shows. ClipError if one
    was moved past the board's range."""
    ops: list[ClipOp] = []
    carried: set[bytes] = set()
    try:
        for obj in objects:
            if isinstance(obj.op, Image) and obj.op.digest not in carried:
                data = blob(obj.op.digest)
                if data is not None:
                    carried.add(obj.op.digest)
                    ops.append(Blob(OpId(obj.op.id.author, MAX_COUNTER - len(ops)), data))
            if obj.linear is None:
                ops.append(translated(obj.op, obj.dx, obj.dy))
            else:
                # An id of its own, which no member's op will have reached: a clip's ids
                # only tell its ops apart (a paste gives new ones).
                own = OpId(obj.op.id.author, MAX_COUNTER - len(ops))
                matrix = (*obj.linear, obj.dx, obj.dy)
                ops += [obj.op, Transform(own, (obj.op.id,), matrix)]
    except InvalidOpError as exc:
        raise ClipError(f"an object lies beyond the edge of the board ({exc})") from None
    return ops


def encode_clip(ops: Sequence[ClipOp]) -> bytes:
    """The drawings as the clipboard carries them (``shown`` gives them for objects), in
    board order, ids kept (a paste gives new ones)."""
    if len(ops) > MAX_CLIP_OBJECTS:
        raise ClipError(f"{len(ops):,} objects are more than can be copied ({MAX_CLIP_OBJECTS:,})")
    data: bytes = msgpack.packb([CLIP_MAGIC, CLIP_VERSION, [encode_op(op) for op in ops]])
    return data


def decode_clip(data: bytes) -> list[ClipOp]:
    """The drawings in a clip; ClipError (and nothing else) if ``data`` is not a valid one."""
    if len(data) > MAX_CLIP_BYTES:
        raise ClipError(f"the clipboard holds {len(data):,} bytes, more than a board's copy")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True, **_CLIP_LIMITS)
    except Exception as exc:  # msgpack raises several kinds for bad input
        raise ClipError(f"the clipboard's objects are damaged ({exc})") from None
    if not (isinstance(value, list) and len(value) == 3 and value[0] == CLIP_MAGIC):
        raise ClipError("the clipboard holds no whiteboard objects")
    if value[1] != CLIP_VERSION:
        raise ClipError(
            f"the objects were copied by a newer whiteboard (clip version {value[1]!r}); "
            "update this one to paste them"
        )
    items = value[2]
    if not isinstance(items, list) or not all(isinstance(i, bytes) for i in items):
        raise ClipError("the clipboard's objects are damaged (not a list of ops)")
    if len(items) > MAX_CLIP_OBJECTS:
        raise ClipError(f"{len(items):,} objects are more than can be pasted")
    ops: list[ClipOp] = []
    unplaced: set[OpId] = set()  # drawings with no transform yet
    for index, item in enumerate(items):
        try:
            op = decode_op(item)
        except OpDecodeError as exc:
            raise ClipError(f"object {index + 1} on the clipboard is damaged: {exc}") from None
        if isinstance(op, Transform):
            if len(op.targets) != 1 or op.targets[0] not in unplaced:
                raise ClipError(f"object {index + 1} on the clipboard places no drawing of it")
            unplaced.discard(op.targets[0])
        elif isinstance(op, Stroke | Shape | Text | Image):
            unplaced.add(op.id)
        elif not isinstance(op, Blob):
            raise ClipError(f"object {index + 1} on the clipboard is not a drawing")
        ops.append(op)
    if ops and all(isinstance(op, Blob) for op in ops):
        raise ClipError("the clipboard holds images' bytes but nothing showing them")
    return ops


def translated(op: DrawingOp, dx: float, dy: float) -> DrawingOp:
    """``op`` drawn (dx, dy) further; InvalidOpError if that leaves the board's range."""
    if not (dx or dy):
        return op
    if isinstance(op, Stroke):
        points = tuple(v + (dx if i % 2 == 0 else dy) for i, v in enumerate(op.points))
        return dataclasses.replace(op, points=points)
    if isinstance(op, Shape):
        return dataclasses.replace(
            op, x1=op.x1 + dx, y1=op.y1 + dy, x2=op.x2 + dx, y2=op.y2 + dy
        )
    return dataclasses.replace(op, x=op.x + dx, y=op.y + dy)


def _placements(ops: Sequence[ClipOp]) -> dict[OpId, Matrix]:
    return {op.targets[0]: op.matrix for op in ops if isinstance(op, Transform)}


def bounds_of(ops: Sequence[ClipOp], text_rect: TextRect) -> Rect:
    """The box around everything ``ops`` paint (each drawing where its transform puts it)."""
    placements = _placements(ops)
    boxes = []
    for op in ops:
        if isinstance(op, Transform | Blob):
            continue
        box = content_bounds(op, text_rect)
        matrix = placements.get(op.id)
        boxes.append(box if matrix is None else mapped_rect(matrix, box))
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def placed(
    ops: Sequence[ClipOp],
    centre: tuple[float, float],
    next_id: Callable[[], OpId],
    text_rect: TextRect,
) -> list[ClipOp]:
    """New drawings of ``ops`` (new ids, same order, each transform with its drawing) whose
    box is centred on ``centre``, or as near it as the board's range allows; ClipError if
    they cannot fit at all."""
    if not ops:
        return []
    x0, y0, x1, y1 = bounds_of(ops, text_rect)
    dx = _shift(centre[0] - (x0 + x1) / 2.0, x0, x1)
    dy = _shift(centre[1] - (y0 + y1) / 2.0, y0, y1)
    placements = _placements(ops)
    renamed: dict[OpId, OpId] = {}
    copies: list[ClipOp] = []
    try:
        for op in ops:
            new_id = next_id()
            if isinstance(op, Transform):
                # The drawing stays as drawn: its transform takes it there, moved further.
                a, b, c, d, e, f = op.matrix
                targets = (renamed[op.targets[0]],)
                copies.append(Transform(new_id, targets, (a, b, c, d, e + dx, f + dy)))
                continue
            if isinstance(op, Blob):
                copies.append(Blob(new_id, op.data))  # the app sends it if the board lacks it
                continue
            renamed[op.id] = new_id
            if op.id in placements:
                copies.append(dataclasses.replace(op, id=new_id))
            else:
                copies.append(dataclasses.replace(translated(op, dx, dy), id=new_id))
    except InvalidOpError as exc:
        raise ClipError(f"the objects cannot be placed there: {exc}") from None
    return copies


def text_that_fits(text: str, make: Callable[[str], Text], max_bytes: int) -> str:
    """The longest start of ``text`` (at most MAX_TEXT_CHARS) whose text object, as ``make``
    builds it, encodes to ``max_bytes`` or less; "" if not even one character fits."""
    text = text[:MAX_TEXT_CHARS]

    def fits(count: int) -> bool:
        return len(encode_op(make(text[:count]))) <= max_bytes

    if fits(len(text)):
        return text
    low, high = 0, len(text)  # fits(low) or low == 0; not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return text[:low]


def _shift(wanted: float, low: float, high: float) -> float:
    """``wanted``, cut so that [low, high] moved by it stays within the coordinate range
    (pen widths are a margin outside it; the points themselves stay inside)."""
    return max(-MAX_COORD - low, min(MAX_COORD - high, wanted))


# The limits of an op's decoding (UNPACK_LIMITS), for a list of up to MAX_CLIP_OBJECTS encoded
# ops of at most MAX_OP_BYTES each (MAX_CLIP_BYTES bounds the whole).
_CLIP_LIMITS = {**UNPACK_LIMITS, "max_array_len": MAX_CLIP_OBJECTS, "max_bin_len": MAX_OP_BYTES}

__all__ = [
    "CLIP_MIME",
    "MAX_CLIP_OBJECTS",
    "ClipError",
    "ClipOp",
    "bounds_of",
    "decode_clip",
    "encode_clip",
    "placed",
    "shown",
    "text_that_fits",
    "translated",
]
