"""Undo/redo of one's own gestures only (whiteboard/app/history.py), against the real board."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from whiteboard.app.history import MAX_GESTURES, History
from whiteboard.board import Board, Erase, Op, OpId, Stroke, Undo

ME, OTHER = 7, 9


class Session:
    """A board fed in key order, as a transport would deliver."""

    def __init__(self) -> None:
        self.board = Board()
        self._key = itertools.count(1)
        self._counter = itertools.count(1000)

    def apply(self, *ops: Op) -> None:
        for op in ops:
            self.board.apply((next(self._key),), op)

    def next_id(self) -> Callable[[], OpId]:
        return lambda: OpId(ME, next(self._counter))


def stroke(author: int, counter: int) -> Stroke:
    return Stroke(OpId(author, counter), (0.0, 0.0, 10.0, 10.0), 0xFF000000, 2.0)


def visible(board: Board) -> set[OpId]:
    return {obj.id for obj in board.objects()}


def test_undo_takes_back_my_last_gesture_whole_even_after_others_drew() -> None:
    session, history = Session(), History(ME)
    chunks = [stroke(ME, 1), stroke(ME, 2), stroke(ME, 3)]  # one live stroke, three ops
    session.apply(*chunks)
    history.record([op.id for op in chunks])
    theirs = stroke(OTHER, 1)
    session.apply(theirs)  # someone else draws after me
    undos = history.undo(session.board, session.next_id())
    assert [u.target for u in undos] == [op.id for op in chunks]
    session.apply(*undos)
    assert visible(session.board) == {theirs.id}  # theirs untouched


def test_redo_puts_it_back_and_a_new_gesture_clears_redo() -> None:
    session, history = Session(), History(ME)
    first, second = stroke(ME, 1), stroke(ME, 2)
    session.apply(first)
    history.record([first.id])
    session.apply(second)
    history.record([second.id])
    session.apply(*history.undo(session.board, session.next_id()))
    assert visible(session.board) == {first.id}
    assert history.can_redo(session.board)
    session.apply(*history.redo(session.board, session.next_id()))
    assert visible(session.board) == {first.id, second.id}
    session.apply(*history.undo(session.board, session.next_id()))
    third = stroke(ME, 3)
    session.apply(third)
    history.record([third.id])
    assert not history.can_redo(session.board)
    assert history.redo(session.board, session.next_id()) == []


def test_undoing_an_erase_brings_back_what_it_erased_including_others_strokes() -> None:
    session, history = Session(), History(ME)
    theirs = stroke(OTHER, 1)
    session.apply(theirs)
    erase = Erase(OpId(ME, 1), (theirs.id,))
    session.apply(erase)
    history.record([erase.id])
    assert visible(session.board) == set()
    session.apply(*history.undo(session.board, session.next_id()))
    assert visible(session.board) == {theirs.id}


def test_others_ops_are_never_recorded_so_never_undone() -> None:
    session, history = Session(), History(ME)
    theirs = stroke(OTHER, 1)
    session.apply(theirs)
    history.record([theirs.id])
    assert not history.can_undo(session.board)
    assert history.undo(session.board, session.next_id()) == []


def test_a_gesture_already_undone_elsewhere_is_skipped() -> None:
    session, history = Session(), History(ME)
    first, second = stroke(ME, 1), stroke(ME, 2)
    session.apply(first, second)
    history.record([first.id])
    history.record([second.id])
    # Another window of mine undid the second one already.
    session.apply(Undo(OpId(ME, 500), second.id))
    undos = history.undo(session.board, session.next_id())
    assert [u.target for u in undos] == [first.id]


def test_an_op_never_sent_is_forgotten_and_an_empty_gesture_dropped() -> None:
    session, history = Session(), History(ME)
    op = stroke(ME, 1)
    history.record([op.id])
    history.forget(op.id)
    assert not history.can_undo(session.board)


def test_a_gesture_still_on_its_way_can_be_undone() -> None:
    """Ctrl+Z right after drawing, before the stroke came back: the UNDO goes after it."""
    session, history = Session(), History(ME)
    op = stroke(ME, 1)
    history.record([op.id])
    undos = history.undo(session.board, session.next_id())
    session.apply(op, *undos)
    assert visible(session.board) == set()


def test_the_history_is_bounded() -> None:
    history = History(ME)
    for counter in range(MAX_GESTURES + 10):
        history.record([OpId(ME, counter + 1)])
    assert len(history._undo) == MAX_GESTURES
