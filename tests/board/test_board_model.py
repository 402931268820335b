"""Board semantics, example by example (docs/board-model.md, "Semantics")."""

from __future__ import annotations

import hashlib

import msgpack
import pytest

from tests.board.board_strategies import reference_blobs, reference_hash, reference_objects
from whiteboard.board import (
    Board,
    BoardObject,
    Change,
    Clear,
    Erase,
    Move,
    Op,
    OpId,
    OpKind,
    Redo,
    Shape,
    Stroke,
    Text,
    Undo,
)

A, B = 1, 2


def stroke(author: int, counter: int, x: float = 0.0) -> Stroke:
    return Stroke(OpId(author, counter), (x, 0.0, x + 10.0, 5.0), 0xFF000000, 2.0)


def ids(board: Board) -> list[OpId]:
    return [obj.id for obj in board.objects()]


def check(board: Board) -> None:
    """The board agrees with the reference fold of its own log."""
    expected = reference_objects(board.log())
    assert board.objects() == expected
    assert board.hash() == reference_hash(expected, reference_blobs(board.log()))


def test_empty_board() -> None:
    board = Board()
    assert len(board) == 0
    assert board.objects() == []
    assert board.last_key is None
    empty = hashlib.sha256(msgpack.packb("whiteboard-board-state/1")).hexdigest()
    assert board.hash() == empty == Board().hash()
    assert board.log() == []


def test_drawings_create_objects_in_key_order() -> None:
    board = Board()
    s1, s2 = stroke(A, 1), stroke(B, 1)
    shape = Shape(OpId(A, 2), OpKind.RECT, 0, 0, 5, 5, 1, 1.0)
    text = Text(OpId(B, 2), 1, 1, "hello", 1, 12.0)
    board.apply((30,), s2)
    board.apply((10,), s1)
    board.apply((40,), text)
    board.apply((20,), shape)
    assert board.objects() == [
        BoardObject(s1),
        BoardObject(shape),
        BoardObject(s2),
        BoardObject(text),
    ]
    assert len(board) == 4
    assert OpId(A, 1) in board and OpId(A, 9) not in board
    assert board.op(OpId(B, 2)) is text
    assert board.key(OpId(A, 2)) == (20,)
    assert board.last_key == (40,)
    assert board.object(OpId(A, 1)) == BoardObject(s1)
    assert board.object(OpId(A, 9)) is None
    with pytest.raises(KeyError):
        board.op(OpId(A, 9))
    check(board)


def test_change_reports_added_and_late() -> None:
    board = Board()
    change = board.apply((10,), stroke(A, 1))
    assert change == Change(OpId(A, 1), late=False, duplicate=False, added=(OpId(A, 1),))
    change = board.apply((5,), stroke(B, 1))
    assert change.late and change.added == (OpId(B, 1),)
    assert board.last_key == (10,)
    assert ids(board) == [OpId(B, 1), OpId(A, 1)]


def test_duplicate_is_ignored_whatever_its_key() -> None:
    board = Board()
    board.apply((10,), stroke(A, 1))
    digest = board.hash()
    change = board.apply((10,), stroke(A, 1))
    assert change == Change(OpId(A, 1), late=False, duplicate=True)
    change = board.apply((99,), stroke(A, 1, x=50.0))
    assert change.duplicate and not change.affected
    assert board.hash() == digest and len(board) == 1 and board.last_key == (10,)


def test_erase_removes_and_undo_restores() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), stroke(B, 1))
    change = board.apply((3,), Erase(OpId(B, 2), (OpId(A, 1), OpId(B, 1))))
    assert change.removed == (OpId(A, 1), OpId(B, 1)) and not change.added
    assert board.objects() == []
    change = board.apply((4,), Undo(OpId(B, 3), OpId(B, 2)))
    assert change.added == (OpId(A, 1), OpId(B, 1))
    assert ids(board) == [OpId(A, 1), OpId(B, 1)]
    change = board.apply((5,), Redo(OpId(B, 4), OpId(B, 2)))
    assert change.removed == (OpId(A, 1), OpId(B, 1))
    check(board)


