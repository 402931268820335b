"""Convergence: the board is a function of the set of (order key, op) pairs, not of arrival."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.board.board_strategies import (
    board_of,
    reference_blobs,
    reference_hash,
    reference_objects,
    scenarios,
    shown,
)
from whiteboard.board import Board, BoardObject, Image, Op, OpId, OrderKey, synthetic_op

CONVERGENCE = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _state(board: Board) -> dict[OpId, tuple[BoardObject, bool]]:
    """What each object shows: an image changes when its bytes arrive."""
    return {
        obj.id: (obj, isinstance(obj.op, Image) and board.blob(obj.op.digest) is not None)
        for obj in board.objects()
    }


@CONVERGENCE
@given(scenarios())
def test_key_order_application_matches_the_reference_fold(log: list[tuple[OrderKey, Op]]) -> None:
    board = board_of(sorted(log, key=lambda entry: entry[0]))
    expected = reference_objects(log)
    assert shown(board.objects()) == shown(expected)
    assert board.hash() == reference_hash(expected, reference_blobs(log))


@CONVERGENCE
@given(st.data())
def test_every_arrival_order_converges(data: st.DataObject) -> None:
    log = data.draw(scenarios())
    expected_board = board_of(sorted(log, key=lambda entry: entry[0]))
    arrival = data.draw(st.permutations(log))
    board = Board()
    greatest: OrderKey | None = None
    for key, op in arrival:
        before = _state(board)
        change = board.apply(key, op)
        after = _state(board)
        # Change is exactly the difference of the visible states, in z-order.
        assert not change.duplicate and change.op_id == op.id
        assert change.late == (greatest is not None and key < greatest)
        assert set(change.added) == after.keys() - before.keys()
        assert set(change.removed) == before.keys() - after.keys()
        assert set(change.changed) == {
            i for i in before.keys() & after.keys() if before[i] != after[i]
        }
        z = [obj.id for obj in board.objects()]
        assert list(change.added) == [i for i in z if i in change.added]
        greatest = key if greatest is None or key > greatest else greatest
        if data.draw(st.booleans()):  # hashed along the way: its kept encodings stay exact
            assert board.hash() == reference_hash(board.objects(), reference_blobs(board.log()))
    assert board.objects() == expected_board.objects()
    assert shown(board.objects()) == shown(reference_objects(log))
    assert board.hash() == expected_board.hash()
    assert board.log() == expected_board.log()
    assert board.last_key == expected_board.last_key


@CONVERGENCE
@given(st.data())
def test_duplicates_change_nothing(data: st.DataObject) -> None:
    log = data.draw(scenarios(max_ops=16))
    arrival = data.draw(st.permutations(log))
    repeats = data.draw(st.lists(st.sampled_from(log), min_size=1, max_size=8))
    positions = data.draw(
        st.lists(st.integers(0, len(arrival)), min_size=len(repeats), max_size=len(repeats))
    )
    board = Board()
    deliveries: list[tuple[OrderKey, Op, bool]] = [(key, op, False) for key, op in arrival]
    for position, (key, op) in sorted(zip(positions, repeats, strict=True), reverse=True):
        deliveries.insert(position, (key, op, True))
    seen: set[OpId] = set()
    for key, op, _ in deliveries:
        digest = board.hash()
        count = len(board)
        change = board.apply(key, op)
        assert change.duplicate == (op.id in seen)
        if change.duplicate:
            assert not change.affected and board.hash() == digest and len(board) == count
        seen.add(op.id)
    assert shown(board.objects()) == shown(reference_objects(log))


def test_many_random_permutations_of_a_busy_session() -> None:
    """A longer session than hypothesis draws, shuffled a few times: still one state."""
    rng = random.Random(20240601)
    log = _busy_session(rng, 300)
    expected = reference_objects(log)
    digest = reference_hash(expected, reference_blobs(log))
    for _ in range(5):
        arrival = log[:]
        rng.shuffle(arrival)
        board = board_of(arrival)
        assert shown(board.objects()) == shown(expected)
        assert board.hash() == digest


def test_late_ops_between_reads_are_put_in_their_place() -> None:
    """objects() puts the objects added below the top since it was last read in their place
    (a few on a big board: without sorting the others, as after a replay's jump; many: in one
    sort); either way the order is the key order, and copies made in between keep theirs."""
    rng = random.Random(20261123)
    drawings = [((10 * i,), synthetic_op(1 + i % 3, i, rng)) for i in range(3000)]
    busy = sorted(_busy_session(rng, 2000), key=lambda entry: entry[0])
    for log, late_share, read_every in (
        (drawings, 0.01, 500),  # ~5 late a read among thousands: each put in its place
        (drawings, 0.3, 500),
        (busy, 0.02, 37),
        (busy, 0.5, 400),
    ):
        arrival = log[:]
        for i in range(1, len(arrival)):  # swap some ops with the one before: delivered late
            if rng.random() < late_share:
                arrival[i - 1], arrival[i] = arrival[i], arrival[i - 1]
        board = Board()
        copies: list[tuple[Board, list[BoardObject]]] = []
        for count, (key, op) in enumerate(arrival, 1):
            board.apply(key, op)
            if count % read_every == 0:
                assert shown(board.objects()) == shown(reference_objects(arrival[:count]))
                copy = board.copy()
                copies.append((copy, copy.objects()))
                arrived = arrival[:count]
                assert board.hash() == reference_hash(
                    reference_objects(arrived), reference_blobs(arrived)
                )
        assert shown(board.objects()) == shown(reference_objects(log))
        for copy, objects in copies:
            assert copy.objects() == objects


def _busy_session(rng: random.Random, count: int) -> list[tuple[OrderKey, Op]]:
    from whiteboard.board import (
        Clear,
        Erase,
        Move,
        Redo,
        Reorder,
        Restyle,
        Undo,
        ZPlace,
        synthetic_op,
    )

    ops: list[Op] = []
    counters = {1: 0, 2: 0, 3: 0, 4: 0}
    for _ in range(count):
        author = rng.choice(list(counters))
        op_id = OpId(author, counters[author])
        counters[author] += 1
        roll = rng.random()
        earlier = [op.id for op in ops]
        if roll < 0.55 or not earlier:
            op: Op = synthetic_op(author, op_id.counter, rng)
        elif roll < 0.65:
            op = Erase(op_id, tuple(rng.sample(earlier, min(3, len(earlier)))))
        elif roll < 0.8:
            targets = tuple(rng.sample(earlier, min(2, len(earlier))))
            op = Move(op_id, targets, rng.uniform(-50, 50), rng.uniform(-50, 50))
        elif roll < 0.84:
            targets = tuple(rng.sample(earlier, min(3, len(earlier))))
            colour, width = rng.choice((None, 0xFF00AA00)), rng.choice((None, 4.0))
            opacity = rng.randrange(256) if colour is None and width is None else None
            op = Restyle(op_id, targets, colour, width, opacity=opacity)
        elif roll < 0.88:
            targets = tuple(rng.sample(earlier, min(2, len(earlier))))
            op = Reorder(op_id, targets, rng.choice(list(ZPlace)))
        elif roll < 0.89:
            op = Clear(op_id)
        else:
            own = [i for i in earlier if i.author == author] or earlier
            target = rng.choice(own)
            op = Undo(op_id, target) if roll < 0.93 else Redo(op_id, target)
        ops.append(op)
    # Keys roughly follow creation (clock skew of a few ops), like a real session.
    keys = [(i * 10 + rng.randint(-25, 25), i) for i in range(count)]
    return list(zip(keys, ops, strict=True))
