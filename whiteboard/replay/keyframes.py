"""Keyframes: the board as it was every few thousand steps, so that the board after any
number of steps is a copy of the keyframe before it plus at most that many steps.

Costs, measured on 100,000 synthetic strokes (benchmarks/bench_replay.py): applying a step
~9 us, copying a board ~0.3 us per op in it. With at most :data:`MAX_KEYFRAMES` keyframes a
seek costs a copy (<= 30 ms) and <= len/MAX_KEYFRAMES steps (~45 ms at 100,000), and the
keyframes together hold about MAX_KEYFRAMES/2 boards' worth of containers (the ops themselves
are shared by every keyframe, never copied). A board given on joining is followed by a
keyframe of its own, so that no seek has to rebuild the board around it again.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence

from whiteboard.board import Board, Change
from whiteboard.replay.timeline import OpStep, Step
from whiteboard.replica import adopted

MAX_KEYFRAMES = 20
MIN_SPACING = 1000  # steps: below this a copy costs more than replaying the steps


def spacing_for(steps: int) -> int:
    """Steps between keyframes for a timeline of ``steps``."""
    return max(MIN_SPACING, math.ceil(steps / MAX_KEYFRAMES))


def apply_step(board: Board, step: Step) -> tuple[Board, Change | None]:
    """Apply one step as the live replica did. Returns the board (a new one after a board
    given on joining, as ``Replica.load_state`` makes) and what changed (None: everything may
    have)."""
    if isinstance(step, OpStep):
        return board, board.apply(step.key, step.op)
    incoming = Board()
    for key, op in step.entries:
        incoming.apply(key, op)
    return adopted(incoming, board), None


def board_after(steps: Sequence[Step], count: int) -> Board:
    """The board after the first ``count`` steps, built from nothing (the reference the
    keyframes are tested against; slow for long logs)."""
    board = Board()
    for step in steps[:count]:
        board, _ = apply_step(board, step)
    return board


class Keyframes:
    """Keyframes of ``steps``, built as far as they are asked for (or all, by :meth:`build`).
    Keyframe boards are never handed out: callers get copies."""

    def __init__(self, steps: Sequence[Step], spacing: int | None = None) -> None:
        if spacing is not None and spacing < 1:
            raise ValueError("keyframes must be at least 1 step apart")
        self.steps = steps
        self.spacing = spacing if spacing is not None else spacing_for(len(steps))
        self._counts: list[int] = [0]  # steps applied in each keyframe
        self._boards: list[Board] = [Board()]
        self._builder = Board()  # the board after self._built steps
        self._built = 0

    @property
    def counts(self) -> tuple[int, ...]:
        """The number of steps in each keyframe built so far."""
        return tuple(self._counts)

    def build(self, upto: int | None = None) -> None:
        """Make the keyframes up to step ``upto`` (all of them by default)."""
        goal = len(self.steps) if upto is None else min(upto, len(self.steps))
        steps, builder, built = self.steps, self._builder, self._built
        while built < goal:
            step = steps[built]
            builder, _ = apply_step(builder, step)
            built += 1
            if built - self._counts[-1] >= self.spacing or not isinstance(step, OpStep):
                self._counts.append(built)
                self._boards.append(builder.copy())
        self._builder, self._built = builder, built

    def nearest(self, count: int) -> tuple[int, Board]:
        """The last keyframe at or before ``count`` steps: its step count and its board, which
        the caller must not change (copy it: :meth:`Board.become`)."""
        count = min(max(count, 0), len(self.steps))
        if count > self._counts[-1]:
            self.build(count)
        index = bisect_right(self._counts, count) - 1
        return self._counts[index], self._boards[index]

    def board_after(self, count: int) -> Board:
        """A new board: the one after the first ``count`` steps."""
        start, frame = self.nearest(count)
        board = frame.copy()
        for step in self.steps[start:count]:
            board, _ = apply_step(board, step)
        return board


__all__ = ["MAX_KEYFRAMES", "Keyframes", "apply_step", "board_after", "spacing_for"]
