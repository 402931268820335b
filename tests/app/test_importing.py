"""Opening a saved board into a session (whiteboard/app/importing.py): copies of what it
shows, as our own ops."""

from __future__ import annotations

import itertools

from whiteboard.app.importing import copies_of
from whiteboard.board import (
    Board,
    Erase,
    Move,
    OpId,
    OpKind,
    Shape,
    Stroke,
    Text,
    Transform,
    Undo,
)

ME = 42


def saved_board() -> Board:
    board = Board()
    ops = [
        Stroke(OpId(1, 1), (0.0, 0.0, 10.0, 10.0), 0xFFFF0000, 2.0),
        Shape(OpId(2, 1), OpKind.RECT, 5.0, 5.0, 25.0, 15.0, 0xFF0000FF, 1.0, 0xFF00FF00),
        Text(OpId(1, 2), 30.0, 40.0, "hello", 0xFF000000, 14.0),
        Stroke(OpId(2, 2), (100.0, 100.0, 110.0, 110.0), 0xFF000000, 2.0),  # erased below
        Stroke(OpId(1, 3), (200.0, 200.0, 210.0, 200.0), 0xFF000000, 2.0),  # undone below
        Move(OpId(2, 3), (OpId(1, 1),), 7.0, -3.0),
        Erase(OpId(1, 4), (OpId(2, 2),)),
        Undo(OpId(1, 5), OpId(1, 3)),
    ]
    for key, op in enumerate(ops, start=1):
        board.apply((key,), op)
    return board


def test_only_what_the_board_shows_is_copied_with_offsets_folded_in() -> None:
    counter = itertools.count(1)
    plan = copies_of(saved_board(), lambda: OpId(ME, next(counter)), 1400)
    assert plan.skipped == 0
    assert [op.id for op in plan.ops] == [OpId(ME, 1), OpId(ME, 2), OpId(ME, 3)]
    stroke, rect, text = plan.ops
    assert isinstance(stroke, Stroke) and stroke.points == (7.0, -3.0, 17.0, 7.0)
    assert isinstance(rect, Shape) and (rect.x1, rect.y2, rect.fill) == (5.0, 15.0, 0xFF00FF00)
    assert isinstance(text, Text) and text.text == "hello"
    # Drawn into a fresh board, the copies look like the original (same places, same order).
    fresh = Board()
    for key, op in enumerate(plan.ops, start=1):
        fresh.apply((key,), op)
    assert [(o.kind, o.dx, o.dy) for o in fresh.objects()] == [
        (OpKind.STROKE, 0.0, 0.0),
        (OpKind.RECT, 0.0, 0.0),
        (OpKind.TEXT, 0.0, 0.0),
    ]


def test_long_strokes_are_split_to_fit_the_payload_and_huge_texts_skipped() -> None:
    board = Board()
    points = tuple(float(v) for k in range(400) for v in (k, k % 7))
    board.apply((1,), Stroke(OpId(1, 1), points, 0xFF000000, 2.0))
    board.apply((2,), Text(OpId(1, 2), 0.0, 0.0, "x" * 5000, 0xFF000000, 12.0))
    counter = itertools.count(1)
    plan = copies_of(board, lambda: OpId(ME, next(counter)), 1182)
    assert plan.skipped == 1
    assert len(plan.ops) > 1 and all(isinstance(op, Stroke) for op in plan.ops)
    joined = [p for op in plan.ops for p in zip(op.points[::2], op.points[1::2], strict=True)]
    # Consecutive pieces share their joint; nothing is lost.
    assert sorted(set(joined)) == sorted(set(zip(points[::2], points[1::2], strict=True)))


def test_a_turned_object_is_copied_as_drawn_with_a_transform_of_ours() -> None:
    board = saved_board()
    board.apply((20,), Transform(OpId(2, 9), (OpId(2, 1),), (0.0, 1.0, -1.0, 0.0, 3.5, 1.0)))
    counter = itertools.count(1)
    plan = copies_of(board, lambda: OpId(ME, next(counter)), 1400)
    assert [op.kind for op in plan.ops] == [
        OpKind.STROKE, OpKind.RECT, OpKind.TRANSFORM, OpKind.TEXT,
    ]  # fmt: skip
    fresh = Board()
    for key, op in enumerate(plan.ops, start=1):
        fresh.apply((key,), op)
    turned = [(o.op.kind, o.dx, o.dy, o.linear) for o in board.objects()]
    copied = [(o.op.kind, o.dx, o.dy, o.linear) for o in fresh.objects()]
    assert copied[1] == turned[1] == (OpKind.RECT, 3.5, 1.0, (0.0, 1.0, -1.0, 0.0))
