"""The ``collab`` workload: people drawing together, for realistic session logs.

The default (``uniform``) workload of ``whiteboard sim`` draws synthetic strokes round robin at
a fixed rate: right for measuring a protocol, nothing like a meeting. Analytics of how people
collaborate need what people do, so :func:`collab_plan` makes, from a seed, a plan of real
board ops that looks like a session of several people at one board:

* **turns and bursts**: one member draws a few ops in a row, a second or two apart, then
  another takes over after a few seconds; now and then someone jumps in before the other has
  finished (concurrent drawing);
* **idle gaps**: now and then nobody draws for half a minute to a few minutes (talking, a break);
* **unequal activity**: members' shares of the turns follow a Zipf law, so one member draws
  most and another little;
* **regions**: each member draws mostly in their own part of the board (a cell of a grid over
  the 2000x1500 synthetic area), spilling over its edges, and sometimes in someone else's;
* **edits**: members erase, move and undo (then sometimes redo) their own work, and now and
  then erase or move someone else's: always what they could have seen, drawn a second before.

Drawings are shaped by :mod:`whiteboard.board.synthetic` (strokes mostly, some shapes, a few
labels) and moved into place; each member favours a colour of their own.

:class:`CollabWorkload` runs a plan on a :class:`~whiteboard.sim.session.SimSession` and has
every member announce its presence as the app does (whiteboard/sim/presence.py), so that the
members' logs hold what an app's would: presences among the ops.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from whiteboard.board import Erase, Move, Op, OpId, Redo, Shape, Stroke, Text, Undo
from whiteboard.board.synthetic import AREA_HEIGHT, AREA_WIDTH, synthetic_op
from whiteboard.sim.presence import AppPresence, member_colour
from whiteboard.sim.session import SimSession

DrawingOp = Stroke | Shape | Text

# -- the shape of a session: every number a person's, roughly ---------------------------------
BURST_MEAN_OPS = 5.0  # ops a member of average activity makes in one turn (geometric, >= 1)
DRAW_GAP_MEDIAN_S = 1.6  # between two ops of one turn (log-normal)
DRAW_GAP_SIGMA = 0.6
HANDOVER_S = (1.0, 8.0)  # between turns (uniform)
IDLE_CHANCE = 0.12  # that a turn is followed by an idle gap instead of a handover
IDLE_S = (30.0, 150.0)
OVERLAP_CHANCE = 0.15  # that the next member starts while this one is still drawing
ACTIVITY_SKEW = 1.0  # Zipf exponent of the members' activity: how often their turn comes,
#                     and (by its square root) how long it lasts
OWN_COLOUR_CHANCE = 0.75  # a drawing in the member's favourite colour
# -- where ---------------------------------------------------------------------------------
REGION_SPREAD = 0.22  # standard deviation of a drawing's place around its region's centre, in
#                       region widths/heights: about 1 in 20 lands over the region's edge
WANDER_CHANCE = 0.12  # a drawing in another member's region
# -- what: the rest of the time, a member draws --------------------------------------------
ERASE_OWN_CHANCE = 0.05
MOVE_OWN_CHANCE = 0.06
UNDO_CHANCE = 0.06
REDO_CHANCE = 0.25  # after an undo, that the member's next op redoes it
EDIT_OTHERS_CHANCE = 0.05  # erase (40%) or move (60%) someone else's drawing
SEEN_AFTER_S = 1.0  # only what was drawn this long before is edited: what the member has seen
RECENT = 12  # edits pick among this many latest candidates


@dataclass(frozen=True, slots=True)
class Region:
    """A member's part of the board."""

    left: float
    top: float
    right: float
    bottom: float

    @property
    def centre(self) -> tuple[float, float]:
        return (self.left + self.right) / 2, (self.top + self.bottom) / 2

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x <= self.right and self.top <= y <= self.bottom


@dataclass(frozen=True, slots=True)
class PlannedOp:
    at: float  # seconds after the workload starts
    member: int  # the index of the member who sends it
    op: Op


