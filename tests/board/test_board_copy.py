"""Copies of boards (replay's keyframes) change independently of their originals."""

from __future__ import annotations

import random

from whiteboard.board import Board, Clear, Erase, Move, OpId, Redo, Undo, synthetic_op


def busy_board(seed: int) -> Board:
    """Drawings, erases, moves, undos, redos and a clear: every container in use."""
    rng = random.Random(seed)
    board = Board()
    for i in range(1, 60):
        board.apply((10 * i,), synthetic_op(1, i, rng))
    board.apply((601,), Erase(OpId(1, 100), (OpId(1, 3), OpId(1, 4))))
    board.apply((602,), Move(OpId(1, 101), (OpId(1, 5),), 12.5, -3.0))
    board.apply((603,), Undo(OpId(1, 102), OpId(1, 6)))
    board.apply((604,), Redo(OpId(1, 103), OpId(1, 6)))
    board.apply((605,), Clear(OpId(1, 104)))
    board.apply((606,), Undo(OpId(1, 105), OpId(1, 104)))
    return board


def test_a_copy_has_every_attribute_of_its_original() -> None:
    # An attribute added to Board and forgotten in become() would be missing from the copy
    # (made without __init__), or shared with the original if become() were lazy about it.
    original = busy_board(1)
    copy = original.copy()
    assert set(vars(copy)) == set(vars(original)) == set(vars(Board()))
    for name, value in vars(original).items():
        if isinstance(value, (dict, list)):
            assert getattr(copy, name) is not value, name


def test_a_copy_equals_its_original_and_then_goes_its_own_way() -> None:
    original = busy_board(2)
    before = original.hash()
    copy = original.copy()
    assert copy.hash() == before and copy.log() == original.log()
    # Changes to the copy touch every container, and the lists of targets that exist already
    # (erasers of 1:3, movers of 1:5, the clears).
    copy.apply((5,), synthetic_op(2, 1, random.Random(9)))
    copy.apply((700,), Erase(OpId(1, 106), (OpId(1, 3), OpId(1, 7))))
    copy.apply((701,), Move(OpId(1, 107), (OpId(1, 5),), 1.0, 1.0))
    copy.apply((702,), Clear(OpId(1, 108)))
    copy.apply((703,), Undo(OpId(1, 109), OpId(1, 8)))
    fresh = busy_board(2)
    assert original.objects() == fresh.objects()
    assert original.in_effect(OpId(1, 8)) and not copy.in_effect(OpId(1, 8))
    assert copy.hash() != before
    assert original.hash() == before == fresh.hash()
    # The original, asked to recompute those objects, must not see the copy's ops.
    for board in (original, fresh):
        board.apply((710,), Undo(OpId(1, 150), OpId(1, 101)))  # the move of 1:5
        board.apply((711,), Undo(OpId(1, 151), OpId(1, 100)))  # the erase of 1:3
        board.apply((712,), Redo(OpId(1, 152), OpId(1, 104)))  # the clear
    assert original.hash() == fresh.hash() and original.log() == fresh.log()
    # And the original's changes do not reach the copy.
    copied = copy.hash()
    original.apply((800,), Clear(OpId(1, 200)))
    assert copy.hash() == copied


def test_assigning_keeps_the_object_and_takes_the_state() -> None:
    shown = Board()
    source = busy_board(3)
    shown.become(source)
    assert shown.hash() == source.hash() and shown is not source
    shown.apply((900,), Clear(OpId(1, 300)))
    assert source.hash() == busy_board(3).hash()
