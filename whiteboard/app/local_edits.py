"""This member's edits in flight and what the user should see of them, without Qt.

The canvas never applies its own ops: it sends them, and applies them only when the transport
delivers them back, as every other board does. Until then an op is *pending*, and the user
must see it as done, or the board blinks for a round trip: a pending drawing is painted above
every delivered object, a pending move shows its objects moved, a pending erase hides them. A
tool also *lifts* objects while a gesture is under way (the eraser dims what it will erase,
select drags what it moves): they are shown at an opacity, moved by the drag. A pending
restyle or text edit shows its object so, and a pending reorder puts its objects where it
will: to the front above everything, pending drawings sent before it included.

When the session ends with ops still pending, they are not dropped: they are *undelivered*,
kept and shown dimmed (:data:`UNDELIVERED_OPACITY`) until the next session sends them again
(whiteboard/app/undelivered.py) and delivers them back.

:class:`LocalEdits` keeps that state and answers, for any object, whether and how it is shown
(op, offset, z-order). The widget paints what it says and keeps its caches (the scene index,
the tiles, the recent overlay) in step with it. Most ghost and invisible object bugs came from
these rules, so they live here, where tests drive them without a widget; importing this
module must not import Qt (tests check it).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Mapping
from operator import itemgetter
from typing import TYPE_CHECKING

from whiteboard.board import (
    Blob,
    Board,
    BoardObject,
    DrawingOp,
    Erase,
    Move,
    Op,
    OpId,
    Reorder,
    Restyle,
    TargetedOp,
    TextEdit,
    Transform,
)
from whiteboard.board.edits import edited, reordered
from whiteboard.board.geometry import Linear, Rect, compose, mapped_rect
from whiteboard.board.ops import Matrix

if TYPE_CHECKING:
    # Types only: the scene index imports the view, which imports Qt.
    from whiteboard.app.scene_index import Shown, ZOrder

# Pending drawings sort above every delivered object: order keys are at most 2**64 - 1.
PENDING_FIRST = 2**64
# How an undelivered drawing is shown: as dim as the eraser's lifted objects, so that it reads
# as "not really on the board".
UNDELIVERED_OPACITY = 0.35


def targets(op: Op) -> tuple[OpId, ...]:
    """The objects whose showing an op changes while it is pending."""
    if isinstance(op, DrawingOp):
        return (op.id,)
    if isinstance(op, TargetedOp):
        return op.targets
    return ()


def is_pending_order(order: ZOrder) -> bool:
    """Whether a z-order is a pending drawing's (see :data:`PENDING_FIRST`)."""
    return order[0][:1] == (PENDING_FIRST,)  # a BACK z-order starts with ()


