"""Painting board objects with QPainter, in board coordinates (the caller sets the view).

Kept apart from the widget so that export and thumbnails reuse it. Geometry that does not
change for an op (its path, its bounds) is cached by the caller per op id while the object is
shown: ops are immutable, so the cache holds as long as the id is shown with the same op
object (one shown with another, from a state loaded, is forgotten and computed again).

Painting is the canvas's hot loop (a 10,000-stroke board is 10,000 paths), so the path of a
stroke is built from plain floats with as few calls into Qt as possible, and pens and text
metrics are memoised.
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
    QTransform,
)

from whiteboard.app.pictures import Pictures
from whiteboard.app.scene_index import arrow_head, content_bounds
from whiteboard.board import BoardObject, DrawingOp, Image, OpKind, Shape, Stroke, Text, Tool
from whiteboard.board.geometry import Rect


def _guard_none_refcount() -> None:
    """Work around a PySide6 bug that aborts the interpreter after a while of painting.

    PySide6 6.12.0 (abi3 wheels) on CPython 3.11 drops one reference to ``None`` each time a
    method returning void is called (QPainterPath.lineTo, QPainter.drawPath, QRectF.translate
    ...). ``None`` starts with a few thousand references, so painting a few hundred strokes
    takes its count to zero and CPython aborts with "none_dealloc: deallocating None". From
    3.12 on ``None`` is immortal and the leak is harmless. We measure the leak rather than
    trust a version number, and where it is real give ``None`` a count no session can use up.
    The real fix is a PySide6 without the bug (6.11 has none).
    """
    if sys.version_info >= (3, 12):
        return
    probe = QPointF()
    before = sys.getrefcount(None)
    for _ in range(8):
        probe.setX(1.0)
    if sys.getrefcount(None) < before:
        # ob_refcnt is the first field of every object in a release build of CPython.
        ctypes.c_ssize_t.from_address(id(None)).value += 1 << 60


# Whether prepare_painting has run: the None guard must not add its count twice.
_prepared = False


def prepare_painting() -> None:
    """Set up this process for painting: call it before anything is painted.

    Both changes are process-wide, so they are made when asked rather than as a side effect
    of importing this module (a tool or a test importing it for a path or a bound must not
    change the process). The app calls it when it starts; the canvas and
    :func:`paint_objects` call it too, so that whatever paints through this module (the
    replay window, export, analytics, tests) paints the same way. Only the first call does
    anything.

    * :func:`_guard_none_refcount` (see there).
    * Qt's raster engine hands every fill of 96 spans or more in a colour that is not opaque
      (a highlighter, anything painted at an opacity) to a thread pool and waits for it: for
      shapes the size of a stroke the hand-off costs several times the fill (a highlighter
      stroke took 200 us instead of 45 on two cores, and a board is a tenth highlighter).
      QT_NO_GUI_THREADPOOL is Qt's switch for that pool (it also makes large image scaling
      and conversion serial); Qt reads it once, when the pool is first wanted, hence
      "before anything is painted". Set in the environment already, it is left as it is.
    """
    global _prepared
    if _prepared:
        return
    _prepared = True
    _guard_none_refcount()
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


# A highlighter keeps its hue but lets what is under it show through.
HIGHLIGHTER_ALPHA = 0.35
TEXT_FLAGS = int(
    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextExpandTabs
)
# The most a corner of a stroke is rounded off, in board units (see stroke_path).
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


@lru_cache(maxsize=1024)
def stroke_pen(argb: int, width: float, tool: Tool) -> QPen:
    # A board has a handful of colours and widths; building a QPen per stroke per paint was a
    # tenth of the painting time. Callers only pass the pen to setPen, which copies it.
    qcolour = colour(argb)
    if tool is Tool.HIGHLIGHTER:
        qcolour.setAlphaF(qcolour.alphaF() * HIGHLIGHTER_ALPHA)
    return round_pen(qcolour, width)


def stroke_path(coords: Sequence[float]) -> QPainterPath:
    """A line through the points ``x0, y0, x1, y1, ...`` (two points or more) with its
    corners rounded.

    Each interior point becomes a quadratic curve from a little before it to a little after
    it, with the point as control point; straight runs in between stay straight. "A little"
    is half the segment where points are dense (the usual midpoint smoothing, which hides the
    pointer's jitter) but at most :data:`CORNER_RADIUS`, so that a deliberate sharp corner
    between long, simplified segments stays sharp instead of being cut by a quarter of their
    length. The path goes through both ends and never overshoots (a quadratic curve stays in
    the triangle of its control points), so the points' bounding box bounds it.
    """
    path = QPainterPath()
    _append_smooth(path, coords)
    return path


def _append_smooth(path: QPainterPath, coords: Sequence[float]) -> None:
    """Add :func:`stroke_path` of ``coords`` to ``path`` as a subpath of its own."""
    x0, y0 = coords[0], coords[1]
    path.moveTo(x0, y0)
    line_to, quad_to = path.lineTo, path.quadTo
    hypot = math.hypot
    radius = CORNER_RADIUS
    reach = 2.0 * CORNER_RADIUS  # segments up to this long are rounded over half their length
    # Where the previous curve ended: a line to the next curve's start is skipped when it
    # would have no length (dense points: both curves meet at the midpoint).
    end_x, end_y = x0, y0
    vx, vy = coords[2], coords[3]
    ax, ay = x0 - vx, y0 - vy
    la = hypot(ax, ay)
    for i in range(4, len(coords), 2):
        nx, ny = coords[i], coords[i + 1]
        bx, by = nx - vx, ny - vy
        lb = hypot(bx, by)
        # How far along each segment the curve starts and ends (each length is computed once:
        # this segment's lb is the next point's la). stroke_chunks bounds the curves the same
        # way (_add_curve_end): change both together.
        fa = 0.5 if la <= reach else radius / la
        fb = 0.5 if lb <= reach else radius / lb
        sx, sy = vx + ax * fa, vy + ay * fa
        if sx != end_x or sy != end_y:
            line_to(sx, sy)
        end_x, end_y = vx + bx * fb, vy + by * fb
        quad_to(vx, vy, end_x, end_y)
        ax, ay, la = -bx, -by, lb
        vx, vy = nx, ny
    if vx != end_x or vy != end_y:
        line_to(vx, vy)


# Segments of a stroke per *chunk*: a run of consecutive segments with its bounding box, so
# that the part of a stroke near a small area is found by testing a few boxes rather than
# every segment (see stroke_path_near), and the area a new stroke paints is a chain of small
# boxes along it rather than its whole bounding box (see paint_parts).
CHUNK_SEGMENTS = 4
# (first point, last point, x0, y0, x1, y1): points first..last, their box grown by a margin.
Chunk = tuple[int, int, float, float, float, float]


def stroke_chunks(coords: Sequence[float], grow: float) -> tuple[Chunk, ...]:
    """The chunks of the polyline ``x0, y0, x1, y1, ...``, boxes grown by ``grow``.

    What :func:`stroke_path` strokes for a chunk stays within the box of its points and of
    the ends of the corner curves about its first and last points, which reach into the
    segments beside the chunk (a curve stays in the triangle of its control points, the
    corner and where the curve leaves each segment), grown by half the pen. Consecutive
    chunks share their end point. A tuple of tuples of numbers: once cached it is no work
    for the garbage collector."""
    xs, ys = coords[0::2], coords[1::2]
    last = len(xs) - 1
    chunks: list[Chunk] = []
    for first in range(0, last, CHUNK_SEGMENTS):
        stop = min(first + CHUNK_SEGMENTS, last)
        cx, cy = list(xs[first : stop + 1]), list(ys[first : stop + 1])
        if first > 0:
            _add_curve_end(cx, cy, xs[first], ys[first], xs[first - 1], ys[first - 1])
        if stop < last:
            _add_curve_end(cx, cy, xs[stop], ys[stop], xs[stop + 1], ys[stop + 1])
        chunks.append((first, stop, min(cx) - grow, min(cy) - grow, max(cx) + grow, max(cy) + grow))
    return tuple(chunks)


def _add_curve_end(
    cx: list[float], cy: list[float], vx: float, vy: float, nx: float, ny: float
) -> None:
    """Add where the corner curve about point (vx, vy) leaves its segment toward (nx, ny),
    as :func:`_append_smooth` makes it: half way along a short segment, CORNER_RADIUS
    along a long one."""
    length = math.hypot(nx - vx, ny - vy)
    fraction = 0.5 if length <= 2.0 * CORNER_RADIUS else CORNER_RADIUS / length
    cx.append(vx + (nx - vx) * fraction)
    cy.append(vy + (ny - vy) * fraction)


def paint_parts(op: DrawingOp, dx: float = 0.0, dy: float = 0.0) -> list[Rect]:
    """Rectangles that together cover what ``op`` paints at offset (dx, dy), pen included,
    antialiasing not: a long stroke's chunks, or the bounds of anything else."""
    if isinstance(op, Stroke) and len(op.points) > 2:
        return [
            (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
            for _, _, x0, y0, x1, y1 in stroke_chunks(op.points, op.width / 2.0)
        ]
    x0, y0, x1, y1 = bounds(op)
    return [(x0 + dx, y0 + dy, x1 + dx, y1 + dy)]


# What stroke_path_near answers when every chunk is near: use the whole path.
WHOLE = "whole"


def stroke_path_near(
    coords: Sequence[float], chunks: Sequence[Chunk], rects: Sequence[Rect]
) -> QPainterPath | str | None:
    """The parts of :func:`stroke_path` of ``coords`` that paint within ``rects``, for
    repainting a small area: stroking the whole of a long path, most of it clipped away,
    costs Qt as much as painting it all.

    ``chunks``: :func:`stroke_chunks` of ``coords`` grown by how far from its polyline the
    stroke paints (half its width plus the antialiasing margin) plus :data:`CORNER_RADIUS`.
    Returns None if no chunk comes near ``rects``, :data:`WHOLE` if all of them do (or so
    many that cutting saves little), else a path of the runs of chunks that do. Within
    ``rects`` it paints exactly what the whole path does: a run ends at a point it shares with
    a chunk that is not near, so that point is farther than the stroke's reach plus
    :data:`CORNER_RADIUS` from every rectangle, and cutting the path there changes it (its
    curve about the point, a cap) only within that distance of the point.
    """
    runs: list[list[int]] = []
    near = 0
    for first, last, x0, y0, x1, y1 in chunks:
        for r in rects:
            if x0 <= r[2] and r[0] <= x1 and y0 <= r[3] and r[1] <= y1:
                near += 1
                if runs and runs[-1][1] == first:
                    runs[-1][1] = last
                else:
                    runs.append([first, last])
                break
    if not runs:
        return None
    if near == len(chunks):
        return WHOLE
    # Building a path costs about what Qt saves on each point left out: not worth it for a few.
    if sum(last - first + 1 for first, last in runs) * 4 > len(coords) // 2 * 3:
        return WHOLE
    path = QPainterPath()
    for first, last in runs:
        _append_smooth(path, coords[2 * first : 2 * last + 2])
    return path


def smooth_path(points: list[QPointF]) -> QPainterPath:
    """:func:`stroke_path` for a list of points."""
    return stroke_path([c for point in points for c in (point.x(), point.y())])


def stroke_points(op: Stroke) -> list[QPointF]:
    p = op.points
    return [QPointF(p[i], p[i + 1]) for i in range(0, len(p), 2)]


@lru_cache(maxsize=64)
def text_font(font_size: float) -> QFont:
    """The font of a label (shared: do not modify it)."""
    font = QFont()
    # Sizes are board units (logical pixels), not points: the board has no DPI.
    font.setPixelSize(max(1, round(font_size)))
    return font


@lru_cache(maxsize=4096)
def _text_size(text: str, font_size: float) -> tuple[float, float]:
    metrics = QFontMetricsF(text_font(font_size))
    size = metrics.boundingRect(QRectF(0.0, 0.0, 1e7, 1e7), TEXT_FLAGS, text).size()
    return size.width(), size.height()


def text_box(op: Text) -> Rect:
    """The rectangle a label covers, (x0, y0, x1, y1) in board units."""
    width, height = _text_size(op.text, op.font_size)
    return (op.x, op.y, op.x + width, op.y + height)


def text_rect(op: Text) -> QRectF:
    x0, y0, x1, y1 = text_box(op)
    return QRectF(x0, y0, x1 - x0, y1 - y0)


def bounds(op: DrawingOp) -> Rect:
    """What ``op`` paints before its offset, pen included, antialiasing not."""
    return content_bounds(op, text_box)


@dataclass(frozen=True, slots=True)
class Geometry:
    """What painting one op needs that depends on the op alone."""

    bounds: QRectF  # in board coordinates, before the object's offset, margins included
    path: QPainterPath | None = None  # strokes with two points or more


def object_path(op: DrawingOp) -> QPainterPath | None:
    """The path :func:`paint_object` strokes for ``op`` (None: it needs none)."""
    if isinstance(op, Stroke) and len(op.points) > 2:
        return stroke_path(op.points)
    return None


def geometry(op: DrawingOp) -> Geometry:
    x0, y0, x1, y1 = bounds(op)
    rect = QRectF(x0, y0, x1 - x0, y1 - y0).adjusted(-AA_MARGIN, -AA_MARGIN, AA_MARGIN, AA_MARGIN)
    return Geometry(rect, object_path(op))


def paint_op(
    painter: QPainter, op: DrawingOp, geo: Geometry, pictures: Pictures | None = None
) -> None:
    """Paint ``op`` at its own coordinates (translate the painter for an object's offset)."""
    paint_object(painter, op, geo.path, pictures=pictures)


def paint_objects(
    painter: QPainter,
    objects: Iterable[BoardObject],
    area: QRectF,
    geometry_of: Callable[[BoardObject], Geometry] = lambda obj: geometry(obj.op),
    pictures: Pictures | None = None,
) -> None:
    """Paint ``objects`` (bottom first) at their offsets, those that meet board rectangle
    ``area``: the others are skipped (and so kept out of SVG and PDF files). Images are
    painted from ``pictures`` (None: as frames)."""
    prepare_painting()
    for obj in objects:
        geo = geometry_of(obj)
        if not placement(obj).mapRect(geo.bounds).intersects(area):
            continue
        painter.save()
        painter.setTransform(placement(obj), combine=True)
        paint_op(painter, obj.op, geo, pictures)
        painter.restore()


def placement(obj: BoardObject) -> QTransform:
    """Where an object's drawing is painted: turned or resized, then moved."""
    a, b, c, d = (1.0, 0.0, 0.0, 1.0) if obj.linear is None else obj.linear
    return QTransform(a, b, c, d, obj.dx, obj.dy)


def paint_object(
    painter: QPainter,
    op: DrawingOp,
    path: QPainterPath | None,
    min_width: float = 0.0,
    pictures: Pictures | None = None,
) -> None:
    """Paint ``op`` at its own coordinates; ``path`` is :func:`object_path` of it.

    ``min_width``: the thinnest pen to use, in board units. Qt draws pens of one device
    pixel or less with a fast "cosmetic" line drawer whose result depends on where the
    paint device's edge cuts the line: a thin line painted in two tiles would not meet at
    the seam. Tiles pass a little over one device pixel, which looks the same and goes
    through Qt's ordinary stroker, which does not care where the device ends.
    """
    if isinstance(op, Stroke):
        painter.setPen(stroke_pen(op.colour, max(op.width, min_width), op.tool))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        if path is None:
            # A zero-length path paints nothing; a point with a round pen is a dot.
            painter.drawPoint(QPointF(op.points[0], op.points[1]))
        else:
            painter.drawPath(path)
    elif isinstance(op, Shape):
        paint_shape(painter, op, min_width)
    elif isinstance(op, Image):
        paint_image(painter, op, pictures)
    else:
        painter.setPen(colour(op.colour))
        painter.setFont(text_font(op.font_size))
        painter.drawText(text_rect(op), TEXT_FLAGS, op.text)


# An image whose bytes have not arrived (or cannot be decoded) shows as a frame of its box.
_FRAME_FILL = QColor(0xE8, 0xE8, 0xEC)
_FRAME_LINE = QColor(0x90, 0x90, 0x9A)


def paint_image(painter: QPainter, op: Image, pictures: Pictures | None) -> None:
    """``op``'s picture stretched to its box at its opacity, or a frame while there is none."""
    box = QRectF(op.x, op.y, op.width, op.height)
    picture = None
    if pictures is not None:
        covers = painter.deviceTransform().mapRect(box)  # a turned one: its bounding box
        picture = pictures.get(op.digest, (covers.width(), covers.height()))
    opacity = painter.opacity()
    painter.setOpacity(opacity * op.opacity / 255.0)
    if picture is not None:
        smooth = painter.testRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        painter.drawImage(box, picture)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, smooth)
    else:
        pen = QPen(_FRAME_LINE, 0.0, Qt.PenStyle.DashLine)  # cosmetic: thin at every zoom
        painter.setPen(pen)
        painter.setBrush(_FRAME_FILL)
        painter.drawRect(box)
        painter.drawLine(box.topLeft(), box.bottomRight())
        painter.drawLine(box.topRight(), box.bottomLeft())
    painter.setOpacity(opacity)


def paint_shape(painter: QPainter, op: Shape, min_width: float = 0.0) -> None:
    outline = colour(op.colour)
    line = QLineF(op.x1, op.y1, op.x2, op.y2)
    width = max(op.width, min_width)
    if op.kind is OpKind.LINE:
        painter.setPen(round_pen(outline, width))
        painter.drawLine(line)
        return
    if op.kind is OpKind.ARROW:
        (bx, by), head = arrow_head(op.x1, op.y1, op.x2, op.y2, op.width)
        pen = round_pen(outline, width)
        # A flat end under the head: a round cap would poke through the tip of a thin head.
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        painter.setPen(pen)
        painter.drawLine(QLineF(line.p1(), QPointF(bx, by)))
        if head:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(outline)
            painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in head]))
        return
    pen = QPen(outline, width)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    painter.setPen(pen)
    painter.setBrush(colour(op.fill) if op.fill else Qt.BrushStyle.NoBrush)
    box = QRectF(QPointF(op.x1, op.y1), QPointF(op.x2, op.y2)).normalized()
    if op.kind is OpKind.RECT:
        painter.drawRect(box)
    else:
        painter.drawEllipse(box)
