"""The object eraser: drag over objects; on release, one Erase op removes every one touched.

Touched objects are dimmed while the drag goes on, so one sees what will go before letting
go. The brush is the segment between two successive pointer positions, so a quick flick
erases what it passes over, not just where the mouse events landed. Its radius is in widget
pixels: the eraser is the same size on screen at every zoom.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from whiteboard.app.strokes import erase_ops
from whiteboard.app.tools.base import BaseTool, Pointer, ToolHost, ToolKind
from whiteboard.app.view import View, rect_inflated
from whiteboard.board import OpId

ERASER_RADIUS = 8.0  # widget pixels
DIMMED_OPACITY = 0.25
_OUTLINE = QColor(120, 120, 120)


class EraserTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind = ToolKind.ERASER) -> None:
        super().__init__(host, kind)
        self._last: tuple[float, float] | None = None
        self._hit: dict[OpId, None] = {}  # touched so far, in the order touched

    @property
    def active(self) -> bool:
        return self._last is not None

    @property
    def touched(self) -> tuple[OpId, ...]:
        return tuple(self._hit)

    def press(self, pointer: Pointer) -> None:
        self._last = (pointer.x, pointer.y)
        self._hit = {}
        self._brush(pointer)

    def move(self, pointer: Pointer) -> None:
        if self._last is not None:
            self._brush(pointer)

    def _brush(self, pointer: Pointer) -> None:
        assert self._last is not None
        radius = ERASER_RADIUS / self.host.view.scale
        x0, y0 = self._last
        brush = (x0, y0, pointer.x, pointer.y)
        fresh = [
            item.id for item in self.host.scene.touching(brush, radius) if item.id not in self._hit
        ]
        # The ring that follows the pointer.
        self.host.refresh(rect_inflated((x0, y0, x0, y0), radius + 2.0 / self.host.view.scale))
        self._last = (pointer.x, pointer.y)
        self.host.refresh(rect_inflated((pointer.x, pointer.y, pointer.x, pointer.y), radius * 1.5))
        if fresh:
            self._hit.update(dict.fromkeys(fresh))
            self.host.set_lifted(dict.fromkeys(self._hit, DIMMED_OPACITY))

    def release(self, pointer: Pointer) -> None:
        if self._last is None:
            return
        self._brush(pointer)
        if self._hit:
            # Sent while the objects are still lifted: they go from dimmed to hidden without
            # being painted back into the board in between.
            ops = erase_ops(list(self._hit), self.host.next_op_id, self.host.max_payload)
            for op in ops:
                self.host.send(op)
            self.host.end_gesture([op.id for op in ops])
        self.cancel()

    def cancel(self) -> None:
        if self._last is None:
            return
        x, y = self._last
        self._last = None
        self._hit = {}
        self.host.set_lifted({})
        self.host.refresh(rect_inflated((x, y, x, y), 2.0 * ERASER_RADIUS / self.host.view.scale))

    def paint(self, painter: QPainter, view: View) -> None:
        if self._last is None:
            return
        pen = QPen(_OUTLINE, 1.0)
        pen.setCosmetic(True)  # one pixel wide at every zoom
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        radius = ERASER_RADIUS / view.scale
        painter.drawEllipse(QPointF(*self._last), radius, radius)
