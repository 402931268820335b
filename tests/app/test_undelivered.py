"""Ops a session ended without delivering back (issue 17: no local op is lost), without Qt:
kept in :class:`~whiteboard.app.local_edits.LocalEdits`, shown dimmed, and re-issued for the
next session by :func:`~whiteboard.app.undelivered.reissue`."""

from __future__ import annotations

import itertools

from tests.app.test_local_edits import ME, OTHER, board_with, stroke
from whiteboard.app.local_edits import UNDELIVERED_OPACITY, LocalEdits
from whiteboard.app.session_state import SessionLink, SessionTracker
from whiteboard.app.undelivered import reissue, waiting_notice
from whiteboard.board import (
    Board,
    Erase,
    Move,
    OpId,
    Redo,
    Reorder,
    Restyle,
    Text,
    TextEdit,
    Undo,
    ZPlace,
)

NEW = 99  # the member id of the next session


def new_ids() -> itertools.count[int]:
    return itertools.count(1)


def test_ops_pending_when_the_session_ends_are_kept_dimmed_not_dropped() -> None:
    edits = LocalEdits()
    edits.send(stroke(1))
    edits.send(stroke(2))
    edits.withdraw(OpId(ME, 1))  # delivered back before the end
    assert edits.opacity(OpId(ME, 2)) is None  # in flight: shown as done, not dimmed

    kept = edits.keep_undelivered()

    assert kept == (stroke(2),)
    assert edits.pending_ids() == (OpId(ME, 2),)  # still there, still shown
    assert edits.is_undelivered(OpId(ME, 2)) and edits.undelivered_count == 1
    assert edits.opacity(OpId(ME, 2)) == UNDELIVERED_OPACITY < 1.0
    shown = [op for op, *_ in edits.shown_pending(Board())]
    assert shown == [stroke(2)]


def test_an_undelivered_op_sent_again_stays_dimmed_until_delivered_back() -> None:
    edits = LocalEdits()
    edits.send(stroke(1))
    edits.keep_undelivered()
    again = stroke(5, author=NEW)
    edits.withdraw(OpId(ME, 1))
    edits.send(again, undelivered=True)
    # Sent: dimmed still, but not waiting to be sent any more (a second Ready of the same
    # session, an MTP member back in its web, must not send it twice).
    assert edits.opacity(again.id) == UNDELIVERED_OPACITY
    assert edits.waiting() == ()
    # The new session ends too before it came back: waiting again.
    assert edits.keep_undelivered() == (again,)
    edits.send(stroke(6, author=NEW))  # an ordinary op of a later session: not dimmed
    assert edits.opacity(OpId(NEW, 6)) is None
    edits.withdraw(again.id)  # delivered back
    assert not edits.is_undelivered(again.id) and edits.opacity(again.id) is None
    assert edits.undelivered_count == 0


def test_undelivered_ops_a_new_board_holds_are_no_longer_pending() -> None:
    edits = LocalEdits()
    edits.send(stroke(1))
    edits.send(stroke(2))
    edits.keep_undelivered()
    edits.drop_delivered(board_with(stroke(1)))  # the next session's board has it
    assert edits.waiting() == (stroke(2),) and edits.undelivered_count == 1


def test_reissue_renames_the_kept_ops_and_what_refers_to_them_in_order() -> None:
    a, b, theirs = stroke(1), stroke(2), OpId(OTHER, 4)
    erase = Erase(OpId(ME, 3), (a.id, theirs))
    move = Move(OpId(ME, 4), (b.id,), 5.0, 0.0)
    undo = Undo(OpId(ME, 5), b.id)
    redo = Redo(OpId(ME, 6), OpId(ME, 0))  # an op of ours delivered long ago: left as it was
    counter = new_ids()

    plan = reissue([a, b, erase, move, undo, redo], Board(), lambda: OpId(NEW, next(counter)))

    assert [old for old, _ in plan.ops] == [a.id, b.id, erase.id, move.id, undo.id, redo.id]
    ops = [op for _, op in plan.ops]
    assert [op.id for op in ops] == [OpId(NEW, n) for n in range(1, 7)]
    assert ops[0] == stroke(1, author=NEW)
    assert ops[2] == Erase(OpId(NEW, 3), (OpId(NEW, 1), theirs))
    assert ops[3] == Move(OpId(NEW, 4), (OpId(NEW, 2),), 5.0, 0.0)
    assert ops[4] == Undo(OpId(NEW, 5), OpId(NEW, 2))
    assert ops[5] == Redo(OpId(NEW, 6), OpId(ME, 0))
    assert plan.already_there == ()
    # The edits of this issue name their objects likewise.
    label = Text(OpId(ME, 7), 0.0, 0.0, "hi", 0xFF000000, 12.0)
    kept = [
        label,
        TextEdit(OpId(ME, 8), label.id, "hello", 12.0),
        Restyle(OpId(ME, 9), (label.id, theirs), colour=0xFF0000FF),
        Reorder(OpId(ME, 10), (label.id,), ZPlace.BACK),
    ]
    ops = [op for _, op in reissue(kept, Board(), lambda: OpId(NEW, next(counter))).ops]
    new_label = ops[0].id
    assert ops[1] == TextEdit(ops[1].id, new_label, "hello", 12.0)
    assert ops[2] == Restyle(ops[2].id, (new_label, theirs), colour=0xFF0000FF)
    assert ops[3] == Reorder(ops[3].id, (new_label,), ZPlace.BACK)


def test_reissue_skips_what_the_new_board_has_already() -> None:
    """Delivered to the others before the end, and given back with the new session's board
    (or carried, whiteboard/carry.py): not sent twice."""
    a, b = stroke(1), stroke(2)
    counter = new_ids()
    plan = reissue([a, b], board_with(a), lambda: OpId(NEW, next(counter)))
    assert plan.already_there == (a.id,)
    assert [op for _, op in plan.ops] == [stroke(1, author=NEW)]


def test_reissued_ops_whose_targets_are_missing_are_harmless_on_a_board() -> None:
    """An erase, move or undo whose target the new board lacks is filed and changes nothing
    (the board model's rule for a target not there)."""
    board = board_with(stroke(1, author=OTHER))
    before = board.hash()
    gone = OpId(ME, 50)
    for key, op in enumerate(
        [
            Erase(OpId(NEW, 1), (gone,)),
            Move(OpId(NEW, 2), (gone,), 3.0, 3.0),
            Undo(OpId(NEW, 3), OpId(ME, 51)),
        ],
        start=100,
    ):
        change = board.apply((key,), op)
        assert not change.affected
    assert [obj.op for obj in board.objects()] == [stroke(1, author=OTHER)]
    assert board.hash() == before  # what the board shows is as it was
    assert len(board) == 4  # filed (every replica files them alike), not refused


def test_the_ended_state_says_how_many_drawings_wait() -> None:
    tracker = SessionTracker({}, can_send=True)
    tracker.finished(undelivered=3)
    assert tracker.state.link is SessionLink.ENDED
    assert (
        "3 drawings not delivered: they will be sent when you join or host again."
        in tracker.state.detail
    )
    assert waiting_notice(1).startswith("1 drawing not delivered")
    assert waiting_notice(0) == ""
