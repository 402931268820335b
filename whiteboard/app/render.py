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
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QPolygonF,
    QRegion,
    QTransform,
)

from whiteboard.app.scene_index import Item, arrow_head, content_bounds
from whiteboard.app.view import Rect, View, rect_intersects
from whiteboard.board import BoardObject, DrawingOp, OpId, OpKind, Shape, Stroke, Text, Tool


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


_guard_none_refcount()

# Qt's raster engine hands every fill of 96 spans or more in a colour that is not opaque (a
# highlighter, anything painted at an opacity) to a thread pool and waits for it: for shapes
# the size of a stroke the hand-off costs several times the fill (a highlighter stroke took
# 200 us instead of 45 on two cores, and a board is a tenth highlighter). This is Qt's switch
# for that pool (it also makes large image scaling and conversion serial); Qt reads it once,
# when the pool is first wanted, so it must be set before anything is painted. Set in the
# environment already, it is left as it is.
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


def paint_op(painter: QPainter, op: DrawingOp, geo: Geometry) -> None:
    """Paint ``op`` at its own coordinates (translate the painter for an object's offset)."""
    paint_object(painter, op, geo.path)


def paint_objects(
    painter: QPainter,
    objects: Iterable[BoardObject],
    area: QRectF,
    geometry_of: Callable[[BoardObject], Geometry] = lambda obj: geometry(obj.op),
) -> None:
    """Paint ``objects`` (bottom first) at their offsets, those that meet board rectangle
    ``area``: the others are skipped (and so kept out of SVG and PDF files)."""
    for obj in objects:
        geo = geometry_of(obj)
        if not geo.bounds.translated(obj.dx, obj.dy).intersects(area):
            continue
        painter.save()
        painter.translate(obj.dx, obj.dy)
        paint_op(painter, obj.op, geo)
        painter.restore()


