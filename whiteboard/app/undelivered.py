"""Ops a session ended without delivering back, and how the next session sends them again.

Qt-free. No op a member drew is dropped in silence (issue 17): when the transport finishes
(the session ended, the member left or switched session) with ops still pending, they are kept
(:meth:`~whiteboard.app.local_edits.LocalEdits.keep_undelivered`), shown dimmed, recorded in
the session log (UNDELIVERED records, docs/session-log.md), and sent again once the member is
in a session again and ``Ready``.

An op's id names its author, the member id of the session it was drawn in, and a replica
refuses an op whose author is not its sender. A new session has a new member id (a new
instantiation needs a new id, RFC 1301 §3.1.1), so an op sent again is *re-issued*: a new id
from the new session, and the erases, moves, undos and redos among the kept ops made to name
the re-issued drawings. An op the new session's board already has (it reached the others
before the end, and came back with the board state or carried, whiteboard/carry.py) is not
sent again. A kept op that names an object the board lacks (an erase or a move of something
gone) does nothing there: the board model files it and changes nothing; an undo or redo of an
op delivered in the old session does nothing either (a member may only undo its own ops, and
the old session's id is another author): those are the limits of sending again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass

from whiteboard.board import Op, OpId, Redo, TargetedOp, TextEdit, Undo

# The tooltip of an undelivered drawing, and the notice of how many wait.
UNDELIVERED_TIP = (
    "Not delivered: the session ended before the others got this drawing. "
    "It will be sent when you join or host a session again."
)


@dataclass(frozen=True, slots=True)
class Reissue:
    """What sending the kept ops again means in a new session."""

    ops: tuple[tuple[OpId, Op], ...]  # (the kept op's id, the op re-issued), in the order drawn
    already_there: tuple[OpId, ...]  # kept ops the board has: delivered after all


def reissue(kept: Iterable[Op], board: Container[OpId], next_id: Callable[[], OpId]) -> Reissue:
    """The kept ops, in the order drawn, re-issued with ids from ``next_id`` (the new
    session's), except those ``board`` already holds; references among them follow."""
    renamed: dict[OpId, OpId] = {}
    ops: list[tuple[OpId, Op]] = []
    there: list[OpId] = []
    for op in kept:
        if op.id in board:
            there.append(op.id)
            continue
        new_id = renamed[op.id] = next_id()
        ops.append((op.id, _renamed(op, new_id, renamed)))
    return Reissue(tuple(ops), tuple(there))


def _renamed(op: Op, new_id: OpId, renamed: dict[OpId, OpId]) -> Op:
    if isinstance(op, Undo | Redo | TextEdit):
        return dataclasses.replace(op, id=new_id, target=renamed.get(op.target, op.target))
    if isinstance(op, TargetedOp):
        # The ids are distinct before renaming, and renaming maps distinct ids to distinct new
        # ones (never to an old id: new ids carry the new session's member id).
        targets = tuple(renamed.get(t, t) for t in op.targets)
        return dataclasses.replace(op, id=new_id, targets=targets)
    return dataclasses.replace(op, id=new_id)


def waiting_notice(count: int) -> str:
    """What the status says while ``count`` drawings wait to be sent again ("" for none)."""
    if count <= 0:
        return ""
    drawings = "1 drawing" if count == 1 else f"{count} drawings"
    return f"{drawings} not delivered: they will be sent when you join or host again"


__all__ = ["UNDELIVERED_TIP", "Reissue", "reissue", "waiting_notice"]
