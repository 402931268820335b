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
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from whiteboard.app.view import Rect, rect_contains, rect_intersects, rect_translated, rect_union
from whiteboard.board import DrawingOp, OpId, OpKind, Shape, Stroke, Text

TextRect = Callable[[Text], Rect]
# The ellipse outline is tested as a polygon of this many sides: at 500 board units across it
# is within 0.6 units of the true curve.
ELLIPSE_SIDES = 64
ARROW_HEAD_ANGLE = math.radians(25.0)


def arrow_head(
    x1: float, y1: float, x2: float, y2: float, width: float
) -> tuple[tuple[float, float], list[tuple[float, float]]]:
    """Where an arrow's shaft stops, and its head (tip, left, right; empty if it has no
    length). The head grows with the width, and never exceeds the arrow."""
    length = math.hypot(x2 - x1, y2 - y1)
    if length == 0.0:
        return (x2, y2), []
    head = min(max(10.0, 4.0 * width), length)
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    bx, by = x2 - ux * head, y2 - uy * head
    half = head * math.tan(ARROW_HEAD_ANGLE)
    return (bx, by), [(x2, y2), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)]


def content_bounds(op: DrawingOp, text_rect: TextRect) -> Rect:
    """What ``op`` paints, pen width included (no antialiasing margin), before its offset."""
    if isinstance(op, Stroke):
        points = op.points
        xs, ys = points[0::2], points[1::2]
        half = op.width / 2.0
        return (min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)
    if isinstance(op, Shape):
        half = op.width / 2.0
        if op.kind is OpKind.ARROW:
            # The head is wider than the pen: as wide as its length times tan(25 degrees).
            half += max(10.0, 4.0 * op.width) * math.tan(ARROW_HEAD_ANGLE)
        return (
            min(op.x1, op.x2) - half,
            min(op.y1, op.y2) - half,
            max(op.x1, op.x2) + half,
            max(op.y1, op.y2) + half,
        )
    return text_rect(op)


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
) -> bool:
    """Whether a brush of ``radius`` along ``brush`` touches what ``op`` paints at offset
    (dx, dy). A click is a brush whose two ends are the same point."""
    # Move the brush rather than the object: one translation instead of one per point.
    local = (brush[0] - dx, brush[1] - dy, brush[2] - dx, brush[3] - dy)
    if isinstance(op, Stroke):
        p = op.points
        points = [(p[i], p[i + 1]) for i in range(0, len(p), 2)]
        return _near_polyline(local, points, radius + op.width / 2.0)
    if isinstance(op, Shape):
        return _touches_shape(op, local, radius)
    x0, y0, x1, y1 = text_rect(op)
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

# The z-order of an object: its drawing op's order key and id, as the board sorts them.
ZOrder = tuple[tuple[int, ...], OpId]
BoundsOf = Callable[[DrawingOp], Rect]


@dataclass(slots=True)
class Item:
    """An object as the canvas shows it: the board's, moved by moves not delivered yet."""

    op: DrawingOp
    dx: float
    dy: float
    rect: Rect  # what it paints at its offset, pen included
    order: ZOrder

    @property
    def id(self) -> OpId:
        return self.op.id


