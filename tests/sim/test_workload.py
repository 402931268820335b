"""The collab workload (whiteboard/sim/workload.py): a seeded plan of real board ops that looks
like people drawing together, checked on the ops it generates; and its members' presences."""

from __future__ import annotations

import itertools
import statistics
from collections import Counter

import pytest

from whiteboard.board import (
    Board,
    Erase,
    Move,
    Op,
    OpId,
    Redo,
    Shape,
    Stroke,
    Text,
    Undo,
    decode_op,
    encode_op,
)
from whiteboard.board.synthetic import AREA_HEIGHT, AREA_WIDTH
from whiteboard.presence import decode_presence, is_presence
from whiteboard.sim.presence import member_colour
from whiteboard.sim.session import SimSession
from whiteboard.sim.workload import (
    IDLE_S,
    SEEN_AFTER_S,
    CollabPlan,
    CollabWorkload,
    PlannedOp,
    anchor,
    collab_plan,
    regions_for,
)

IDS = [0x1111, 0x2222, 0x3333, 0x4444]
SEEDS = [1, 2, 3, 4, 5]


def plan_of(seed: int, ops: int = 300, ids: list[int] = IDS) -> CollabPlan:
    return collab_plan(ids, ops, seed)


def drawings(plan: CollabPlan) -> list[PlannedOp]:
    return [p for p in plan.ops if isinstance(p.op, Stroke | Shape | Text)]


def edits(plan: CollabPlan) -> list[tuple[PlannedOp, Erase | Move]]:
    return [(p, p.op) for p in plan.ops if isinstance(p.op, Erase | Move)]


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    assert plan_of(7) == plan_of(7)
    assert plan_of(7).ops != plan_of(8).ops


@pytest.mark.parametrize("seed", SEEDS)
def test_a_plan_is_valid_ops_with_each_members_ids_counting_from_one_in_time_order(
    seed: int,
) -> None:
    plan = plan_of(seed)
    assert len(plan.ops) == 300
    times = [p.at for p in plan.ops]
    assert times == sorted(times) and times[0] == 0.0
    for member, member_id in enumerate(IDS):
        ids = [p.op.id for p in plan.ops if p.member == member]
        assert ids == [OpId(member_id, k) for k in range(1, len(ids) + 1)]
    board = Board()
    for number, planned in enumerate(plan.ops):
        assert decode_op(encode_op(planned.op)) == planned.op
        board.apply((number,), planned.op)
    assert {obj.id.author for obj in board.objects()} == set(IDS)


@pytest.mark.parametrize("seed", SEEDS)
def test_members_draw_in_turns_of_bursts(seed: int) -> None:
    ops = plan_of(seed).ops
    switches = sum(1 for a, b in itertools.pairwise(ops) if a.member != b.member)
    # Drawn at random, 3 ops in 4 would change hands; in turns, few do.
    assert switches <= 0.4 * (len(ops) - 1)
    runs = len(ops) / (switches + 1)
    assert runs >= 2.5


@pytest.mark.parametrize("seed", SEEDS)
def test_bursts_of_seconds_are_broken_by_idle_gaps(seed: int) -> None:
    ops = plan_of(seed).ops
    gaps = [b.at - a.at for a, b in itertools.pairwise(ops)]
    assert statistics.median(gaps) < 4.0  # within a burst: a stroke every second or two
    assert sum(gap >= IDLE_S[0] for gap in gaps) >= 2  # nobody drawing for half a minute+


@pytest.mark.parametrize("seed", SEEDS)
def test_some_members_are_much_more_active_than_others(seed: int) -> None:
    plan = plan_of(seed)
    counts = Counter(p.member for p in plan.ops)
    assert set(counts) == set(range(len(IDS)))
    assert max(counts.values()) >= 1.8 * min(counts.values())
    # The busiest is the one the plan made most active.
    busiest = max(counts, key=lambda m: counts[m])
    assert plan.activity[busiest] == max(plan.activity)
    assert sum(plan.activity) == pytest.approx(1.0)


