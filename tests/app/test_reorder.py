"""Which objects a z-order change names (whiteboard/app/reorder.py), and how restyles and
reorders of a large selection are cut into ops (whiteboard/app/strokes.py). Qt-free: each
reorder is checked by applying it to a real board and reading the order back."""

from __future__ import annotations

import itertools

import pytest

from whiteboard.app.reorder import Placed, reorder_targets
from whiteboard.app.strokes import Style, max_targets_per_op, reorder_ops, restyle_ops
from whiteboard.board import Board, OpId, Reorder, Stroke, ZPlace, encode_op

FRONT, BACK = ZPlace.FRONT, ZPlace.BACK


def board_of(rects: dict[str, tuple[float, float]]) -> tuple[Board, dict[str, OpId]]:
    """A board of 10x10 strokes named by letter, at the given corners, drawn in order."""
    board, names = Board(), {}
    for counter, (name, (x, y)) in enumerate(rects.items()):
        op = Stroke(OpId(1, counter), (x, y, x + 10.0, y + 10.0), 0xFF000000, 1.0)
        board.apply((counter,), op)
        names[name] = op.id
    return board, names


def placed(board: Board) -> list[Placed]:
    out = []
    for obj in board.objects():
        x0, y0, x1, y1 = obj.op.points  # type: ignore[union-attr]
        out.append(Placed(obj.id, board.z_order(obj.id), (x0, y0, x1, y1)))
    return out


def arrange(board: Board, names: dict[str, OpId], chosen: str, place: ZPlace, step: bool) -> str:
    """Apply the reorder the selection ``chosen`` asks for; the order of the names after."""
    targets = reorder_targets(placed(board), {names[c] for c in chosen}, place, step)
    counter = itertools.count(100)
    for op in reorder_ops(targets, place, lambda: OpId(2, next(counter)), 1200):
        board.apply((1000 + op.id.counter,), op)
    by_id = {op_id: name for name, op_id in names.items()}
    return "".join(by_id[obj.id] for obj in board.objects())


# a, b, c overlap in a pile; d lies apart, between b and c in the z-order.
PILE = {"a": (0.0, 0.0), "b": (5.0, 5.0), "d": (500.0, 500.0), "c": (8.0, 8.0)}


@pytest.mark.parametrize(
    ("chosen", "place", "step", "after"),
    [
        ("a", FRONT, True, "bdac"),  # past b, the next above it that it overlaps: not past c
        ("a", FRONT, False, "bdca"),
        ("c", BACK, True, "acbd"),  # below b; d does not overlap c and is not named
        ("c", BACK, False, "cabd"),
        ("ab", FRONT, True, "dcab"),  # a pair keeps its own order
        ("c", FRONT, True, "abdc"),  # already above all it overlaps: nothing sent
        ("c", FRONT, False, "abdc"),  # already on top
        ("a", BACK, False, "abdc"),  # already at the back
    ],
)
def test_steps_and_ends(chosen: str, place: ZPlace, step: bool, after: str) -> None:
    board, names = board_of(PILE)
    assert arrange(board, names, chosen, place, step) == after


def test_nothing_selected_or_shown_names_nothing() -> None:
    board, _ = board_of(PILE)
    assert reorder_targets(placed(board), set(), FRONT, True) == []
    assert reorder_targets(placed(board), {OpId(9, 9)}, BACK, False) == []


def test_a_large_selection_goes_in_batches_that_keep_its_order() -> None:
    """More targets than one datagram holds: several ops, sent so that the targets keep
    their order among themselves, to the front and to the back."""
    rects = {f"{i:03}": (float(i), 0.0) for i in range(200)}
    for place in (FRONT, BACK):
        board, names = board_of(rects)
        ids = list(names.values())
        chosen = ids[::2]
        new_ids = (OpId(2, i) for i in itertools.count())
        ops = reorder_ops(chosen, place, new_ids.__next__, 400)
        assert len(ops) > 3 and all(len(encode_op(op)) <= 400 for op in ops)
        for index, op in enumerate(ops):
            board.apply((1000 + index,), op)
        order = [obj.id for obj in board.objects()]
        moved = order[100:] if place is FRONT else order[:100]
        assert moved == chosen


def test_restyles_fit_their_payloads_whatever_the_fields() -> None:
    ids = [OpId(2**32 - 1, 2**63 - 1 - i) for i in range(500)]
    full = Style(colour=0xFFFFFFFF, width=500.0, fill=0xFFFFFFFF, opacity=255)
    counter = itertools.count()
    ops = restyle_ops(ids, full, lambda: OpId(1, next(counter)), 1000)
    assert [t for op in ops for t in op.targets] == ids
    assert all(len(encode_op(op)) <= 1000 for op in ops)
    assert len(ops[0].targets) == max_targets_per_op(1000)
    with pytest.raises(ValueError, match="does not fit"):
        restyle_ops(ids, full, lambda: OpId(1, 0), 30)
    assert isinstance(reorder_ops(ids[:1], BACK, lambda: OpId(1, 0), 1000)[0], Reorder)
