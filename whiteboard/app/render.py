"""Painting board objects with QPainter, in board coordinates (the caller sets the view).

Kept apart from the widget so that export and thumbnails reuse it. Geometry that does not
change for an op (its path, its bounds) is cached by the caller per op id: ops are immutable,
so an id always means the same shape.

Painting is the canvas's hot loop (a 10,000-stroke board is 10,000 paths), so the path of a
stroke is built from plain floats with as few calls into Qt as possible, and pens and text
metrics are memoised.
"""

from __future__ import annotations

import ctypes
import math
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

from whiteboard.app.hit import Item, arrow_head, content_bounds
from whiteboard.app.view import Rect, View, rect_intersects
from whiteboard.board import DrawingOp, OpId, OpKind, Shape, Stroke, Text, Tool


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
        # this segment's lb is the next point's la).
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


# What stroke_path_near answers when every segment is near: use the whole path.
WHOLE = "whole"


def stroke_path_near(
    coords: Sequence[float], rect: Rect, reach: float
) -> QPainterPath | str | None:
    """The parts of :func:`stroke_path` of ``coords`` that paint within ``rect``, for
    repainting a small rectangle: stroking the whole of a long path, most of it clipped away,
    costs Qt as much as painting it all.

    ``reach`` is how far from its polyline the stroke paints (half its width plus the
    antialiasing margin). Returns None if no segment comes near ``rect``, :data:`WHOLE` if
    all of them do, else a path of the runs of segments that do, each with the points the
    smoothing of its ends depends on. Within ``rect`` it paints exactly what the whole path
    does: a run's cut ends are points whose segments are all farther than ``reach`` plus
    :data:`CORNER_RADIUS`, which is as far as cutting there changes the curve and its cap.
    """
    grow = reach + CORNER_RADIUS
    x0, y0, x1, y1 = rect[0] - grow, rect[1] - grow, rect[2] + grow, rect[3] + grow
    xs, ys = coords[0::2], coords[1::2]
    count = len(xs)
    runs: list[list[int]] = []
    near = 0
    for k, (ax, bx, ay, by) in enumerate(zip(xs, xs[1:], ys, ys[1:], strict=False)):
        if (
            (ax < x0 and bx < x0)
            or (ax > x1 and bx > x1)
            or (ay < y0 and by < y0)
            or (ay > y1 and by > y1)
        ):
            continue
        near += 1
        if runs and k - runs[-1][1] <= 3:
            runs[-1][1] = k  # close enough to share the points around the gap
        else:
            runs.append([k, k])
    if not runs:
        return None
    # Building a path costs about what Qt saves on each segment left out: not worth it for
    # a few.
    if near * 3 > (count - 1) * 2:
        return WHOLE
    path = QPainterPath()
    for first, last in runs:
        # Segment k joins points k and k + 1; one more point on each side shapes the curves
        # at the run's ends.
        start = max(first - 1, 0)
        stop = min(last + 2, count - 1)
        _append_smooth(path, coords[2 * start : 2 * stop + 2])
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
    the previous scale's tiles stretched to fit. A board change repaints only the changed
    rectangle of the tiles in view it meets, and drops the others.
    """

    def __init__(self, items_in: ItemsIn, background: QColor) -> None:
        self._items_in = items_in
        self.background = background
        self.scale = 1.0
        self.dpr = 1.0
        self._tiles: dict[TileKey, _Tile] = {}
        self._fallback: _Layer | None = None
        self._paths: dict[OpId, QPainterPath | None] = {}
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

    def clear(self) -> None:
        """Forget everything rendered (the board was replaced)."""
        self._tiles.clear()
        self._fallback = None
        self._paths.clear()

    def forget(self, op_id: OpId) -> None:
        self._paths.pop(op_id, None)

    def is_complete(self, keys: Iterable[TileKey]) -> bool:
        tiles = self._tiles
        return all(k in tiles and tiles[k].todo is None for k in keys)

    @property
    def has_fallback(self) -> bool:
        return self._fallback is not None

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
        started: set[int] = set()
        for key in keys:
            tile = self._tiles.get(key)
            if tile is None:
                if time.perf_counter() > deadline:
                    return False
                tile = self._start_block(key, wanted)
            if tile.todo is None or id(tile) in started:
                continue
            started.add(id(tile))
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
        within: Rect | None = None,
    ) -> int:
        """Paint ``items[start:]`` with the board origin at (bx, by) in the painter's logical
        coordinates, until ``deadline``; returns how far it got. ``within``: only what paints
        in this board rectangle matters (the painter clips to it)."""
        scale = self.scale
        aa = AA_MARGIN / (scale * self.dpr)
        thinnest = self.min_width
        base = QTransform(scale, 0.0, 0.0, scale, bx, by)
        painter.setTransform(base)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        shifted = False
        clock = time.perf_counter
        paths = self._paths
        set_pen, draw_path = painter.setPen, painter.drawPath
        for index in range(start, len(items)):
            item = items[index]
            if item.dx or item.dy:
                painter.setTransform(
                    QTransform(scale, 0.0, 0.0, scale, bx + item.dx * scale, by + item.dy * scale)
                )
                shifted = True
            elif shifted:
                painter.setTransform(base)
                shifted = False
            op = item.op
            if type(op) is Stroke and len(op.points) > 2:
                # The hot path, inlined: most objects are strokes of several points.
                path = paths.get(op.id)
                if path is None:
                    path = paths[op.id] = stroke_path(op.points)
                if within is not None:
                    dx, dy = item.dx, item.dy
                    local = (within[0] - dx, within[1] - dy, within[2] - dx, within[3] - dy)
                    near = stroke_path_near(op.points, local, op.width / 2.0 + aa)
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

    def invalidate(self, rect: Rect, on_top: Item | None = None) -> None:
        """What is shown in board rectangle ``rect`` changed: repaint it in the complete
        tiles in view, drop the other tiles that meet it. ``on_top``: the change is only
        this object, added above everything else, so it is painted over what is there."""
        # Antialiasing bleeds a device pixel or so past what an object paints.
        margin = AA_MARGIN / (self.scale * self.dpr)
        grown = (rect[0] - margin, rect[1] - margin, rect[2] + margin, rect[3] + margin)
        targets: list[tuple[TileKey, _Tile]] = []
        for key in self.keys_for(grown):
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
                self._repaint(grown, targets)
        fallback = self._fallback
        if fallback is not None:
            unit = TILE / (fallback.scale * fallback.dpr)
            for key in list(fallback.tiles):
                tile_rect = (key[0] * unit, key[1] * unit, (key[0] + 1) * unit, (key[1] + 1) * unit)
                if rect_intersects(tile_rect, grown):
                    del fallback.tiles[key]

    def _repaint(self, rect: Rect, targets: list[tuple[TileKey, _Tile]]) -> None:
        """Render board rectangle ``rect`` afresh, once, into a patch on the device pixel
        grid, and copy the patch into each tile it meets: objects across a tile edge are
        painted once, not once per tile."""
        scale, dpr = self.scale, self.dpr
        factor = scale * dpr
        # The patch in scaled device coordinates (see the class docstring), out to whole
        # pixels so that no half-cleared pixel is left at its edge, and within the tiles.
        u0 = max(math.floor(rect[0] * factor), min(k[0] for k, _ in targets) * TILE)
        v0 = max(math.floor(rect[1] * factor), min(k[1] for k, _ in targets) * TILE)
        u1 = min(math.ceil(rect[2] * factor), (max(k[0] for k, _ in targets) + 1) * TILE)
        v1 = min(math.ceil(rect[3] * factor), (max(k[1] for k, _ in targets) + 1) * TILE)
        if u1 <= u0 or v1 <= v0:
            return
        patch = QPixmap(u1 - u0, v1 - v0)
        patch.setDevicePixelRatio(dpr)
        patch.fill(self.background)
        board = (u0 / factor, v0 / factor, u1 / factor, v1 / factor)
        margin = AA_MARGIN / factor
        items = self._items_in(
            (board[0] - margin, board[1] - margin, board[2] + margin, board[3] + margin)
        )
        painter = QPainter(patch)
        try:
            _prepare(painter)
            self._paint_items(painter, -u0 / dpr, -v0 / dpr, items, within=board)
        finally:
            painter.end()
        for key, tile in targets:
            painter = QPainter(tile.pixmap)
            try:
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
                painter.drawPixmap(
                    QPointF((u0 - key[0] * TILE) / dpr, (v0 - key[1] * TILE) / dpr), patch
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
