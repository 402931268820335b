"""A replay in progress: the board shown at the current moment, moved to any other moment.

:class:`Replay` keeps **one** :class:`~whiteboard.board.Board` object for its whole life and
changes it in place, so that a widget showing it (the canvas keeps per-object caches of what
it shows) is told what changed rather than handed a new board: moving forward applies the
steps in between and reports each :class:`~whiteboard.board.Change`, as the live app does;
moving back, or far forward, copies the nearest keyframe into it and reports the difference
between the two boards as one Change. A move that changes much is reported as None instead:
"show it afresh" (see :data:`MAX_CHANGES`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from whiteboard.board import (
    Blob,
    Board,
    BoardObject,
    Change,
    Clear,
    Op,
    OpId,
    Redo,
    TargetedOp,
    Undo,
)
from whiteboard.replay.filter import MemberFilter, without_members
from whiteboard.replay.keyframes import Keyframes, apply_step
from whiteboard.replay.timeline import OpStep, Step, Timeline

# The op id of a Change that stands for a jump, not for one op.
JUMP = OpId(0, 0)
# Past these, a move is reported as None: "show the board afresh". A widget showing the board
# repaints what each Change touches at once (the canvas does: right for the live app's one
# op at a time, each repainted where it paints), and hundreds of changes at once cost far
# more than that. Shown afresh, the canvas compares the whole board with what it shows
# (~50 ms for 87,000 objects, plus ~5 us an object that differs) and renders the tiles where
# much changed anew, spread over its frames.
MAX_CHANGES = 64  # steps applied by one forward move (16x plays ~2 a frame)
MAX_JUMP_OBJECTS = 16  # objects that differ after a jump (the canvas's own limit of areas)

# What a move did to the board: each Change in turn, or None for "show it afresh".
Update = list[Change] | None


@dataclass(frozen=True, slots=True)
class _Track:
    """The steps replayed for one set of hidden members, with their keyframes."""

    hidden: frozenset[int]
    steps: tuple[Step, ...]
    times: tuple[int, ...]
    keyframes: Keyframes


class Replay:
    """See the module docstring. ``spacing``: steps between keyframes (default: by length)."""

    def __init__(self, timeline: Timeline, spacing: int | None = None) -> None:
        self.timeline = timeline
        self.board = Board()
        self.position_us = timeline.start_us
        self._spacing = spacing
        self._filter = MemberFilter()
        self._full = self._track(frozenset())
        self._current = self._full
        self._other: _Track | None = None  # the last filtered track, kept for toggling back
        self._applied = 0  # steps of the current track applied to self.board
        self._ops = _ops_by_id(timeline.steps)  # what an undo or redo names

    def _track(self, hidden: frozenset[int]) -> _Track:
        steps = tuple(without_members(self.timeline.steps, hidden))
        times = tuple(step.t_us for step in steps)
        return _Track(hidden, steps, times, Keyframes(steps, self._spacing))

    # -- reading ----------------------------------------------------------------------------

    @property
    def filter(self) -> MemberFilter:
        return self._filter

    @property
    def keyframes(self) -> Keyframes:
        return self._current.keyframes

    @property
    def steps_applied(self) -> int:
        return self._applied

    @property
    def step_count(self) -> int:
        return len(self._current.steps)

    def prepare(self) -> None:
        """Build every keyframe now (opening a recording) rather than on the first seeks."""
        self._current.keyframes.build()

    def board_at(self, t_us: int) -> Board:
        """A new board: the one shown at ``t_us`` (with the current filter)."""
        return self._current.keyframes.board_after(self._count_at(t_us))

    def step_times(self) -> tuple[int, ...]:
        """When each step of the current track happens."""
        return self._current.times

    # -- moving -----------------------------------------------------------------------------

    def seek(self, t_us: int) -> Update:
        """Show the board at ``t_us`` (clamped to the recording): after every step made at or
        before it."""
        self.position_us = self.timeline.clamp(t_us)
        return self._go_to(self._count_at(self.position_us))

    def set_filter(self, member_filter: MemberFilter) -> Update:
        """Hide and highlight members. Hiding builds that track's keyframes as far as needed
        (all of them, the first time the end is shown)."""
        previous, self._filter = self._filter, member_filter
        if member_filter.hidden == previous.hidden:
            return []
        before = {obj.id: obj for obj in self.board.objects()}
        self._current = self._track_for(member_filter.hidden)
        self._restore(self._count_at(self.position_us))
        after = {obj.id for obj in self.board.objects()}
        return _difference(before, self.board, before.keys() | after)

    def _track_for(self, hidden: frozenset[int]) -> _Track:
        if not hidden:
            return self._full
        if self._other is None or self._other.hidden != hidden:
            self._other = self._track(hidden)
        return self._other

    def _count_at(self, t_us: int) -> int:
        return bisect_right(self._current.times, t_us)

    def _go_to(self, count: int) -> Update:
        if count == self._applied:
            return []
        start, _ = self._current.keyframes.nearest(count)
        if self._applied < count and self._applied >= start:
            return self._forward(count)  # fewer steps than from the keyframe, and no copy
        low, high = sorted((self._applied, count))
        touched = self._touched(self._current.steps[low:high])
        before = {op_id: self.board.object(op_id) for op_id in touched or ()}
        self._restore(count)
        return None if touched is None else _difference(before, self.board, touched)

    def _touched(self, steps: Sequence[Step]) -> set[OpId] | None:
        """The objects whose showing ``steps`` may change: the boards before and after them
        (as prefixes of one track) differ in these at most. None: too many, or any."""
        if len(steps) > MAX_CHANGES:
            return None
        touched: set[OpId] = set()
        for step in steps:
            if not isinstance(step, OpStep) or isinstance(step.op, Blob):
                # A board given on joining; or a picture's bytes, which change no object but
                # how the images showing them are painted: the board is shown afresh.
                return None
            op: Op | None = step.op
            if isinstance(op, Undo | Redo):
                op = self._ops.get(op.target)
                if op is None or isinstance(op, Undo | Redo):
                    continue  # an undo of nothing here, or of an undo: no effect
            assert op is not None
            if isinstance(op, Clear):
                return None
            if isinstance(op, TargetedOp):
                touched.update(op.targets)
            else:
                touched.add(op.id)
        return touched

    def _forward(self, count: int) -> Update:
        changes: list[Change] = []
        redraw = count - self._applied > MAX_CHANGES
        board = self.board
        for step in self._current.steps[self._applied : count]:
            result, change = apply_step(board, step)
            if result is not board:
                board.become(result)  # keep the one board object the widgets show
                redraw = True
            elif change is not None:
                changes.append(change)
        self._applied = count
        return None if redraw else changes

    def _restore(self, count: int) -> None:
        start, frame = self._current.keyframes.nearest(count)
        board = self.board
        board.become(frame)
        for step in self._current.steps[start:count]:
            result, _ = apply_step(board, step)
            if result is not board:
                board.become(result)
        self._applied = count


def _ops_by_id(steps: Sequence[Step]) -> dict[OpId, Op]:
    """Every op of the timeline by its id (the first, as the board keeps the first)."""
    ops: dict[OpId, Op] = {}
    for step in steps:
        for _, op in step.entries:
            ops.setdefault(op.id, op)
    return ops


def _difference(
    before: Mapping[OpId, BoardObject | None], board: Board, candidates: Iterable[OpId]
) -> Update:
    """The Change of ``candidates`` from ``before`` to ``board`` (None if many changed)."""
    added: list[OpId] = []
    removed: list[OpId] = []
    changed: list[OpId] = []
    for op_id in candidates:
        old, new = before.get(op_id), board.object(op_id)
        if old is None and new is not None:
            added.append(op_id)
        elif new is None and old is not None:
            removed.append(op_id)
        elif old is not new and old != new:
            changed.append(op_id)
    total = len(added) + len(removed) + len(changed)
    if total == 0:
        return []
    if total > MAX_JUMP_OBJECTS:
        return None
    key = board.key
    return [
        Change(
            JUMP,
            late=False,
            duplicate=False,
            added=tuple(sorted(added, key=lambda i: (key(i), i))),
            removed=tuple(sorted(removed)),
            changed=tuple(sorted(changed, key=lambda i: (key(i), i))),
        )
    ]


__all__ = ["JUMP", "Replay", "Update"]
