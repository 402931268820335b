"""Turning a captured pointer path into Stroke ops, and a selection into Erase, Move,
Restyle and Reorder ops. Qt-free, so it is tested on its own.

Two concerns: a mouse reports far more points than a stroke needs (simplify them), and a
transport carries payloads of bounded size (1,182 bytes on ``raw``, about 60 points or 80
targets), so a long stroke travels as several Stroke ops that share their end points and
render as one line, and erasing or moving many objects takes several ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from whiteboard.board import (
    MAX_OP_BYTES,
    Erase,
    Move,
    OpId,
    Reorder,
    Restyle,
    Stroke,
    Tool,
    Transform,
    ZPlace,
    encode_op,
)
from whiteboard.board.ops import (
    MAX_AUTHOR,
    MAX_COLOUR,
    MAX_COORD,
    MAX_COUNTER,
    MAX_DELTA,
    MAX_OPACITY,
    MAX_POINTS,
    MAX_TARGETS,
    MAX_WIDTH,
    Matrix,
)

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Style:
    """Style fields to set on a selection (a Restyle's): None leaves that field as it is."""

    colour: int | None = None
    width: float | None = None
    fill: int | None = None
    opacity: int | None = None
    font_size: float | None = None

# Points closer to the simplified line than this (logical pixels) are dropped. Under half a
# pixel, so the simplified stroke is indistinguishable from the captured one even at 2x DPI.
SIMPLIFY_TOLERANCE = 0.4
# Points simplified together; bounds the quadratic worst case of RDP (see simplify).
SIMPLIFY_WINDOW = 256

# msgpack always packs a stroke's coordinates as float64: 1 type byte + 8 bytes each.
_BYTES_PER_POINT = 2 * 9
# A flat array of up to 65,535 items has a 3-byte header; the 1-point probe below has 1 byte.
_ARRAY_HEADER_GROWTH = 2
# A target is a uint32 author (5 bytes at most) and a uint64 counter (9 bytes at most).
_BYTES_PER_TARGET = 5 + 9
_LARGEST_ID = OpId(MAX_AUTHOR, MAX_COUNTER)


def clamp_point(x: float, y: float) -> Point:
    """``(x, y)`` within the coordinate range ops accept (a drag may leave the widget)."""
    return (min(max(x, -MAX_COORD), MAX_COORD), min(max(y, -MAX_COORD), MAX_COORD))


def simplify(points: Sequence[Point], tolerance: float = SIMPLIFY_TOLERANCE) -> list[Point]:
    """The fewest of ``points`` that stay within ``tolerance`` of the captured path.

    Ramer-Douglas-Peucker, run on windows of :data:`SIMPLIFY_WINDOW` points that share their
    end points: plain RDP is quadratic at worst, and a slow scribble of a minute is thousands
    of points simplified between a release and the next paint. A window boundary only keeps
    one point RDP might have dropped.
    """
    # Consecutive duplicates carry nothing and would make zero-length segments.
    unique: list[Point] = []
    for point in points:
        if not unique or point != unique[-1]:
            unique.append(point)
    if len(unique) <= 2:
        return unique
    result = [unique[0]]
    for start in range(0, len(unique) - 1, SIMPLIFY_WINDOW - 1):
        window = unique[start : start + SIMPLIFY_WINDOW]
        result.extend(_rdp(window, tolerance)[1:])
    return result


def _rdp(points: list[Point], tolerance: float) -> list[Point]:
    # Iterative: a long straight run would go as deep as it has points.
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    stack = [(0, len(points) - 1)]
    while stack:
        first, last = stack.pop()
        ax, ay = points[first]
        bx, by = points[last]
        dx, dy = bx - ax, by - ay
        length = math.hypot(dx, dy)
        worst, worst_index = -1.0, -1
        for i in range(first + 1, last):
            px, py = points[i]
            if length == 0.0:
                distance = math.hypot(px - ax, py - ay)
            else:
                distance = abs(dy * (px - ax) - dx * (py - ay)) / length
            if distance > worst:
                worst, worst_index = distance, i
        if worst > tolerance:
            keep[worst_index] = True
            stack.append((first, worst_index))
            stack.append((worst_index, last))
    return [point for point, kept in zip(points, keep, strict=True) if kept]


def max_points_per_stroke(max_payload: int, colour: int, width: float, tool: Tool) -> int:
    """The most points one Stroke op may hold and still encode to ``max_payload`` bytes.

    Measured on the real encoder with the largest possible op id, so that whatever id the op
    gets, it fits."""
    probe = Stroke(OpId(MAX_AUTHOR, MAX_COUNTER), (0.0, 0.0), colour, width, tool)
    overhead = len(encode_op(probe)) - _BYTES_PER_POINT + _ARRAY_HEADER_GROWTH
    return min(MAX_POINTS, (min(max_payload, MAX_OP_BYTES) - overhead) // _BYTES_PER_POINT)


def stroke_ops(
    points: Sequence[Point],
    colour: int,
    width: float,
    tool: Tool,
    next_id: Callable[[], OpId],
    max_payload: int,
) -> list[Stroke]:
    """The Stroke ops drawing ``points``: one if it fits in a payload, else consecutive pieces
    that each repeat the previous piece's last point, so the line has no gap.

    Raises ValueError if not even a two-point stroke fits in ``max_payload``."""
    if not points:
        return []
    capacity = max_points_per_stroke(max_payload, colour, width, tool)
    if capacity < 2:
        raise ValueError(f"a stroke does not fit in the transport's {max_payload}-byte payloads")
    ops: list[Stroke] = []
    start = 0
    while True:
        end = min(start + capacity, len(points))
        flat = tuple(float(c) for point in points[start:end] for c in point)
        ops.append(Stroke(next_id(), flat, colour, width, tool))
        if end == len(points):
            return ops
        start = end - 1  # the shared joint


def max_targets_per_op(max_payload: int) -> int:
    """The most targets one Erase, Move, Restyle, Reorder or Transform op may name and still
    encode to ``max_payload`` bytes, whatever the ids and fields (a Transform, with its six
    floats, is the largest)."""
    probes = (
        Move(_LARGEST_ID, (_LARGEST_ID,), -MAX_DELTA, -MAX_DELTA),
        Transform(_LARGEST_ID, (_LARGEST_ID,), (0.1, 0.1, 0.1, -0.1, 0.1, 0.1)),
        Restyle(
            _LARGEST_ID, (_LARGEST_ID,), MAX_COLOUR, MAX_WIDTH, MAX_COLOUR, MAX_OPACITY, 0.1
        ),
    )
    largest = max(len(encode_op(probe)) for probe in probes)
    overhead = largest - _BYTES_PER_TARGET + _ARRAY_HEADER_GROWTH
    return min(MAX_TARGETS, (min(max_payload, MAX_OP_BYTES) - overhead) // _BYTES_PER_TARGET)


def _batches(targets: Sequence[OpId], max_payload: int) -> list[tuple[OpId, ...]]:
    capacity = max_targets_per_op(max_payload)
    if capacity < 1:
        raise ValueError(
            f"an edit of the selection does not fit in the transport's {max_payload}-byte"
            " payloads"
        )
    return [tuple(targets[i : i + capacity]) for i in range(0, len(targets), capacity)]


def erase_ops(
    targets: Sequence[OpId], next_id: Callable[[], OpId], max_payload: int
) -> list[Erase]:
    """The Erase ops removing ``targets``, as few as fit in payloads of ``max_payload``."""
    return [Erase(next_id(), batch) for batch in _batches(targets, max_payload)]


def move_ops(
    targets: Sequence[OpId],
    dx: float,
    dy: float,
    next_id: Callable[[], OpId],
    max_payload: int,
) -> list[Move]:
    """The Move ops translating ``targets`` by (dx, dy), as few as fit in the payloads."""
    dx = min(max(dx, -MAX_DELTA), MAX_DELTA)
    dy = min(max(dy, -MAX_DELTA), MAX_DELTA)
    return [Move(next_id(), batch, dx, dy) for batch in _batches(targets, max_payload)]


def restyle_ops(
    targets: Sequence[OpId],
    style: Style,
    next_id: Callable[[], OpId],
    max_payload: int,
) -> list[Restyle]:
    """The Restyle ops setting ``style`` on ``targets``, as few as fit in the payloads."""
    return [
        Restyle(
            next_id(), batch, style.colour, style.width, style.fill, style.opacity, style.font_size
        )
        for batch in _batches(targets, max_payload)
    ]


def reorder_ops(
    targets: Sequence[OpId],
    place: ZPlace,
    next_id: Callable[[], OpId],
    max_payload: int,
) -> list[Reorder]:
    """The Reorder ops putting ``targets`` (in z-order, bottom first) to ``place``, as few as
    fit in the payloads, in the order to send them: each op puts its targets above (FRONT) or
    below (BACK) those sent before it, so the lowest go first to the front and the highest
    first to the back, and the targets keep their order among themselves."""
    batches = _batches(targets, max_payload)
    if place is ZPlace.BACK:
        batches.reverse()
    return [Reorder(next_id(), batch, place) for batch in batches]


def transform_ops(
    targets: Sequence[OpId], matrix: Matrix, next_id: Callable[[], OpId], max_payload: int
) -> list[Transform]:
    """The Transform ops mapping ``targets`` by ``matrix``, as few as fit in the payloads."""
    return [Transform(next_id(), batch, matrix) for batch in _batches(targets, max_payload)]

