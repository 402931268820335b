"""Bringing a saved board into a live session.

A saved board's ops belong to the members who drew them, and a member may send only its own
ops (the replica refuses an op whose author is not its sender), so opening a file into a
session draws *copies* of what the file shows, as new ops of ours: each visible object once,
in z-order, with its accumulated offset folded into its coordinates (one turned or resized
as drawn, followed by a transform placing it), and long strokes split to fit the
transport's payloads. What the file's history held (undone ops, erased objects) is not
replayed: the session gets the picture, not the other members' past.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from whiteboard.app.strokes import clamp_point, stroke_ops
from whiteboard.board import (
    MAX_OP_BYTES,
    Blob,
    Board,
    DrawingOp,
    Image,
    Op,
    OpId,
    Shape,
    Stroke,
    Text,
    Transform,
    encode_op,
)
from whiteboard.board.ops import MAX_COORD, InvalidOpError


@dataclass(frozen=True, slots=True)
class ImportPlan:
    ops: list[Op]
    skipped: int  # objects that cannot travel (a text longer than one payload holds)


def copies_of(
    board: Board, next_id: Callable[[], OpId], max_payload: int, max_message: int = 0
) -> ImportPlan:
    """The ops drawing copies of ``board``'s objects, each within ``max_payload`` bytes
    (an image's bytes, a BLOB sent once before the first image showing them, within
    ``max_message``)."""
    ops: list[Op] = []
    skipped = 0
    limit = min(max_payload, MAX_OP_BYTES)
    carried: set[bytes] = set()
    for obj in board.objects():
        op, dx, dy = obj.op, obj.dx, obj.dy
        if isinstance(op, Image) and op.digest not in carried:
            data = board.blob(op.digest)
            blob = None if data is None else Blob(next_id(), data)
            if blob is not None and len(encode_op(blob)) <= max(limit, max_message):
                ops.append(blob)
                carried.add(op.digest)
            elif blob is not None:
                skipped += 1  # more than the transport carries at once
                continue
        if obj.linear is not None:
            # Turned or resized: copied as drawn, then placed by a transform of its own.
            drawn, skipped_here = _copies(op, 0.0, 0.0, next_id, limit)
            skipped += skipped_here
            if drawn:
                targets = tuple(copy.id for copy in drawn)
                try:
                    placing = Transform(next_id(), targets, (*obj.linear, dx, dy))
                except InvalidOpError:  # turned or resized past what one op may say
                    skipped += 1
                    continue
                ops += [*drawn, placing]
            continue
        drawn, skipped_here = _copies(op, dx, dy, next_id, limit)
        ops += drawn
        skipped += skipped_here
    return ImportPlan(ops, skipped)


def _copies(
    op: DrawingOp, dx: float, dy: float, next_id: Callable[[], OpId], limit: int
) -> tuple[list[DrawingOp], int]:
    """New drawings of ``op`` moved by (dx, dy) (a long stroke in several), and how many
    could not be made (0 or 1)."""
    if isinstance(op, Stroke):
        points = [
            clamp_point(op.points[i] + dx, op.points[i + 1] + dy)
            for i in range(0, len(op.points), 2)
        ]
        try:
            return list(stroke_ops(points, op.colour, op.width, op.tool, next_id, limit)), 0
        except ValueError:
            return [], 1
    if isinstance(op, Shape):
        copy: DrawingOp = replace(
            op,
            id=next_id(),
            x1=_coord(op.x1 + dx),
            y1=_coord(op.y1 + dy),
            x2=_coord(op.x2 + dx),
            y2=_coord(op.y2 + dy),
        )
    else:
        assert isinstance(op, Text | Image)
        copy = replace(op, id=next_id(), x=_coord(op.x + dx), y=_coord(op.y + dy))
    if len(encode_op(copy)) > limit:
        return [], 1
    return [copy], 0


def _coord(value: float) -> float:
    # Offsets may push an object past the coordinate range ops accept; keep it at the edge.
    if not math.isfinite(value):
        return 0.0
    return min(max(value, -MAX_COORD), MAX_COORD)


__all__ = ["ImportPlan", "copies_of"]