class LocalEdits:
    """The ops this member sent and has not had delivered back, in the order sent, and the
    objects a tool lifted. See the module docstring."""

    def __init__(self) -> None:
        self._pending: dict[OpId, Op] = {}  # sent, not delivered back yet, in the order sent
        # Where each pending drawing sorts among the others: the order it was sent in.
        self._pending_seq: dict[OpId, int] = {}
        self._sequence = itertools.count()
        # Derived from _pending (see _recount), so that showing an object is a lookup.
        self._erasing: Counter[OpId] = Counter()  # targets of pending erases
        self._moving: dict[OpId, tuple[float, float]] = {}  # sum of pending moves
        # The pending moves and transforms of objects with a pending transform, in order.
        self._transforming: dict[OpId, list[Move | Transform]] = {}
        # Pending restyles and text edits by target, in the order sent.
        self._restyling: dict[OpId, list[Restyle | TextEdit]] = {}
        self._reordering: dict[OpId, list[Reorder]] = {}  # pending reorders, likewise
        self._lifted: dict[OpId, float] = {}  # object -> opacity, painted above the tiles
        # Pending ops a session ended without delivering back: kept, shown dimmed, sent again.
        self._undelivered: set[OpId] = set()
        self._sent_again: set[OpId] = set()  # undelivered ops sent in the session after
        self._lift_offset = (0.0, 0.0)
        self._lift_matrix: Matrix | None = None  # a resize or turn being dragged

    # -- ops in flight ----------------------------------------------------------------------

    def __contains__(self, op_id: object) -> bool:
        """Whether ``op_id`` is pending."""
        return op_id in self._pending

    def pending_ids(self) -> tuple[OpId, ...]:
        """The pending ops, in the order sent."""
        return tuple(self._pending)

    @property
    def has_pending(self) -> bool:
        return bool(self._pending)

    @property
    def changes_delivered(self) -> bool:
        """Whether a pending erase or edit changes how delivered objects are shown."""
        return bool(
            self._erasing
            or self._moving
            or self._transforming
            or self._restyling
            or self._reordering
        )

    @property
    def reordering(self) -> Mapping[OpId, object]:
        """The objects pending reorders move (not a copy: read it only)."""
        return self._reordering

    def pending_blob(self, digest: bytes) -> bytes | None:
        """The bytes of a pending BLOB with this digest (an image pasted here, shown before
        its bytes come back delivered), None if there is none."""
        for op in self._pending.values():
            if isinstance(op, Blob) and op.digest == digest:
                return op.data
        return None

    def pending(self, op_id: OpId) -> Op | None:
        return self._pending.get(op_id)

    def send(self, op: Op, undelivered: bool = False) -> None:
        """``op`` was sent: show it as done until it is delivered or withdrawn (dimmed,
        ``undelivered``, if it is one sent again: dimmed until it is delivered back)."""
        self._pending[op.id] = op
        if undelivered:
            self._undelivered.add(op.id)
            self._sent_again.add(op.id)
        self._pending_seq[op.id] = next(self._sequence)
        self._recount()

    def withdraw(self, op_id: OpId) -> Op | None:
        """``op_id`` was delivered, or never will be: stop showing it as pending. Returns
        the op, None if it was not pending."""
        op = self._pending.pop(op_id, None)
        if op is None:
            return None
        self._pending_seq.pop(op_id, None)
        self._undelivered.discard(op_id)
        self._sent_again.discard(op_id)
        if isinstance(op, TargetedOp):
            # Only these change what _recount derives: a drawing withdrawn leaves it as it
            # is, and a recount is a pass over every pending op.
            self._recount()
        return op

    def drop_delivered(self, board: Board) -> None:
        """Withdraw the pending ops ``board`` already holds (a whole board shown afresh: a
        state loaded, a replay's jump), whose Change the canvas will never see."""
        for op_id in [i for i in self._pending if i in board]:
            del self._pending[op_id]
            self._pending_seq.pop(op_id, None)
            self._undelivered.discard(op_id)
            self._sent_again.discard(op_id)
        self._recount()

    # -- undelivered ops --------------------------------------------------------------------

    def keep_undelivered(self) -> tuple[Op, ...]:
        """The session ended: every op still pending will not be delivered back in it. They
        are kept (still shown, dimmed) to be sent again; returns them, in the order sent."""
        self._undelivered.update(self._pending)
        self._sent_again.clear()
        return self.waiting()

    def waiting(self) -> tuple[Op, ...]:
        """The undelivered ops not sent again yet, in the order sent."""
        return tuple(
            op
            for i, op in self._pending.items()
            if i in self._undelivered and i not in self._sent_again
        )

    def is_undelivered(self, op_id: OpId) -> bool:
        return op_id in self._undelivered

    @property
    def undelivered_count(self) -> int:
        """The undelivered ops still pending (sent again or not): those shown dimmed."""
        return len(self._undelivered)

    def _recount(self) -> None:
        erasing: Counter[OpId] = Counter()
        moving: dict[OpId, tuple[float, float]] = {}
        placing: dict[OpId, list[Move | Transform]] = {}
        restyling: dict[OpId, list[Restyle | TextEdit]] = {}
        reordering: dict[OpId, list[Reorder]] = {}
        for op in self._pending.values():
            if isinstance(op, Erase):
                erasing.update(op.targets)
            elif isinstance(op, Move | Transform):
                for target in op.targets:
                    placing.setdefault(target, []).append(op)
            elif isinstance(op, Restyle | TextEdit):
                for target in op.targets:
                    restyling.setdefault(target, []).append(op)
            elif isinstance(op, Reorder):
                for target in op.targets:
                    reordering.setdefault(target, []).append(op)
        for target, edits in placing.items():
            moves = [edit for edit in edits if isinstance(edit, Move)]
            if len(moves) == len(edits):
                # Moves alone: their sum (in the order sent), added to wherever it is.
                mx = my = 0.0
                for move in moves:
                    mx, my = mx + move.dx, my + move.dy
                moving[target] = (mx, my)
        self._erasing = erasing
        self._moving = moving
        self._transforming = {t: e for t, e in placing.items() if t not in moving}
        self._restyling = restyling
        self._reordering = reordering

    # -- what is shown ----------------------------------------------------------------------

    def hidden(self, op_id: OpId) -> bool:
        """Whether a pending erase hides ``op_id``."""
        return bool(self._erasing.get(op_id))

    def moved_by(self, op_id: OpId) -> tuple[float, float] | None:
        """The sum of the pending moves of ``op_id``, None if there is none."""
        return self._moving.get(op_id)

    def showing(self, board: Board, op_id: OpId) -> Shown | None:
        """How ``op_id`` is to be shown: the board's object, or a pending drawing, with the
        pending erases and edits taken into account; None: not at all."""
        if self._erasing.get(op_id):
            return None
        obj = board.object(op_id)
        if obj is not None:
            return self._with_pending(obj.op, obj.dx, obj.dy, board.z_order(op_id), obj.linear)
        pending = self._pending.get(op_id)
        if not isinstance(pending, DrawingOp):
            return None
        order = ((PENDING_FIRST, self._pending_seq[op_id]), op_id)
        return self._with_pending(pending, 0.0, 0.0, order, None)

    def _with_pending(
        self, op: DrawingOp, dx: float, dy: float, order: ZOrder, linear: Linear | None
    ) -> Shown:
        """``op`` shown at (dx, dy, ``order``, ``linear``) as this member's pending moves,
        transforms, restyles, text edits and reorders of it leave it."""
        op_id = op.id
        moved = self._moving.get(op_id)
        if moved is not None:
            dx += moved[0]
            dy += moved[1]
        elif op_id in self._transforming:
            linear, dx, dy = self._placed(op_id, linear, dx, dy)
        return self._restyled(op), dx, dy, self._reordered(op_id, order), linear

    def _placed(
        self, op_id: OpId, linear: Linear | None, dx: float, dy: float
    ) -> tuple[Linear | None, float, float]:
        """Where the pending moves and transforms of ``op_id`` put it, in the order sent."""
        for edit in self._transforming[op_id]:
            if isinstance(edit, Move):
                dx, dy = dx + edit.dx, dy + edit.dy
            else:
                linear, dx, dy = compose(edit.matrix, linear, dx, dy)
        return linear, dx, dy

    def _reordered(self, op_id: OpId, order: ZOrder) -> ZOrder:
        """Where the pending reorders of ``op_id`` put it, from ``order``: as the board will,
        at a key above every delivered one, in the order they were sent."""
        for reorder in self._reordering.get(op_id, ()):
            key = ((PENDING_FIRST, self._pending_seq[reorder.id]), reorder.id)
            order = reordered(reorder.place, key, order)
        return order

    def _restyled(self, op: DrawingOp) -> DrawingOp:
        for edit in self._restyling.get(op.id, ()):
            op = edited(op, edit)
        return op

    def shown_objects(self, board: Board, objects: Iterable[BoardObject]) -> Iterator[Shown]:
        """What is to be shown, in z-order: the board's ``objects`` (in z-order) as pending
        erases, moves and restyles leave them, then the pending drawings; sorted again if
        pending reorders moved some."""
        shown = self._shown_objects(board, objects)
        if self._reordering:
            yield from sorted(shown, key=itemgetter(3))
        else:
            yield from shown

    def _shown_objects(self, board: Board, objects: Iterable[BoardObject]) -> Iterator[Shown]:
        z_order, erasing = board.z_order, self._erasing
        edited = (
            self._moving.keys()
            | self._transforming.keys()
            | self._restyling.keys()
            | self._reordering.keys()
        )
        for obj in objects:
            op = obj.op
            op_id = op.id
            if erasing.get(op_id):
                continue
            if op_id in edited:
                yield self._with_pending(op, obj.dx, obj.dy, z_order(op_id), obj.linear)
            else:
                yield op, obj.dx, obj.dy, z_order(op_id), obj.linear
        yield from self.shown_pending(board)

    def shown_pending(self, board: Board) -> Iterator[Shown]:
        """The pending drawings to show, in the order they were drawn."""
        for op_id, op in self._pending.items():
            if isinstance(op, DrawingOp):
                showing = self.showing(board, op_id)
                if showing is not None:
                    yield showing

    # -- lifted objects ---------------------------------------------------------------------

    @property
    def lifted(self) -> Mapping[OpId, float]:
        """The lifted objects and the opacity each is shown at (not a copy: read it only)."""
        return self._lifted

    @property
    def lift_offset(self) -> tuple[float, float]:
        """How far the lifted objects are shown from where they are (select's drag)."""
        return self._lift_offset

    @property
    def lift_matrix(self) -> Matrix | None:
        """The affine map the lifted objects are shown under (a resize or turn being
        dragged), None if they are only moved."""
        return self._lift_matrix

    def lift(
        self,
        lifted: Mapping[OpId, float],
        dx: float = 0.0,
        dy: float = 0.0,
        matrix: Matrix | None = None,
    ) -> None:
        """Show the objects of ``lifted`` (and only them) lifted, at their opacity, moved
        by (dx, dy), or else mapped by ``matrix``."""
        self._lifted = dict(lifted)
        self._lift_offset = (dx, dy)
        self._lift_matrix = matrix

    def keep_lifted(self, shown: Container[OpId]) -> None:
        """Forget the lifted objects no longer ``shown``."""
        self._lifted = {i: a for i, a in self._lifted.items() if i in shown}

    def opacity(self, op_id: OpId) -> float | None:
        """The opacity ``op_id`` is shown at if it is lifted or undelivered, else None."""
        lifted = self._lifted.get(op_id)
        if lifted is None and op_id in self._undelivered:
            return UNDELIVERED_OPACITY
        return lifted

    def shown_rect(self, op_id: OpId, rect: Rect) -> Rect:
        """Where an object at board rectangle ``rect`` is shown: moved by the drag if it is
        lifted."""
        if op_id not in self._lifted:
            return rect
        if self._lift_matrix is not None:
            return mapped_rect(self._lift_matrix, rect)
        dx, dy = self._lift_offset
        x0, y0, x1, y1 = rect
        return (x0 + dx, y0 + dy, x1 + dx, y1 + dy)

    def rects(self, op_id: OpId, rect: Rect) -> list[Rect]:
        """Where an object at ``rect`` is, and where it is shown if it is lifted."""
        if op_id not in self._lifted:
            return [rect]
        return [rect, self.shown_rect(op_id, rect)]


__all__ = ["PENDING_FIRST", "UNDELIVERED_OPACITY", "LocalEdits", "is_pending_order", "targets"]
