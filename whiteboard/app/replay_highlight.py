"""Highlighting members in a replay: a see-through white veil over the board, and the
highlighted members' objects painted again on top of it, at full strength.

A child widget of the canvas, transparent to the mouse, painted after it: the canvas and its
tile cache are left as they are (they know nothing of highlighting), so turning a highlight on
or off costs one repaint.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.render import Geometry, geometry, paint_objects
from whiteboard.app.view import board_transform
from whiteboard.board import BoardObject, OpId

VEIL = QColor(255, 255, 255, 175)


class HighlightOverlay(QWidget):
    """Covers ``canvas``; :meth:`show_objects` says what to pick out."""

    def __init__(self, canvas: BoardCanvas) -> None:
        super().__init__(canvas)
        self.canvas = canvas
        self.objects: tuple[BoardObject, ...] = ()
        self._geometry: dict[OpId, Geometry] = {}
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setGeometry(canvas.rect())
        canvas.installEventFilter(self)
        self.hide()

    def show_objects(self, objects: Sequence[BoardObject], active: bool) -> None:
        """Pick out ``objects`` (bottom first); ``active`` False takes the veil away."""
        self.objects = tuple(objects) if active else ()
        # Paths are kept for the objects shown only: the cache stays the highlight's size.
        cache = self._geometry
        self._geometry = {obj.id: cache.get(obj.id) or geometry(obj.op) for obj in self.objects}
        self.setVisible(active)
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.canvas and event.type() == QEvent.Type.Resize:
            self.setGeometry(self.canvas.rect())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.fillRect(self.rect(), VEIL)
            view = self.canvas.view
            x0, y0, x1, y1 = view.rect_to_board((0.0, 0.0, self.width(), self.height()))
            seen = QRectF(x0, y0, x1 - x0, y1 - y0)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            painter.setTransform(board_transform(view))
            known = self._geometry
            paint_objects(painter, self.objects, seen, lambda obj: known[obj.id])
        finally:
            painter.end()


__all__ = ["VEIL", "HighlightOverlay"]
