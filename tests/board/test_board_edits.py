"""RESTYLE and REORDER (issue 20, points 2 and 4), example by example: docs/board-model.md,
"Restyle" and "Z-order". The convergence tests hold both to the reference fold under every
permutation; these pin the semantics a person sees."""

from __future__ import annotations

import itertools

import pytest

from tests.board.board_strategies import reference_objects, shown
from whiteboard.board import (
    Board,
    Erase,
    InvalidOpError,
    Move,
    Op,
    OpDecodeError,
    OpId,
    OpKind,
    Reorder,
    Restyle,
    Shape,
    Stroke,
    Text,
    TextEdit,
    Transform,
    Undo,
    ZPlace,
    decode_op,
    encode_op,
)
from whiteboard.board.edits import restyled

A, B = 1, 2
FRONT, BACK = ZPlace.FRONT, ZPlace.BACK


def stroke(author: int, counter: int, x: float = 0.0) -> Stroke:
    return Stroke(OpId(author, counter), (x, 0.0, x + 10.0, 5.0), 0xFF000000, 2.0)


def rect(author: int, counter: int, fill: int = 0x55FF0000) -> Shape:
    return Shape(OpId(author, counter), OpKind.RECT, 0.0, 0.0, 9.0, 9.0, 0xFF0000FF, 1.0, fill)


def ids(board: Board) -> list[OpId]:
    return [obj.id for obj in board.objects()]


def every_order(log: list[tuple[tuple[int, ...], Op]]) -> list[Board]:
    """A board per arrival order of ``log``."""
    boards = []
    for arrival in itertools.permutations(log):
        board = Board()
        for key, op in arrival:
            board.apply(key, op)
        boards.append(board)
    return boards


def test_a_restyle_sets_the_fields_it_gives_and_keeps_the_others() -> None:
    board = Board()
    board.apply((1,), rect(A, 1))
    change = board.apply((2,), Restyle(OpId(B, 1), (OpId(A, 1),), colour=0xFF00FF00))
    obj = board.object(OpId(A, 1))
    assert obj is not None and isinstance(obj.op, Shape)
    assert (obj.op.colour, obj.op.width, obj.op.fill) == (0xFF00FF00, 1.0, 0x55FF0000)
    assert change.changed == (OpId(A, 1),) and not change.added and not change.removed


def test_concurrent_restyles_merge_field_by_field_the_later_key_winning() -> None:
    """Two members restyle one object at once: each field is the last one set, in key order,
    whatever order they arrive in."""
    log = [
        ((1,), rect(A, 1)),
        ((5,), Restyle(OpId(A, 2), (OpId(A, 1),), colour=0xFFAA0000, width=4.0)),
        ((6,), Restyle(OpId(B, 1), (OpId(A, 1),), colour=0xFF00AA00, fill=0)),
    ]
    hashes = set()
    for board in every_order(log):
        obj = board.object(OpId(A, 1))
        assert obj is not None and isinstance(obj.op, Shape)
        assert (obj.op.colour, obj.op.width, obj.op.fill) == (0xFF00AA00, 4.0, 0)
        hashes.add(board.hash())
    assert len(hashes) == 1


def test_opacity_keeps_each_objects_colours_and_leaves_no_fill_alone() -> None:
    filled, hollow = rect(A, 1), rect(A, 2, fill=0)
    half = Restyle(OpId(B, 1), (filled.id, hollow.id), opacity=128)
    assert restyled(filled, half) == Shape(
        filled.id, OpKind.RECT, 0.0, 0.0, 9.0, 9.0, 0x800000FF, 1.0, 0x80FF0000
    )
    assert restyled(hollow, half).fill == 0  # type: ignore[union-attr]
    # In key order: a colour set after the opacity brings its own alpha.
    board = Board()
    board.apply((1,), filled)
    board.apply((3,), Restyle(OpId(B, 2), (filled.id,), colour=0xFF123456))
    board.apply((2,), half)
    obj = board.object(filled.id)
    assert obj is not None and obj.op.colour == 0xFF123456


