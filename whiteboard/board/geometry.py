"""Where a drawing op paints, in board units: the one definition the app (hit testing,
painting) and the session-log export (``bbox``) share. Qt-free: a text's box depends on a
font, so the caller says how a text is measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from whiteboard.board.ops import DrawingOp, Image, OpKind, Shape, Stroke, Text

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
    if isinstance(op, Image):
        return (op.x, op.y, op.x + op.width, op.y + op.height)
    return text_rect(op)


# The linear part (a, b, c, d) of where an object is shown: (x, y) -> (a*x + c*y, b*x + d*y),
# then its offset (dx, dy). None: the identity (an object never transformed).
Linear = tuple[float, float, float, float]


def compose(
    matrix: tuple[float, float, float, float, float, float],
    linear: Linear | None,
    dx: float,
    dy: float,
) -> tuple[Linear, float, float]:
    """The placement ``(linear, dx, dy)`` followed by the affine ``matrix`` (a TRANSFORM's):
    the same arithmetic, in the same order, on every replica (docs/board-model.md)."""
    a, b, c, d, e, f = matrix
    la, lb, lc, ld = (1.0, 0.0, 0.0, 1.0) if linear is None else linear
    placed = (a * la + c * lb, b * la + d * lb, a * lc + c * ld, b * lc + d * ld)
    return placed, a * dx + c * dy + e, b * dx + d * dy + f


def placed_point(
    x: float, y: float, dx: float, dy: float, linear: Linear | None
) -> tuple[float, float]:
    """Where the point (x, y) of a drawing is shown."""
    if linear is None:
        return x + dx, y + dy
    a, b, c, d = linear
    return a * x + c * y + dx, b * x + d * y + dy


def unplaced_point(
    x: float, y: float, dx: float, dy: float, linear: Linear | None
) -> tuple[float, float]:
    """The point of a drawing shown at (x, y): :func:`placed_point` undone."""
    x, y = x - dx, y - dy
    if linear is None:
        return x, y
    a, b, c, d = linear
    det = a * d - b * c
    return (d * x - c * y) / det, (a * y - b * x) / det


def placed_rect(rect: Rect, dx: float, dy: float, linear: Linear | None) -> Rect:
    """The rectangle around ``rect`` of a drawing where it is shown."""
    x0, y0, x1, y1 = rect
    if linear is None:
        return (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
    box = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    corners = [placed_point(x, y, dx, dy, linear) for x, y in box]
    xs, ys = [p[0] for p in corners], [p[1] for p in corners]
    return (min(xs), min(ys), max(xs), max(ys))


def mapped_rect(
    matrix: tuple[float, float, float, float, float, float], rect: Rect
) -> Rect:
    """The rectangle around ``rect`` once mapped by the affine ``matrix`` (a TRANSFORM's)."""
    a, b, c, d, e, f = matrix
    return placed_rect(rect, e, f, (a, b, c, d))


def linear_scale(linear: Linear | None) -> float:
    """How much a placement scales lengths, on average (the square root of its area scale):
    a pen's width, a hit's reach."""
    if linear is None:
        return 1.0
    a, b, c, d = linear
    return math.sqrt(abs(a * d - b * c))


__all__ = [
    "ARROW_HEAD_ANGLE",
    "Linear",
    "Rect",
    "TextRect",
    "arrow_head_length",
    "compose",
    "content_bounds",
    "linear_scale",
    "mapped_rect",
    "placed_point",
    "placed_rect",
    "unplaced_point",
]
