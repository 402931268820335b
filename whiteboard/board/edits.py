"""What the ops that edit an object do to it, one op at a time: a restyle or a text edit
to its drawing op, a reorder to its place in the z-order. The board folds an object's edits
in key order (whiteboard/board/model.py); the canvas shows its own edits in flight with the
same functions (whiteboard/app/local_edits.py), so both agree on what an edit looks like.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from whiteboard.board.ops import (
    MAX_COLOUR,
    DrawingOp,
    Image,
    OpId,
    Restyle,
    Shape,
    Stroke,
    Text,
    TextEdit,
    ZPlace,
)

# Where an object sits in the z-order, compared as a tuple: bottom first. An object never
# reordered sits at its drawing op's sort key, ``(order_key, op_id)``, as the board sorts ops.
# A REORDER at sort key ``R`` puts it at
#
# * FRONT: ``(R.order_key, R.op_id, previous)``: above every object whose z-order starts
#   with a smaller key (all drawn before R, and those brought to the front before R), below
#   those drawn after R;
# * BACK: ``((), inverted(R), previous)``: ``()`` sorts below every order key (they hold at
#   least one int), and the inverted key puts a later BACK below an earlier one.
#
# ``previous`` is the object's z-order before the reorder, so that the targets of one
# reorder keep their order among themselves. Each z-order is unique: it holds a sort key
# no other object's holds at that level.
ZOrder = tuple[Any, ...]

# Greater than any negated part of an order key (they are at least -2**63): ends an
# inverted key, so that a key that is a prefix of another inverts to the greater one.
_INVERTED_END = 2**64


def reordered(place: ZPlace, sort_key: tuple[tuple[int, ...], OpId], previous: ZOrder) -> ZOrder:
    """The z-order of an object at ``previous`` after a REORDER at ``sort_key``."""
    key, op_id = sort_key
    if place is ZPlace.FRONT:
        return (key, op_id, previous)
    inverted = ((*(-part for part in key), _INVERTED_END), (-op_id[0], -op_id[1]))
    return ((), inverted, previous)


def _with_alpha(colour: int, opacity: int) -> int:
    return (colour & 0x00FFFFFF) | (opacity << 24)


def edited(op: DrawingOp, edit: Restyle | TextEdit) -> DrawingOp:
    """``op`` with a restyle or a text edit applied; ``op`` itself if nothing changes."""
    if isinstance(edit, Restyle):
        return restyled(op, edit)
    if not isinstance(op, Text) or (op.text, op.font_size) == (edit.text, edit.font_size):
        return op
    return dataclasses.replace(op, text=edit.text, font_size=edit.font_size)


def restyled(op: DrawingOp, restyle: Restyle) -> DrawingOp:
    """``op`` with ``restyle`` applied: the fields it sets that ``op`` has; ``op`` itself
    if nothing changes. A fill of 0 means no fill, so opacity leaves it at 0."""
    if isinstance(op, Image):
        # An image has no colours of its own: only its opacity is restyled.
        if restyle.opacity is None or restyle.opacity == op.opacity:
            return op
        return dataclasses.replace(op, opacity=restyle.opacity)
    changes: dict[str, Any] = {}
    colour = op.colour if restyle.colour is None else restyle.colour
    if isinstance(op, Shape):
        fill = op.fill if restyle.fill is None else restyle.fill
        if restyle.opacity is not None and fill:
            fill = _with_alpha(fill, restyle.opacity)
        if fill != op.fill:
            changes["fill"] = fill
    if restyle.opacity is not None:
        colour = _with_alpha(colour, restyle.opacity)
    if colour != op.colour:
        changes["colour"] = colour
    if restyle.width is not None and isinstance(op, Stroke | Shape) and restyle.width != op.width:
        changes["width"] = restyle.width
    size = restyle.font_size
    if size is not None and isinstance(op, Text) and size != op.font_size:
        changes["font_size"] = size
    if not changes:
        return op
    return dataclasses.replace(op, **changes)


def opacity_of(colour: int) -> int:
    """The opacity (0..255) of an ARGB colour."""
    return (colour & MAX_COLOUR) >> 24


__all__ = ["ZOrder", "edited", "opacity_of", "reordered", "restyled"]