def test_a_restyle_leaves_what_an_object_does_not_have() -> None:
    text = Text(OpId(A, 1), 0.0, 0.0, "hi", 0xFF000000, 20.0)
    wide = Restyle(OpId(B, 1), (text.id,), width=9.0, fill=0xFF00FF00)
    assert restyled(text, wide) is text  # no width, no fill: nothing changes
    assert restyled(stroke(A, 2), wide).width == 9.0  # type: ignore[union-attr]
    # Setting what an object already has is no change either.
    assert restyled(text, Restyle(OpId(B, 2), (text.id,), colour=text.colour)) is text


def test_a_restyle_of_an_erased_object_is_harmless_and_shows_if_the_erase_is_undone() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Erase(OpId(A, 2), (OpId(A, 1),)))
    change = board.apply((3,), Restyle(OpId(B, 1), (OpId(A, 1),), colour=0xFF00FF00))
    assert not change.affected and ids(board) == []
    board.apply((4,), Undo(OpId(A, 3), OpId(A, 2)))
    obj = board.object(OpId(A, 1))
    assert obj is not None and obj.op.colour == 0xFF00FF00


def test_undo_and_redo_of_a_restyle_touch_only_that_restyle() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Restyle(OpId(A, 2), (OpId(A, 1),), colour=0xFF0000FF))
    board.apply((3,), Restyle(OpId(B, 1), (OpId(A, 1),), width=8.0))
    change = board.apply((4,), Undo(OpId(A, 3), OpId(A, 2)))
    obj = board.object(OpId(A, 1))
    assert change.changed == (OpId(A, 1),)
    assert obj is not None and (obj.op.colour, obj.op.width) == (0xFF000000, 8.0)  # type: ignore[union-attr]
    # Another member cannot undo it: recorded, no effect.
    board.apply((5,), Undo(OpId(B, 2), OpId(A, 2)))
    assert board.object(OpId(A, 1)) == obj


def test_to_front_puts_the_targets_above_everything_drawn_before_it() -> None:
    log = [((i,), stroke(A, i)) for i in range(1, 5)]
    log.append(((10,), Reorder(OpId(B, 1), (OpId(A, 3), OpId(A, 1)), FRONT)))
    log.append(((11,), stroke(B, 2)))  # drawn after: stays above
    log.append(((9,), stroke(B, 3)))  # drawn before the reorder, arriving late: below it
    expected = [OpId(A, 2), OpId(A, 4), OpId(B, 3), OpId(A, 1), OpId(A, 3), OpId(B, 2)]
    assert [obj.id for obj in reference_objects(log)] == expected
    for board in every_order(log):
        assert ids(board) == expected


def test_to_back_puts_the_targets_below_everything_and_a_later_one_lower() -> None:
    log = [((i,), stroke(A, i)) for i in range(1, 5)]
    log.append(((10,), Reorder(OpId(B, 1), (OpId(A, 4),), BACK)))
    log.append(((12,), Reorder(OpId(B, 2), (OpId(A, 2), OpId(A, 3)), BACK)))
    board = Board()
    for key, op in reversed(log):
        board.apply(key, op)
    assert ids(board) == [OpId(A, 2), OpId(A, 3), OpId(A, 4), OpId(A, 1)]
    assert shown(board.objects()) == shown(reference_objects(log))
    # z_order() is where objects() puts each object.
    assert sorted(ids(board), key=board.z_order) == ids(board)


def test_undoing_a_reorder_puts_the_objects_back() -> None:
    board = Board()
    for i in range(1, 4):
        board.apply((i,), stroke(A, i))
    board.apply((5,), Reorder(OpId(A, 9), (OpId(A, 1),), FRONT))
    assert ids(board) == [OpId(A, 2), OpId(A, 3), OpId(A, 1)]
    change = board.apply((6,), Undo(OpId(A, 10), OpId(A, 9)))
    assert change.changed == (OpId(A, 1),)
    assert ids(board) == [OpId(A, 1), OpId(A, 2), OpId(A, 3)]
    assert board.z_order(OpId(A, 1)) == ((1,), OpId(A, 1))


