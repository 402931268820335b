"""Which objects a pointer touches: the eraser's brush, a click of the select tool.

Qt-free and in board coordinates. A *brush* is a segment from the pointer's previous position
to its current one with a radius, so a fast drag that jumps 50 pixels between two mouse events
still erases what lies in between. Objects are tested by what is painted, not by their box:

* a stroke by its distance to the polyline through its points, within width/2 (the painted
  curve cuts the polyline's corners by at most a few pixels, covered by the caller's tolerance);
* a line or arrow by its shaft (and the arrow's head); a rectangle or ellipse by its outline,
  and by its inside too when it is filled;
* a text label by its rectangle, which the caller measures (it takes a font).

Every test takes the object's offset (dx, dy) from its moves.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter

from whiteboard.app.view import rect_contains, rect_intersects, rect_translated, rect_union
from whiteboard.board import BoardObject, DrawingOp, OpId, OpKind, Shape, Stroke
from whiteboard.board.edits import ZOrder
from whiteboard.board.geometry import (
    ARROW_HEAD_ANGLE,
    Linear,
    Rect,
    TextRect,
    arrow_head_length,
    content_bounds,
    linear_scale,
    placed_rect,
    unplaced_point,
)

# The ellipse outline is tested as a polygon of this many sides: at 500 board units across it
# is within 0.6 units of the true curve.
ELLIPSE_SIDES = 64


def arrow_head(
    x1: float, y1: float, x2: float, y2: float, width: float
) -> tuple[tuple[float, float], list[tuple[float, float]]]:
    """Where an arrow's shaft stops, and its head (tip, left, right; empty if it has no
    length). The head grows with the width, and never exceeds the arrow."""
    length = math.hypot(x2 - x1, y2 - y1)
    if length == 0.0:
        return (x2, y2), []
    head = min(arrow_head_length(width), length)
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    bx, by = x2 - ux * head, y2 - uy * head
    half = head * math.tan(ARROW_HEAD_ANGLE)
    return (bx, by), [(x2, y2), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)]


def point_segment_distance(
    px: float, py: float, ax: float, ay: float, bx: float, by: float
) -> float:
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    if length2 == 0.0:
        return math.hypot(px - ax, py - ay)
    t = min(max(((px - ax) * dx + (py - ay) * dy) / length2, 0.0), 1.0)
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def _cross(ox: float, oy: float, ax: float, ay: float, bx: float, by: float) -> float:
    return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)


def segments_cross(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> bool:
    """True if the segments properly intersect (touching ends count via the distances)."""
    ax, ay, bx, by = a
    cx, cy, dx, dy = b
    d1 = _cross(cx, cy, dx, dy, ax, ay)
    d2 = _cross(cx, cy, dx, dy, bx, by)
    d3 = _cross(ax, ay, bx, by, cx, cy)
    d4 = _cross(ax, ay, bx, by, dx, dy)
    return d1 * d2 < 0.0 and d3 * d4 < 0.0


def segment_distance(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> float:
    """The least distance between two segments (0 if they cross)."""
    if segments_cross(a, b):
        return 0.0
    ax, ay, bx, by = a
    cx, cy, dx, dy = b
    return min(
        point_segment_distance(ax, ay, cx, cy, dx, dy),
        point_segment_distance(bx, by, cx, cy, dx, dy),
        point_segment_distance(cx, cy, ax, ay, bx, by),
        point_segment_distance(dx, dy, ax, ay, bx, by),
    )


Segment = tuple[float, float, float, float]


def _near_polyline(brush: Segment, points: list[tuple[float, float]], reach: float) -> bool:
    if len(points) == 1:
        x, y = points[0]
        return point_segment_distance(x, y, *brush) <= reach
    # Cheap rejection per segment before the exact distance: most segments are far away.
    bx0, by0 = min(brush[0], brush[2]) - reach, min(brush[1], brush[3]) - reach
    bx1, by1 = max(brush[0], brush[2]) + reach, max(brush[1], brush[3]) + reach
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if max(x0, x1) < bx0 or min(x0, x1) > bx1 or max(y0, y1) < by0 or min(y0, y1) > by1:
            continue
        if segment_distance(brush, (x0, y0, x1, y1)) <= reach:
            return True
    return False


def _inside_polygon(x: float, y: float, polygon: list[tuple[float, float]]) -> bool:
    inside = False
    j = len(polygon) - 1
    for i, (xi, yi) in enumerate(polygon):
        xj, yj = polygon[j]
        if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
            inside = not inside
        j = i
    return inside


def _closed(polygon: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [*polygon, polygon[0]]


def _touches_area(brush: Segment, polygon: list[tuple[float, float]], reach: float) -> bool:
    """The brush touches a filled polygon: an end of it is inside, or it is near the edge."""
    return (
        _inside_polygon(brush[0], brush[1], polygon)
        or _inside_polygon(brush[2], brush[3], polygon)
        or _near_polyline(brush, _closed(polygon), reach)
    )


def ellipse_polygon(box: Rect) -> list[tuple[float, float]]:
    cx, cy = (box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0
    rx, ry = (box[2] - box[0]) / 2.0, (box[3] - box[1]) / 2.0
    step = 2.0 * math.pi / ELLIPSE_SIDES
    return [
        (cx + rx * math.cos(i * step), cy + ry * math.sin(i * step)) for i in range(ELLIPSE_SIDES)
    ]


def touches(
    op: DrawingOp,
    dx: float,
    dy: float,
    brush: Segment,
    radius: float,
    text_rect: TextRect,
    linear: Linear | None = None,
) -> bool:
    """Whether a brush of ``radius`` along ``brush`` touches what ``op`` paints at offset
    (dx, dy), turned or resized by ``linear``. A click is a brush whose two ends are the
    same point."""
    # Move the brush rather than the object: one translation instead of one per point.
    if linear is None:
        local = (brush[0] - dx, brush[1] - dy, brush[2] - dx, brush[3] - dy)
    else:
        # Into the drawing's own coordinates, the reach scaled as the drawing is.
        local = (
            *unplaced_point(brush[0], brush[1], dx, dy, linear),
            *unplaced_point(brush[2], brush[3], dx, dy, linear),
        )
        radius /= linear_scale(linear)
    if isinstance(op, Stroke):
        p = op.points
        points = [(p[i], p[i + 1]) for i in range(0, len(p), 2)]
        return _near_polyline(local, points, radius + op.width / 2.0)
    if isinstance(op, Shape):
        return _touches_shape(op, local, radius)
    x0, y0, x1, y1 = content_bounds(op, text_rect)  # a text's or an image's box
    return _touches_area(local, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], radius)


def _touches_shape(op: Shape, brush: Segment, radius: float) -> bool:
    reach = radius + op.width / 2.0
    if op.kind is OpKind.LINE:
        return segment_distance(brush, (op.x1, op.y1, op.x2, op.y2)) <= reach
    if op.kind is OpKind.ARROW:
        if segment_distance(brush, (op.x1, op.y1, op.x2, op.y2)) <= reach:
            return True
        _, head = arrow_head(op.x1, op.y1, op.x2, op.y2, op.width)
        return bool(head) and _touches_area(brush, head, radius)
    box = (min(op.x1, op.x2), min(op.y1, op.y2), max(op.x1, op.x2), max(op.y1, op.y2))
    if op.kind is OpKind.RECT:
        outline = [(box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])]
    else:
        outline = ellipse_polygon(box)
    if op.fill:
        return _touches_area(brush, outline, reach)
    return _near_polyline(brush, _closed(outline), reach)


def brush_bounds(brush: Segment, radius: float) -> Rect:
    return (
        min(brush[0], brush[2]) - radius,
        min(brush[1], brush[3]) - radius,
        max(brush[0], brush[2]) + radius,
        max(brush[1], brush[3]) + radius,
    )


def enclosed(selection: Rect, bounds: Rect, dx: float, dy: float) -> bool:
    """Whether a selection rectangle holds all of an object (its bounds at its offset)."""
    return rect_contains(selection, rect_translated(bounds, dx, dy))


# -- the objects on screen, by place -------------------------------------------------------

# The z-order of an object, as the board sorts them (whiteboard/board/edits.py): its drawing
# op's order key and id unless it was reordered; a pending drawing's is above them all
# (whiteboard/app/local_edits.py).
BoundsOf = Callable[[DrawingOp], Rect]
# An object to show: its drawing op, its offset (dx, dy), its z-order and its linear part (None
# unless transformed: whiteboard/board/geometry.py).
Shown = tuple[DrawingOp, float, float, ZOrder, Linear | None]


@dataclass(slots=True, eq=False)
class Item:
    """An object as the canvas shows it: the board's, moved by moves not delivered yet.
    Compared and hashed by identity: a scene files the items themselves."""

    op: DrawingOp
    dx: float
    dy: float
    rect: Rect  # what it paints at its offset, pen included
    order: ZOrder
    # ``rect`` before the offset, which depends on the op alone: a moved object keeps it.
    # Kept here rather than in a cache by id, so that it goes when the object does.
    base: Rect
    # The board's object shown as it is (no pending move or erase), if it was: the same
    # object again is shown the same (see Scene.update).
    source: BoardObject | None = None
    shown: bool = False  # by its scene now
    filed: bool = False  # in its scene's index (shown, or kept to be shown again)
    linear: Linear | None = None  # how it is turned or resized before its offset

    @property
    def id(self) -> OpId:
        return self.op.id

    def shows(
        self, op: DrawingOp, dx: float, dy: float, order: ZOrder, linear: Linear | None
    ) -> bool:
        """Whether this item shows ``op`` (the very op object) so placed."""
        return (
            self.op is op
            and self.dx == dx
            and self.dy == dy
            and self.order == order
            and self.linear == linear
        )


_order_of = attrgetter("order")
# How many items no longer shown a scene keeps to show again (see Scene.update): a replay
# of 100,000 ops going back and forth reuses them; a few tens of MB at most.
RETIRED_ITEMS = 200_000


class Scene:
    """The shown objects, indexed by a grid so that a region's objects are found without
    looking at the other thousands.

    Each item is filed under every cell of :data:`CELL` board units its rectangle meets; one
    that meets more than :data:`MAX_CELLS` (a line across the board, or anything when the
    board is zoomed far out) goes on a short list of big items checked on every query.

    Items no longer shown but kept to be shown again (see :meth:`update`) stay filed, and
    queries pass over them (``Item.shown``): a replay jumping back and forth between boards
    of tens of thousands of objects neither files nor unfiles them each time (~1 us an item,
    100 ms a jump).

    The objects are also kept in z-order (sorted again, in about linear time, after an
    object was added below the top one), so that a query meeting much of the board walks
    them in order instead of sorting what it found: sorting 90,000 z-orders (tuples) takes
    ~100 ms, walking them ~10 ms.
    """

    CELL = 256.0
    MAX_CELLS = 64
    # A query meeting more cells than this scans every object instead (zoomed far out, the
    # whole board is in view anyway).
    MAX_QUERY_CELLS = 2048
    # A query whose cells hold more than 1/SCAN_SHARE of the objects walks all of them in
    # z-order rather than sorting those it finds (a sort costs ~log2(n) comparisons of
    # tuples an object, the walk one test of a rectangle).
    SCAN_SHARE = 8

    def __init__(self, bounds_of: BoundsOf, text_rect: TextRect) -> None:
        self._bounds_of = bounds_of
        self._text_rect = text_rect
        self._items: dict[OpId, Item] = {}  # in z-order while self._z_sorted
        self._z_sorted = True
        self._cells: defaultdict[tuple[int, int], set[Item]] = defaultdict(set)
        self._big: set[Item] = set()
        # Items no longer shown, by id, at most RETIRED_ITEMS of them, still filed: shown
        # again as they were (a replay going back and forth), they are taken back rather
        # than made and filed anew.
        self._retired: dict[OpId, Item] = {}
        self._let_go: list[Item] = []  # see take_let_go

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, op_id: object) -> bool:
        return op_id in self._items

    def get(self, op_id: OpId) -> Item | None:
        return self._items.get(op_id)

    def kept(self, op_id: OpId) -> Item | None:
        """The item kept for ``op_id`` to be shown again (see :meth:`update`), if any."""
        return self._retired.get(op_id)

    def take_let_go(self) -> list[Item]:
        """The items kept to be shown again that were let go since the last call (past
        :data:`RETIRED_ITEMS`, or shown otherwise): what is cached for them can go too."""
        let_go, self._let_go = self._let_go, []
        return let_go

    def items(self) -> list[Item]:
        """Every shown object, in z-order (bottom first)."""
        return list(self._ordered().values())

    def content(self) -> Rect | None:
        """The union of every object's rectangle, None if there is none."""
        result: Rect | None = None
        for item in self._items.values():
            result = rect_union(result, item.rect)
        return result

    def put(
        self, op: DrawingOp, dx: float, dy: float, order: ZOrder, linear: Linear | None = None
    ) -> Item:
        """Show ``op`` at (dx, dy) (turned or resized by ``linear``), replacing what was
        shown for its id."""
        shown = self.discard(op.id)
        base = shown.base if shown is not None and shown.op is op else None
        return self._add(op, dx, dy, order, base, linear)

    def add(
        self, op: DrawingOp, dx: float, dy: float, order: ZOrder, linear: Linear | None = None
    ) -> Item:
        """Show ``op``, not shown yet, at (dx, dy)."""
        return self._add(op, dx, dy, order, None, linear)

    def _add(
        self,
        op: DrawingOp,
        dx: float,
        dy: float,
        order: ZOrder,
        base: Rect | None,
        linear: Linear | None,
    ) -> Item:
        """Show ``op`` (``base``: its bounds if known). An item kept for its id is taken back
        if it shows it so, and let go otherwise."""
        kept = self._retired.pop(op.id, None)
        item: Item | None = None
        if kept is not None:
            if kept.op is op:
                base = kept.base
                if kept.shows(op, dx, dy, order, linear):
                    item = kept  # still filed
            if item is None:
                self._let_go_of(kept)
        if item is None:
            if base is None:
                base = self._bounds_of(op)
            rect = placed_rect(base, dx, dy, linear)
            item = Item(op, dx, dy, rect, order, base, linear=linear)
        item.shown = True
        items = self._items
        if self._z_sorted and items:
            # Still in z-order if it goes on top (the usual delivery). The dict's last value
            # is found without walking it.
            self._z_sorted = next(reversed(items.values())).order < order
        items[op.id] = item
        self._file((item,))
        return item

    def _let_go_of(self, item: Item) -> None:
        """Out of the index, and reported by :meth:`take_let_go`."""
        self._unfile((item,))
        self._let_go.append(item)

    def discard(self, op_id: OpId) -> Item | None:
        item = self._items.pop(op_id, None)
        if item is not None:
            item.shown = False
            self._unfile((item,))
        return item

    def update(
        self,
        shown: Iterable[Shown],
        objects: Iterable[BoardObject] = (),
        z_order: Callable[[OpId], ZOrder] | None = None,
    ) -> tuple[list[Item], list[Item]]:
        """Show exactly the board's ``objects`` as they are (at ``z_order(id)``), then
        ``shown``, all in z-order (bottom first), and return what changed: the items no
        longer shown, and the items new or replaced.

        An object shown as it was (the same op object at the same offset and z-order) keeps
        its item: a board that changed in a few places costs a pass over its objects and the
        work of the changes. The very same BoardObject as before is shown as before without
        a look at it: it is immutable, and so is its z-order, the op's sort key or the one a
        reorder gave it (copies of a board share its objects and their keys).
        One whose op is another object (a board loaded from a state) is replaced, its bounds
        computed afresh. An item no longer shown is kept (filed, at most
        :data:`RETIRED_ITEMS`) to be taken back if it is shown again as it was."""
        old = self._items
        items: dict[OpId, Item] = {}
        gone: list[Item] = []
        new: list[Item] = []
        stale: list[Item] = []  # kept items that will not be shown again as they are
        bounds_of = self._bounds_of
        pop = old.pop
        unretire = self._retired.pop
        if z_order is not None:
            for obj in objects:
                op = obj.op
                op_id = op.id
                item = pop(op_id, None)
                if item is not None:
                    if item.source is obj:
                        items[op_id] = item
                        continue
                    gone.append(item)
                else:
                    item = unretire(op_id, None)
                    if item is not None and item.source is obj:
                        # Shown before, not now, and to be shown as it was then (a replay
                        # going back and forth): its item again, still filed.
                        items[op_id] = item
                        new.append(item)
                        continue
                dx, dy, order, linear = obj.dx, obj.dy, z_order(op_id), obj.linear
                if item is not None:
                    if item.shows(op, dx, dy, order, linear):
                        item.source = obj  # the same showing: known by this object from now
                        if gone and gone[-1] is item:
                            gone.pop()
                        else:
                            new.append(item)
                        items[op_id] = item
                        continue
                    if not gone or gone[-1] is not item:
                        stale.append(item)  # a kept item, shown otherwise now
                base = item.base if item is not None and item.op is op else bounds_of(op)
                if linear is None:
                    x0, y0, x1, y1 = base
                    rect = (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
                else:
                    rect = placed_rect(base, dx, dy, linear)
                item = Item(op, dx, dy, rect, order, base, obj, linear=linear)
                items[op_id] = item
                new.append(item)
        for op, dx, dy, order, linear in shown:
            op_id = op.id
            item = pop(op_id, None)
            if item is not None:
                gone.append(item)
            else:
                item = unretire(op_id, None)
                if item is not None:
                    stale.append(item)  # let go, unless shown as it is below
            if item is not None and item.op is op:
                if item.shows(op, dx, dy, order, linear):
                    items[op_id] = item
                    if gone and gone[-1] is item:
                        gone.pop()
                    else:
                        stale.pop()
                        new.append(item)  # kept, shown again
                    continue
                base = item.base
            else:
                base = bounds_of(op)
            rect = placed_rect(base, dx, dy, linear)
            item = Item(op, dx, dy, rect, order, base, linear=linear)
            items[op_id] = item
            new.append(item)
        gone.extend(old.values())
        self._items = items
        self._z_sorted = True
        for item in gone:
            item.shown = False
        for item in new:
            item.shown = True
        retired = self._retired
        for item in gone:
            op_id = item.op.id
            if op_id in items:
                stale.append(item)  # replaced
            else:
                kept = retired.pop(op_id, None)
                if kept is not None:
                    stale.append(kept)
                retired[op_id] = item
        stale += self._over_limit()
        self._let_go += stale
        if len(stale) > len(items) + len(retired):
            # Most of the index is to go: filing what stays afresh is cheaper than taking
            # out what goes one by one.
            for item in stale:
                item.filed = False
            self._cells = defaultdict(set)
            self._big = set()
            for item in itertools.chain(items.values(), retired.values()):
                item.filed = False
            self._file(itertools.chain(items.values(), retired.values()))
        else:
            self._unfile(stale)
            self._file(new)
        return gone, new

    def keep(self, shown: Iterable[Shown]) -> None:
        """Get ready to show objects not shown now (a recording's, when its replay opens):
        their items made and filed, and kept as items no longer shown are, so that the first
        jump to a moment that shows tens of thousands of them costs what a jump back to it
        does. An id already shown or kept is left as it is."""
        items, retired = self._items, self._retired
        bounds_of = self._bounds_of
        made: list[Item] = []
        for op, dx, dy, order, linear in shown:
            op_id = op.id
            if op_id in items or op_id in retired:
                continue
            base = bounds_of(op)
            item = Item(op, dx, dy, placed_rect(base, dx, dy, linear), order, base, linear=linear)
            retired[op_id] = item
            made.append(item)
        self._file(made)
        let_go = self._over_limit()
        self._unfile(let_go)
        self._let_go += let_go

    def _over_limit(self) -> list[Item]:
        """Let go of the items kept longest past RETIRED_ITEMS, and return them."""
        retired = self._retired
        excess = len(retired) - RETIRED_ITEMS
        if excess <= 0:
            return []
        return [retired.pop(op_id) for op_id in list(itertools.islice(retired, excess))]

    def _ordered(self) -> dict[OpId, Item]:
        if not self._z_sorted:
            # Mostly in order already (objects added below the top are few), which Timsort
            # sorts in about linear time. The items themselves are sorted, not (id, item)
            # pairs: 100,000 short-lived tuples would set off the garbage collector.
            ordered = sorted(self._items.values(), key=_order_of)
            self._items = {item.op.id: item for item in ordered}
            self._z_sorted = True
        return self._items

    # Filing and unfiling are the work of showing a changed board (a replay's first jump to
    # a moment files tens of thousands of objects): one loop over the items, in locals.

    def _file(self, items: Iterable[Item]) -> None:
        """Index those of ``items`` not filed yet under the cells their rectangles meet."""
        cell, most = self.CELL, self.MAX_CELLS
        floor = math.floor
        cells, big = self._cells, self._big
        for item in items:
            if item.filed:
                continue
            item.filed = True
            x0, y0, x1, y1 = item.rect
            i0, j0, i1, j1 = floor(x0 / cell), floor(y0 / cell), floor(x1 / cell), floor(y1 / cell)
            if i0 == i1 and j0 == j1:
                cells[(i0, j0)].add(item)
            elif (i1 - i0 + 1) * (j1 - j0 + 1) > most:
                big.add(item)
            else:
                for i in range(i0, i1 + 1):
                    for j in range(j0, j1 + 1):
                        cells[(i, j)].add(item)

    def _unfile(self, items: Iterable[Item]) -> None:
        cell, most = self.CELL, self.MAX_CELLS
        floor = math.floor
        cells, big = self._cells, self._big
        for item in items:
            if not item.filed:
                continue
            item.filed = False
            x0, y0, x1, y1 = item.rect
            i0, j0, i1, j1 = floor(x0 / cell), floor(y0 / cell), floor(x1 / cell), floor(y1 / cell)
            if (i1 - i0 + 1) * (j1 - j0 + 1) > most:
                big.discard(item)
                continue
            for i in range(i0, i1 + 1):
                for j in range(j0, j1 + 1):
                    bucket = cells[(i, j)]
                    bucket.discard(item)
                    if not bucket:
                        del cells[(i, j)]

    def _cell_box(self, rect: Rect) -> tuple[int, int, int, int]:
        """The first and last cells a rectangle meets, across and down."""
        cell = self.CELL
        floor = math.floor
        return (
            floor(rect[0] / cell),
            floor(rect[1] / cell),
            floor(rect[2] / cell),
            floor(rect[3] / cell),
        )

    def in_rect(self, rect: Rect, ordered: bool = True) -> list[Item]:
        """The objects whose rectangle meets ``rect``, in z-order (bottom first) unless not
        ``ordered``."""
        x0, y0, x1, y1 = self._cell_box(rect)
        rx0, ry0, rx1, ry1 = rect
        if (x1 - x0 + 1) * (y1 - y0 + 1) <= self.MAX_QUERY_CELLS:
            cells = self._cells
            buckets = [
                bucket
                for x in range(x0, x1 + 1)
                for y in range(y0, y1 + 1)
                if (bucket := cells.get((x, y)))
            ]
            if not ordered or sum(map(len, buckets)) * self.SCAN_SHARE < len(self._items):
                found = [
                    item
                    for item in self._big.union(*buckets)
                    if item.shown
                    and (r := item.rect)[0] <= rx1
                    and rx0 <= r[2]
                    and r[1] <= ry1
                    and ry0 <= r[3]
                ]
                if ordered:
                    found.sort(key=_order_of)
                return found
        # Much of the board: walk it all, in z-order if it is kept in z-order.
        found = _meeting(self._items.values(), rect)
        if ordered and not self._z_sorted:
            if len(found) * 2 <= len(self._items):
                # A part of it (the area a late op repaints, zoomed out): sorting what was
                # found is cheaper than putting the whole board back in z-order.
                found.sort(key=_order_of)
                return found
            # Most of it: back in z-order once, for this query and the next ones.
            found = _meeting(self._ordered().values(), rect)
        return found

    def find(self, rect: Rect, test: Callable[[Item], bool]) -> Item | None:
        """An object whose rectangle meets ``rect`` and passes ``test``, None if none does;
        stops at the first found."""
        x0, y0, x1, y1 = self._cell_box(rect)
        groups: list[Iterable[Item]]
        if (x1 - x0 + 1) * (y1 - y0 + 1) > self.MAX_QUERY_CELLS:
            groups = [self._items.values()]
        else:
            cells = self._cells
            groups = [self._big]
            groups += [
                bucket
                for x in range(x0, x1 + 1)
                for y in range(y0, y1 + 1)
                if (bucket := cells.get((x, y)))
            ]
        for group in groups:
            for item in group:
                if item.shown and rect_intersects(item.rect, rect) and test(item):
                    return item
        return None

    def touching(self, brush: Segment, radius: float) -> list[Item]:
        """The objects a brush touches (see :func:`touches`), in z-order."""
        return [
            item
            for item in self.in_rect(brush_bounds(brush, radius))
            if touches(item.op, item.dx, item.dy, brush, radius, self._text_rect, item.linear)
        ]

    def topmost_at(self, x: float, y: float, radius: float) -> Item | None:
        hits = self.touching((x, y, x, y), radius)
        return hits[-1] if hits else None

    def enclosed_by(self, rect: Rect) -> list[Item]:
        """The objects wholly inside ``rect``, in z-order."""
        return [item for item in self.in_rect(rect) if rect_contains(rect, item.rect)]


def _meeting(items: Iterable[Item], rect: Rect) -> list[Item]:
    """The ``items`` whose rectangle meets ``rect``, in their order (one inlined test per
    item: a query zoomed out walks every object of the board)."""
    rx0, ry0, rx1, ry1 = rect
    return [
        item
        for item in items
        if (r := item.rect)[0] <= rx1 and rx0 <= r[2] and r[1] <= ry1 and ry0 <= r[3]
    ]


__all__ = [
    "Item",
    "Rect",
    "Scene",
    "arrow_head",
    "brush_bounds",
    "content_bounds",
    "enclosed",
    "point_segment_distance",
    "rect_intersects",
    "segment_distance",
    "touches",
]