def test_regions_tile_the_board_one_cell_per_member() -> None:
    for members in (1, 2, 3, 4, 5, 9, 10):
        regions = regions_for(members)
        assert len(regions) == members
        for region in regions:
            assert 0 <= region.left < region.right <= AREA_WIDTH
            assert 0 <= region.top < region.bottom <= AREA_HEIGHT
        for i, a in enumerate(regions):
            for b in regions[i + 1 :]:
                overlap_x = min(a.right, b.right) - max(a.left, b.left)
                overlap_y = min(a.bottom, b.bottom) - max(a.top, b.top)
                assert overlap_x <= 0 or overlap_y <= 0


@pytest.mark.parametrize("seed", SEEDS)
def test_members_draw_mostly_in_their_own_region_with_some_overlap(seed: int) -> None:
    plan = plan_of(seed)
    assert len(set(plan.regions)) == len(IDS)
    inside: Counter[int] = Counter()
    total: Counter[int] = Counter()
    for planned in drawings(plan):
        assert isinstance(planned.op, Stroke | Shape | Text)
        x, y = anchor(planned.op)
        assert 0 <= x <= AREA_WIDTH and 0 <= y <= AREA_HEIGHT  # moved whole, on the board
        total[planned.member] += 1
        inside[planned.member] += plan.regions[planned.member].contains(x, y)
    for member in total:
        assert inside[member] / total[member] >= 0.65, member
    outside = sum(total.values()) - sum(inside.values())
    assert outside >= 0.03 * sum(total.values())  # over the edges, or in someone else's


@pytest.mark.parametrize("seed", SEEDS)
def test_members_mostly_use_their_own_colour(seed: int) -> None:
    plan = plan_of(seed)
    for member in range(len(IDS)):
        colours = [
            p.op.colour
            for p in drawings(plan)
            if p.member == member and isinstance(p.op, Stroke | Shape | Text)
        ]
        own = sum(c == member_colour(member) for c in colours)
        assert own >= 0.6 * len(colours)
        assert plan.colours[member] == member_colour(member)


@pytest.mark.parametrize("seed", SEEDS)
def test_members_erase_move_and_undo_their_own_work_and_edit_others(seed: int) -> None:
    plan = plan_of(seed)
    drawn_at = {p.op.id: p.at for p in drawings(plan)}
    own_edits: Counter[str] = Counter()
    others_edits = 0
    for planned, op in edits(plan):
        for target in op.targets:
            # Only what the member could have seen: drawn a moment before.
            assert drawn_at[target] <= planned.at - SEEN_AFTER_S
        if all(t.author == op.id.author for t in op.targets):
            own_edits[type(op).__name__] += 1
        else:
            others_edits += 1
    assert own_edits["Erase"] >= 1 and own_edits["Move"] >= 1
    assert others_edits >= 1
    kinds = Counter(type(p.op).__name__ for p in plan.ops)
    assert kinds["Undo"] >= 1
    assert kinds["Stroke"] > 0.5 * len(plan.ops)  # mostly, people draw


@pytest.mark.parametrize("seed", SEEDS)
def test_undo_and_redo_take_back_the_members_own_earlier_ops(seed: int) -> None:
    plan = plan_of(seed)
    made: dict[OpId, Op] = {}
    for planned in plan.ops:
        op = planned.op
        if isinstance(op, Undo | Redo):
            target = made[op.target]  # earlier, and one of this member's
            assert target.id.author == op.id.author
            assert not isinstance(target, Undo | Redo)
        made[op.id] = op
    redone = [p.op for p in plan.ops if isinstance(p.op, Redo)]
    undone = {p.op.target for p in plan.ops if isinstance(p.op, Undo)}
    assert all(op.target in undone for op in redone)


