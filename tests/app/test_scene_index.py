"""Hit tests and the scene index: what the eraser and the select tool touch."""

from __future__ import annotations

import random

import pytest

from whiteboard.app.scene_index import Item, Scene, content_bounds, segment_distance, touches
from whiteboard.app.view import Rect, rect_intersects
from whiteboard.board import OpId, OpKind, Shape, Stroke, Text, synthetic_stroke


def text_rect(op: Text) -> Rect:
    # A stand-in for font metrics: 10 units per character, one font size high.
    return (op.x, op.y, op.x + 10.0 * len(op.text), op.y + op.font_size)


def click(x: float, y: float) -> tuple[float, float, float, float]:
    return (x, y, x, y)


STROKE = Stroke(OpId(1, 1), (0.0, 0.0, 100.0, 0.0, 100.0, 100.0), 0xFF000000, 10.0)


def test_stroke_is_hit_within_half_its_width_plus_the_radius() -> None:
    assert touches(STROKE, 0, 0, click(50.0, 7.0), 2.0, text_rect)  # 7 <= 5 + 2
    assert not touches(STROKE, 0, 0, click(50.0, 8.0), 2.0, text_rect)
    assert touches(STROKE, 0, 0, click(104.0, 50.0), 0.0, text_rect)
    assert not touches(STROKE, 0, 0, click(50.0, 50.0), 2.0, text_rect)  # inside the corner


def test_the_offset_of_a_moved_object_counts() -> None:
    assert not touches(STROKE, 0, 300, click(50.0, 0.0), 2.0, text_rect)
    assert touches(STROKE, 0, 300, click(50.0, 300.0), 2.0, text_rect)


def test_a_fast_drag_erases_what_it_passes_over() -> None:
    # Both ends of the brush are far from the stroke; the segment between them crosses it.
    assert touches(STROKE, 0, 0, (50.0, -40.0, 50.0, 40.0), 1.0, text_rect)


def test_dot_is_hit_around_its_point() -> None:
    dot = Stroke(OpId(1, 2), (10.0, 10.0), 0xFF000000, 6.0)
    assert touches(dot, 0, 0, click(14.0, 10.0), 1.0, text_rect)
    assert not touches(dot, 0, 0, click(15.0, 10.0), 1.0, text_rect)


def rect_shape(fill: int) -> Shape:
    return Shape(OpId(1, 3), OpKind.RECT, 0.0, 0.0, 100.0, 50.0, 0xFF000000, 2.0, fill)


def test_an_empty_rectangle_is_hit_on_its_outline_only() -> None:
    assert touches(rect_shape(0), 0, 0, click(50.0, 1.0), 1.0, text_rect)
    assert touches(rect_shape(0), 0, 0, click(101.5, 25.0), 1.0, text_rect)
    assert not touches(rect_shape(0), 0, 0, click(50.0, 25.0), 1.0, text_rect)
    assert touches(rect_shape(0xFF00FF00), 0, 0, click(50.0, 25.0), 1.0, text_rect)
    assert not touches(rect_shape(0xFF00FF00), 0, 0, click(150.0, 25.0), 1.0, text_rect)


def test_ellipse_outline_and_fill() -> None:
    ellipse = Shape(OpId(1, 4), OpKind.ELLIPSE, 0.0, 0.0, 100.0, 100.0, 0xFF000000, 2.0)
    assert touches(ellipse, 0, 0, click(50.0, 0.0), 1.0, text_rect)  # top of the circle
    assert not touches(ellipse, 0, 0, click(50.0, 50.0), 1.0, text_rect)
    assert not touches(ellipse, 0, 0, click(3.0, 3.0), 1.0, text_rect)  # box corner
    filled = Shape(OpId(1, 5), OpKind.ELLIPSE, 0.0, 0.0, 100.0, 100.0, 0xFF000000, 2.0, 1)
    assert touches(filled, 0, 0, click(50.0, 50.0), 1.0, text_rect)


def test_line_and_arrow_head() -> None:
    line = Shape(OpId(1, 6), OpKind.LINE, 0.0, 0.0, 100.0, 0.0, 0xFF000000, 4.0)
    assert touches(line, 0, 0, click(50.0, 3.0), 1.0, text_rect)
    assert not touches(line, 0, 0, click(50.0, 4.0), 1.0, text_rect)
    arrow = Shape(OpId(1, 7), OpKind.ARROW, 0.0, 0.0, 100.0, 0.0, 0xFF000000, 2.0)
    # The head is wider than the shaft: 10 long, about 4.7 each side.
    assert touches(arrow, 0, 0, click(91.0, 4.0), 0.0, text_rect)
    assert not touches(arrow, 0, 0, click(50.0, 4.0), 0.0, text_rect)


