"""Undo and redo of one's own actions, never anyone else's.

Users of shared whiteboards asked for exactly this (Excalidraw #7353, Drawpile #986): Ctrl+Z
takes back *my* last action even when others drew since. The board model already refuses an
UNDO aimed at another author's op (docs/board-model.md, "In effect"), so this is about which
of my ops to aim at: the last *gesture* I made (a stroke sent as several live chunks, an erase
of several objects, a move, a clear) is undone as a whole, by one UNDO op per op of the gesture,
and redone by REDO ops.

Qt-free: it only decides which ops to send; the window sends them like any other op, and the
board's state changes when they are delivered back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from whiteboard.board import Board, OpId, Redo, Undo

MAX_GESTURES = 1000  # undo depth; the oldest gestures drop off


@dataclass(frozen=True, slots=True)
class Gesture:
    """One user action: the ids of the ops it sent, all by this member."""

    ops: tuple[OpId, ...]


class History:
    def __init__(self, author: int) -> None:
        self.author = author
        self._undo: list[Gesture] = []
        self._redo: list[Gesture] = []

    def record(self, ops: Sequence[OpId]) -> None:
        """A new action of ours: it can be undone, and what was undone can no longer be
        redone (the usual linear history)."""
        own = tuple(op for op in ops if op.author == self.author)
        if not own:
            return
        self._undo.append(Gesture(own))
        del self._undo[:-MAX_GESTURES]
        self._redo.clear()

    def forget(self, op_id: OpId) -> None:
        """``op_id`` was never sent (the transport refused it): drop it from its gesture."""
        for stack in (self._undo, self._redo):
            for index, gesture in enumerate(stack):
                if op_id in gesture.ops:
                    rest = tuple(op for op in gesture.ops if op != op_id)
                    if rest:
                        stack[index] = Gesture(rest)
                    else:
                        del stack[index]
                    return

    def can_undo(self, board: Board) -> bool:
        return self._next(self._undo, board, undone=False) is not None

    def can_redo(self, board: Board) -> bool:
        return self._next(self._redo, board, undone=True) is not None

    def undo(self, board: Board, next_id: Callable[[], OpId]) -> list[Undo]:
        """UNDO ops for our latest gesture still in effect on ``board`` (empty if none)."""
        gesture = self._next(self._undo, board, undone=False)
        if gesture is None:
            return []
        self._undo.remove(gesture)
        self._redo.append(gesture)
        return [Undo(next_id(), target) for target in gesture.ops]

    def redo(self, board: Board, next_id: Callable[[], OpId]) -> list[Redo]:
        gesture = self._next(self._redo, board, undone=True)
        if gesture is None:
            return []
        self._redo.remove(gesture)
        self._undo.append(gesture)
        return [Redo(next_id(), target) for target in gesture.ops]

    @staticmethod
    def _next(stack: list[Gesture], board: Board, undone: bool) -> Gesture | None:
        """The newest gesture that undo (or redo) would change. A gesture none of whose ops
        has been delivered yet is still a candidate (it is on its way); one whose every
        delivered op is already as undo would leave it (say, undone twice from two windows of
        ours) is skipped."""
        for gesture in reversed(stack):
            delivered = [op for op in gesture.ops if op in board]
            if not delivered or any(board.in_effect(op) != undone for op in delivered):
                return gesture
        return None


__all__ = ["MAX_GESTURES", "Gesture", "History"]