def test_a_member_alone_draws_and_edits_only_its_own_work() -> None:
    plan = collab_plan([99], 80, 3)
    assert len(plan.ops) == 80
    assert all(p.member == 0 for p in plan.ops)
    for _, op in edits(plan):
        assert all(t.author == 99 for t in op.targets)


def test_an_empty_plan_and_no_members() -> None:
    assert collab_plan(IDS, 0, 1).ops == ()
    assert collab_plan(IDS, 0, 1).duration == 0.0
    with pytest.raises(ValueError, match="at least one member"):
        collab_plan([], 10, 1)


def test_the_workload_sends_its_plan_and_members_announce_their_presence() -> None:
    session = SimSession("raw", 3, seed=5)
    workload = CollabWorkload(session, seed=5)
    sent: list[tuple[int, bytes]] = []
    session.send_observers.append(lambda peer, payload: sent.append((peer.index, payload)))
    for index in range(3):
        session.start(index)
    session.network.run(until=1.0)
    last = workload.schedule(40, 1.0)
    assert workload.plan is not None and last == 1.0 + workload.plan.duration
    session.network.run(until=last + 5.0)
    assert all(len(peer.replica.board) == 40 for peer in session.peers)
    assert session.converged()
    ops = [(i, decode_op(p)) for i, p in sent if not is_presence(p)]
    assert ops == [(p.member, p.op) for p in workload.plan.ops]
    presences = [(i, decode_presence(p)) for i, p in sent if is_presence(p)]
    assert workload.presence.sent == len(presences)
    # One on joining each, then every couple of seconds while the board moves.
    assert len(presences) >= 3 * (last - 1.0) / 10.0
    for index, presence in presences:
        assert presence.name == f"member-{index + 1}"
        assert presence.colour == member_colour(index)
    for peer in session.peers:  # each member knows the others' names
        assert {p.name for p in peer.replica.presence.values()} == {
            "member-1",
            "member-2",
            "member-3",
        }
    workload.stop()
    before = workload.presence.sent
    session.network.run(until=session.network.now + 30.0)
    assert workload.presence.sent == before


def test_a_crashed_members_presence_timer_dies_with_it_and_restarts_with_it() -> None:
    # rmp: raw's core spins on its forget timer once a member has gone silent (a float
    # rounding mismatch between its get_timer and handle_timer), which this would trip.
    session = SimSession("rmp", 2, seed=6)
    workload = CollabWorkload(session, seed=6)
    sent: list[int] = []
    session.send_observers.append(
        lambda peer, payload: sent.append(peer.index) if is_presence(payload) else None
    )
    session.start(0)
    session.start(1)
    session.network.run(until=5.0)
    session.crash(1)
    crashed = sent.count(1)
    session.network.run(until=60.0)
    assert sent.count(1) == crashed
    session.start(1)
    session.network.run(until=90.0)
    # Idle: one on joining, then one every ten seconds, from one timer only.
    assert 3 <= sent.count(1) - crashed <= 5
    assert workload.presence.sent == len(sent)


def test_simulated_presences_carry_the_checkpoint_as_the_apps_do() -> None:
    """whiteboard/presence.py: past a checkpoint count, a presence tells the board there; the
    simulated members do as the app, and, raw here losing nothing, their checkpoints agree."""
    session = SimSession("raw", 2, seed=7)
    workload = CollabWorkload(session, seed=7)
    sent: list[tuple[int, bytes]] = []
    session.send_observers.append(lambda peer, payload: sent.append((peer.index, payload)))
    for index in range(2):
        session.start(index)
    session.network.run(until=1.0)
    last = workload.schedule(300, 1.0)
    session.network.run(until=last + 5.0)
    assert all(len(peer.replica.board) == 300 for peer in session.peers)
    checkpoints = {
        i: decode_presence(p).checkpoint for i, p in sent if is_presence(p)
    }  # each member's last
    assert checkpoints[0] is not None and checkpoints[0].ops == 256
    assert checkpoints[0] == checkpoints[1]