def test_text_is_hit_by_its_rectangle() -> None:
    label = Text(OpId(1, 8), 10.0, 10.0, "abc", 0xFF000000, 20.0)
    assert touches(label, 0, 0, click(35.0, 25.0), 0.0, text_rect)
    assert not touches(label, 0, 0, click(45.0, 25.0), 0.0, text_rect)
    assert touches(label, 5, 0, click(45.0, 25.0), 0.0, text_rect)


def test_segment_distance() -> None:
    assert segment_distance((0, 0, 10, 0), (5, -5, 5, 5)) == 0.0
    assert segment_distance((0, 0, 10, 0), (0, 3, 10, 3)) == 3.0
    assert segment_distance((0, 0, 10, 0), (13, 4, 20, 4)) == 5.0


def test_content_bounds_include_the_pen() -> None:
    assert content_bounds(STROKE, text_rect) == (-5.0, -5.0, 105.0, 105.0)
    assert content_bounds(rect_shape(0), text_rect) == (-1.0, -1.0, 101.0, 51.0)


def make_scene(ops: list[Stroke]) -> Scene:
    scene = Scene(lambda op: content_bounds(op, text_rect), text_rect)
    for n, op in enumerate(ops):
        scene.put(op, 0.0, 0.0, ((n,), op.id))
    return scene


def test_scene_queries_match_a_linear_scan() -> None:
    rng = random.Random(5)
    ops = [synthetic_stroke(1, i, rng) for i in range(500)]
    scene = make_scene(ops)
    for _ in range(50):
        x, y = rng.uniform(-100, 2100), rng.uniform(-100, 1600)
        rect = (x, y, x + rng.uniform(0, 600), y + rng.uniform(0, 600))
        expected = [op.id for op in ops if rect_intersects(content_bounds(op, text_rect), rect)]
        assert [item.id for item in scene.in_rect(rect)] == expected  # z-order kept
    # Zoomed far out, a query over many cells scans everything and still agrees.
    assert len(scene.in_rect((-1e6, -1e6, 1e6, 1e6))) == 500


def test_scene_find_stops_at_an_object_that_passes_the_test() -> None:
    rng = random.Random(6)
    ops = [synthetic_stroke(1, i, rng) for i in range(500)]
    scene = make_scene(ops)
    wanted = {op.id for op in ops if op.id.counter % 7 == 3}

    def test(item: Item) -> bool:
        return item.id in wanted

    for _ in range(50):
        x, y = rng.uniform(-100, 2100), rng.uniform(-100, 1600)
        rect = (x, y, x + rng.uniform(0, 300), y + rng.uniform(0, 300))
        expected = {item.id for item in scene.in_rect(rect) if item.id in wanted}
        found = scene.find(rect, test)
        assert (found is None) == (not expected)
        assert found is None or found.id in expected
    assert scene.find((-1e6, -1e6, 1e6, 1e6), lambda item: item.id == ops[-1].id) is not None


def test_scene_moves_and_removes_objects() -> None:
    scene = make_scene([STROKE])
    scene.put(STROKE, 1000.0, 0.0, ((0,), STROKE.id))
    assert scene.in_rect((0.0, 0.0, 110.0, 110.0)) == []
    assert [i.id for i in scene.in_rect((1000.0, 0.0, 1010.0, 10.0))] == [STROKE.id]
    assert scene.discard(STROKE.id) is not None
    assert len(scene) == 0 and scene.in_rect((-1e9, -1e9, 1e9, 1e9)) == []
    assert scene.content() is None


def test_topmost_and_enclosed() -> None:
    low = Stroke(OpId(1, 1), (0.0, 0.0, 100.0, 0.0), 0xFF000000, 4.0)
    high = Stroke(OpId(1, 2), (50.0, -50.0, 50.0, 50.0), 0xFF000000, 4.0)
    scene = make_scene([low, high])
    hit = scene.topmost_at(50.0, 0.0, 1.0)
    assert hit is not None and hit.id == high.id
    hit = scene.topmost_at(10.0, 0.0, 1.0)
    assert hit is not None and hit.id == low.id
    assert scene.topmost_at(10.0, 30.0, 1.0) is None
    assert [i.id for i in scene.enclosed_by((-10.0, -10.0, 110.0, 10.0))] == [low.id]
    assert scene.content() == pytest.approx((-2.0, -52.0, 102.0, 52.0))
