"""The model of this member's edits in flight (:mod:`whiteboard.app.local_edits`), driven
with no widget: what the user sees of ops sent and not delivered back, and of lifted objects.
A wrong answer here is a ghost (an object shown twice, or where it no longer is) or an
invisible object on the canvas."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from whiteboard.app.local_edits import PENDING_FIRST, LocalEdits, is_pending_order, targets
from whiteboard.board import (
    Board,
    Clear,
    Erase,
    Move,
    Op,
    OpId,
    OpKind,
    Shape,
    Stroke,
    Text,
    Transform,
    Undo,
)

ME = 7
OTHER = 3


def stroke(counter: int, author: int = ME) -> Stroke:
    return Stroke(OpId(author, counter), (0.0, 0.0, 10.0, 10.0), 0xFF000000, 2.0)


def shape(counter: int) -> Shape:
    return Shape(OpId(ME, counter), OpKind.RECT, 0.0, 0.0, 20.0, 10.0, 0xFF000000, 1.0)


def text(counter: int) -> Text:
    return Text(OpId(ME, counter), 5.0, 5.0, "hi", 0xFF000000, 12.0)


def board_with(*ops: Op) -> Board:
    board = Board()
    for i, op in enumerate(ops, start=1):
        board.apply((10 * i,), op)
    return board


def test_targets_are_what_a_pending_op_changes_the_showing_of() -> None:
    a, b = OpId(OTHER, 1), OpId(OTHER, 2)
    assert targets(stroke(1)) == (OpId(ME, 1),)
    assert targets(shape(2)) == (OpId(ME, 2),)
    assert targets(text(3)) == (OpId(ME, 3),)
    assert targets(Erase(OpId(ME, 4), (a, b))) == (a, b)
    assert targets(Move(OpId(ME, 5), (b,), 1.0, 2.0)) == (b,)
    assert targets(Clear(OpId(ME, 6))) == ()
    assert targets(Undo(OpId(ME, 7), a)) == ()


def test_pending_drawings_show_above_the_board_in_the_order_sent() -> None:
    board = board_with(stroke(1, OTHER))
    edits = LocalEdits()
    later, earlier = stroke(9), text(2)
    edits.send(later)
    edits.send(earlier)
    edits.send(Clear(OpId(ME, 10)))  # pending, but nothing to draw
    assert edits.pending_ids() == (later.id, earlier.id, OpId(ME, 10))
    assert edits.has_pending and later.id in edits and stroke(1, OTHER).id not in edits
    shown = list(edits.shown_pending(board))
    assert [op for op, *_ in shown] == [later, earlier]
    assert all(is_pending_order(order) for *_, order, _ in shown)
    # Above every delivered object, whatever its key (keys are at most 2**64 - 1).
    top = ((2**64 - 1,), OpId(2**32 - 1, 2**32 - 1))
    assert all(order > top for *_, order, _ in shown)
    assert shown[0][3] < shown[1][3]
    assert not is_pending_order((board.key(OpId(OTHER, 1)), OpId(OTHER, 1)))
    assert edits.showing(board, later.id) == (later, 0.0, 0.0, shown[0][3], None)
    assert shown[0][3][0][0] == PENDING_FIRST


def test_a_delivered_drawing_is_shown_as_the_board_has_it() -> None:
    mine = stroke(1)
    edits = LocalEdits()
    edits.send(mine)
    board = board_with(stroke(1, OTHER), mine)
    # Delivered but not withdrawn yet (its Change not handled): the board's, not a second one.
    assert edits.showing(board, mine.id) == (mine, 0.0, 0.0, (board.key(mine.id), mine.id), None)
    assert list(edits.shown_pending(board)) == [(mine, 0.0, 0.0, ((20,), mine.id), None)]
    assert edits.withdraw(mine.id) is mine
    assert list(edits.shown_pending(board)) == []
    assert edits.withdraw(mine.id) is None
    assert not edits.has_pending


def test_a_pending_erase_hides_its_targets_until_withdrawn() -> None:
    a, b = stroke(1, OTHER), stroke(2, OTHER)
    board = board_with(a, b)
    edits = LocalEdits()
    erase = Erase(OpId(ME, 1), (a.id,))
    edits.send(erase)
    assert edits.hidden(a.id) and not edits.hidden(b.id)
    assert edits.changes_delivered
    assert edits.showing(board, a.id) is None
    assert [op for op, *_ in edits.shown_objects(board, board.objects())] == [b]
    assert edits.withdraw(erase.id) is erase  # sending it failed: show the object again
    assert not edits.hidden(a.id) and not edits.changes_delivered
    assert edits.showing(board, a.id) == (a, 0.0, 0.0, ((10,), a.id), None)


def test_two_erases_of_one_object_hide_it_until_both_are_withdrawn() -> None:
    a = stroke(1, OTHER)
    board = board_with(a)
    edits = LocalEdits()
    edits.send(Erase(OpId(ME, 1), (a.id,)))
    edits.send(Erase(OpId(ME, 2), (a.id,)))
    edits.withdraw(OpId(ME, 1))
    assert edits.showing(board, a.id) is None
    edits.withdraw(OpId(ME, 2))
    assert edits.showing(board, a.id) is not None


def test_a_pending_drawing_erased_before_delivery_is_not_shown() -> None:
    board = Board()
    edits = LocalEdits()
    mine = stroke(1)
    edits.send(mine)
    edits.send(Erase(OpId(ME, 2), (mine.id,)))
    assert list(edits.shown_pending(board)) == []
    assert edits.showing(board, mine.id) is None


def test_pending_moves_add_up_over_the_board_offset() -> None:
    a = stroke(1, OTHER)
    board = board_with(a, Move(OpId(OTHER, 2), (a.id,), 100.0, 0.0))
    edits = LocalEdits()
    edits.send(Move(OpId(ME, 1), (a.id,), 5.0, 1.0))
    edits.send(Move(OpId(ME, 2), (a.id,), 2.0, 3.0))
    assert edits.moved_by(a.id) == (7.0, 4.0)
    order = (board.key(a.id), a.id)
    assert edits.showing(board, a.id) == (a, 107.0, 4.0, order, None)
    assert list(edits.shown_objects(board, board.objects())) == [(a, 107.0, 4.0, order, None)]
    edits.withdraw(OpId(ME, 1))
    assert edits.showing(board, a.id) == (a, 102.0, 3.0, order, None)


def test_pending_transforms_and_moves_show_as_the_board_will_place_them() -> None:
    """Sent after a move, a transform maps the moved object; shown before delivery exactly
    where the board puts it once both are delivered (the same arithmetic, the same order)."""
    a = stroke(1, OTHER)
    board = board_with(a, Move(OpId(OTHER, 2), (a.id,), 100.0, 0.0))
    turn = Transform(OpId(ME, 2), (a.id,), (0.0, 1.0, -1.0, 0.0, 3.0, 4.0))
    move = Move(OpId(ME, 1), (a.id,), 5.0, 1.0)
    edits = LocalEdits()
    edits.send(move)
    edits.send(turn)
    assert edits.moved_by(a.id) is None and edits.changes_delivered
    shown = edits.showing(board, a.id)
    board.apply((100,), move)
    board.apply((101,), turn)
    obj = board.object(a.id)
    assert obj is not None and shown is not None
    assert (shown[1], shown[2], shown[4]) == (obj.dx, obj.dy, obj.linear)
    edits.withdraw(move.id)
    edits.withdraw(turn.id)
    assert edits.showing(board, a.id) == (a, obj.dx, obj.dy, board.z_order(a.id), obj.linear)


def test_a_pending_drawing_moved_before_delivery_shows_moved() -> None:
    edits = LocalEdits()
    mine = shape(1)
    edits.send(mine)
    edits.send(Move(OpId(ME, 2), (mine.id,), -4.0, 6.0))
    [(op, dx, dy, _, _)] = edits.shown_pending(Board())
    assert (op, dx, dy) == (mine, -4.0, 6.0)


def test_a_board_shown_afresh_drops_what_it_holds_so_a_move_is_not_shown_twice() -> None:
    a = stroke(1, OTHER)
    move = Move(OpId(ME, 1), (a.id,), 50.0, 0.0)
    drawing = stroke(2)
    edits = LocalEdits()
    edits.send(move)
    edits.send(drawing)
    board = board_with(a, move)  # a state loaded: the move is in it, not the drawing
    edits.drop_delivered(board)
    assert edits.pending_ids() == (drawing.id,)
    assert edits.moved_by(a.id) is None
    assert edits.showing(board, a.id) == (a, 50.0, 0.0, (board.key(a.id), a.id), None)


def test_lifted_objects_are_shown_at_their_opacity_moved_by_the_drag() -> None:
    edits = LocalEdits()
    a, b = OpId(OTHER, 1), OpId(OTHER, 2)
    assert edits.opacity(a) is None and edits.lift_offset == (0.0, 0.0)
    edits.lift({a: 0.4, b: 1.0}, 10.0, -5.0)
    assert dict(edits.lifted) == {a: 0.4, b: 1.0}
    assert edits.opacity(a) == 0.4 and edits.lift_offset == (10.0, -5.0)
    rect = (0.0, 0.0, 4.0, 4.0)
    assert edits.shown_rect(a, rect) == (10.0, -5.0, 14.0, -1.0)
    assert edits.rects(a, rect) == [rect, (10.0, -5.0, 14.0, -1.0)]
    other = OpId(OTHER, 3)
    assert edits.shown_rect(other, rect) == rect
    assert edits.rects(other, rect) == [rect]
    edits.keep_lifted({b})  # a is no longer shown
    assert dict(edits.lifted) == {b: 1.0}
    edits.lift({}, 3.0, 3.0)  # the gesture ended: nothing stays lifted
    assert not edits.lifted and edits.shown_rect(b, rect) == rect


def test_lifting_copies_the_mapping() -> None:
    edits = LocalEdits()
    lifted = {OpId(OTHER, 1): 0.5}
    edits.lift(lifted)
    lifted.clear()
    assert edits.opacity(OpId(OTHER, 1)) == 0.5


@pytest.mark.parametrize("seed", range(20))
def test_what_is_shown_matches_the_ops_in_flight(seed: int) -> None:
    """Random sends, withdrawals and deliveries against a model written out plainly: each
    delivered object hidden by any pending erase of it, moved by the sum of its pending
    moves; then the pending drawings not on the board, in the order sent."""
    rng = random.Random(seed)
    board = Board()
    edits = LocalEdits()
    sent: dict[OpId, Op] = {}
    counter = 0
    for step in range(120):
        roll = rng.random()
        drawn = [obj.op.id for obj in board.objects()] + [
            i for i, op in sent.items() if isinstance(op, Stroke)
        ]
        counter += 1
        op_id = OpId(ME, counter)
        if roll < 0.3 or not drawn:
            op: Op = stroke(counter, OTHER if rng.random() < 0.5 else ME)
            if op.id.author == OTHER:
                board.apply((step,), op)  # someone else's, delivered at once
                continue
        elif roll < 0.45:
            op = Erase(op_id, tuple(rng.sample(drawn, min(2, len(drawn)))))
        elif roll < 0.6:
            op = Move(op_id, (rng.choice(drawn),), rng.uniform(-9, 9), rng.uniform(-9, 9))
        elif roll < 0.85 and sent:
            delivered = rng.choice(list(sent))
            board.apply((step,), sent.pop(delivered))
            edits.withdraw(delivered)
            continue
        elif sent:
            failed = rng.choice(list(sent))
            del sent[failed]
            edits.withdraw(failed)
            continue
        else:
            continue
        sent[op.id] = op
        edits.send(op)
        assert edits.pending_ids() == tuple(sent)

        expected = []
        for obj in board.objects():
            if any(isinstance(p, Erase) and obj.op.id in p.targets for p in sent.values()):
                continue
            mdx = sum(p.dx for p in sent.values() if isinstance(p, Move) and obj.op.id in p.targets)
            mdy = sum(p.dy for p in sent.values() if isinstance(p, Move) and obj.op.id in p.targets)
            expected.append((obj.op, obj.dx + mdx, obj.dy + mdy))
        for p in sent.values():
            if not isinstance(p, Stroke) or p.id in board:
                continue
            if any(isinstance(e, Erase) and p.id in e.targets for e in sent.values()):
                continue
            mdx = sum(m.dx for m in sent.values() if isinstance(m, Move) and p.id in m.targets)
            mdy = sum(m.dy for m in sent.values() if isinstance(m, Move) and p.id in m.targets)
            expected.append((p, mdx, mdy))
        shown = [(op, dx, dy) for op, dx, dy, *_ in edits.shown_objects(board, board.objects())]
        assert [(o.id, pytest.approx(dx), pytest.approx(dy)) for o, dx, dy in shown] == [
            (o.id, dx, dy) for o, dx, dy in expected
        ]


def test_importing_the_model_imports_no_qt() -> None:
    code = (
        "import sys, whiteboard.app.local_edits; "
        "sys.exit(any(m.split('.')[0] in ('PySide6', 'shiboken6') for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
