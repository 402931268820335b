"""The selection's handles (whiteboard/app/handles.py): where they are and the map each drag
makes, checked on the corners of the box it moves."""

from __future__ import annotations

import math

import pytest

from whiteboard.app.handles import (
    IDENTITY,
    Handle,
    handle_at,
    handle_points,
    mapped,
    mapped_corners,
    resize_matrix,
    rotate_matrix,
)

BOX = (100.0, 100.0, 200.0, 150.0)  # 100 wide, 50 high


def close(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return math.isclose(a[0], b[0], abs_tol=1e-9) and math.isclose(a[1], b[1], abs_tol=1e-9)


def test_handles_sit_on_the_corners_sides_and_above_and_are_found_within_reach() -> None:
    points = handle_points(BOX, scale=2.0)
    assert points[Handle.NW] == (100.0, 100.0) and points[Handle.SE] == (200.0, 150.0)
    assert points[Handle.E] == (200.0, 125.0) and points[Handle.N] == (150.0, 100.0)
    assert points[Handle.ROTATE] == (150.0, 100.0 - 24.0 / 2.0)  # 24 px above, at 200%
    assert handle_at(BOX, 201.0, 151.0, scale=1.0) is Handle.SE
    assert handle_at(BOX, 150.0, 76.0, scale=1.0) is Handle.ROTATE
    assert handle_at(BOX, 150.0, 125.0, scale=1.0) is None  # the middle: a move, not a handle
    assert handle_at(BOX, 210.0, 150.0, scale=1.0) is None  # 10 px off: out of reach


def test_a_corner_drag_resizes_about_the_opposite_corner() -> None:
    matrix = resize_matrix(BOX, Handle.SE, (200.0, 150.0), (300.0, 175.0))
    assert mapped_corners(matrix, BOX) == [
        (100.0, 100.0), (300.0, 100.0), (300.0, 175.0), (100.0, 175.0),
    ]  # fmt: skip


def test_shift_keeps_the_proportions_and_alt_resizes_from_the_middle() -> None:
    ratio = resize_matrix(BOX, Handle.SE, (200.0, 150.0), (300.0, 160.0), keep_ratio=True)
    assert mapped(ratio, 200.0, 150.0) == (300.0, 200.0)  # twice as big both ways
    centred = resize_matrix(BOX, Handle.E, (200.0, 125.0), (250.0, 125.0), from_centre=True)
    assert close(mapped(centred, 100.0, 125.0), (50.0, 125.0))
    assert close(mapped(centred, 200.0, 125.0), (250.0, 125.0))
    side = resize_matrix(BOX, Handle.N, (150.0, 100.0), (170.0, 50.0))
    assert mapped(side, 200.0, 150.0) == (200.0, 150.0)  # the bottom stays, x untouched
    assert mapped(side, 100.0, 100.0) == (100.0, 50.0)


def test_a_resize_never_flattens_the_box_but_may_flip_it() -> None:
    flat = resize_matrix(BOX, Handle.E, (200.0, 125.0), (100.0, 125.0))
    assert abs(flat[0]) * 100.0 == pytest.approx(1.0)  # one board unit wide at least
    flipped = resize_matrix(BOX, Handle.E, (200.0, 125.0), (0.0, 125.0))
    assert mapped(flipped, 200.0, 125.0) == (0.0, 125.0)  # mirrored past the left side


def test_the_turning_handle_turns_about_the_middle_snapping_with_shift() -> None:
    centre = (150.0, 125.0)
    quarter = rotate_matrix(BOX, (150.0, 76.0), (199.0, 125.0))  # from above to the right
    assert close(mapped(quarter, *centre), centre)
    assert close(mapped(quarter, 150.0, 100.0), (175.0, 125.0))  # the top's middle: right
    snapped = rotate_matrix(BOX, (150.0, 76.0), (199.0, 120.0), snap=True)
    assert snapped[:4] == (0.0, 1.0, -1.0, 0.0)  # 84 degrees snaps to 90
    assert rotate_matrix(BOX, (150.0, 76.0), (150.0, 60.0)) == pytest.approx(IDENTITY)
