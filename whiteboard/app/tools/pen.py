"""The pen and the highlighter: freehand strokes, sent while they are drawn.

While the button is down the canvas's live timer calls :meth:`PenTool.flush_live_chunk`
every ``live_interval_ms``: the points captured since the last chunk go out as a Stroke op
whose first point is the previous chunk's last, so the chunks render as one line and, on a
transport that delivers at once (RMP), others watch the stroke being drawn. With
``live_chunks`` off (MTP accepts a message only later) the stroke goes out on release.
Either way the ids of the whole stroke are reported as one gesture.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPainter

from whiteboard.app.render import stroke_path, stroke_pen
from whiteboard.app.strokes import Point, clamp_point, simplify, stroke_ops
from whiteboard.app.tools.base import BaseTool, Pointer, ToolHost, ToolKind
from whiteboard.app.view import Rect, View
from whiteboard.board import OpId, Tool

TOOLS = {ToolKind.PEN: Tool.PEN, ToolKind.HIGHLIGHTER: Tool.HIGHLIGHTER}


class PenTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind) -> None:
        super().__init__(host, kind)
        self.stroke_tool = TOOLS[kind]
        self._points: list[Point] | None = None
        self._sent_upto = 0  # index of the last point already sent (the next chunk's first)
        self._ids: list[OpId] = []
        self._colour = 0
        self._width = 1.0

    @property
    def active(self) -> bool:
        return self._points is not None

    def press(self, pointer: Pointer) -> None:
        # Colour and width are fixed for the gesture: every chunk must look the same.
        self._colour = self.host.colour
        self._width = self.host.pen_width
        self._points = [clamp_point(pointer.x, pointer.y)]
        self._sent_upto = 0
        self._ids = []
        if self.host.live_chunks:
            self.host.start_live_timer()
        self.host.refresh(self._segment_rect(self._points[0], self._points[0]))

    def move(self, pointer: Pointer) -> None:
        points = self._points
        if points is None:
            return
        point = clamp_point(pointer.x, pointer.y)
        if point == points[-1]:
            return
        points.append(point)
        # Only the new segment needs painting; the smoothing moves the previous one by less
        # than the margin.
        previous = points[-3] if len(points) > 2 else points[-2]
        self.host.refresh(self._segment_rect(previous, point))

    def flush_live_chunk(self) -> None:
        """Send the points captured since the last chunk (if there is a new one), unless live
        chunks are off (they may be turned off during a stroke)."""
        if self.host.live_chunks:
            self._flush()

    def _flush(self) -> None:
        points = self._points
        if points is None or len(points) - 1 <= self._sent_upto:
            return
        self._send(points[self._sent_upto :])
        self._sent_upto = len(points) - 1

    def release(self, pointer: Pointer) -> None:
        points = self._points
        if points is None:
            return
        self.move(pointer)
        if not self._ids:
            self._send(points)  # the whole stroke; a single point is a dot
        else:
            self._flush()
        self._finish()

    def cancel(self) -> None:
        # Chunks already sent cannot be taken back; they are still one gesture to undo.
        if self._points is not None:
            self._finish()

    def _finish(self) -> None:
        self.host.stop_live_timer()
        points, self._points = self._points, None
        if self._ids:
            self.host.end_gesture(list(self._ids))
        self._ids = []
        if points:
            self.host.refresh(_points_rect(points, self._width))

    def _send(self, points: list[Point]) -> None:
        ops = stroke_ops(
            simplify(points),
            self._colour,
            self._width,
            self.stroke_tool,
            self.host.next_op_id,
            self.host.max_payload,
        )
        for op in ops:
            self._ids.append(op.id)
            self.host.send(op)

    def paint(self, painter: QPainter, view: View) -> None:
        points = self._points
        if not points:
            return
        # The chunks already sent are painted by the canvas as pending ops; the tail is ours.
        tail = points[self._sent_upto :]
        painter.setPen(stroke_pen(self._colour, self._width, self.stroke_tool))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if len(tail) == 1:
            painter.drawPoint(QPointF(*tail[0]))
        else:
            painter.drawPath(stroke_path([c for point in tail for c in point]))

    def _segment_rect(self, a: Point, b: Point) -> Rect:
        margin = self._width / 2.0
        return (
            min(a[0], b[0]) - margin,
            min(a[1], b[1]) - margin,
            max(a[0], b[0]) + margin,
            max(a[1], b[1]) + margin,
        )


def _points_rect(points: list[Point], width: float) -> Rect:
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    half = width / 2.0
    return (min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)
