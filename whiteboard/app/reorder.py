"""Which objects a change of the selection's z-order names (issue 20, point 4). Qt-free.

The board knows two reorders, to the front and to the back, each keeping its targets' order
among themselves (whiteboard/board/edits.py): they converge with late inserts because they
depend on nothing but their targets. A step forward or backward depends on the objects
around the selection, so it is decided here, where it is asked for, and sent as one of
those two: the selection goes just above the next object above it that it overlaps, by
bringing to the front the selection and every object above that one that overlaps the
selection (they stay above it, and what does not overlap the selection cannot be seen to
change order). A step backward is the mirror image. Drawpile, Excalidraw and tldraw step past
the next overlapping object in the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from whiteboard.board import OpId, ZPlace
from whiteboard.board.edits import ZOrder
from whiteboard.board.geometry import Rect


@dataclass(frozen=True, slots=True)
class Placed:
    """An object as shown: its id, z-order and rectangle."""

    id: OpId
    order: ZOrder
    rect: Rect


def _overlaps(a: Rect, b: Rect) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def reorder_targets(
    shown: Sequence[Placed], selected: Collection[OpId], place: ZPlace, step: bool
) -> list[OpId]:
    """The targets, in z-order (bottom first), of the reorder to ``place`` that brings the
    ``selected`` objects among ``shown`` (in z-order) to the front or back, or, if ``step``,
    one step forward or backward; [] when there is nothing to change (the selection is
    already where it would go, or nothing of it is shown)."""
    chosen = [item for item in shown if item.id in selected]
    if not chosen:
        return []
    rects = [item.rect for item in chosen]

    def overlapping(item: Placed) -> bool:
        return item.id not in selected and any(_overlaps(item.rect, rect) for rect in rects)

    front = place is ZPlace.FRONT
    if not step:
        others = [item for item in shown if item.id not in selected]
        # Already above (below) every other object: a reorder would change nothing.
        if not others or (
            min(c.order for c in chosen) > max(o.order for o in others)
            if front
            else max(c.order for c in chosen) < min(o.order for o in others)
        ):
            return []
        return [item.id for item in chosen]
    if front:
        top = max(item.order for item in chosen)
        above = [item for item in shown if item.order > top and overlapping(item)]
        if not above:
            return []
        passed = above[0].order  # the lowest object above the selection that it overlaps
        return [
            item.id
            for item in shown
            if item.id in selected or (item.order > passed and overlapping(item))
        ]
    bottom = min(item.order for item in chosen)
    below = [item for item in shown if item.order < bottom and overlapping(item)]
    if not below:
        return []
    passed = below[-1].order  # the highest object below the selection that it overlaps
    return [
        item.id
        for item in shown
        if item.id in selected or (item.order < passed and overlapping(item))
    ]


__all__ = ["Placed", "reorder_targets"]
