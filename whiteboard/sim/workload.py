"""The ``collab`` and ``edit`` workloads: people drawing together, for realistic session logs,
and people editing what is drawn, to exercise the protocols with every kind of op.

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

The ``edit`` workload (:data:`EDIT`) is the same session ten times faster, with far more
editing: restyles, reorders to the front and back, resizes and turns, and rewrites of labels
(which it draws more of), each of one's own work or someone else's; a member's undo takes
back any of them. Members also paste pictures (a BLOB of 1 KiB to 1 MiB, log-uniform, then
the IMAGE showing it; a third of the time a picture already on the board, pasted again
without its bytes), so that the protocols carry payloads far larger than a datagram.

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

from whiteboard.board import (
    Blob,
    Erase,
    Image,
    Move,
    Op,
    OpId,
    Redo,
    Reorder,
    Restyle,
    Shape,
    Stroke,
    Text,
    TextEdit,
    Transform,
    Undo,
    ZPlace,
)
from whiteboard.board.synthetic import AREA_HEIGHT, AREA_WIDTH, synthetic_op
from whiteboard.sim.presence import AppPresence, member_colour
from whiteboard.sim.session import SimSession

DrawingOp = Stroke | Shape | Text | Image

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
LABELS = ("TODO", "idea", "client", "server", "v2?", "yes!", "ask Bob", "cache\nhere")
PICTURE_BYTES = (1 << 10, 1 << 20)  # a pasted picture's size, log-uniform between these
PICTURE_AGAIN_CHANCE = 1 / 3  # a picture already on the board, pasted again
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"  # the board checks the signature, never the pixels


@dataclass(frozen=True, slots=True)
class Mix:
    """How often a member does what, per op (the rest of the time: a drawing), and how fast
    the session goes. A chance of 0 draws no random number, so the ``collab`` plan of a
    seed is what it always was."""

    erase_own: float = ERASE_OWN_CHANCE
    move_own: float = MOVE_OWN_CHANCE
    undo: float = UNDO_CHANCE
    edit_others: float = EDIT_OTHERS_CHANCE  # erase (40%) or move (60%) another's drawing
    restyle: float = 0.0  # anyone's drawing (a third of the time another's)
    reorder: float = 0.0  # to the front or the back, likewise
    edit_text: float = 0.0  # a label's words rewritten, likewise
    transform: float = 0.0  # resized or turned about the middle of the member's region
    picture: float = 0.0  # a picture pasted (a BLOB, unless pasted before, and an IMAGE)
    label_share: float = 0.0  # of the drawings, labels (beyond synthetic ones)
    pace: float = 1.0  # every time of the plan is multiplied by this


COLLAB = Mix()
EDIT = Mix(
    erase_own=0.05,
    move_own=0.07,
    undo=0.07,
    edit_others=0.05,
    restyle=0.10,
    reorder=0.07,
    edit_text=0.07,
    transform=0.06,
    picture=0.03,
    label_share=0.2,
    pace=0.1,
)
MIXES = {"collab": COLLAB, "edit": EDIT}


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


def collab_plan(
    member_ids: Sequence[int], ops: int, seed: int, mix: Mix = COLLAB
) -> CollabPlan:
    """``ops`` ops by the members ``member_ids`` (by index), as a seeded session of people
    doing what ``mix`` says.

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
    if mix.pace != 1.0:
        slots = [(round(t * mix.pace, 3), m) for t, m in slots]
    # A picture is two ops in one slot (its BLOB and IMAGE): ``ops`` ops, all the same.
    ops_planned = _Actions(rng, list(member_ids), cells, mix).plan(slots)[:ops]
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

    def __init__(
        self, rng: random.Random, ids: list[int], regions: list[Region], mix: Mix = COLLAB
    ) -> None:
        self.rng = rng
        self.mix = mix
        self.labels: set[OpId] = set()  # the drawings that are texts
        self.ids = ids
        self.regions = regions
        self.counters = [0] * len(ids)
        self.drawn: list[tuple[float, OpId]] = []  # every drawing, in time order
        self.owner: dict[OpId, int] = {}
        self.alive: set[OpId] = set()  # drawings on the board, as far as the plan knows
        self.history: list[list[Op]] = [[] for _ in ids]  # undoable ops, latest last
        self.undone: list[list[Op]] = [[] for _ in ids]  # redoable ops, latest last
        self.last_was_undo = [False] * len(ids)
        self.pictures: list[bytes] = []  # the digests of the pictures pasted so far
        self.follow: Op | None = None  # the IMAGE after a picture's BLOB, in the same slot

    def plan(self, slots: list[tuple[float, int]]) -> list[PlannedOp]:
        planned = []
        for at, member in slots:
            planned.append(PlannedOp(at, member, self.next_op(at, member)))
            if self.follow is not None:
                image, self.follow = self.follow, None
                self.owner[image.id] = member
                self.alive.add(image.id)
                self.drawn.append((at, image.id))
                planned.append(PlannedOp(at, member, image))
        return planned

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
        mix = self.mix
        if roll < mix.erase_own:
            return self._erase(member, self._own(at, member))
        roll -= mix.erase_own
        if roll < mix.move_own:
            return self._move(member, self._own(at, member))
        roll -= mix.move_own
        if roll < mix.undo:
            return self._undo(member)
        roll -= mix.undo
        if roll < mix.edit_others:
            theirs = self._others(at, member)
            if self.rng.random() < 0.4:
                return self._erase(member, theirs)
            return self._move(member, theirs)
        roll -= mix.edit_others
        if roll < mix.restyle:
            return self._restyle(member, self._anyones(at, member))
        roll -= mix.restyle
        if roll < mix.reorder:
            return self._reorder(member, self._anyones(at, member))
        roll -= mix.reorder
        if roll < mix.edit_text:
            return self._edit_text(member, self._anyones(at, member))
        roll -= mix.edit_text
        if roll < mix.transform:
            return self._transform(member, self._anyones(at, member))
        roll -= mix.transform
        if roll < mix.picture:
            return self._picture(at, member)
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
        op: Op
        if self.mix.label_share and rng.random() < self.mix.label_share:
            op = Text(op_id, 0.0, 0.0, rng.choice(LABELS), 0xFF000000, rng.choice((16.0, 24.0)))
        else:
            op = synthetic_op(op_id.author, op_id.counter, rng)
        assert isinstance(op, Stroke | Shape | Text)
        if isinstance(op, Text):
            self.labels.add(op_id)
        if rng.random() < OWN_COLOUR_CHANCE:
            op = dataclasses.replace(op, colour=member_colour(member))
        home = self.regions[member]
        if len(self.regions) > 1 and rng.random() < WANDER_CHANCE:
            home = rng.choice([r for r in self.regions if r is not self.regions[member]])
        cx, cy = home.centre
        x = rng.gauss(cx, REGION_SPREAD * (home.right - home.left))
        y = rng.gauss(cy, REGION_SPREAD * (home.bottom - home.top))
        return self._did(member, _placed(op, x, y))

    def _picture(self, at: float, member: int) -> Op:
        """A picture's BLOB, its IMAGE to follow in the same slot; or, pasted before, the
        IMAGE alone (a drawing, returned as one)."""
        rng = self.rng
        if self.pictures and rng.random() < PICTURE_AGAIN_CHANCE:
            digest = rng.choice(self.pictures)
            blob: Blob | None = None
        else:
            low, high = (math.log(n) for n in PICTURE_BYTES)
            size = round(math.exp(rng.uniform(low, high)))
            blob = Blob(self._next_id(member), PNG_SIGNATURE + rng.randbytes(size))
            digest = blob.digest
            self.pictures.append(digest)
        width, height = rng.choice(((200.0, 150.0), (320.0, 180.0), (120.0, 160.0)))
        home = self.regions[member]
        x, y = home.centre
        image = Image(self._next_id(member), digest, x - width / 2, y - height / 2, width, height)
        self._did(member, image)
        if blob is None:
            self.owner[image.id] = member
            self.alive.add(image.id)
            self.drawn.append((at, image.id))
            return image
        self.follow = image
        return blob

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

    def _restyle(self, member: int, candidates: list[OpId]) -> Op | None:
        if not candidates:
            return None
        rng = self.rng
        colour = rng.choice((None, member_colour(rng.randrange(8))))
        width = rng.choice((None, 1.0, 3.0, 6.0))
        fill = rng.choice((None, 0, 0x551E88E5))
        opacity = rng.choice((None, 64, 128, 255))
        if (colour, width, fill, opacity) == (None, None, None, None):
            opacity = 128  # a restyle sets something
        targets = tuple(self._pick(candidates))
        op = Restyle(self._next_id(member), targets, colour, width, fill, opacity)
        return self._did(member, op)

    def _reorder(self, member: int, candidates: list[OpId]) -> Op | None:
        if not candidates:
            return None
        place = ZPlace.FRONT if self.rng.random() < 0.6 else ZPlace.BACK
        targets = tuple(self._pick(candidates))
        return self._did(member, Reorder(self._next_id(member), targets, place))

    def _edit_text(self, member: int, candidates: list[OpId]) -> Op | None:
        labels = [c for c in candidates if c in self.labels]
        if not labels:
            return None
        rng = self.rng
        words, size = rng.choice(LABELS), rng.choice((12.0, 16.0, 24.0, 32.0))
        return self._did(member, TextEdit(self._next_id(member), rng.choice(labels), words, size))

    def _transform(self, member: int, candidates: list[OpId]) -> Op | None:
        if not candidates:
            return None
        rng = self.rng
        cx, cy = self.regions[member].centre
        if rng.random() < 0.5:
            angle = math.radians(rng.choice((15, 30, 45, 90, -30, -90)))
            a, b = math.cos(angle), math.sin(angle)
            matrix = (a, b, -b, a, cx - a * cx + b * cy, cy - b * cx - a * cy)
        else:
            kx, ky = rng.choice((0.5, 0.8, 1.25, 2.0)), rng.choice((0.5, 1.0, 1.5))
            matrix = (kx, 0.0, 0.0, ky, cx - kx * cx, cy - ky * cy)
        targets = tuple(self._pick(candidates))
        return self._did(member, Transform(self._next_id(member), targets, matrix))

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

    def _anyones(self, at: float, member: int) -> list[OpId]:
        """One's own recent drawings, or (a third of the time) someone else's."""
        return self._recent(at, member, mine=self.rng.random() >= 1 / 3)

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
    if isinstance(op, Image):
        return op.x, op.y, op.x + op.width, op.y + op.height
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

    def __init__(self, session: SimSession, seed: int, mix: Mix = COLLAB) -> None:
        self.session = session
        self.seed = seed
        self.mix = mix
        self.plan: CollabPlan | None = None
        self.presence = AppPresence(session, seed)

    def schedule(self, ops: int, start: float) -> float:
        """Plan ``ops`` ops and schedule them from virtual time ``start``; returns the time of
        the last."""
        session = self.session
        self.plan = collab_plan([p.member_id for p in session.peers], ops, self.seed, self.mix)
        for planned in self.plan.ops:
            session.network.schedule(
                start + planned.at, partial(session.send_op, planned.member, planned.op)
            )
        return start + self.plan.duration

    def stop(self) -> None:
        """The members are leaving: no more presences (the app stops its timer then too)."""
        self.presence.stop()


__all__ = [
    "COLLAB",
    "EDIT",
    "MIXES",
    "CollabPlan",
    "CollabWorkload",
    "Mix",
    "PlannedOp",
    "Region",
    "anchor",
    "collab_plan",
    "regions_for",
]