def paint_object(
    painter: QPainter, op: DrawingOp, path: QPainterPath | None, min_width: float = 0.0
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
    else:
        painter.setPen(colour(op.colour))
        painter.setFont(text_font(op.font_size))
        painter.drawText(text_rect(op), TEXT_FLAGS, op.text)


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


# -- the tile cache ---------------------------------------------------------------------------

# A tile's side in device pixels. Tiles missing side by side are rendered together as one
# block (one pass over the objects, then cut up), so no object is painted twice for crossing
# a tile edge; a change repaints within the tiles it meets.
TILE = 256
# The most tiles along a side of a block rendered at once: bounds the work done before a
# block shows anything (finding its objects), and the memory of the block.
MAX_BLOCK = 8
# In device pixels: just over Qt's limit for its cosmetic line drawer (see paint_object).
THINNEST_DEVICE_PEN = 1.01
TileKey = tuple[int, int]
ItemsIn = Callable[[Rect], list[Item]]
# TileCache.drop tests every tile against at most this many rectangles (else their union).
MAX_DROP_RECTS = 256


def _tile_rect(key: TileKey, unit: float) -> Rect:
    """Tile ``key``'s board rectangle, for tiles of ``unit`` board units."""
    return (key[0] * unit, key[1] * unit, (key[0] + 1) * unit, (key[1] + 1) * unit)


@dataclass(slots=True, eq=False)
class _Tile:
    """A tile, or a block of columns x rows tiles being rendered, whose top-left tile is
    ``origin``."""

    pixmap: QPixmap
    todo: list[Item] | None  # what is still to paint, bottom first; None once complete
    origin: TileKey
    columns: int = 1
    rows: int = 1
    done: int = 0


@dataclass(slots=True)
class _Layer:
    """Complete tiles kept from before a zoom, shown scaled until the new ones are ready."""

    scale: float
    dpr: float
    tiles: dict[TileKey, _Tile]


class TileCache:
    """The board rendered at one scale, in tiles of :data:`TILE` device pixels.

    Tile (i, j) holds the board points whose *scaled device* coordinates ``x * scale * dpr``
    lie in ``[i * TILE, (i + 1) * TILE)``: the grid is anchored to the board, so panning
    blits the same tiles at other places and only tiles coming into view are rendered.
    Rendering goes a slice at a time (objects bottom first, until a deadline), so a dense
    board never blocks a frame; an incomplete tile shows what it has, or, just after a zoom,
    the previous scale's tiles stretched to fit. A board change repaints, in the tiles in
    view, only where what changed paints (a long stroke is a chain of small rectangles), and
    drops the other tiles it meets.
    """

    def __init__(self, items_in: ItemsIn, background: QColor) -> None:
        self._items_in = items_in
        self.background = background
        self.scale = 1.0
        self.dpr = 1.0
        self._tiles: dict[TileKey, _Tile] = {}
        self._fallback: _Layer | None = None
        self._paths: dict[OpId, QPainterPath | None] = {}
        # Strokes' chunks grown by half the width and CORNER_RADIUS (see stroke_path_near).
        self._chunks: dict[OpId, tuple[Chunk, ...]] = {}
        # The tiles the widget shows: repainted on a change, where others are dropped.
        self.visible: set[TileKey] = set()

    # -- geometry ---------------------------------------------------------------------------

    def keys_for(self, rect: Rect) -> list[TileKey]:
        """The tiles meeting a board rectangle, row by row."""
        factor = self.scale * self.dpr / TILE
        i0, j0 = math.floor(rect[0] * factor), math.floor(rect[1] * factor)
        i1, j1 = math.floor(rect[2] * factor), math.floor(rect[3] * factor)
        return [(i, j) for j in range(j0, j1 + 1) for i in range(i0, i1 + 1)]

    def _block_rect(self, origin: TileKey, columns: int, rows: int) -> Rect:
        unit = TILE / (self.scale * self.dpr)
        x, y = origin[0] * unit, origin[1] * unit
        return (x, y, x + columns * unit, y + rows * unit)

    def _base(self, origin: TileKey) -> tuple[float, float]:
        """Where the board origin is in the logical coordinates of a tile or block."""
        return (-origin[0] * TILE / self.dpr, -origin[1] * TILE / self.dpr)

    # -- state ------------------------------------------------------------------------------

    def set_scale(self, scale: float, dpr: float) -> None:
        """Render at a new scale (or device pixel ratio) from now on."""
        if scale == self.scale and dpr == self.dpr:
            return
        complete = {k: t for k, t in self._tiles.items() if t.todo is None}
        if self.visible and all(k in complete for k in self.visible):
            self._fallback = _Layer(self.scale, self.dpr, complete)
        # Otherwise the last complete layer stays the fallback: a zoom that goes on before
        # the tiles caught up must not leave a mostly empty layer to stretch.
        self._tiles = {}
        self.visible = set()
        self.scale, self.dpr = scale, dpr

    def forget(self, op_id: OpId) -> None:
        self._paths.pop(op_id, None)
        self._chunks.pop(op_id, None)

    def is_complete(self, keys: Iterable[TileKey]) -> bool:
        tiles = self._tiles
        return all(k in tiles and tiles[k].todo is None for k in keys)

    @property
    def has_fallback(self) -> bool:
        return self._fallback is not None

    @property
    def aa_margin(self) -> float:
        """How far antialiasing bleeds past what an object paints, in board units."""
        return AA_MARGIN / (self.scale * self.dpr)

    @property
    def min_width(self) -> float:
        """The thinnest pen to paint with, in board units (see :func:`paint_object`)."""
        return THINNEST_DEVICE_PEN / (self.scale * self.dpr)

    def tile_count(self) -> int:
        return len(self._tiles)

    def path(self, op: DrawingOp) -> QPainterPath | None:
        op_id = op.id
        try:
            return self._paths[op_id]
        except KeyError:
            path = self._paths[op_id] = object_path(op)
            return path

    # -- rendering --------------------------------------------------------------------------

    def render(self, keys: Iterable[TileKey], deadline: float) -> bool:
        """Render the tiles ``keys`` until ``deadline`` (time.perf_counter()); True if they
        are all complete."""
        keys = list(keys)
        wanted = set(keys)
        started: set[_Tile] = set()  # by identity: a block's id() is reused once it is cut
        for key in keys:
            tile = self._tiles.get(key)
            if tile is None:
                if time.perf_counter() > deadline:
                    return False
                tile = self._start_block(key, wanted)
            if tile.todo is None or tile in started:
                continue
            started.add(tile)
            if not self._advance(tile, deadline):
                return False
        if self._fallback is not None and self.visible and self.is_complete(self.visible):
            self._fallback = None
        return True

    def _start_block(self, key: TileKey, wanted: set[TileKey]) -> _Tile:
        """Start rendering the missing tile ``key`` together with the missing tiles of
        ``wanted`` right of and below it, as one block of at most MAX_BLOCK x MAX_BLOCK."""
        tiles = self._tiles

        def free(tile: TileKey) -> bool:
            return tile in wanted and tile not in tiles

        columns = 1
        while columns < MAX_BLOCK and free((key[0] + columns, key[1])):
            columns += 1
        rows = 1
        while rows < MAX_BLOCK and all(free((key[0] + c, key[1] + rows)) for c in range(columns)):
            rows += 1
        pixmap = QPixmap(columns * TILE, rows * TILE)
        pixmap.setDevicePixelRatio(self.dpr)
        pixmap.fill(self.background)
        # Antialiasing of an object just outside bleeds in.
        margin = AA_MARGIN / (self.scale * self.dpr)
        x0, y0, x1, y1 = self._block_rect(key, columns, rows)
        todo = self._items_in((x0 - margin, y0 - margin, x1 + margin, y1 + margin))
        block = _Tile(pixmap, todo, key, columns, rows)
        for c in range(columns):
            for r in range(rows):
                tiles[(key[0] + c, key[1] + r)] = block
        return block

    def _advance(self, tile: _Tile, deadline: float) -> bool:
        todo = tile.todo
        assert todo is not None
        painter = QPainter(tile.pixmap)
        try:
            _prepare(painter)
            bx, by = self._base(tile.origin)
            tile.done = self._paint_items(painter, bx, by, todo, tile.done, deadline)
        finally:
            painter.end()
        if tile.done < len(todo):
            return False
        tile.todo = None
        if tile.columns > 1 or tile.rows > 1:
            self._cut(tile)
        return True

    def _cut(self, block: _Tile) -> None:
        """Replace a rendered block by its tiles."""
        for c in range(block.columns):
            for r in range(block.rows):
                key = (block.origin[0] + c, block.origin[1] + r)
                if self._tiles.get(key) is not block:
                    continue
                pixmap = block.pixmap.copy(QRect(c * TILE, r * TILE, TILE, TILE))
                pixmap.setDevicePixelRatio(self.dpr)
                self._tiles[key] = _Tile(pixmap, None, key)

    def _paint_items(
        self,
        painter: QPainter,
        bx: float,
        by: float,
        items: list[Item],
        start: int = 0,
        deadline: float = math.inf,
        within: Sequence[Rect] | None = None,
    ) -> int:
        """Paint ``items[start:]`` with the board origin at (bx, by) in the painter's logical
        coordinates, until ``deadline``; returns how far it got. ``within``: only what paints
        in these board rectangles matters (the caller keeps only that): objects that do not
        come near them are skipped, and long strokes are cut down to their parts that do."""
        scale = self.scale
        thinnest = self.min_width
        base = QTransform(scale, 0.0, 0.0, scale, bx, by)
        painter.setTransform(base)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        shifted = False
        clock = time.perf_counter
        paths, all_chunks = self._paths, self._chunks
        set_pen, draw_path = painter.setPen, painter.drawPath
        if within is not None:
            # What an object paints stays within its rectangle (which holds its pen) grown
            # by the antialiasing and by a pen widened to the thinnest; so does what a chunk
            # of a stroke paints, within its box (which holds half the width and
            # CORNER_RADIUS too).
            extra = self.aa_margin + thinnest / 2.0
            near_rects = [(r[0] - extra, r[1] - extra, r[2] + extra, r[3] + extra) for r in within]
        for index in range(start, len(items)):
            item = items[index]
            op = item.op
            if within is not None:
                x0, y0, x1, y1 = item.rect
                # The rectangles it paints in: a stroke cut down to them paints exactly as the
                # whole one in them, and nothing outside its rectangle either.
                local = [
                    r for r in near_rects if r[0] <= x1 and x0 <= r[2] and r[1] <= y1 and y0 <= r[3]
                ]
                if not local:
                    continue
            if item.dx or item.dy:
                painter.setTransform(
                    QTransform(scale, 0.0, 0.0, scale, bx + item.dx * scale, by + item.dy * scale)
                )
                shifted = True
            elif shifted:
                painter.setTransform(base)
                shifted = False
            if type(op) is Stroke and len(op.points) > 2:
                # The hot path, inlined: most objects are strokes of several points.
                op_id = op.id
                path = paths.get(op_id)
                if path is None:
                    path = paths[op_id] = stroke_path(op.points)
                if within is not None:
                    chunks = all_chunks.get(op_id)
                    if chunks is None:
                        chunks = all_chunks[op_id] = stroke_chunks(
                            op.points, op.width / 2.0 + CORNER_RADIUS
                        )
                    dx, dy = item.dx, item.dy
                    if dx or dy:
                        local = [(r[0] - dx, r[1] - dy, r[2] - dx, r[3] - dy) for r in local]
                    near = stroke_path_near(op.points, chunks, local)
                    if near is None:
                        continue
                    if not isinstance(near, str):
                        path = near
                width = op.width if op.width > thinnest else thinnest
                set_pen(stroke_pen(op.colour, width, op.tool))
                draw_path(path)
            else:
                paint_object(painter, op, self.path(op), thinnest)
                painter.setBrush(Qt.BrushStyle.NoBrush)
            if clock() > deadline:
                return index + 1
        return len(items)

    def paint_over(
        self, painter: QPainter, origin: tuple[float, float], items: list[Item], area: Rect
    ) -> None:
        """Paint ``items`` (bottom first) as the tiles would, with the board origin at
        ``origin`` in the painter's logical coordinates, where they paint in board rectangle
        ``area`` (the caller clips to it): objects shown over the tiles, on the widget."""
        self._paint_items(painter, origin[0], origin[1], items, within=[area])

    def invalidate(
        self, rect: Rect, on_top: Item | None = None, parts: Sequence[Rect] | None = None
    ) -> None:
        """What is shown in board rectangle ``rect`` changed: repaint it in the complete
        tiles in view, drop the other tiles that meet it. ``parts``: rectangles within
        ``rect`` that cover all that changed (a long stroke's chunks), so that only they are
        repainted. ``on_top``: the change is only this object, added above everything else,
        so it is painted over what is there."""
        # Antialiasing bleeds a device pixel or so past what an object paints.
        margin = self.aa_margin
        areas = [
            (r[0] - margin, r[1] - margin, r[2] + margin, r[3] + margin)
            for r in (parts if parts else (rect,))
        ]
        keys: dict[TileKey, None] = {}
        for area in areas:
            keys.update(dict.fromkeys(self.keys_for(area)))
        targets: list[tuple[TileKey, _Tile]] = []
        for key in keys:
            tile = self._tiles.get(key)
            if tile is None:
                continue
            if tile.todo is not None:
                # An incomplete block: start it again (all of it) when it is needed.
                for member, other in list(self._tiles.items()):
                    if other is tile:
                        del self._tiles[member]
            elif key not in self.visible:
                del self._tiles[key]  # cheaper to render afresh if it comes into view
            else:
                targets.append((key, tile))
        if targets:
            if on_top is not None:
                for key, tile in targets:
                    painter = QPainter(tile.pixmap)
                    try:
                        _prepare(painter)
                        self._paint_items(painter, *self._base(key), [on_top])
                    finally:
                        painter.end()
            else:
                self._repaint(areas, targets)
        self._drop_fallback(areas)

    def drop(self, rects: Sequence[Rect]) -> None:
        """What is shown in board rectangles ``rects`` changed, too much to repaint at once:
        drop the tiles they meet (blocks being rendered included), to be rendered afresh,
        a slice at a time, when they are needed; the others are kept. So are the paths."""
        if not rects:
            return
        if len(rects) > MAX_DROP_RECTS:
            # Tested against every tile below: one rectangle around them all instead.
            rects = [
                (
                    min(r[0] for r in rects),
                    min(r[1] for r in rects),
                    max(r[2] for r in rects),
                    max(r[3] for r in rects),
                )
            ]
        margin = self.aa_margin
        areas = [(r[0] - margin, r[1] - margin, r[2] + margin, r[3] + margin) for r in rects]
        # The tiles held are few (those in view, the ring around them, some spare), whatever
        # the zoom: each is tested, rather than listing the keys an area meets.
        unit = TILE / (self.scale * self.dpr)
        doomed = {
            id(tile)
            for key, tile in self._tiles.items()
            if any(rect_intersects(_tile_rect(key, unit), area) for area in areas)
        }
        if doomed:
            # A block being rendered goes as a whole (see invalidate).
            self._tiles = {k: t for k, t in self._tiles.items() if id(t) not in doomed}
        self._drop_fallback(areas)

    def _drop_fallback(self, areas: Sequence[Rect]) -> None:
        """The previous scale's tiles that meet ``areas`` show what is no longer there."""
        fallback = self._fallback
        if fallback is not None:
            unit = TILE / (fallback.scale * fallback.dpr)
            fallback.tiles = {
                key: tile
                for key, tile in fallback.tiles.items()
                if not any(rect_intersects(_tile_rect(key, unit), area) for area in areas)
            }

    def _repaint(self, areas: list[Rect], targets: list[tuple[TileKey, _Tile]]) -> None:
        """Render board rectangles ``areas`` afresh, once, into a patch on the device pixel
        grid, and copy them from the patch into each tile they meet: objects across a tile
        edge are painted once, not once per tile, and only the objects that come near the
        areas are painted (the rest of the patch is not copied)."""
        scale, dpr = self.scale, self.dpr
        factor = scale * dpr
        # The patch in scaled device coordinates (see the class docstring), within the tiles;
        # each area out to whole pixels so that no half-cleared pixel is left at its edge.
        lo_u = min(k[0] for k, _ in targets) * TILE
        lo_v = min(k[1] for k, _ in targets) * TILE
        hi_u = (max(k[0] for k, _ in targets) + 1) * TILE
        hi_v = (max(k[1] for k, _ in targets) + 1) * TILE
        boxes: list[tuple[int, int, int, int]] = []
        for area in areas:
            u0 = max(math.floor(area[0] * factor), lo_u)
            v0 = max(math.floor(area[1] * factor), lo_v)
            u1 = min(math.ceil(area[2] * factor), hi_u)
            v1 = min(math.ceil(area[3] * factor), hi_v)
            if u0 < u1 and v0 < v1:
                boxes.append((u0, v0, u1, v1))
        if not boxes:
            return
        u0, v0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
        u1, v1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
        patch = QPixmap(u1 - u0, v1 - v0)
        patch.setDevicePixelRatio(dpr)
        patch.fill(self.background)
        within = [(b[0] / factor, b[1] / factor, b[2] / factor, b[3] / factor) for b in boxes]
        margin = self.aa_margin
        items = self._items_in(
            (u0 / factor - margin, v0 / factor - margin, u1 / factor + margin, v1 / factor + margin)
        )
        painter = QPainter(patch)
        try:
            _prepare(painter)
            self._paint_items(painter, -u0 / dpr, -v0 / dpr, items, within=within)
        finally:
            painter.end()
        for key, tile in targets:
            tx, ty = key[0] * TILE, key[1] * TILE
            painter = QPainter(tile.pixmap)
            try:
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
                for b in boxes:
                    # The box within this tile, in device pixels.
                    x0, y0 = max(b[0], tx), max(b[1], ty)
                    x1, y1 = min(b[2], tx + TILE), min(b[3], ty + TILE)
                    if x0 >= x1 or y0 >= y1:
                        continue
                    painter.drawPixmap(
                        QRectF((x0 - tx) / dpr, (y0 - ty) / dpr, (x1 - x0) / dpr, (y1 - y0) / dpr),
                        patch,
                        QRectF(x0 - u0, y0 - v0, x1 - x0, y1 - y0),
                    )
            finally:
                painter.end()

    def evict(self, keep: set[TileKey], limit: int) -> None:
        """Drop complete tiles not in ``keep`` while there are more than ``limit``."""
        excess = len(self._tiles) - limit
        if excess <= 0:
            return
        spare = [k for k, t in self._tiles.items() if k not in keep and t.todo is None]
        for key in spare[:excess]:
            del self._tiles[key]

    # -- showing ----------------------------------------------------------------------------

    def paint(self, painter: QPainter, view: View, keys: Iterable[TileKey]) -> None:
        """Blit tiles ``keys`` onto a widget painter (logical coordinates, no transform)
        showing ``view``, whose offset is on the device pixel grid (:meth:`View.snapped`).
        Where a tile is incomplete the previous scale's layer is stretched over it if there
        is one, else what the tile has so far is shown."""
        tiles = self._tiles
        size = TILE / self.dpr
        stand_in: list[QRectF] = []
        for key in keys:
            x = key[0] * size + view.ox
            y = key[1] * size + view.oy
            tile = tiles.get(key)
            if tile is not None and tile.todo is None:
                painter.drawPixmap(QPointF(x, y), tile.pixmap)
            elif tile is not None and self._fallback is None:
                source = QRectF(
                    (key[0] - tile.origin[0]) * TILE, (key[1] - tile.origin[1]) * TILE, TILE, TILE
                )
                painter.drawPixmap(QPointF(x, y), tile.pixmap, source)
            else:
                painter.fillRect(QRectF(x, y, size, size), self.background)
                stand_in.append(QRectF(x, y, size, size))
        if stand_in and self._fallback is not None:
            self._paint_fallback(painter, view, stand_in)

    def _paint_fallback(self, painter: QPainter, view: View, where: list[QRectF]) -> None:
        layer = self._fallback
        assert layer is not None
        painter.save()
        region = QRegion()
        for rect in where:
            region = region.united(rect.toAlignedRect())
        painter.setClipRegion(region)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        factor = view.scale / layer.scale
        unit = TILE / (layer.scale * layer.dpr)
        bounds = region.boundingRect()
        wanted = view.rect_to_board(
            (bounds.left(), bounds.top(), bounds.right() + 1.0, bounds.bottom() + 1.0)
        )
        for key, tile in layer.tiles.items():
            rect = (key[0] * unit, key[1] * unit, (key[0] + 1) * unit, (key[1] + 1) * unit)
            if not rect_intersects(rect, wanted):
                continue
            x, y = view.to_widget(rect[0], rect[1])
            painter.setTransform(QTransform(factor, 0.0, 0.0, factor, x, y))
            painter.drawPixmap(QPointF(0.0, 0.0), tile.pixmap)
        painter.restore()


def _prepare(painter: QPainter) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
