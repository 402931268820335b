"""Painting board objects with QPainter, in board coordinates (the caller sets the view).

Kept apart from the widget so that export and thumbnails can reuse it later. Geometry that
does not change for an op (its path, its bounds) is cached by the caller per op id: ops are
immutable, so an id always means the same shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF

from whiteboard.board import DrawingOp, OpKind, Shape, Stroke, Text, Tool

# A highlighter keeps its hue but lets what is under it show through.
HIGHLIGHTER_ALPHA = 0.35
TEXT_FLAGS = int(
    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextExpandTabs
)
# The most a corner of a stroke is rounded off, in logical pixels (see smooth_path).
CORNER_RADIUS = 6.0
# Room beyond the geometric bounds for antialiasing, which bleeds about a pixel.
AA_MARGIN = 2.0


def colour(argb: int) -> QColor:
    return QColor.fromRgba(argb)


def stroke_colour(op: Stroke) -> QColor:
    result = colour(op.colour)
    if op.tool is Tool.HIGHLIGHTER:
        result.setAlphaF(result.alphaF() * HIGHLIGHTER_ALPHA)
    return result


def round_pen(qcolour: QColor, width: float) -> QPen:
    return QPen(
        qcolour, width, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin
    )


def smooth_path(points: list[QPointF]) -> QPainterPath:
    """A line through the captured points with its corners rounded.

    Each interior point becomes a quadratic curve from a little before it to a little after
    it, with the point as control point; straight runs in between stay straight. "A little"
    is half the segment where points are dense (the usual midpoint smoothing, which hides the
    pointer's jitter) but at most :data:`CORNER_RADIUS`, so that a deliberate sharp corner
    between long, simplified segments stays sharp instead of being cut by a quarter of their
    length. The path goes through both ends and never overshoots.
    """
    path = QPainterPath(points[0])
    for i in range(1, len(points) - 1):
        vertex = points[i]
        path.lineTo(_towards(vertex, points[i - 1]))
        path.quadTo(vertex, _towards(vertex, points[i + 1]))
    path.lineTo(points[-1])
    return path


def _towards(origin: QPointF, target: QPointF) -> QPointF:
    """The point CORNER_RADIUS from ``origin`` towards ``target``, at most half way there."""
    delta = target - origin
    length = math.hypot(delta.x(), delta.y())
    if length == 0.0:
        return QPointF(origin)
    return origin + delta * (min(length / 2.0, CORNER_RADIUS) / length)


def stroke_points(op: Stroke) -> list[QPointF]:
    p = op.points
    return [QPointF(p[i], p[i + 1]) for i in range(0, len(p), 2)]


def text_font(font_size: float) -> QFont:
    font = QFont()
    # Sizes are board units (logical pixels), not points: the board has no DPI.
    font.setPixelSize(max(1, round(font_size)))
    return font


def text_rect(op: Text) -> QRectF:
    metrics = QFontMetricsF(text_font(op.font_size))
    size = metrics.boundingRect(QRectF(0.0, 0.0, 1e7, 1e7), TEXT_FLAGS, op.text).size()
    return QRectF(QPointF(op.x, op.y), size)


def _arrow_head(line: QLineF, width: float) -> tuple[QPointF, QPolygonF]:
    """The point where the shaft should stop and the head triangle at ``line``'s end."""
    length = line.length()
    head = min(max(10.0, 4.0 * width), length)
    if length == 0.0:
        return line.p2(), QPolygonF()
    ux, uy = line.dx() / length, line.dy() / length
    tip = line.p2()
    base = tip - QPointF(ux, uy) * head
    half = head * math.tan(math.radians(25.0))
    left = base + QPointF(-uy, ux) * half
    right = base - QPointF(-uy, ux) * half
    return base, QPolygonF([tip, left, right])


@dataclass(frozen=True, slots=True)
class Geometry:
    """What painting one op needs that depends on the op alone."""

    bounds: QRectF  # in board coordinates, before the object's offset, margins included
    path: QPainterPath | None = None  # strokes with two points or more


def geometry(op: DrawingOp) -> Geometry:
    if isinstance(op, Stroke):
        points = stroke_points(op)
        margin = op.width / 2.0 + AA_MARGIN
        if len(points) == 1:
            bounds = QRectF(points[0], points[0])
            return Geometry(bounds.adjusted(-margin, -margin, margin, margin))
        path = smooth_path(points)
        bounds = path.controlPointRect()
        return Geometry(bounds.adjusted(-margin, -margin, margin, margin), path)
    if isinstance(op, Shape):
        box = QRectF(QPointF(op.x1, op.y1), QPointF(op.x2, op.y2)).normalized()
        # An arrow head is wider than the shaft; a bound that is too big only costs a repaint.
        margin = op.width / 2.0 + AA_MARGIN
        if op.kind is OpKind.ARROW:
            margin += max(10.0, 4.0 * op.width)
        return Geometry(box.adjusted(-margin, -margin, margin, margin))
    rect = text_rect(op)
    return Geometry(rect.adjusted(-AA_MARGIN, -AA_MARGIN, AA_MARGIN, AA_MARGIN))


def paint_op(painter: QPainter, op: DrawingOp, geo: Geometry) -> None:
    """Paint ``op`` at its own coordinates (translate the painter for an object's offset)."""
    if isinstance(op, Stroke):
        painter.setPen(round_pen(stroke_colour(op), op.width))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if geo.path is None:
            # A zero-length path paints nothing; a point with a round pen is a dot.
            painter.drawPoint(QPointF(op.points[0], op.points[1]))
        else:
            painter.drawPath(geo.path)
    elif isinstance(op, Shape):
        _paint_shape(painter, op)
    else:
        painter.setPen(colour(op.colour))
        painter.setFont(text_font(op.font_size))
        painter.drawText(text_rect(op), TEXT_FLAGS, op.text)


def _paint_shape(painter: QPainter, op: Shape) -> None:
    outline = colour(op.colour)
    line = QLineF(op.x1, op.y1, op.x2, op.y2)
    if op.kind is OpKind.LINE:
        painter.setPen(round_pen(outline, op.width))
        painter.drawLine(line)
        return
    if op.kind is OpKind.ARROW:
        base, head = _arrow_head(line, op.width)
        pen = round_pen(outline, op.width)
        # A flat end under the head: a round cap would poke through the tip of a thin head.
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        painter.setPen(pen)
        painter.drawLine(QLineF(line.p1(), base))
        if not head.isEmpty():
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(outline)
            painter.drawPolygon(head)
        return
    pen = QPen(outline, op.width)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    painter.setPen(pen)
    painter.setBrush(colour(op.fill) if op.fill else Qt.BrushStyle.NoBrush)
    box = QRectF(QPointF(op.x1, op.y1), QPointF(op.x2, op.y2)).normalized()
    if op.kind is OpKind.RECT:
        painter.drawRect(box)
    else:
        painter.drawEllipse(box)
