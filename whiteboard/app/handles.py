"""The selection's handles (issue 20, point 1): where they are, which one the pointer is on,
and the affine map a drag of one makes. Qt-free, so that the geometry is tested on its own.

Eight squares on the box around the selection resize it: a corner pulls two sides, the
middle of a side one, the opposite corner or side staying where it is (Alt: the middle stays,
and the box grows on both sides); Shift keeps the proportions. A round handle above the top
edge turns the selection about the box's middle (Shift: by steps of 15 degrees). Each drag is
one affine map of the board, the same for every selected object: a Transform op.
"""

from __future__ import annotations

import math
from enum import Enum

from whiteboard.board.geometry import Rect, compose, placed_point
from whiteboard.board.ops import Matrix

HANDLE_PX = 8.0  # a handle's side on screen, at every zoom
ROTATE_OFFSET_PX = 24.0  # the turning handle, this far above the box's top edge
GRAB_PX = 7.0  # how near the pointer must be to grab a handle
MIN_SIZE = 1.0  # board units: a resize never makes the box thinner than this
ROTATE_SNAP = math.radians(15.0)
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


class Handle(Enum):
    """Each handle, by the sides of the box it moves (x: -1 left, +1 right, 0 neither)."""

    NW = (-1, -1)
    N = (0, -1)
    NE = (1, -1)
    E = (1, 0)
    SE = (1, 1)
    S = (0, 1)
    SW = (-1, 1)
    W = (-1, 0)
    ROTATE = (0, 0)


def handle_points(box: Rect, scale: float) -> dict[Handle, tuple[float, float]]:
    """Where each handle's centre is, in board units, for a box shown at ``scale``."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    points: dict[Handle, tuple[float, float]] = {}
    for handle in Handle:
        sx, sy = handle.value
        if handle is Handle.ROTATE:
            points[handle] = (cx, y0 - ROTATE_OFFSET_PX / scale)
        else:
            points[handle] = (
                cx if sx == 0 else (x1 if sx > 0 else x0),
                cy if sy == 0 else (y1 if sy > 0 else y0),
            )
    return points


def handle_at(box: Rect, x: float, y: float, scale: float) -> Handle | None:
    """The handle under the pointer at board (x, y), None if it is on none."""
    reach = GRAB_PX / scale
    best: tuple[float, Handle] | None = None
    for handle, (hx, hy) in handle_points(box, scale).items():
        distance = max(abs(hx - x), abs(hy - y))
        if distance <= reach and (best is None or distance < best[0]):
            best = (distance, handle)
    return None if best is None else best[1]


def resize_matrix(
    box: Rect,
    handle: Handle,
    start: tuple[float, float],
    now: tuple[float, float],
    keep_ratio: bool = False,
    from_centre: bool = False,
) -> Matrix:
    """The map that resizes ``box`` as dragging ``handle`` from ``start`` to ``now`` does."""
    sx, sy = handle.value
    x0, y0, x1, y1 = box
    width, height = max(x1 - x0, MIN_SIZE), max(y1 - y0, MIN_SIZE)
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    # The point that stays: the opposite side (or the middle, with Alt).
    fx = cx if from_centre or sx == 0 else (x0 if sx > 0 else x1)
    fy = cy if from_centre or sy == 0 else (y0 if sy > 0 else y1)
    grow = 2.0 if from_centre else 1.0
    moved_x, moved_y = now[0] - start[0], now[1] - start[1]
    kx = 1.0 if sx == 0 else (width + sx * moved_x * grow) / width
    ky = 1.0 if sy == 0 else (height + sy * moved_y * grow) / height
    if keep_ratio:
        if sx == 0:
            kx = ky
        elif sy == 0:
            ky = kx
        else:
            k = max(abs(kx), abs(ky))
            kx, ky = math.copysign(k, kx), math.copysign(k, ky)
    kx = _not_flat(kx, width)
    ky = _not_flat(ky, height)
    return (kx, 0.0, 0.0, ky, fx - kx * fx, fy - ky * fy)


def _not_flat(k: float, length: float) -> float:
    """A scale no thinner than MIN_SIZE across (a flip through zero is allowed past it)."""
    least = MIN_SIZE / length
    if abs(k) < least:
        return least if k >= 0 else -least
    return k


def rotate_matrix(
    box: Rect, start: tuple[float, float], now: tuple[float, float], snap: bool = False
) -> Matrix:
    """The map that turns ``box`` about its middle as dragging the turning handle from
    ``start`` to ``now`` does."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
    angle = math.atan2(now[1] - cy, now[0] - cx) - math.atan2(start[1] - cy, start[0] - cx)
    if snap:
        angle = round(angle / ROTATE_SNAP) * ROTATE_SNAP
    cos, sin = math.cos(angle), math.sin(angle)
    if abs(cos) < 1e-12:
        cos = 0.0
    if abs(sin) < 1e-12:
        sin = 0.0
    return (cos, sin, -sin, cos, cx - cos * cx + sin * cy, cy - sin * cx - cos * cy)


def then(second: Matrix, first: Matrix) -> Matrix:
    """The map that applies ``first``, then ``second`` (as the board composes a TRANSFORM
    with an object's placement)."""
    a, b, c, d, e, f = first
    linear, dx, dy = compose(second, (a, b, c, d), e, f)
    return (*linear, dx, dy)


def inverse(matrix: Matrix) -> Matrix:
    """The map that undoes ``matrix`` (which keeps some area: a Transform's does)."""
    a, b, c, d, e, f = matrix
    det = a * d - b * c
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return (ia, ib, ic, id_, -(ia * e + ic * f), -(ib * e + id_ * f))


def mapped(matrix: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = matrix
    return placed_point(x, y, e, f, (a, b, c, d))


def mapped_corners(matrix: Matrix, box: Rect) -> list[tuple[float, float]]:
    """The corners of ``box`` (clockwise from the top left) where ``matrix`` takes them."""
    x0, y0, x1, y1 = box
    return [mapped(matrix, x, y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]


__all__ = [
    "GRAB_PX",
    "HANDLE_PX",
    "IDENTITY",
    "Handle",
    "handle_at",
    "handle_points",
    "inverse",
    "mapped",
    "mapped_corners",
    "resize_matrix",
    "rotate_matrix",
    "then",
]