def test_erase_before_the_stroke_in_the_order_has_no_effect() -> None:
    board = Board()
    board.apply((5,), stroke(A, 1))
    # Inserted late at key 3: the target did not exist at that point of the order.
    change = board.apply((3,), Erase(OpId(B, 1), (OpId(A, 1),)))
    assert change.late and not change.affected
    assert ids(board) == [OpId(A, 1)]
    check(board)


def test_late_erase_after_the_stroke_removes_it() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((9,), stroke(A, 2))
    change = board.apply((5,), Erase(OpId(B, 1), (OpId(A, 1), OpId(A, 2))))
    assert change.late and change.removed == (OpId(A, 1),)
    assert ids(board) == [OpId(A, 2)]
    check(board)


def test_erase_arriving_before_its_target_still_applies() -> None:
    board = Board()
    board.apply((5,), Erase(OpId(B, 1), (OpId(A, 1),)))
    change = board.apply((1,), stroke(A, 1))
    assert change.late and not change.added
    assert board.objects() == []
    check(board)


def test_move_accumulates_and_undo_reverts() -> None:
    board = Board()
    s = stroke(A, 1)
    board.apply((1,), s)
    change = board.apply((2,), Move(OpId(A, 2), (OpId(A, 1),), 10.0, -5.0))
    assert change.changed == (OpId(A, 1),) and not change.added
    board.apply((3,), Move(OpId(B, 1), (OpId(A, 1),), 0.5, 0.25))
    assert board.objects() == [BoardObject(s, 10.5, -4.75)]
    change = board.apply((4,), Undo(OpId(A, 3), OpId(A, 2)))
    assert change.changed == (OpId(A, 1),)
    assert board.objects() == [BoardObject(s, 0.5, 0.25)]
    board.apply((5,), Redo(OpId(A, 4), OpId(A, 2)))
    assert board.objects() == [BoardObject(s, 10.5, -4.75)]
    check(board)


def test_move_before_the_object_exists_has_no_effect() -> None:
    board = Board()
    board.apply((1,), Move(OpId(B, 1), (OpId(A, 1),), 10.0, 10.0))
    board.apply((2,), stroke(A, 1))
    assert board.objects() == [BoardObject(stroke(A, 1))]
    check(board)


def test_late_move_is_summed_in_key_order() -> None:
    # 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1 in floating point: the order must be the key order.
    s = stroke(A, 1)
    in_order = Board()
    late = Board()
    moves = [Move(OpId(B, i), (s.id,), value, 0.0) for i, value in enumerate((0.1, 0.2, 0.3))]
    for board in (in_order, late):
        board.apply((0,), s)
    for i, move in enumerate(moves):
        in_order.apply((i + 1,), move)
    for i, move in reversed(list(enumerate(moves))):
        late.apply((i + 1,), move)
    assert in_order.objects() == late.objects()
    assert in_order.objects()[0].dx == (0.0 + 0.1) + 0.2 + 0.3
    assert in_order.hash() == late.hash()


def test_moved_then_erased_object_is_gone() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Move(OpId(A, 2), (OpId(A, 1),), 1.0, 1.0))
    change = board.apply((3,), Erase(OpId(A, 3), (OpId(A, 1),)))
    assert change.removed == (OpId(A, 1),)
    change = board.apply((4,), Undo(OpId(A, 4), OpId(A, 3)))
    assert change.added == (OpId(A, 1),)
    assert board.objects() == [BoardObject(stroke(A, 1), 1.0, 1.0)]
    check(board)


def test_clear_removes_what_exists_and_spares_later_drawings() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), stroke(B, 1))
    change = board.apply((3,), Clear(OpId(B, 2)))
    assert change.removed == (OpId(A, 1), OpId(B, 1))
    board.apply((4,), stroke(A, 2))
    assert ids(board) == [OpId(A, 2)]
    # A drawing inserted late before the clear is cleared; one after it survives.
    assert not board.apply((2, 5), stroke(A, 3)).affected
    assert board.apply((3, 5), stroke(A, 4)).added == (OpId(A, 4),)
    assert ids(board) == [OpId(A, 4), OpId(A, 2)]
    check(board)


