"""Where a drawing op paints, in board units: the one definition the app (hit testing,
painting) and the session-log export (``bbox``) share. Qt-free: a text's box depends on a
font, so the caller says how a text is measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from whiteboard.board.ops import DrawingOp, OpKind, Shape, Stroke, Text

# An axis-aligned rectangle (x0, y0, x1, y1) with x0 <= x1 and y0 <= y1.
Rect = tuple[float, float, float, float]
TextRect = Callable[[Text], Rect]
# An arrow's head: its sides make this angle with the shaft (as the app paints it).
ARROW_HEAD_ANGLE = math.radians(25.0)


def arrow_head_length(width: float) -> float:
    """How long an arrow's head is for a pen ``width`` (shorter arrows cut it to their
    length): it grows with the pen, so that a thick arrow still has a visible head."""
    return max(10.0, 4.0 * width)


def content_bounds(op: DrawingOp, text_rect: TextRect) -> Rect:
    """What ``op`` paints, pen width included (no antialiasing margin), before its offset."""
    if isinstance(op, Stroke):
        points = op.points
        xs, ys = points[0::2], points[1::2]
        half = op.width / 2.0
        return (min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)
    if isinstance(op, Shape):
        half = op.width / 2.0
        if op.kind is OpKind.ARROW:
            # The head is wider than the pen: as wide as its length times tan(25 degrees).
            half += arrow_head_length(op.width) * math.tan(ARROW_HEAD_ANGLE)
        return (
            min(op.x1, op.x2) - half,
            min(op.y1, op.y2) - half,
            max(op.x1, op.x2) + half,
            max(op.y1, op.y2) + half,
        )
    return text_rect(op)


__all__ = ["ARROW_HEAD_ANGLE", "Rect", "TextRect", "arrow_head_length", "content_bounds"]
