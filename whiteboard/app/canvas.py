"""The board widget: paints a board's visible objects and turns left-button drags into
Stroke ops.

It never applies its own ops: it hands them to ``on_local_op`` and the transport delivers them
back like anyone else's, so this board and every other one apply the same ops in the same
order. Until then a sent stroke is painted as *pending*, so drawing never blinks even on a
transport that delivers after a round trip.

Board coordinates are the widget's logical coordinates (no pan or zoom yet). Qt scales logical
coordinates to device pixels itself, so painting is sharp on HiDPI screens.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from whiteboard.app.render import Geometry, geometry, paint_op, round_pen, smooth_path
from whiteboard.app.strokes import Point, clamp_point, simplify, stroke_ops
from whiteboard.board import MAX_OP_BYTES, Board, Change, DrawingOp, Op, OpId, Stroke, Tool

BACKGROUND = QColor(255, 255, 255)
DEFAULT_COLOUR = 0xFF000000
DEFAULT_WIDTH = 3.0

BoardSource = Callable[[], Board]
OpSink = Callable[[Op], None]


class BoardCanvas(QWidget):
    def __init__(
        self,
        board_source: BoardSource,
        next_op_id: Callable[[], OpId],
        on_local_op: OpSink | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        # A callable rather than a Board: a replica replaces its board when it loads a state.
        self._board_source = board_source
        self._next_op_id = next_op_id
        self.on_local_op = on_local_op
        # Long strokes are split so that each op fits one payload of the transport.
        self.max_payload = MAX_OP_BYTES
        self.colour = DEFAULT_COLOUR
        self.width = DEFAULT_WIDTH
        self.tool = Tool.PEN
        self._read_only = False
        self._captured: list[Point] | None = None  # the drag in progress, if any
        self._pending: dict[OpId, Stroke] = {}  # sent, not delivered back yet
        self._geometry: dict[OpId, Geometry] = {}
        # Every pixel is painted in paintEvent: Qt need not clear the background first.
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setMinimumSize(200, 150)

    # -- state ------------------------------------------------------------------------------

    @property
    def board(self) -> Board:
        return self._board_source()

    def sizeHint(self) -> QSize:
        return QSize(1000, 700)

    def set_read_only(self, read_only: bool) -> None:
        """Refuse drawing (before joining, while leaving); a drag in progress is dropped."""
        self._read_only = read_only
        if read_only and self._captured is not None:
            self._captured = None
            self.update()
        self.setCursor(Qt.CursorShape.ArrowCursor if read_only else Qt.CursorShape.CrossCursor)

    def is_read_only(self) -> bool:
        return self._read_only

    @property
    def drawing(self) -> bool:
        return self._captured is not None

    def pending_ops(self) -> tuple[OpId, ...]:
        return tuple(self._pending)

    def forget_pending(self, op_id: OpId) -> None:
        """``op_id`` will never be delivered (sending it failed): stop painting it."""
        if self._pending.pop(op_id, None) is not None:
            self.update()

    def board_changed(self, change: Change | None = None) -> None:
        """The board changed (``change`` from Board.apply, or None for a whole new board)."""
        if change is None:
            board = self.board
            for op_id in [i for i in self._pending if i in board]:
                del self._pending[op_id]
        elif self._pending.pop(change.op_id, None) is None and (
            change.duplicate or not change.affected
        ):
            # Nothing visible changed (a duplicate, an undo of an op not here yet): no paint.
            # A settled pending stroke needs one even then, as it is now the board's to show.
            return
        self.update()

    # -- painting ---------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        exposed = QRectF(event.rect())
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            painter.fillRect(exposed, BACKGROUND)
            board = self.board
            cache: dict[OpId, Geometry] = {}
            for obj in board.objects():
                self._paint(painter, obj.op, obj.dx, obj.dy, exposed, cache)
            for op in self._pending.values():
                self._paint(painter, op, 0.0, 0.0, exposed, cache)
            # Geometry of objects no longer visible is dropped here, so the cache never
            # outgrows the board.
            self._geometry = cache
            if self._captured:
                self._paint_captured(painter)
        finally:
            painter.end()

    def _paint(
        self,
        painter: QPainter,
        op: DrawingOp,
        dx: float,
        dy: float,
        exposed: QRectF,
        cache: dict[OpId, Geometry],
    ) -> None:
        geo = self._geometry.get(op.id)
        if geo is None:
            geo = geometry(op)
        cache[op.id] = geo
        if not geo.bounds.translated(dx, dy).intersects(exposed):
            return
        if dx or dy:
            painter.save()
            painter.translate(dx, dy)
            paint_op(painter, op, geo)
            painter.restore()
        else:
            paint_op(painter, op, geo)

    def _paint_captured(self, painter: QPainter) -> None:
        assert self._captured is not None
        points = [QPointF(x, y) for x, y in self._captured]
        painter.setPen(round_pen(QColor.fromRgba(self.colour), self.width))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if len(points) == 1:
            painter.drawPoint(points[0])
        else:
            painter.drawPath(smooth_path(points))

    def _segment_rect(self, a: Point, b: Point) -> QRectF:
        margin = self.width / 2.0 + 2.0
        return (
            QRectF(QPointF(*a), QPointF(*b)).normalized().adjusted(-margin, -margin, margin, margin)
        )

    # -- drawing ----------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._read_only:
            super().mousePressEvent(event)
            return
        position = event.position()
        self._captured = [clamp_point(position.x(), position.y())]
        self.update(self._segment_rect(self._captured[0], self._captured[0]).toAlignedRect())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        # Tracked by our own flag, not event.buttons(): synthetic and some tablet events do
        # not always report the held button on moves.
        if self._captured is None:
            super().mouseMoveEvent(event)
            return
        position = event.position()
        point = clamp_point(position.x(), position.y())
        last = self._captured[-1]
        if point == last:
            return
        self._captured.append(point)
        # Only the new segment needs painting; the smoothing moves the previous one by less
        # than the margin.
        previous = self._captured[-3] if len(self._captured) > 2 else last
        self.update(self._segment_rect(previous, point).toAlignedRect())
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._captured is None:
            super().mouseReleaseEvent(event)
            return
        position = event.position()
        point = clamp_point(position.x(), position.y())
        if point != self._captured[-1]:
            self._captured.append(point)
        captured, self._captured = self._captured, None
        event.accept()
        self._finish(captured)
        self.update()

    def _finish(self, captured: list[Point]) -> None:
        ops = stroke_ops(
            simplify(captured),
            self.colour,
            self.width,
            self.tool,
            self._next_op_id,
            self.max_payload,
        )
        for op in ops:
            self._pending[op.id] = op
            if self.on_local_op is not None:
                self.on_local_op(op)