def test_undo_of_clear_restores_and_redo_clears_again() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Erase(OpId(A, 2), (OpId(A, 1),)))
    board.apply((3,), stroke(B, 1))
    board.apply((4,), Clear(OpId(B, 2)))
    board.apply((5,), stroke(A, 3))
    change = board.apply((6,), Undo(OpId(B, 3), OpId(B, 2)))
    # The erased stroke stays erased: only what the clear removed comes back.
    assert change.added == (OpId(B, 1),)
    assert ids(board) == [OpId(B, 1), OpId(A, 3)]
    change = board.apply((7,), Redo(OpId(B, 4), OpId(B, 2)))
    assert change.removed == (OpId(B, 1),)
    check(board)


def test_two_clears_undo_the_later_one() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Clear(OpId(A, 2)))
    board.apply((3,), stroke(A, 3))
    board.apply((4,), Clear(OpId(B, 1)))
    assert board.objects() == []
    change = board.apply((5,), Undo(OpId(B, 2), OpId(B, 1)))
    assert change.added == (OpId(A, 3),)  # the first clear still holds for (A, 1)
    assert ids(board) == [OpId(A, 3)]
    change = board.apply((6,), Undo(OpId(A, 4), OpId(A, 2)))
    assert change.added == (OpId(A, 1),)
    assert ids(board) == [OpId(A, 1), OpId(A, 3)]
    check(board)


def test_undo_and_redo_of_own_stroke() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    change = board.apply((2,), Undo(OpId(A, 2), OpId(A, 1)))
    assert change.removed == (OpId(A, 1),)
    assert not board.in_effect(OpId(A, 1))
    # Undoing again changes nothing.
    assert not board.apply((3,), Undo(OpId(A, 3), OpId(A, 1))).affected
    change = board.apply((4,), Redo(OpId(A, 4), OpId(A, 1)))
    assert change.added == (OpId(A, 1),)
    assert board.in_effect(OpId(A, 1))
    check(board)


def test_undo_of_someone_elses_op_has_no_effect() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    change = board.apply((2,), Undo(OpId(B, 1), OpId(A, 1)))
    assert not change.affected
    assert ids(board) == [OpId(A, 1)]
    assert OpId(B, 1) in board  # recorded all the same
    board.apply((3,), Undo(OpId(A, 2), OpId(A, 1)))
    # Nor can someone else's redo bring it back.
    assert not board.apply((4,), Redo(OpId(B, 2), OpId(A, 1))).affected
    assert board.objects() == []
    check(board)


def test_the_last_undo_or_redo_by_key_decides() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((5,), Redo(OpId(A, 3), OpId(A, 1)))
    # An undo inserted before the redo is overridden by it: no effect.
    change = board.apply((3,), Undo(OpId(A, 2), OpId(A, 1)))
    assert change.late and not change.affected
    assert ids(board) == [OpId(A, 1)]
    change = board.apply((7,), Undo(OpId(A, 4), OpId(A, 1)))
    assert change.removed == (OpId(A, 1),)
    check(board)


def test_undo_arriving_before_its_target() -> None:
    board = Board()
    board.apply((2,), Undo(OpId(A, 2), OpId(A, 1)))
    assert not board.apply((1,), stroke(A, 1)).affected
    assert board.objects() == []
    check(board)


def test_undo_of_undo_is_ignored() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((2,), Undo(OpId(A, 2), OpId(A, 1)))
    assert not board.apply((3,), Undo(OpId(A, 3), OpId(A, 2))).affected
    assert not board.apply((4,), Redo(OpId(A, 4), OpId(A, 2))).affected
    assert board.objects() == []
    check(board)


