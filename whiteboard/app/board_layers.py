"""What the canvas shows, kept in three layers in step with the board and this member's
edits in flight, so that a 10,000-stroke board stays fluid:

* the *scene* (:class:`~whiteboard.app.scene_index.Scene`): every shown object with its shown
  offset and bounds, indexed by place, updated per :class:`~whiteboard.board.Change`, or, for
  a board shown afresh (a state loaded, a replay's jump), by comparing it with what is shown:
  what did not change keeps its place, bounds, path and tiles;
* the *tiles* (:class:`~whiteboard.app.tiles.TileCache`): the board's objects rendered at the
  current zoom, so a pan or a repaint is a few blits and a late op repaints only where it
  paints, and only what paints there;
* the *overlay*, painted over the tiles every frame (:meth:`BoardLayers.paint_overlay`): the
  objects delivered in the last moments (see below), pending drawings and the objects a tool
  has lifted.

A delivered object goes into the tiles only once it has *settled*: after RECENT_SETTLE_MS
without changes, or when more than RECENT_LIMIT objects wait above the tiles (the lowest
first). Until then it is painted in the overlay. A late op is late by the time its repair
took (RMP orders by timestamp), so it almost always lands among these recent objects: it
costs a repaint of the screen where it is, not of the tiles under it. Folding a settled
object into the tiles paints it over them, since it is above everything in them.

How each object is to be shown (hidden by a pending erase, moved, lifted, a pending drawing)
is :class:`~whiteboard.app.local_edits.LocalEdits`'s to say; this module only keeps the
caches in step with it. Kept apart from the widget, which owns the view, the input and the
painting of a frame, because this is where the caches can go stale (ghosts, invisible
objects): one place to read.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QColor, QPainter, QTransform

from whiteboard.app.local_edits import LocalEdits, is_pending_order
from whiteboard.app.pictures import Pictures
from whiteboard.app.render import bounds, paint_object, paint_parts, text_box
from whiteboard.app.scene_index import Item, Scene, ZOrder
from whiteboard.app.tiles import TileCache
from whiteboard.app.view import View, rect_inflated, rect_intersects, rect_union
from whiteboard.board import Board, DrawingOp, Image, OpId, OrderKey
from whiteboard.board.geometry import Rect, compose

# Work done between events (rendering tiles, folding recent objects) stops after this long.
STEP_BUDGET_S = 0.008
# Past this many changed rectangles, one rectangle around them all is repainted instead.
MAX_DIRTY_RECTS = 16
# Delivered objects wait above the tiles, in the overlay, until this long without changes...
RECENT_SETTLE_MS = 1500
# ... or until more than this many wait (the lowest go into the tiles first): what a late op
# inserted among them costs is a repaint of the screen, not of the tiles under it.
RECENT_LIMIT = 64
# While the tiles in view are being rendered (after a zoom), settling waits this long again.
FOLD_RETRY_MS = 100

# What capture() saw of each object: its item (None: not shown) and whether it was tiled.
Before = dict[OpId, tuple[Item | None, bool]]


class BoardLayers:
    """The scene, the tiles and the recent overlay of one canvas (see the module docstring).

    ``board_source``: the board shown (a callable: a replica replaces its board when it loads
    a state). ``edits``: this member's edits in flight, shared with the canvas. ``refresh``:
    asks the widget to repaint these board rectangles. ``parent``: owns the settling timer.
    """

    def __init__(
        self,
        board_source: Callable[[], Board],
        edits: LocalEdits,
        background: QColor,
        refresh: Callable[[list[Rect]], None],
        parent: QObject,
    ) -> None:
        self._board_source = board_source
        self._edits = edits
        self._refresh = refresh
        self._scene = Scene(bounds, text_box)
        self._tiles = TileCache(self._tile_items, background)
        # Images' pixels, decoded from the shown board's blobs or one we sent and have not had
        # back yet (whiteboard/app/pictures.py).
        self.pictures = Pictures(
            lambda digest: board_source().blob(digest) or edits.pending_blob(digest)
        )
        self._tiles.pictures = self.pictures
        # The tiles hold the delivered objects up to this one in z-order (not lifted ones);
        # those above it are recent, painted in the overlay until they settle.
        self._tile_top: ZOrder | None = None
        self._recent: dict[OpId, ZOrder] = {}
        # The board last shown by rebuild(): another one is shown afresh, not per Change.
        self.shown_board: Board | None = None
        # The blobs the images shown were painted with: a board shown afresh that holds other
        # ones (a replay's jump across a BLOB) repaints the images they show.
        self._blobs_shown: frozenset[bytes] = frozenset()
        self._recent_timer = QTimer(parent)
        self._recent_timer.setSingleShot(True)
        self._recent_timer.timeout.connect(self._fold_step)

    @property
    def scene(self) -> Scene:
        return self._scene

    @property
    def tiles(self) -> TileCache:
        return self._tiles

    def recent_count(self) -> int:
        """How many delivered objects wait above the tiles (see the module docstring)."""
        return len(self._recent)

    def capture(self, ids: Iterable[OpId]) -> Before:
        scene = self._scene
        before: Before = {}
        for op_id in ids:
            item = scene.get(op_id)
            before[op_id] = (item, item is not None and self._tiled(item))
        return before

    def apply(self, before: Before) -> None:
        """Show the objects of ``before`` as they are now, and repaint what changed: in the
        tiles for objects entering or leaving them, on screen for all."""
        tile_dirty: list[tuple[Item, bool]] = []
        screen_dirty: list[Rect] = []
        top, recent = self._tile_top, self._recent
        for op_id, (old, was_tiled) in before.items():
            new = self._reshow(op_id)
            if (
                new is not None
                and not is_pending_order(new.order)
                and (top is None or new.order > top)
            ):
                recent[op_id] = new.order
            else:
                recent.pop(op_id, None)
            now_tiled = new is not None and self._tiled(new)
            if new is old and was_tiled == now_tiled:
                continue
            if old is not None:
                screen_dirty += self.rects(old)
                if was_tiled:
                    tile_dirty.append((old, False))
            if new is not None:
                screen_dirty += self.rects(new)
                if now_tiled:
                    tile_dirty.append((new, not was_tiled))
        self._invalidate_tiles(tile_dirty)
        self._refresh(screen_dirty)
        self._settle_recent()

    def blob_arrived(self, digest: bytes, ids: Iterable[OpId]) -> None:
        """The bytes of ``digest`` arrived: the images ``ids`` show them now."""
        self._blobs_shown |= {digest}
        self.repaint(ids)

    def repaint(self, ids: Iterable[OpId]) -> None:
        """Paint these objects again as they are (an image whose bytes arrived)."""
        items = [item for op_id in ids if (item := self._scene.get(op_id)) is not None]
        self._invalidate_tiles([(item, False) for item in items if self._tiled(item)])
        self._refresh([rect for item in items for rect in self.rects(item)])

    def rebuild(self) -> None:
        """Show the board as it is now, whatever changed (the first board, one loaded from a
        state, a replay's jump): the scene is brought up to it object by object, keeping what
        is shown as it was, and the tiles are repainted, or dropped to be rendered afresh,
        only where something changed."""
        board = self._board_source()
        self.shown_board = board
        edits = self._edits
        edits.drop_delivered(board)
        scene = self._scene
        objects = board.objects()
        # Its pictures decode on worker threads while the tiles paint what lies under them,
        # bottom first: in the order painting reaches them.
        self.pictures.prefetch(o.op.digest for o in objects if type(o.op) is Image)
        # Every delivered object goes into the tiles now, the recent ones too: none of this
        # board's is above its top one.
        old_top, recent = self._tile_top, self._recent
        self._recent = {}
        self._recent_timer.stop()
        if objects:
            op_id = objects[-1].op.id
            self._tile_top = board.z_order(op_id)
        else:
            self._tile_top = None
        if edits.changes_delivered:
            gone, new = scene.update(edits.shown_objects(board, objects))
        else:
            # The usual case, and a replay's: the board's objects as they are, then the
            # pending drawings.
            gone, new = scene.update(edits.shown_pending(board), objects, board.z_order)
        self._forget_paths(itertools.chain(gone, scene.take_let_go()))
        lifted = edits.lifted
        if old_top is None:
            gone = []  # nothing was in the tiles
        elif recent or edits.has_pending or lifted:
            gone = [item for item in gone if item.order <= old_top and item.id not in lifted]
        if edits.has_pending or lifted:
            new = [item for item in new if self._tiled(item)]
        # The recent objects that stay as they were are new to the tiles as well.
        new_ids = {item.id for item in new}
        for op_id in recent:
            item = scene.get(op_id)
            if item is not None and op_id not in new_ids and self._tiled(item):
                new.append(item)
        edits.keep_lifted(scene)
        if len(gone) + len(new) <= MAX_DIRTY_RECTS:
            # A few objects: repainted where they paint, as for a Change (an object moved is
            # not new to the tiles).
            was_tiled = {item.id for item in gone}
            dirty = [(item, False) for item in gone]
            dirty += [(item, item.id not in was_tiled) for item in new]
            self._invalidate_tiles(dirty)
        else:
            # Too many to repaint at once: the tiles they meet are rendered afresh, a slice
            # at a time (see BoardCanvas._render_step), and the others are kept.
            self._tiles.drop([item.rect for item in itertools.chain(gone, new)])
        blobs = frozenset(board.blob_digests)
        if blobs != self._blobs_shown:
            flipped = blobs ^ self._blobs_shown
            self._blobs_shown = blobs
            self.repaint(o.id for o in objects if type(o.op) is Image and o.op.digest in flipped)

    def prepare(self, drawings: Iterable[tuple[DrawingOp, OrderKey]]) -> None:
        """Get ready to show these drawings (a recording's, when its replay opens) where
        they were drawn: their bounds computed and indexed now (~5 us each) rather than on
        the first jump to a moment showing tens of thousands of them."""
        self._scene.keep((op, 0.0, 0.0, (key, op.id), None) for op, key in drawings)

    def rects(self, item: Item) -> list[Rect]:
        """Where an object is, and where it is shown if a tool lifted it."""
        return self._edits.rects(item.id, item.rect)

    def paint_overlay(self, painter: QPainter, view: View, exposed: Rect) -> None:
        """Paint, where they meet ``exposed`` (a board rectangle), the recent objects as
        if they were in the tiles, then the pending drawings and the lifted objects, bottom
        first."""
        scene, lifted = self._scene, self._edits.lifted
        origin = (view.ox, view.oy)
        # Objects shown as they are, as in the tiles: each cut down to its part in ``exposed``
        # (a repaint where a recent object or a late one arrived is a small area).
        recent = [item for i in self._recent if i not in lifted and (item := scene.get(i))]
        if recent:
            recent.sort(key=_z)
            self._tiles.paint_over(painter, origin, recent, exposed)
        edits = self._edits
        ids = dict.fromkeys(itertools.chain(edits.pending_ids(), edits.reordering, lifted))
        items = [scene.get(i) for i in ids]
        # Above the tiles: pending drawings, objects a pending reorder brings to the front
        # (their z-order is a pending one too), and lifted objects.
        shown = sorted(
            (i for i in items if i and (is_pending_order(i.order) or i.id in lifted)), key=_z
        )
        scale = view.scale
        lift_dx, lift_dy = self._edits.lift_offset
        lift_matrix = self._edits.lift_matrix
        run: list[Item] = []
        for item in shown:
            # Lifted by a tool, or undelivered (a session ended without it): dimmed.
            opacity = self._edits.opacity(item.id)
            if opacity is None:
                run.append(item)
                continue
            if run:
                self._tiles.paint_over(painter, origin, run, exposed)
                run = []
            if not rect_intersects(self._edits.shown_rect(item.id, item.rect), exposed):
                continue
            dx, dy, linear = item.dx, item.dy, item.linear
            if item.id in lifted:
                if lift_matrix is not None:
                    linear, dx, dy = compose(lift_matrix, linear, dx, dy)
                else:
                    dx, dy = dx + lift_dx, dy + lift_dy
            a, b, c, d = (scale * v for v in linear or (1.0, 0.0, 0.0, 1.0))
            painter.setTransform(QTransform(a, b, c, d, view.ox + dx * scale, view.oy + dy * scale))
            painter.setOpacity(opacity)
            tiles = self._tiles
            paint_object(painter, item.op, tiles.path(item.op), tiles.min_width, self.pictures)
            painter.setOpacity(1.0)
        if run:
            self._tiles.paint_over(painter, origin, run, exposed)

    def _tiled(self, item: Item) -> bool:
        """Whether an object is painted in the tiles: delivered and settled (not above the
        tiles' top; pending drawings sort above every delivered object), not lifted."""
        top = self._tile_top
        return top is not None and item.order <= top and item.id not in self._edits.lifted

    def _tile_items(self, rect: Rect) -> list[Item]:
        top = self._tile_top
        if top is None:
            return []
        items = self._scene.in_rect(rect)
        # In z-order: the recent and pending objects, above the tiles' top, are the last.
        end = len(items)
        while end and items[end - 1].order > top:
            end -= 1
        del items[end:]
        lifted = self._edits.lifted
        if not lifted:
            return items  # a replay's tens of thousands: no filtering
        return [item for item in items if item.id not in lifted]

    def _reshow(self, op_id: OpId) -> Item | None:
        state = self._edits.showing(self._board_source(), op_id)
        old = self._scene.get(op_id)
        if state is None:
            if old is not None:
                self._scene.discard(op_id)
                self._tiles.forget(op_id)
            return None
        op, dx, dy, order, linear = state
        if old is not None and old.shows(op, dx, dy, order, linear):
            return old
        item = self._scene.put(op, dx, dy, order, linear)
        # What was cached for the item shown before, or one kept, if it was another op's.
        gone = self._scene.take_let_go()
        if old is not None:
            gone.append(old)
        self._forget_paths(gone)
        return item

    def _forget_paths(self, items: Iterable[Item]) -> None:
        """Forget the path and chunks cached for ``items``, no longer shown, unless the op
        shown or kept to be shown again for their id is theirs (a replay going back and forth
        would make tens of thousands of paths anew, ~30 us each)."""
        scene = self._scene
        forget = self._tiles.forget
        for item in items:
            op_id = item.id
            now = scene.get(op_id)
            if now is None:
                now = scene.kept(op_id)
            if now is None or now.op is not item.op:
                forget(op_id)

    def _invalidate_tiles(self, dirty: list[tuple[Item, bool]]) -> None:
        """Repaint in the tiles where objects left or entered them: each (item, added), added
        when the item is new to the tiles, else it is where one was or still is."""
        if not dirty:
            return
        if len(dirty) == 1:
            item, added = dirty[0]
            parts = _parts(item)
            # A new object with nothing in the tiles above it where it paints: painting it
            # over them is exact, and far cheaper than repainting everything under it.
            on_top = item if added and not self._covered(item, parts) else None
            self._tiles.invalidate(item.rect, on_top, parts)
            return
        if len(dirty) > MAX_DIRTY_RECTS:
            union: Rect | None = None
            for item, _ in dirty:
                union = rect_union(union, item.rect)
            assert union is not None
            self._tiles.invalidate(union)
            return
        for item, _ in dirty:
            self._tiles.invalidate(item.rect, None, _parts(item))

    def _covered(self, item: Item, parts: list[Rect]) -> bool:
        """Whether an object in the tiles above ``item`` paints where it does (antialiasing
        included)."""
        margin = self._tiles.aa_margin
        areas = [rect_inflated(part, margin) for part in parts]
        order = item.order

        def above(other: Item) -> bool:
            if other.order <= order or not self._tiled(other):
                return False
            x0, y0, x1, y1 = rect_inflated(other.rect, margin)
            return any(x0 <= a[2] and a[0] <= x1 and y0 <= a[3] and a[1] <= y1 for a in areas)

        return self._scene.find(rect_inflated(item.rect, margin), above) is not None

    def _settle_recent(self) -> None:
        """After a change: fold the lowest recent objects into the tiles while more than
        RECENT_LIMIT wait, and the rest once changes pause."""
        excess = len(self._recent) - RECENT_LIMIT
        if excess > 0 and self._can_fold():
            self._fold(excess, time.perf_counter() + STEP_BUDGET_S)
        if self._recent:
            self._recent_timer.start(RECENT_SETTLE_MS)

    def _can_fold(self) -> bool:
        """Whether the tiles in view show the board as they hold it: after a zoom, until
        they are rendered, the screen shows what they have so far or the previous scale's
        tiles stretched, which putting an object into them would drop where it is (while it
        leaves the overlay)."""
        tiles = self._tiles
        return not tiles.has_fallback and tiles.is_complete(tiles.visible)

    def _fold_step(self) -> None:
        """Changes paused: fold the recent objects into the tiles, a slice at a time, once
        the tiles in view are complete."""
        if not self._can_fold():
            self._recent_timer.start(FOLD_RETRY_MS)
            return
        self._fold(deadline=time.perf_counter() + STEP_BUDGET_S)
        if self._recent:
            self._recent_timer.start(0)

    def _fold(self, count: int | None = None, deadline: float = math.inf) -> None:
        """Put the lowest ``count`` recent objects (None: all of them, or as many as fit
        before ``deadline``) into the tiles. Each is above everything in them, so it is
        painted over them; the screen does not change."""
        lowest = sorted(self._recent.items(), key=lambda entry: entry[1])
        scene, lifted = self._scene, self._edits.lifted
        for op_id, order in lowest[:count]:
            del self._recent[op_id]
            self._tile_top = order
            item = scene.get(op_id)
            if item is not None and op_id not in lifted:
                self._tiles.invalidate(item.rect, item, _parts(item))
            if time.perf_counter() > deadline:
                return


def _parts(item: Item) -> list[Rect]:
    """Rectangles covering what ``item`` paints: a long stroke's chunks, or (turned or
    resized) its rectangle."""
    if item.linear is not None:
        return [item.rect]
    return paint_parts(item.op, item.dx, item.dy)


def _z(item: Item) -> ZOrder:
    return item.order


__all__ = [
    "MAX_DIRTY_RECTS",
    "RECENT_LIMIT",
    "RECENT_SETTLE_MS",
    "STEP_BUDGET_S",
    "Before",
    "BoardLayers",
]
