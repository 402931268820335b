"""Edits of the selection shown at once, before the transport delivers them back (as MTP does
only once a token's round comes): a restyle shows restyled, a reorder shows the objects where
it puts them, above the pending drawings sent before it; delivered, nothing moves again."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from tests.app.test_canvas import BLUE, RED, Session, pixel, rgb
from whiteboard.app.selection_edits import SelectionEdits
from whiteboard.app.strokes import Style
from whiteboard.app.tools import ToolKind
from whiteboard.board import OpId, OpKind, Shape, ZPlace

FILLED = 0xFF00C000


def square(counter: int, x: float, fill: int) -> Shape:
    return Shape(OpId(7, counter), OpKind.RECT, x, 20.0, x + 100.0, 120.0, fill, 1.0, fill)


def colour_at(session: Session) -> int:
    """The colour where the squares overlap."""
    return pixel(session.image(), 95, 70).rgb()


def shown_ids(session: Session) -> list[OpId]:
    return [item.id for item in session.canvas.scene.items()]


def test_a_pending_reorder_and_restyle_show_at_once_and_stay_when_delivered(
    qtbot: QtBot,
) -> None:
    session = Session(qtbot, immediate=False)
    canvas = session.canvas
    lower, upper = square(1, 20.0, RED), square(2, 70.0, BLUE)
    session.apply(lower)
    session.apply(upper)
    edits = SelectionEdits(canvas, canvas, lambda _: None)
    canvas.set_tool(ToolKind.SELECT)
    canvas.set_selection([lower.id])
    assert colour_at(session) == rgb(BLUE)

    assert edits.reorder(ZPlace.FRONT, step=True)
    assert edits.restyle(Style(colour=FILLED, fill=FILLED))
    assert session.board.objects()[-1].id == upper.id  # nothing delivered yet
    assert shown_ids(session) == [upper.id, lower.id]
    assert colour_at(session) == rgb(FILLED)

    session.deliver()
    assert [obj.id for obj in session.board.objects()] == [upper.id, lower.id]
    assert shown_ids(session) == [upper.id, lower.id]
    assert colour_at(session) == rgb(FILLED)
    # Sent to the back, pending: below again at once.
    assert edits.reorder(ZPlace.BACK)
    assert shown_ids(session) == [lower.id, upper.id]
    assert colour_at(session) == rgb(BLUE)
    session.deliver()
    assert shown_ids(session) == [lower.id, upper.id]
