"""Turning pointer paths into Stroke ops: simplification and splitting to fit a payload."""

from __future__ import annotations

import itertools
import math

import pytest

from whiteboard.app.strokes import (
    clamp_point,
    max_points_per_stroke,
    simplify,
    stroke_ops,
)
from whiteboard.board import OpId, Tool, encode_op
from whiteboard.board.ops import MAX_COORD
from whiteboard.transport.raw import RawCore

RAW_PAYLOAD = RawCore.max_payload


def test_simplify_drops_points_on_a_straight_line_and_duplicates() -> None:
    points = [(float(x), 10.0) for x in range(100)] + [(99.0, 10.0)]
    assert simplify(points) == [(0.0, 10.0), (99.0, 10.0)]


def test_simplify_keeps_corners_and_stays_within_tolerance() -> None:
    points = [(float(x), 0.0) for x in range(50)] + [(49.0, float(y)) for y in range(1, 50)]
    simple = simplify(points)
    assert simple == [(0.0, 0.0), (49.0, 0.0), (49.0, 49.0)]


def test_simplify_handles_a_huge_path_without_recursion() -> None:
    points = [(float(i), math.sin(i / 10.0) * 50.0) for i in range(60_000)]
    simple = simplify(points)
    assert simple[0] == points[0] and simple[-1] == points[-1]
    assert 2 < len(simple) < len(points)


def test_single_point_survives() -> None:
    assert simplify([(3.0, 4.0), (3.0, 4.0)]) == [(3.0, 4.0)]


def test_clamp_point_keeps_coordinates_valid() -> None:
    assert clamp_point(-1e9, 5.0) == (-MAX_COORD, 5.0)


def test_short_stroke_is_one_op() -> None:
    counter = itertools.count(1)
    ops = stroke_ops(
        [(0.0, 0.0), (10.0, 5.0), (20.0, 0.0)],
        0xFF112233,
        3.0,
        Tool.PEN,
        lambda: OpId(7, next(counter)),
        RAW_PAYLOAD,
    )
    assert len(ops) == 1
    assert ops[0].points == (0.0, 0.0, 10.0, 5.0, 20.0, 0.0)
    assert ops[0].id == OpId(7, 1) and ops[0].colour == 0xFF112233 and ops[0].width == 3.0


def test_long_stroke_is_split_into_pieces_that_fit_and_join() -> None:
    points = [(float(i), float(i % 7)) for i in range(500)]
    counter = itertools.count(1)
    ops = stroke_ops(
        points, 0xFF000000, 2.0, Tool.PEN, lambda: OpId(2**32 - 1, next(counter)), RAW_PAYLOAD
    )
    assert len(ops) > 1
    assert all(len(encode_op(op)) <= RAW_PAYLOAD for op in ops)
    # The pieces share their joints and together hold every point, in order.
    for before, after in itertools.pairwise(ops):
        assert before.points[-2:] == after.points[:2]
    rebuilt = list(ops[0].points)
    for op in ops[1:]:
        rebuilt.extend(op.points[2:])
    assert rebuilt == [c for p in points for c in p]
    assert [op.id.counter for op in ops] == list(range(1, len(ops) + 1))


def test_capacity_is_tight() -> None:
    capacity = max_points_per_stroke(RAW_PAYLOAD, 0xFFFFFFFF, 500.0, Tool.MARKER)
    # Any fewer and we would waste datagrams; the worst-case id still fits.
    assert 50 < capacity < 70


def test_payload_too_small_for_a_stroke_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        stroke_ops([(0.0, 0.0), (1.0, 1.0)], 0, 1.0, Tool.PEN, lambda: OpId(1, 1), 40)