class Scene:
    """The shown objects, indexed by a grid so that a region's objects are found without
    looking at the other thousands.

    Each object is filed under every cell of :data:`CELL` board units its bounds meet; one
    that meets more than :data:`MAX_CELLS` (a line across the board, or anything when the
    board is zoomed far out) goes on a short list of big objects checked on every query.
    """

    CELL = 256.0
    MAX_CELLS = 64
    # A query meeting more cells than this scans every object instead (zoomed far out, the
    # whole board is in view anyway).
    MAX_QUERY_CELLS = 2048

    def __init__(self, bounds_of: BoundsOf, text_rect: TextRect) -> None:
        self._bounds_of = bounds_of
        self._text_rect = text_rect
        self._items: dict[OpId, Item] = {}
        self._bounds: dict[OpId, Rect] = {}  # before the offset: depends on the op alone
        self._cells: dict[tuple[int, int], set[OpId]] = {}
        self._big: set[OpId] = set()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, op_id: object) -> bool:
        return op_id in self._items

    def get(self, op_id: OpId) -> Item | None:
        return self._items.get(op_id)

    def items(self) -> list[Item]:
        return list(self._items.values())

    def clear(self) -> None:
        self._items.clear()
        self._bounds.clear()
        self._cells.clear()
        self._big.clear()

    def content(self) -> Rect | None:
        """The union of every object's rectangle, None if there is none."""
        result: Rect | None = None
        for item in self._items.values():
            result = rect_union(result, item.rect)
        return result

    def bounds(self, op: DrawingOp) -> Rect:
        rect = self._bounds.get(op.id)
        if rect is None:
            rect = self._bounds_of(op)
        return rect

    def put(self, op: DrawingOp, dx: float, dy: float, order: ZOrder) -> Item:
        """Show ``op`` at (dx, dy), replacing what was shown for its id."""
        self.discard(op.id)
        return self.add(op, dx, dy, order)

    def add(self, op: DrawingOp, dx: float, dy: float, order: ZOrder) -> Item:
        """Show ``op``, not shown yet, at (dx, dy)."""
        op_id = op.id
        base = self.bounds(op)
        self._bounds[op_id] = base
        item = Item(op, dx, dy, rect_translated(base, dx, dy), order)
        self._items[op_id] = item
        cells = self._cell_range(item.rect)
        if cells is None:
            self._big.add(op_id)
        else:
            buckets = self._cells
            for cell in cells:
                bucket = buckets.get(cell)
                if bucket is None:
                    buckets[cell] = {op_id}
                else:
                    bucket.add(op_id)
        return item

    def discard(self, op_id: OpId) -> Item | None:
        item = self._items.pop(op_id, None)
        if item is None:
            return None
        del self._bounds[op_id]
        cells = self._cell_range(item.rect)
        if cells is None:
            self._big.discard(op_id)
        else:
            for cell in cells:
                bucket = self._cells[cell]
                bucket.discard(op_id)
                if not bucket:
                    del self._cells[cell]
        return item

    def _cell_range(self, rect: Rect) -> list[tuple[int, int]] | None:
        cell = self.CELL
        x0, y0 = math.floor(rect[0] / cell), math.floor(rect[1] / cell)
        x1, y1 = math.floor(rect[2] / cell), math.floor(rect[3] / cell)
        if (x1 - x0 + 1) * (y1 - y0 + 1) > self.MAX_CELLS:
            return None
        return [(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]

    def in_rect(self, rect: Rect, ordered: bool = True) -> list[Item]:
        """The objects whose rectangle meets ``rect``, in z-order (bottom first) unless not
        ``ordered``."""
        cell = self.CELL
        x0, y0 = math.floor(rect[0] / cell), math.floor(rect[1] / cell)
        x1, y1 = math.floor(rect[2] / cell), math.floor(rect[3] / cell)
        items = self._items
        if (x1 - x0 + 1) * (y1 - y0 + 1) > self.MAX_QUERY_CELLS:
            candidates: list[Item] | set[OpId] = list(items.values())
            found = [item for item in candidates if rect_intersects(item.rect, rect)]
        else:
            ids: set[OpId] = set(self._big)
            cells = self._cells
            for x in range(x0, x1 + 1):
                for y in range(y0, y1 + 1):
                    bucket = cells.get((x, y))
                    if bucket:
                        ids |= bucket
            found = [items[i] for i in ids if rect_intersects(items[i].rect, rect)]
        if ordered:
            found.sort(key=_order_of)
        return found

    def find(self, rect: Rect, test: Callable[[Item], bool]) -> Item | None:
        """An object whose rectangle meets ``rect`` and passes ``test``, None if none does;
        stops at the first found."""
        cell = self.CELL
        x0, y0 = math.floor(rect[0] / cell), math.floor(rect[1] / cell)
        x1, y1 = math.floor(rect[2] / cell), math.floor(rect[3] / cell)
        items = self._items
        groups: list[Iterable[OpId]]
        if (x1 - x0 + 1) * (y1 - y0 + 1) > self.MAX_QUERY_CELLS:
            groups = [items]
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
            for op_id in group:
                item = items[op_id]
                if rect_intersects(item.rect, rect) and test(item):
                    return item
        return None

    def touching(self, brush: Segment, radius: float) -> list[Item]:
        """The objects a brush touches (see :func:`touches`), in z-order."""
        return [
            item
            for item in self.in_rect(brush_bounds(brush, radius))
            if touches(item.op, item.dx, item.dy, brush, radius, self._text_rect)
        ]

    def topmost_at(self, x: float, y: float, radius: float) -> Item | None:
        hits = self.touching((x, y, x, y), radius)
        return hits[-1] if hits else None

    def enclosed_by(self, rect: Rect) -> list[Item]:
        """The objects wholly inside ``rect``, in z-order."""
        return [item for item in self.in_rect(rect) if rect_contains(rect, item.rect)]


def _order_of(item: Item) -> ZOrder:
    return item.order


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
