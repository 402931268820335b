"""Showing a replay without some members, or with some members' work picked out.

Hiding a member shows the board *as if their ops had never been delivered*: their drawings are
gone, and so are their erases, moves and undos (what they erased of others' stays). This is a
different board from the live one, built from the steps without theirs; highlighting is only a
hint to whoever paints the board.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from whiteboard.board import Board, BoardObject
from whiteboard.replay.timeline import OpStep, StateStep, Step


@dataclass(frozen=True, slots=True)
class MemberFilter:
    hidden: frozenset[int] = frozenset()
    highlighted: frozenset[int] = frozenset()

    def shows(self, author: int) -> bool:
        return author not in self.hidden


def without_members(steps: Sequence[Step], hidden: frozenset[int]) -> list[Step]:
    """``steps`` without the ops authored by ``hidden`` (in boards given on joining too)."""
    if not hidden:
        return list(steps)
    kept: list[Step] = []
    for step in steps:
        if isinstance(step, OpStep):
            if step.op.id.author not in hidden:
                kept.append(step)
        else:
            entries = tuple(e for e in step.entries if e[1].id.author not in hidden)
            kept.append(StateStep(step.t_us, entries, step.size))
    return kept


def highlighted_objects(board: Board, members: Iterable[int]) -> list[BoardObject]:
    """The visible objects drawn by ``members``, bottom first."""
    wanted = frozenset(members)
    if not wanted:
        return []
    return [obj for obj in board.objects() if obj.id.author in wanted]


__all__ = ["MemberFilter", "highlighted_objects", "without_members"]
