"""Selecting and moving objects.

A click selects the topmost object under the pointer (Shift+click adds or removes it); a
drag from an empty place selects the objects wholly inside the rectangle; a drag from a
selected object moves the selection, shown moving while dragging and sent as one Move op on
release. Delete or Backspace erases the selection; Escape drops a drag, or else the
selection.
"""

from __future__ import annotations

import math
from enum import Enum, auto

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QKeyEvent, QPainter, QPen

from whiteboard.app.strokes import erase_ops, move_ops
from whiteboard.app.tools.base import (
    CLICK_SLOP,
    HIT_TOLERANCE,
    BaseTool,
    Pointer,
    ToolHost,
    ToolKind,
)
from whiteboard.app.view import Rect, View, rect_from_points, rect_inflated, rect_translated

SELECTION_COLOUR = QColor(30, 136, 229)
MARQUEE_FILL = QColor(30, 136, 229, 40)


class _Mode(Enum):
    IDLE = auto()
    PRESSED = auto()  # on a selected object: a click, or the start of a move
    MOVING = auto()
    MARQUEE = auto()


class SelectTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind = ToolKind.SELECT) -> None:
        super().__init__(host, kind)
        self._mode = _Mode.IDLE
        self._anchor = (0.0, 0.0)
        self._anchor_widget = (0.0, 0.0)
        self._current = (0.0, 0.0)
        self._additive = False

    @property
    def active(self) -> bool:
        return self._mode is not _Mode.IDLE

    @property
    def offset(self) -> tuple[float, float]:
        """How far the selection is being dragged, in board units."""
        if self._mode is not _Mode.MOVING:
            return (0.0, 0.0)
        return (self._current[0] - self._anchor[0], self._current[1] - self._anchor[1])

    def press(self, pointer: Pointer) -> None:
        host = self.host
        self._anchor = self._current = (pointer.x, pointer.y)
        self._anchor_widget = (pointer.wx, pointer.wy)
        self._additive = pointer.shift
        item = host.scene.topmost_at(pointer.x, pointer.y, HIT_TOLERANCE / host.view.scale)
        selection = host.selection
        if item is None:
            if not pointer.shift:
                host.set_selection(())
            self._mode = _Mode.MARQUEE
        elif pointer.shift:
            if item.id in selection:
                host.set_selection(tuple(i for i in selection if i != item.id))
            else:
                host.set_selection((*selection, item.id))
            self._mode = _Mode.IDLE
        else:
            if item.id not in selection:
                host.set_selection((item.id,))
            self._mode = _Mode.PRESSED

    def move(self, pointer: Pointer) -> None:
        if self._mode is _Mode.IDLE:
            return
        before = self._marquee_rect()
        self._current = (pointer.x, pointer.y)
        if self._mode is _Mode.PRESSED:
            ax, ay = self._anchor_widget
            if math.hypot(pointer.wx - ax, pointer.wy - ay) < CLICK_SLOP:
                return
            self._mode = _Mode.MOVING
        if self._mode is _Mode.MOVING:
            dx, dy = self.offset
            self.host.set_lifted(dict.fromkeys(self.host.selection, 1.0), dx, dy)
        else:
            self.host.refresh(before)
            self.host.refresh(self._marquee_rect())

    def release(self, pointer: Pointer) -> None:
        if self._mode is _Mode.IDLE:
            return
        self.move(pointer)
        host = self.host
        if self._mode is _Mode.MOVING:
            dx, dy = self.offset
            targets = list(host.selection)
            if targets and (dx or dy):
                # Sent before the objects are put back, so they never show at their old place.
                ops = move_ops(targets, dx, dy, host.next_op_id, host.max_payload)
                for op in ops:
                    host.send(op)
                host.end_gesture([op.id for op in ops])
            host.set_lifted({})
        elif self._mode is _Mode.MARQUEE:
            rect = self._marquee_rect()
            assert rect is not None
            found = [item.id for item in host.scene.enclosed_by(rect)]
            if self._additive:
                found = list(dict.fromkeys([*host.selection, *found]))
            host.set_selection(found)
            host.refresh(rect)
        self._mode = _Mode.IDLE

    def cancel(self) -> None:
        if self._mode is _Mode.MOVING:
            self.host.set_lifted({})
        elif self._mode is _Mode.MARQUEE:
            self.host.refresh(self._marquee_rect())
        self._mode = _Mode.IDLE

    def deactivate(self) -> None:
        self.cancel()
        self.host.set_selection(())

    def key_press(self, event: QKeyEvent) -> bool:
        key = event.key()
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.erase_selection()
            return True
        if key == Qt.Key.Key_Escape:
            if self._mode is not _Mode.IDLE:
                self.cancel()
            else:
                self.host.set_selection(())
            return True
        return False

    def erase_selection(self) -> None:
        host = self.host
        targets = list(host.selection)
        if not targets:
            return
        self.cancel()
        ops = erase_ops(targets, host.next_op_id, host.max_payload)
        for op in ops:
            host.send(op)
        host.end_gesture([op.id for op in ops])
        host.set_selection(())

    def _marquee_rect(self) -> Rect | None:
        if self._mode is not _Mode.MARQUEE:
            return None
        return rect_from_points(*self._anchor, *self._current)

    def selection_rects(self) -> list[Rect]:
        """Where each selected object is shown, in board units."""
        dx, dy = self.offset
        rects = []
        for op_id in self.host.selection:
            item = self.host.scene.get(op_id)
            if item is not None:
                rects.append(rect_translated(item.rect, dx, dy))
        return rects

    def paint(self, painter: QPainter, view: View) -> None:
        pen = QPen(SELECTION_COLOUR, 1.0, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)  # one pixel wide at every zoom
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        pad = 3.0 / view.scale
        for rect in self.selection_rects():
            x0, y0, x1, y1 = rect_inflated(rect, pad)
            painter.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0))
        marquee = self._marquee_rect()
        if marquee is not None:
            painter.setBrush(MARQUEE_FILL)
            x0, y0, x1, y1 = marquee
            painter.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0))
