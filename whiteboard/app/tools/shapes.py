"""Lines, rectangles, ellipses and arrows: drag from one corner (or end) to the other.

Shift constrains: a rectangle to a square, an ellipse to a circle, a line or arrow to the
nearest multiple of 45 degrees. Rectangles and ellipses take the canvas's fill; lines and
arrows have none. A click without a drag draws nothing.
"""

from __future__ import annotations

import math

from PySide6.QtGui import QPainter

from whiteboard.app.render import paint_shape
from whiteboard.app.strokes import clamp_point
from whiteboard.app.tools.base import CLICK_SLOP, BaseTool, Pointer, ToolHost, ToolKind
from whiteboard.app.view import Rect, View, rect_from_points, rect_inflated
from whiteboard.board import OpId, OpKind, Shape

KINDS = {
    ToolKind.LINE: OpKind.LINE,
    ToolKind.RECT: OpKind.RECT,
    ToolKind.ELLIPSE: OpKind.ELLIPSE,
    ToolKind.ARROW: OpKind.ARROW,
}
# A preview is a Shape like any other; it needs an id, never sent.
_PREVIEW_ID = OpId(1, 0)


def constrain(kind: OpKind, x1: float, y1: float, x2: float, y2: float) -> tuple[float, float]:
    """Where (x2, y2) goes with Shift held: a square or circle's box, or a line at a multiple
    of 45 degrees of the same length."""
    dx, dy = x2 - x1, y2 - y1
    if kind in (OpKind.RECT, OpKind.ELLIPSE):
        side = max(abs(dx), abs(dy))
        return (x1 + math.copysign(side, dx), y1 + math.copysign(side, dy))
    length = math.hypot(dx, dy)
    if length == 0.0:
        return (x2, y2)
    angle = round(math.atan2(dy, dx) / (math.pi / 4.0)) * (math.pi / 4.0)
    # Multiples of 45 degrees: cos and sin are 0, +-1 or +-sqrt(1/2); round off the 1e-17s.
    return (x1 + round(length * math.cos(angle), 9), y1 + round(length * math.sin(angle), 9))


class ShapeTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind) -> None:
        super().__init__(host, kind)
        self.shape_kind = KINDS[kind]
        self._anchor: tuple[float, float] | None = None
        self._anchor_widget = (0.0, 0.0)
        self._raw = (0.0, 0.0)  # where the pointer is, before any constraint
        self._shift = False
        self._dragged = False

    @property
    def active(self) -> bool:
        return self._anchor is not None

    def press(self, pointer: Pointer) -> None:
        self._anchor = clamp_point(pointer.x, pointer.y)
        self._anchor_widget = (pointer.wx, pointer.wy)
        self._raw = self._anchor
        self._shift = pointer.shift
        self._dragged = False

    def move(self, pointer: Pointer) -> None:
        if self._anchor is None:
            return
        before = self._preview_rect()
        self._raw = clamp_point(pointer.x, pointer.y)
        self._shift = pointer.shift
        ax, ay = self._anchor_widget
        if math.hypot(pointer.wx - ax, pointer.wy - ay) >= CLICK_SLOP:
            self._dragged = True
        self._refresh(before)

    def shift_changed(self, shift: bool) -> None:
        if self._anchor is not None and shift != self._shift:
            before = self._preview_rect()
            self._shift = shift
            self._refresh(before)

    def release(self, pointer: Pointer) -> None:
        if self._anchor is None:
            return
        self.move(pointer)
        shape = self.preview() if self._dragged else None
        self.cancel()
        if shape is not None:
            op = Shape(
                self.host.next_op_id(),
                shape.kind,
                shape.x1,
                shape.y1,
                shape.x2,
                shape.y2,
                shape.colour,
                shape.width,
                shape.fill,
            )
            self.host.send(op)
            self.host.end_gesture([op.id])

    def cancel(self) -> None:
        if self._anchor is not None:
            before = self._preview_rect()
            self._anchor = None
            self.host.refresh(before)

    def preview(self) -> Shape | None:
        """The shape as it would be sent now."""
        if self._anchor is None:
            return None
        x1, y1 = self._anchor
        x2, y2 = self._raw
        if self._shift:
            x2, y2 = clamp_point(*constrain(self.shape_kind, x1, y1, x2, y2))
        filled = self.shape_kind in (OpKind.RECT, OpKind.ELLIPSE)
        return Shape(
            _PREVIEW_ID,
            self.shape_kind,
            x1,
            y1,
            x2,
            y2,
            self.host.colour,
            self.host.pen_width,
            self.host.fill if filled else 0,
        )

    def paint(self, painter: QPainter, view: View) -> None:
        shape = self.preview()
        if shape is not None:
            paint_shape(painter, shape)

    def _preview_rect(self) -> Rect | None:
        shape = self.preview()
        if shape is None:
            return None
        # Generous: an arrow head sticks out by up to twice the pen's reach.
        margin = shape.width * 3.0 + 12.0
        return rect_inflated(rect_from_points(shape.x1, shape.y1, shape.x2, shape.y2), margin)

    def _refresh(self, before: Rect | None) -> None:
        if before is not None:
            self.host.refresh(before)
        after = self._preview_rect()
        if after is not None:
            self.host.refresh(after)