def test_a_moved_restyled_reordered_object_survives_a_snapshot_and_a_copy() -> None:
    board = Board()
    for i in range(1, 4):
        board.apply((i,), rect(A, i))
    board.apply((4,), Move(OpId(B, 1), (OpId(A, 1),), 3.5, -1.0))
    board.apply((5,), Restyle(OpId(B, 2), (OpId(A, 1),), opacity=64))
    board.apply((6,), Reorder(OpId(B, 3), (OpId(A, 1),), FRONT))
    board.apply((7,), Reorder(OpId(B, 4), (OpId(A, 3),), BACK))
    for other in (Board.from_snapshot(board.snapshot()), board.copy()):
        assert other.objects() == board.objects()
        assert other.hash() == board.hash()
    assert ids(board) == [OpId(A, 3), OpId(A, 2), OpId(A, 1)]


@pytest.mark.parametrize(
    ("op", "wire"),
    [
        (
            Restyle(OpId(A, 1), (OpId(B, 2),), colour=0xFF000000, opacity=7),
            [12, A, 1, [B, 2], 0xFF000000, None, None, 7, None],
        ),
        (Reorder(OpId(A, 1), (OpId(B, 2), OpId(B, 3)), BACK), [13, A, 1, [B, 2, B, 3], 2]),
        (
            TextEdit(OpId(A, 1), OpId(B, 2), "two\nlines", 30.0),
            [14, A, 1, B, 2, "two\nlines", 30.0],
        ),
        (
            Transform(OpId(A, 1), (OpId(B, 2),), (0.0, 1.0, -1.0, 0.0, 5.5, -2.0)),
            [15, A, 1, [B, 2], 0.0, 1.0, -1.0, 0.0, 5.5, -2.0],
        ),
    ],
)
def test_the_wire_layout_of_the_new_ops(op: Op, wire: list[object]) -> None:
    import msgpack

    assert msgpack.unpackb(encode_op(op)) == wire
    assert decode_op(encode_op(op)) == op


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ([12, A, 1, [B, 2], None, None, None, None, None], "at least one of its style fields"),
        ([12, A, 1, [B, 2], None, 0.0, None, None, None], "'width'"),
        ([12, A, 1, [B, 2], None, None, None, 256, None], "'opacity'"),
        ([12, A, 1, [B, 2], None, None, None, None, 1001.0], "'font_size'"),
        ([14, A, 1, B, 2, "", 12.0], "'text'"),
        ([14, A, 1, B, 2, "hi"], "array of 7 items"),
        ([15, A, 1, [B, 2], 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], "keep some area"),
        ([15, A, 1, [B, 2], 1.0, 0.0, 0.0, 1.0, float("nan"), 0.0], "'matrix.e'"),
        ([15, A, 1, [B, 2], 2e4, 0.0, 0.0, 1.0, 0.0, 0.0], "'matrix.a'"),
        ([13, A, 1, [B, 2], 3], "'place'"),
        ([13, A, 1, [], 1], "'targets'"),
    ],
)
def test_bad_new_ops_are_refused_by_name(wire: list[object], message: str) -> None:
    import msgpack

    with pytest.raises(OpDecodeError, match=message):
        decode_op(msgpack.packb(wire))
    with pytest.raises(InvalidOpError):
        Restyle(OpId(A, 1), (OpId(B, 2),))


def label(author: int, counter: int) -> Text:
    return Text(OpId(author, counter), 5.0, 5.0, "draft", 0xFF000000, 20.0)