@dataclass(frozen=True)
class CollabPlan:
    ops: tuple[PlannedOp, ...]  # in time order
    regions: tuple[Region, ...]  # by member index
    activity: tuple[float, ...]  # each member's weight in choosing turns, summing to 1
    colours: tuple[int, ...]  # each member's favourite colour (ARGB)

    @property
    def duration(self) -> float:
        return self.ops[-1].at if self.ops else 0.0


def regions_for(members: int) -> tuple[Region, ...]:
    """One cell each of the smallest near-square grid with room for ``members`` cells."""
    cols = math.ceil(math.sqrt(members))
    rows = math.ceil(members / cols)
    width, height = AREA_WIDTH / cols, AREA_HEIGHT / rows
    return tuple(
        Region(c * width, r * height, (c + 1) * width, (r + 1) * height)
        for r, c in ((i // cols, i % cols) for i in range(members))
    )


def anchor(op: DrawingOp) -> tuple[float, float]:
    """Where a drawing is: the centre of its bounding box."""
    left, top, right, bottom = _bounds(op)
    return (left + right) / 2, (top + bottom) / 2


def collab_plan(member_ids: Sequence[int], ops: int, seed: int) -> CollabPlan:
    """``ops`` ops by the members ``member_ids`` (by index), as a seeded session of people.

    Op ids count from 1 for each member, in time order."""
    if not member_ids:
        raise ValueError("a plan needs at least one member")
    rng = random.Random(f"collab:{seed}")
    members = len(member_ids)
    # Who is active is independent of who sits where: shuffle both.
    ranks = list(range(members))
    rng.shuffle(ranks)
    weights = [1.0 / (rank + 1) ** ACTIVITY_SKEW for rank in ranks]
    cells = list(regions_for(members))
    rng.shuffle(cells)
    slots = _timeline(rng, weights, ops)
    ops_planned = _Actions(rng, list(member_ids), cells).plan(slots)
    total = sum(weights)
    return CollabPlan(
        ops=tuple(ops_planned),
        regions=tuple(cells),
        activity=tuple(w / total for w in weights),
        colours=tuple(member_colour(i) for i in range(members)),
    )


def _timeline(rng: random.Random, weights: list[float], ops: int) -> list[tuple[float, int]]:
    """When each op is made and by whom: turns of bursts, handovers and idle gaps."""
    slots: list[tuple[float, int]] = []
    busy_until = [0.0] * len(weights)  # a member's next turn starts after their last one
    members = range(len(weights))
    mean_weight = sum(weights) / len(weights)
    start, previous = 0.0, -1
    while len(slots) < ops:
        # Someone else takes over (anyone, when alone).
        choices = [m for m in members if m != previous] or list(members)
        member = rng.choices(choices, weights=[weights[m] for m in choices])[0]
        burst = BURST_MEAN_OPS * math.sqrt(weights[member] / mean_weight)
        length = min(ops - len(slots), _geometric(rng, max(1.5, burst)))
        when = max(start, busy_until[member])
        times = []
        for _ in range(length):
            times.append(when)
            gap = rng.lognormvariate(math.log(DRAW_GAP_MEDIAN_S), DRAW_GAP_SIGMA)
            when += min(12.0, max(0.3, gap))
        slots.extend((t, member) for t in times)
        busy_until[member] = times[-1] + 0.5
        if rng.random() < OVERLAP_CHANCE:
            start = rng.uniform(times[0], times[-1])  # someone jumps in
        elif rng.random() < IDLE_CHANCE:
            start = times[-1] + rng.uniform(*IDLE_S)
        else:
            start = times[-1] + rng.uniform(*HANDOVER_S)
        previous = member
    slots.sort(key=lambda slot: slot[0])  # stable: ties keep the order they were made in
    return [(round(t, 3), m) for t, m in slots]


def _geometric(rng: random.Random, mean: float) -> int:
    """1, 2, 3... with the given mean."""
    count = 1
    while rng.random() > 1.0 / mean:
        count += 1
    return count


class _Actions:
    """What each slot of the timeline is, given what was done before it."""

    def __init__(self, rng: random.Random, ids: list[int], regions: list[Region]) -> None:
        self.rng = rng
        self.ids = ids
        self.regions = regions
        self.counters = [0] * len(ids)
        self.drawn: list[tuple[float, OpId]] = []  # every drawing, in time order
        self.owner: dict[OpId, int] = {}
        self.alive: set[OpId] = set()  # drawings on the board, as far as the plan knows
        self.history: list[list[Op]] = [[] for _ in ids]  # undoable ops, latest last
        self.undone: list[list[Op]] = [[] for _ in ids]  # redoable ops, latest last
        self.last_was_undo = [False] * len(ids)

    def plan(self, slots: list[tuple[float, int]]) -> list[PlannedOp]:
        return [PlannedOp(at, member, self.next_op(at, member)) for at, member in slots]

    def next_op(self, at: float, member: int) -> Op:
        rng = self.rng
        op: Op | None
        if self.last_was_undo[member] and self.undone[member] and rng.random() < REDO_CHANCE:
            op = self._redo(member)
        else:
            op = self._edit(at, member, rng.random())
        if op is None:  # a drawing, or an edit with nothing to edit
            op = self._draw(member)
            self.owner[op.id] = member
            self.alive.add(op.id)
            self.drawn.append((at, op.id))
        self.last_was_undo[member] = isinstance(op, Undo)
        return op

    def _edit(self, at: float, member: int, roll: float) -> Op | None:
        """An edit, if ``roll`` (uniform in [0, 1)) falls on one and it has a target."""
        if roll < ERASE_OWN_CHANCE:
            return self._erase(member, self._own(at, member))
        roll -= ERASE_OWN_CHANCE
        if roll < MOVE_OWN_CHANCE:
            return self._move(member, self._own(at, member))
        roll -= MOVE_OWN_CHANCE
        if roll < UNDO_CHANCE:
            return self._undo(member)
        roll -= UNDO_CHANCE
        if roll < EDIT_OTHERS_CHANCE:
            theirs = self._others(at, member)
            if self.rng.random() < 0.4:
                return self._erase(member, theirs)
            return self._move(member, theirs)
        return None

    # -- kinds of op -----------------------------------------------------------------------

    def _next_id(self, member: int) -> OpId:
        self.counters[member] += 1
        return OpId(self.ids[member], self.counters[member])

    def _did(self, member: int, op: Op) -> Op:
        """An undoable op made: a new action forgets what could be redone, as editors do."""
        self.history[member].append(op)
        self.undone[member].clear()
        return op

    def _draw(self, member: int) -> Op:
        rng = self.rng
        op_id = self._next_id(member)
        op = synthetic_op(op_id.author, op_id.counter, rng)
        assert isinstance(op, Stroke | Shape | Text)
        if rng.random() < OWN_COLOUR_CHANCE:
            op = dataclasses.replace(op, colour=member_colour(member))
        home = self.regions[member]
        if len(self.regions) > 1 and rng.random() < WANDER_CHANCE:
            home = rng.choice([r for r in self.regions if r is not self.regions[member]])
        cx, cy = home.centre
        x = rng.gauss(cx, REGION_SPREAD * (home.right - home.left))
        y = rng.gauss(cy, REGION_SPREAD * (home.bottom - home.top))
        return self._did(member, _placed(op, x, y))

    def _erase(self, member: int, candidates: list[OpId]) -> Op | None:
        if not candidates:
            return None
        targets = self._pick(candidates)
        self.alive.difference_update(targets)
        return self._did(member, Erase(self._next_id(member), tuple(targets)))

    def _move(self, member: int, candidates: list[OpId]) -> Op | None:
        if not candidates:
            return None
        targets = self._pick(candidates)
        dx, dy = (round(self.rng.gauss(0.0, 80.0), 1) for _ in range(2))
        return self._did(member, Move(self._next_id(member), tuple(targets), dx, dy))

    def _undo(self, member: int) -> Op | None:
        if not self.history[member]:
            return None
        target = self.history[member].pop()
        self.undone[member].append(target)
        self._toggle(target, undo=True)
        return Undo(self._next_id(member), target.id)

    def _redo(self, member: int) -> Op:
        target = self.undone[member].pop()
        self.history[member].append(target)
        self._toggle(target, undo=False)
        return Redo(self._next_id(member), target.id)

    def _toggle(self, target: Op, *, undo: bool) -> None:
        # Undoing a drawing takes it away, undoing an erase brings its targets back.
        if isinstance(target, Stroke | Shape | Text):
            gone = {target.id} if undo else set()
            back = set() if undo else {target.id}
        elif isinstance(target, Erase):
            gone = set() if undo else set(target.targets)
            back = set(target.targets) if undo else set()
        else:
            return
        self.alive -= gone
        self.alive |= back

    # -- choosing targets --------------------------------------------------------------------

    def _own(self, at: float, member: int) -> list[OpId]:
        return self._recent(at, member, mine=True)

    def _others(self, at: float, member: int) -> list[OpId]:
        return self._recent(at, member, mine=False)

    def _recent(self, at: float, member: int, *, mine: bool) -> list[OpId]:
        """The latest :data:`RECENT` drawings on the board that ``member`` has seen, its own
        or others', oldest first. From the end: a long plan must not cost its square."""
        found: list[OpId] = []
        for when, op_id in reversed(self.drawn):
            if len(found) == RECENT:
                break
            seen = when <= at - SEEN_AFTER_S and op_id in self.alive
            if seen and (self.owner[op_id] == member) == mine:
                found.append(op_id)
        found.reverse()
        return found

    def _pick(self, candidates: list[OpId]) -> list[OpId]:
        """Mostly one object; now and then a few (an eraser's swipe, a selection)."""
        rng = self.rng
        count = 1 if rng.random() < 0.75 else rng.randint(2, 4)
        picked = rng.sample(candidates, min(count, len(candidates)))
        return sorted(picked, key=candidates.index)


def _bounds(op: DrawingOp) -> tuple[float, float, float, float]:
    if isinstance(op, Stroke):
        xs, ys = op.points[0::2], op.points[1::2]
        return min(xs), min(ys), max(xs), max(ys)
    if isinstance(op, Shape):
        return min(op.x1, op.x2), min(op.y1, op.y2), max(op.x1, op.x2), max(op.y1, op.y2)
    return op.x, op.y, op.x, op.y


def _placed(op: DrawingOp, x: float, y: float) -> DrawingOp:
    """``op`` moved so that its centre is at (x, y), as far as the board's area allows: it is
    shifted whole, never squashed, so its shape stays the synthetic one."""
    left, top, right, bottom = _bounds(op)
    dx = min(max(x - (left + right) / 2, -left), AREA_WIDTH - right)
    dy = min(max(y - (top + bottom) / 2, -top), AREA_HEIGHT - bottom)
    if isinstance(op, Stroke):
        points = tuple(round(v + (dx if i % 2 == 0 else dy), 2) for i, v in enumerate(op.points))
        return dataclasses.replace(op, points=points)
    if isinstance(op, Shape):
        return dataclasses.replace(
            op,
            x1=round(op.x1 + dx, 2),
            y1=round(op.y1 + dy, 2),
            x2=round(op.x2 + dx, 2),
            y2=round(op.y2 + dy, 2),
        )
    return dataclasses.replace(op, x=round(op.x + dx, 2), y=round(op.y + dy, 2))


# -- running a plan ---------------------------------------------------------------------------


class CollabWorkload:
    """A :func:`collab_plan` run on ``session``, its members announcing their presence as the
    app does (:class:`~whiteboard.sim.presence.AppPresence`).

    Create it before the members start (it watches for their joining) and, if the session is
    recorded, before the recorder, so that the recorder sees what these members send."""

    def __init__(self, session: SimSession, seed: int) -> None:
        self.session = session
        self.seed = seed
        self.plan: CollabPlan | None = None
        self.presence = AppPresence(session, seed)

    def schedule(self, ops: int, start: float) -> float:
        """Plan ``ops`` ops and schedule them from virtual time ``start``; returns the time of
        the last."""
        session = self.session
        self.plan = collab_plan([p.member_id for p in session.peers], ops, self.seed)
        for planned in self.plan.ops:
            session.network.schedule(
                start + planned.at, partial(session.send_op, planned.member, planned.op)
            )
        return start + self.plan.duration

    def stop(self) -> None:
        """The members are leaving: no more presences (the app stops its timer then too)."""
        self.presence.stop()


__all__ = [
    "CollabPlan",
    "CollabWorkload",
    "PlannedOp",
    "Region",
    "anchor",
    "collab_plan",
    "regions_for",
]
