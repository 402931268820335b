"""Resizing and turning the selection with its handles (issue 20, point 1), with real mouse
events on the canvas: the drag is shown as it goes and sent as one Transform on release;
the object is then painted, hit and exported where the transform puts it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.app.test_canvas import RED, Session, is_background, pixel
from whiteboard.app.render import paint_objects
from whiteboard.app.tools import SelectTool, ToolKind
from whiteboard.board import OpId, OpKind, Shape, Transform

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
SQUARE = Shape(OpId(7, 1), OpKind.RECT, 100.0, 100.0, 160.0, 130.0, RED, 2.0, RED)


def selected(qtbot: QtBot) -> Session:
    session = Session(qtbot, size=(500, 400))
    session.apply(SQUARE)
    canvas = session.canvas
    canvas.live_chunks = False  # on release only: the live steps have their own test
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(130, 115))
    assert canvas.selection == (SQUARE.id,)
    return session


def selection_box(session: Session) -> tuple[float, float, float, float]:
    """The box the select tool puts the handles on."""
    tool = session.canvas.active_tool
    assert isinstance(tool, SelectTool)
    box = tool.selection_box()
    assert box is not None
    return box


def handle_drag(session: Session, start: QPoint, points: list[QPoint], mods=NONE) -> None:
    canvas = session.canvas
    QTest.mousePress(canvas, LEFT, mods, start)
    for point in points:
        QTest.mouseMove(canvas, point)
    QTest.mouseRelease(canvas, LEFT, mods, points[-1])


def test_dragging_a_corner_resizes_and_sends_one_transform(qtbot: QtBot) -> None:
    session = selected(qtbot)
    canvas = session.canvas
    box = selection_box(session)
    corner = QPoint(round(box[2]), round(box[3]))
    QTest.mousePress(canvas, LEFT, NONE, corner)
    QTest.mouseMove(canvas, corner + QPoint(60, 30))
    # Shown resized while dragging: painted where the larger square will be, nothing sent.
    assert session.sent == [] and not is_background(pixel(session.image(), 200, 150))
    QTest.mouseRelease(canvas, LEFT, NONE, corner + QPoint(60, 30))
    [transform] = session.sent
    assert isinstance(transform, Transform) and transform.targets == (SQUARE.id,)
    obj = session.board.object(SQUARE.id)
    assert obj is not None and obj.linear is not None
    image = session.image()
    assert not is_background(pixel(image, 200, 150))  # inside the larger square
    assert is_background(pixel(image, 240, 200))  # beyond it
    assert session.gestures == [[transform.id]]


def test_a_turned_object_is_hit_where_it_is_shown(qtbot: QtBot) -> None:
    session = selected(qtbot)
    canvas = session.canvas
    box = selection_box(session)
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    above = QPoint(round(cx), round(box[1] - 24))
    right = QPoint(round(box[2] + 40), round(cy))
    handle_drag(session, above, [above + QPoint(20, 5), right], SHIFT)  # a quarter turn
    [transform] = session.sent
    assert transform.matrix[:4] == (0.0, 1.0, -1.0, 0.0)  # type: ignore[union-attr]
    # Turned, the 60x30 square stands 30 wide and 60 high about the same middle.
    canvas.set_selection([])
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(round(cx), round(cy + 25)))
    assert canvas.selection == (SQUARE.id,)  # inside the turned square, outside the first
    canvas.set_selection([])
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(round(cx + 25), round(cy)))
    assert canvas.selection == ()  # inside the first square, outside the turned one
    # Exported (and in a Spark frame) as shown: paint_objects applies the placement.
    image = QImage(500, 400, QImage.Format.Format_ARGB32)
    image.fill(0xFFFFFFFF)
    painter = QPainter(image)
    paint_objects(painter, session.board.objects(), QRectF(0, 0, 500, 400))
    painter.end()
    assert image.pixelColor(round(cx), round(cy + 25)).rgb() != 0xFFFFFFFF
    assert image.pixelColor(round(cx + 25), round(cy)).rgb() == 0xFFFFFFFF


def test_escape_drops_a_resize(qtbot: QtBot) -> None:
    session = selected(qtbot)
    canvas = session.canvas
    QTest.mousePress(canvas, LEFT, NONE, QPoint(161, 131))
    QTest.mouseMove(canvas, QPoint(250, 200))
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(250, 200))
    assert session.sent == [] and canvas.lifted_opacity(SQUARE.id) is None


def test_live_steps_go_out_while_dragging_and_make_the_whole_map_together(
    qtbot: QtBot,
) -> None:
    """With live chunks on (RMP), each live tick sends the step since the last one: others
    watch the resize; together the steps make what one op would, one undo step; Escape
    sends the step back to where it began."""
    session = selected(qtbot)
    canvas = session.canvas
    canvas.live_chunks = True
    QTest.mousePress(canvas, LEFT, NONE, QPoint(161, 131))  # the bottom-right handle
    QTest.mouseMove(canvas, QPoint(191, 146))
    canvas.flush_live_chunk()  # as the live timer does, every 50 ms
    QTest.mouseMove(canvas, QPoint(221, 161))
    canvas.flush_live_chunk()
    canvas.flush_live_chunk()  # nothing new: nothing sent
    assert len(session.sent) == 2  # while the button is still down
    QTest.mouseMove(canvas, QPoint(251, 176))
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(251, 176))
    assert len(session.sent) == 3 and session.gestures == [[op.id for op in session.sent]]
    obj = session.board.object(SQUARE.id)
    assert obj is not None and obj.linear is not None
    # The box (the square and its pen: 62 by 32) dragged 90 right and 45 down, in 3 steps.
    assert obj.linear == pytest.approx((152 / 62, 0.0, 0.0, 77 / 32))
    # A second drag, dropped with Escape after a live step: back where it was.
    before = session.board.object(SQUARE.id)
    box = selection_box(session)
    corner = QPoint(round(box[2]), round(box[3]))
    QTest.mousePress(canvas, LEFT, NONE, corner)
    QTest.mouseMove(canvas, corner + QPoint(40, 40))
    canvas.flush_live_chunk()
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    QTest.mouseRelease(canvas, LEFT, NONE, corner + QPoint(40, 40))
    after = session.board.object(SQUARE.id)
    assert before is not None and after is not None
    assert after.linear == pytest.approx(before.linear)
    assert (after.dx, after.dy) == pytest.approx((before.dx, before.dy))


def test_a_dragged_selection_moves_in_live_steps_and_escape_takes_them_back(
    qtbot: QtBot,
) -> None:
    session = selected(qtbot)
    canvas = session.canvas
    canvas.live_chunks = True
    QTest.mousePress(canvas, LEFT, NONE, QPoint(130, 115))  # on the square: a move
    QTest.mouseMove(canvas, QPoint(150, 125))
    canvas.flush_live_chunk()  # as the live timer does
    QTest.mouseMove(canvas, QPoint(170, 135))
    canvas.flush_live_chunk()
    assert [(op.dx, op.dy) for op in session.sent] == [(20.0, 10.0), (20.0, 10.0)]  # type: ignore[union-attr]
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(175, 135))
    assert [(op.dx, op.dy) for op in session.sent][-1] == (5.0, 0.0)  # type: ignore[union-attr]
    assert session.gestures == [[op.id for op in session.sent]]
    obj = session.board.object(SQUARE.id)
    assert obj is not None and (obj.dx, obj.dy) == (45.0, 20.0)
    # Dropped with Escape after a live step: sent back to where the drag began.
    QTest.mousePress(canvas, LEFT, NONE, QPoint(175, 135))
    QTest.mouseMove(canvas, QPoint(215, 135))
    canvas.flush_live_chunk()
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(215, 135))
    obj = session.board.object(SQUARE.id)
    assert obj is not None and (obj.dx, obj.dy) == (45.0, 20.0)
    assert canvas.lifted_opacity(SQUARE.id) is None
