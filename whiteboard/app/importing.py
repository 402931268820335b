"""Bringing a saved board into a live session.

A saved board's ops belong to the members who drew them, and a member may send only its own
ops (the replica refuses an op whose author is not its sender), so opening a file into a
session draws *copies* of what the file shows, as new ops of ours: each visible object once,
in z-order, with its accumulated offset folded into its coordinates, and long strokes split to
fit the transport's payloads. What the file's history held (undone ops, erased objects) is not
replayed: the session gets the picture, not the other members' past.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from whiteboard.app.strokes import clamp_point, stroke_ops
from whiteboard.board import MAX_OP_BYTES, Board, Op, OpId, Shape, Stroke, Text, encode_op
from whiteboard.board.ops import MAX_COORD


@dataclass(frozen=True, slots=True)
class ImportPlan:
    ops: list[Op]
    skipped: int  # objects that cannot travel (a text longer than one payload holds)


def copies_of(board: Board, next_id: Callable[[], OpId], max_payload: int) -> ImportPlan:
    ops: list[Op] = []
    skipped = 0
    limit = min(max_payload, MAX_OP_BYTES)
    for obj in board.objects():
        op, dx, dy = obj.op, obj.dx, obj.dy
        if isinstance(op, Stroke):
            points = [
                clamp_point(op.points[i] + dx, op.points[i + 1] + dy)
                for i in range(0, len(op.points), 2)
            ]
            try:
                ops.extend(stroke_ops(points, op.colour, op.width, op.tool, next_id, limit))
            except ValueError:
                skipped += 1
            continue
        if isinstance(op, Shape):
            copy: Op = replace(
                op,
                id=next_id(),
                x1=_coord(op.x1 + dx),
                y1=_coord(op.y1 + dy),
                x2=_coord(op.x2 + dx),
                y2=_coord(op.y2 + dy),
            )
        else:
            assert isinstance(op, Text)
            copy = replace(op, id=next_id(), x=_coord(op.x + dx), y=_coord(op.y + dy))
        if len(encode_op(copy)) > limit:
            skipped += 1
            continue
        ops.append(copy)
    return ImportPlan(ops, skipped)


def _coord(value: float) -> float:
    # Offsets may push an object past the coordinate range ops accept; keep it at the edge.
    if not math.isfinite(value):
        return 0.0
    return min(max(value, -MAX_COORD), MAX_COORD)


__all__ = ["ImportPlan", "copies_of"]
