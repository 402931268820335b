"""The tile cache: the board rendered at one scale in tiles of device pixels, so that a pan
or a repaint is a few blits and a change repaints only where it paints.

Kept apart from :mod:`whiteboard.app.render`, which paints one object (and is shared with
export and thumbnails): this module decides *where* to paint again and what to keep, and
paints through render's functions, so the tiles show exactly what export paints.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPixmap, QRegion, QTransform

from whiteboard.app.pictures import Pictures
from whiteboard.app.render import (
    AA_MARGIN,
    CORNER_RADIUS,
    Chunk,
    object_path,
    paint_object,
    stroke_chunks,
    stroke_path,
    stroke_path_near,
    stroke_pen,
)
from whiteboard.app.scene_index import Item
from whiteboard.app.view import View, rect_intersects
from whiteboard.board import DrawingOp, OpId, Stroke
from whiteboard.board.geometry import Rect

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
        self.pictures: Pictures | None = None  # images' pixels (None: painted as frames)

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
            linear = item.linear
            if linear is not None:
                a, b, c, d = (scale * v for v in linear)
                painter.setTransform(
                    QTransform(a, b, c, d, bx + item.dx * scale, by + item.dy * scale)
                )
                shifted = True
            elif item.dx or item.dy:
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
                if within is not None and linear is None:
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
                paint_object(painter, op, self.path(op), thinnest, self.pictures)
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
        for stand_in in where:
            region = region.united(stand_in.toAlignedRect())
        painter.setClipRegion(region)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        factor = view.scale / layer.scale
        unit = TILE / (layer.scale * layer.dpr)
        bounds = region.boundingRect()
        wanted = view.rect_to_board(
            (bounds.left(), bounds.top(), bounds.right() + 1.0, bounds.bottom() + 1.0)
        )
        for key, tile in layer.tiles.items():
            rect = _tile_rect(key, unit)
            if not rect_intersects(rect, wanted):
                continue
            x, y = view.to_widget(rect[0], rect[1])
            painter.setTransform(QTransform(factor, 0.0, 0.0, factor, x, y))
            painter.drawPixmap(QPointF(0.0, 0.0), tile.pixmap)
        painter.restore()


def _prepare(painter: QPainter) -> None:
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