def test_undo_of_a_late_erase_that_had_no_effect() -> None:
    board = Board()
    board.apply((5,), stroke(A, 1))
    board.apply((1,), Erase(OpId(A, 2), (OpId(A, 1),)))
    assert not board.apply((6,), Undo(OpId(A, 3), OpId(A, 2))).affected
    assert ids(board) == [OpId(A, 1)]
    check(board)


def test_undone_move_arriving_late() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    board.apply((9,), Undo(OpId(A, 3), OpId(A, 2)))
    assert not board.apply((5,), Move(OpId(A, 2), (OpId(A, 1),), 3.0, 3.0)).affected
    assert board.objects() == [BoardObject(stroke(A, 1))]
    check(board)


def test_late_insert_keeps_z_order() -> None:
    board = Board()
    for i in range(5):
        board.apply((10 * i,), stroke(A, i))
    board.apply((15,), stroke(B, 1))
    board.apply((-1,), stroke(B, 2))
    assert ids(board) == [
        OpId(B, 2),
        OpId(A, 0),
        OpId(A, 1),
        OpId(B, 1),
        *[OpId(A, i) for i in (2, 3, 4)],
    ]
    check(board)


def test_equal_keys_are_ordered_by_op_id() -> None:
    # Keys are unique in a session; should a transport repeat one, ties still resolve alike.
    first = Board()
    second = Board()
    s1, s2 = stroke(B, 1), stroke(A, 7)
    first.apply((1,), s1)
    first.apply((1,), s2)
    second.apply((1,), s2)
    second.apply((1,), s1)
    assert ids(first) == ids(second) == [OpId(A, 7), OpId(B, 1)]
    assert first.hash() == second.hash()


def test_keys_of_different_lengths_compare_as_tuples() -> None:
    board = Board()
    board.apply((1, 2), stroke(A, 1))
    board.apply((1,), stroke(A, 2))
    board.apply((1, 2, 0), stroke(A, 3))
    assert ids(board) == [OpId(A, 2), OpId(A, 1), OpId(A, 3)]
    assert board.last_key == (1, 2, 0)


def test_order_key_must_be_ints() -> None:
    board = Board()
    for bad in [(), (1.0,), (True,), ("1",), 5, (2**64,), (-(2**63) - 1,), tuple(range(17))]:
        with pytest.raises(ValueError, match="order key"):
            board.apply(bad, stroke(A, 1))  # type: ignore[arg-type]
    board.apply([3, 4], stroke(A, 1))  # type: ignore[arg-type]
    assert board.key(OpId(A, 1)) == (3, 4)
    with pytest.raises(TypeError):
        board.apply((5,), "stroke")  # type: ignore[arg-type]
    assert len(board) == 1


def test_hash_depends_on_offsets_and_z_order() -> None:
    s1, s2 = stroke(A, 1), stroke(A, 2, x=3.0)
    ab, ba, moved = Board(), Board(), Board()
    ab.apply((1,), s1)
    ab.apply((2,), s2)
    ba.apply((1,), s2)
    ba.apply((2,), s1)
    moved.apply((1,), s1)
    moved.apply((2,), s2)
    moved.apply((3,), Move(OpId(A, 3), (s1.id,), 1.0, 0.0))
    assert len({ab.hash(), ba.hash(), moved.hash()}) == 3
    moved.apply((4,), Move(OpId(A, 4), (s1.id,), -1.0, 0.0))
    assert moved.hash() == ab.hash()  # equal visible state, equal hash, whatever the log


def test_objects_returns_a_fresh_list() -> None:
    board = Board()
    board.apply((1,), stroke(A, 1))
    listed = board.objects()
    listed.clear()
    assert len(board.objects()) == 1


def test_log_is_in_key_order() -> None:
    board = Board()
    ops: list[tuple[tuple[int, ...], Op]] = [((3,), stroke(A, 1)), ((1,), Clear(OpId(B, 1)))]
    for key, op in ops:
        board.apply(key, op)
    assert board.log() == sorted(ops, key=lambda entry: entry[0])