def test_concurrent_text_edits_the_later_key_wins_and_a_size_set_after_it_applies() -> None:
    log = [
        ((1,), label(A, 1)),
        ((5,), TextEdit(OpId(A, 2), OpId(A, 1), "Alice's\nwords", 20.0)),
        ((6,), TextEdit(OpId(B, 1), OpId(A, 1), "Bob's", 32.0)),
        ((7,), Restyle(OpId(A, 3), (OpId(A, 1),), font_size=12.0, colour=0xFF0000FF)),
    ]
    hashes = set()
    for board in every_order(log):
        obj = board.object(OpId(A, 1))
        assert obj is not None and isinstance(obj.op, Text)
        assert (obj.op.text, obj.op.font_size, obj.op.colour) == ("Bob's", 12.0, 0xFF0000FF)
        hashes.add(board.hash())
    assert len(hashes) == 1


def test_a_text_edit_of_a_drawing_that_is_not_text_does_nothing() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    change = board.apply((2,), TextEdit(OpId(B, 1), OpId(A, 1), "words", 10.0))
    assert not change.affected and board.objects()[0].op == stroke(A, 1)


def test_undoing_a_text_edit_brings_the_words_before_it_back() -> None:
    board = Board()
    board.apply((1,), label(A, 1))
    board.apply((2,), TextEdit(OpId(A, 2), OpId(A, 1), "first", 20.0))
    board.apply((3,), TextEdit(OpId(B, 1), OpId(A, 1), "second", 20.0))
    board.apply((4,), Undo(OpId(B, 2), OpId(B, 1)))
    obj = board.object(OpId(A, 1))
    assert obj is not None and obj.op.text == "first"  # type: ignore[union-attr]
    board.apply((5,), Undo(OpId(A, 3), OpId(A, 2)))
    obj = board.object(OpId(A, 1))
    assert obj is not None and obj.op == label(A, 1)


QUARTER_TURN = (0.0, 1.0, -1.0, 0.0, 0.0, 0.0)  # about the origin: (x, y) -> (-y, x)


def test_a_transform_composes_with_moves_in_key_order_whatever_the_arrival() -> None:
    """A move, a rotation and a resize about a point: the object ends where the fold in key
    order puts it, bit for bit, on every replica."""
    log = [
        ((1,), stroke(A, 1)),
        ((2,), Move(OpId(B, 1), (OpId(A, 1),), 10.1, 0.3)),
        ((3,), Transform(OpId(A, 2), (OpId(A, 1),), QUARTER_TURN)),
        ((4,), Transform(OpId(B, 2), (OpId(A, 1),), (2.0, 0.0, 0.0, 0.5, -7.3, 1.9))),
    ]
    boards = every_order(log)
    expected = boards[0].objects()
    assert {board.hash() for board in boards} == {boards[0].hash()}
    assert all(board.objects() == expected for board in boards)
    [obj] = expected
    # (x, y) -> move -> (x + 10.1, y + 0.3) -> turn -> (-(y + 0.3), x + 10.1) -> resize.
    assert obj.linear == (0.0, 0.5, -2.0, 0.0)
    assert (obj.dx, obj.dy) == (2.0 * -0.3 - 7.3, 0.5 * 10.1 + 1.9)


def test_undoing_a_transform_puts_the_object_back_and_a_later_move_still_applies() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Transform(OpId(A, 2), (OpId(A, 1),), QUARTER_TURN))
    board.apply((3,), Move(OpId(B, 1), (OpId(A, 1),), 4.0, 5.0))
    turned = board.hash()
    change = board.apply((4,), Undo(OpId(A, 3), OpId(A, 2)))
    assert change.changed == (OpId(A, 1),)
    obj = board.object(OpId(A, 1))
    assert obj is not None and (obj.linear, obj.dx, obj.dy) == (None, 4.0, 5.0)
    assert board.hash() != turned
    # The hash of an object never transformed is as it always was: [dx, dy] and the op.
    plain = Board()
    plain.apply((1,), stroke(A, 1))
    plain.apply((3,), Move(OpId(B, 1), (OpId(A, 1),), 4.0, 5.0))
    assert plain.hash() == board.hash()
    for other in (Board.from_snapshot(board.snapshot()), board.copy()):
        assert other.hash() == board.hash()
