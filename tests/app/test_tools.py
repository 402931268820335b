"""Each tool with real mouse and keyboard events: the op it sends, read back through the
board, what it shows while at work, and gestures for the undo history."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.app.test_canvas import BLUE, RED, Session, drag, is_background, pixel, rgb
from whiteboard.app.canvas import DEFAULT_FONT_SIZE
from whiteboard.app.strokes import erase_ops, max_targets_per_op, move_ops
from whiteboard.app.tools import EraserTool, TextTool, ToolKind
from whiteboard.board import (
    Erase,
    Move,
    OpId,
    OpKind,
    Shape,
    Stroke,
    Text,
    Tool,
    Transform,
    encode_op,
)
from whiteboard.transport.raw import RawCore

LEFT = Qt.MouseButton.LeftButton
NONE = Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
GREEN = 0xFF00C000
# A transform's six floats (each 9 bytes, whatever its value).
_FULL_MATRIX = (0.1, 0.1, 0.1, -0.1, 0.1, 0.1)


def shift_drag(canvas: object, points: list[tuple[int, int]]) -> None:
    QTest.mousePress(canvas, LEFT, SHIFT, QPoint(*points[0]))
    for x, y in points[1:-1]:
        QTest.mouseMove(canvas, QPoint(x, y))
    QTest.mouseRelease(canvas, LEFT, SHIFT, QPoint(*points[-1]))


def only_object(session: Session) -> object:
    [obj] = session.board.objects()
    return obj.op


# -- choosing ---------------------------------------------------------------------------------


def test_set_tool_switches_and_signals(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    assert canvas.tool is ToolKind.PEN
    with qtbot.waitSignal(canvas.tool_changed) as signal:
        canvas.set_tool(ToolKind.RECT)
    assert signal.args == [ToolKind.RECT]
    assert canvas.tool is ToolKind.RECT
    canvas.tool = ToolKind.ERASER  # the property does the same
    assert isinstance(canvas.active_tool, EraserTool)


# -- pen and highlighter ------------------------------------------------------------------------


def test_pen_and_highlighter_make_strokes_with_the_current_style(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.colour, canvas.pen_width = BLUE, 5.0
    drag(canvas, [(10, 10), (60, 10), (60, 60)])
    canvas.set_tool(ToolKind.HIGHLIGHTER)
    canvas.colour, canvas.pen_width = RED, 12.0
    drag(canvas, [(100, 100), (200, 100)])
    pen, marker = [obj.op for obj in session.board.objects()]
    assert isinstance(pen, Stroke) and isinstance(marker, Stroke)
    assert (pen.colour, pen.width, pen.tool) == (BLUE, 5.0, Tool.PEN)
    assert pen.points == (10.0, 10.0, 60.0, 10.0, 60.0, 60.0)
    assert (marker.colour, marker.width, marker.tool) == (RED, 12.0, Tool.HIGHLIGHTER)
    assert session.gestures == [[pen.id], [marker.id]]


def test_pen_draws_in_board_coordinates_when_zoomed(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.zoom_by(2.0, QPointF(0.0, 0.0))
    canvas.pan_by(10.0, 20.0)
    drag(canvas, [(30, 40), (70, 40)])
    stroke = only_object(session)
    assert isinstance(stroke, Stroke) and stroke.points == (10.0, 10.0, 30.0, 10.0)


def test_live_chunks_are_sent_while_drawing_and_join_up(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    QTest.mousePress(canvas, LEFT, NONE, QPoint(10, 100))
    for x in range(20, 110, 10):
        QTest.mouseMove(canvas, QPoint(x, 100 + (x % 20)))
    canvas.flush_live_chunk()  # what the live timer does every live_interval_ms
    first = list(session.sent)
    assert len(first) == 1 and session.board.object(first[0].id) is not None
    canvas.flush_live_chunk()  # nothing new: nothing sent
    assert session.sent == first
    for x in range(110, 210, 10):
        QTest.mouseMove(canvas, QPoint(x, 100 + (x % 20)))
    canvas.flush_live_chunk()
    QTest.mouseMove(canvas, QPoint(220, 150))
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(230, 160))
    chunks = [op for op in session.sent if isinstance(op, Stroke)]
    assert len(chunks) == 3
    for before, after in itertools.pairwise(chunks):
        assert before.points[-2:] == after.points[:2]  # they share their joints
    assert chunks[0].points[:2] == (10.0, 100.0)
    assert chunks[-1].points[-2:] == (230.0, 160.0)  # the release point ends the stroke
    assert session.gestures == [[op.id for op in chunks]]
    assert canvas.pending_ops() == ()


def test_the_live_timer_sends_chunks_during_a_drag(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.live_interval_ms = 10
    QTest.mousePress(canvas, LEFT, NONE, QPoint(10, 10))
    QTest.mouseMove(canvas, QPoint(50, 10))
    # Events are processed until the timer has fired: the stroke so far is out before release.
    qtbot.waitUntil(lambda: len(session.sent) == 1, timeout=5000)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(50, 10))
    assert len(session.sent) == 1  # nothing new since the chunk


def test_without_live_chunks_the_stroke_goes_on_release(qtbot: QtBot) -> None:
    session = Session(qtbot, immediate=False)
    canvas = session.canvas
    canvas.live_chunks = False
    QTest.mousePress(canvas, LEFT, NONE, QPoint(10, 10))
    QTest.mouseMove(canvas, QPoint(50, 10))
    canvas.flush_live_chunk()
    assert session.sent == []
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(90, 30))
    [stroke] = session.sent
    assert isinstance(stroke, Stroke) and stroke.points == (10.0, 10.0, 50.0, 10.0, 90.0, 30.0)
    # Not delivered yet, but shown.
    assert not is_background(pixel(session.image(), 30, 10))


# -- shapes -----------------------------------------------------------------------------------


def test_rectangle_shows_its_outline_and_fill(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.RECT)
    canvas.colour, canvas.pen_width = RED, 4.0
    drag(canvas, [(40, 50), (100, 80), (140, 130)])
    rect = only_object(session)
    assert isinstance(rect, Shape) and rect.kind is OpKind.RECT
    assert (rect.x1, rect.y1, rect.x2, rect.y2) == (40.0, 50.0, 140.0, 130.0)
    assert (rect.colour, rect.width, rect.fill) == (RED, 4.0, 0)
    image = session.image()
    assert pixel(image, 40, 90).rgb() == rgb(RED)  # left edge
    assert pixel(image, 90, 130).rgb() == rgb(RED)  # bottom edge
    assert is_background(pixel(image, 90, 90))  # no fill
    canvas.fill = GREEN
    drag(canvas, [(200, 50), (260, 100)])
    filled = session.board.objects()[-1].op
    assert isinstance(filled, Shape) and filled.fill == GREEN
    assert pixel(session.image(), 230, 75).rgb() == rgb(GREEN)


def test_shift_makes_squares_circles_and_45_degree_lines(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.RECT)
    shift_drag(canvas, [(10, 10), (40, 90)])
    canvas.set_tool(ToolKind.ELLIPSE)
    shift_drag(canvas, [(200, 200), (150, 170)])
    canvas.set_tool(ToolKind.LINE)
    shift_drag(canvas, [(100, 100), (150, 140)])
    canvas.set_tool(ToolKind.ARROW)
    shift_drag(canvas, [(300, 100), (310, 40)])
    square, circle, line, arrow = [obj.op for obj in session.board.objects()]
    assert isinstance(square, Shape) and (square.x2, square.y2) == (90.0, 90.0)
    assert isinstance(circle, Shape) and circle.kind is OpKind.ELLIPSE
    assert (circle.x2, circle.y2) == (150.0, 150.0)
    assert isinstance(line, Shape) and line.kind is OpKind.LINE
    assert line.x2 - line.x1 == pytest.approx(line.y2 - line.y1)  # 45 degrees
    assert math.hypot(line.x2 - 100, line.y2 - 100) == pytest.approx(math.hypot(50, 40))
    assert isinstance(arrow, Shape) and arrow.kind is OpKind.ARROW
    assert arrow.x2 == pytest.approx(300.0) and arrow.y2 < 100.0  # straight up


def test_shift_pressed_during_the_drag_constrains_the_preview(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.RECT)
    QTest.mousePress(canvas, LEFT, NONE, QPoint(10, 10))
    QTest.mouseMove(canvas, QPoint(40, 90))
    QTest.keyPress(canvas, Qt.Key.Key_Shift, SHIFT)
    preview = canvas.active_tool.preview()  # type: ignore[attr-defined]
    assert (preview.x2, preview.y2) == (90.0, 90.0)
    QTest.keyRelease(canvas, Qt.Key.Key_Shift, NONE)
    preview = canvas.active_tool.preview()  # type: ignore[attr-defined]
    assert (preview.x2, preview.y2) == (40.0, 90.0)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(40, 90))
    rect = only_object(session)
    assert isinstance(rect, Shape) and (rect.x2, rect.y2) == (40.0, 90.0)


def test_a_click_with_a_shape_tool_draws_nothing_and_escape_cancels(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.ELLIPSE)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(50, 50))
    QTest.mousePress(canvas, LEFT, NONE, QPoint(10, 10))
    QTest.mouseMove(canvas, QPoint(80, 80))
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(80, 80))
    assert session.sent == [] and session.gestures == []


def test_arrow_and_line_are_drawn_and_have_no_fill(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.fill = GREEN
    canvas.colour, canvas.pen_width = BLUE, 3.0
    canvas.set_tool(ToolKind.ARROW)
    drag(canvas, [(20, 100), (200, 100)])
    arrow = only_object(session)
    assert isinstance(arrow, Shape) and arrow.fill == 0
    image = session.image()
    assert pixel(image, 100, 100).rgb() == rgb(BLUE)
    assert pixel(image, 190, 102).rgb() == rgb(BLUE)  # the head is wider than the shaft
    assert is_background(pixel(image, 150, 102))


# -- text -------------------------------------------------------------------------------------


def test_text_is_typed_in_place_and_committed_with_enter(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.TEXT)
    canvas.colour = BLUE
    canvas.zoom_by(2.0, QPointF(0.0, 0.0))
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 60))
    tool = canvas.active_tool
    assert isinstance(tool, TextTool) and tool.editor is not None
    editor = tool.editor
    assert editor.isVisible() and editor.pos() == QPoint(100, 60)
    QTest.keyClicks(editor, "Hello")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    label = only_object(session)
    assert isinstance(label, Text)
    assert (label.x, label.y, label.text) == (50.0, 30.0, "Hello")
    assert (label.colour, label.font_size) == (BLUE, DEFAULT_FONT_SIZE)
    assert tool.editor is None and session.gestures == [[label.id]]


def test_a_text_stops_growing_where_one_drawing_is_full(qtbot: QtBot) -> None:
    """Typing or pasting past what one datagram carries is refused in the editor (before,
    the text was lost when it could not be sent)."""
    session = Session(qtbot)
    canvas = session.canvas
    canvas.max_payload = 120
    canvas.set_tool(ToolKind.TEXT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 60))
    tool = canvas.active_tool
    assert isinstance(tool, TextTool) and tool.editor is not None
    editor = tool.editor
    QTest.keyClicks(editor, "x" * 200)  # typed: each key that still fits is taken
    kept = editor.text()
    assert 10 < len(kept) < 120 and kept == "x" * len(kept)
    editor.insert("more than fits")  # as a paste does: refused whole
    assert editor.text() == kept
    QTest.keyClick(editor, Qt.Key.Key_Return)
    label = only_object(session)
    assert isinstance(label, Text) and label.text == kept
    assert len(encode_op(label)) <= 120


def test_text_escape_cancels_and_a_click_elsewhere_commits(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.TEXT)
    tool = canvas.active_tool
    assert isinstance(tool, TextTool)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(20, 20))
    assert tool.editor is not None
    QTest.keyClicks(tool.editor, "draft")
    QTest.keyClick(tool.editor, Qt.Key.Key_Escape)
    assert tool.editor is None and session.sent == []
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(20, 20))
    assert tool.editor is not None
    canvas.font_size = 40.0  # the label keeps the size it was opened with
    QTest.keyClicks(tool.editor, "kept")
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(200, 200))
    label = only_object(session)
    assert isinstance(label, Text) and label.text == "kept" and label.font_size == 24.0
    assert tool.editor is None  # the click committed; the next one opens an editor
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(200, 200))
    assert tool.editor is not None
    canvas.set_tool(ToolKind.PEN)  # an empty label is not sent
    assert len(session.sent) == 1


def test_text_is_painted_once_committed(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.TEXT)
    canvas.font_size = 40.0
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(20, 20))
    tool = canvas.active_tool
    assert isinstance(tool, TextTool) and tool.editor is not None
    QTest.keyClicks(tool.editor, "MMMM")
    QTest.keyClick(tool.editor, Qt.Key.Key_Enter)
    image = session.image()
    ink = [pixel(image, x, y) for x in range(20, 120) for y in range(20, 60)]
    assert any(not is_background(colour) for colour in ink)


# -- eraser -----------------------------------------------------------------------------------


def three_strokes(session: Session) -> list[Stroke]:
    strokes = [
        Stroke(OpId(1, 1), (20.0, 50.0, 200.0, 50.0), RED, 6.0),
        Stroke(OpId(1, 2), (20.0, 100.0, 200.0, 100.0), BLUE, 6.0),
        Stroke(OpId(1, 3), (20.0, 150.0, 200.0, 150.0), GREEN, 6.0),
    ]
    for stroke in strokes:
        session.apply(stroke)
    return strokes


def test_eraser_erases_what_it_touches_with_one_op(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    red, blue, green = three_strokes(session)
    canvas.set_tool(ToolKind.ERASER)
    # A quick vertical flick: no mouse event lands on the strokes, the path between does.
    drag(canvas, [(100, 30), (100, 120)])
    [erase] = session.sent
    assert isinstance(erase, Erase) and set(erase.targets) == {red.id, blue.id}
    assert [obj.id for obj in session.board.objects()] == [green.id]
    assert session.gestures == [[erase.id]]


def test_eraser_uses_the_objects_offset_and_tests_shapes_by_their_outline(
    qtbot: QtBot,
) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    rect = Shape(OpId(1, 1), OpKind.RECT, 50.0, 50.0, 250.0, 250.0, RED, 4.0)
    moved = Stroke(OpId(1, 2), (20.0, 20.0, 60.0, 20.0), BLUE, 4.0)
    session.apply(rect)
    session.apply(moved)
    session.apply(Move(OpId(1, 3), (moved.id,), 200.0, 250.0))
    canvas.set_tool(ToolKind.ERASER)
    drag(canvas, [(150, 150), (160, 160)])  # inside the empty rectangle, away from its edge
    drag(canvas, [(30, 20), (50, 20)])  # where the stroke was before it moved
    assert session.sent == []
    drag(canvas, [(225, 262), (235, 275)])  # where it is now, below the rectangle
    [erase] = session.sent
    assert isinstance(erase, Erase) and erase.targets == (moved.id,)


def test_eraser_dims_what_it_will_erase_until_release(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    three_strokes(session)
    canvas.set_tool(ToolKind.ERASER)
    QTest.mousePress(canvas, LEFT, NONE, QPoint(100, 45))
    QTest.mouseMove(canvas, QPoint(110, 52))
    image = session.image()
    dimmed = pixel(image, 60, 50)
    assert not is_background(dimmed) and dimmed.rgb() != rgb(RED)  # faded, still there
    assert dimmed.red() == 255 and dimmed.green() > 100
    assert pixel(image, 60, 100).rgb() == rgb(BLUE)  # untouched
    QTest.keyClick(canvas, Qt.Key.Key_Escape)  # cancelled: nothing erased
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(110, 52))
    assert session.sent == []
    assert pixel(session.image(), 60, 50).rgb() == rgb(RED)


def test_a_pending_erase_hides_its_targets_until_delivered(qtbot: QtBot) -> None:
    session = Session(qtbot, immediate=False)
    canvas = session.canvas
    session.immediate = True
    red, _, _ = three_strokes(session)
    session.immediate = False
    canvas.set_tool(ToolKind.ERASER)
    drag(canvas, [(100, 40), (100, 60)])
    assert canvas.pending_ops() == (session.sent[0].id,)
    assert session.board.object(red.id) is not None
    assert is_background(pixel(session.image(), 60, 50))
    session.deliver()
    assert session.board.object(red.id) is None
    assert is_background(pixel(session.image(), 60, 50))


# -- select -----------------------------------------------------------------------------------


def test_click_selects_the_topmost_object(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    low = Shape(OpId(1, 1), OpKind.RECT, 50.0, 50.0, 150.0, 150.0, RED, 4.0, fill=RED)
    high = Stroke(OpId(1, 2), (20.0, 100.0, 200.0, 100.0), BLUE, 6.0)
    session.apply(low)
    session.apply(high)
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 101))
    assert canvas.selection == (high.id,)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 70))  # the filled rectangle
    assert canvas.selection == (low.id,)
    QTest.mouseClick(canvas, LEFT, SHIFT, QPoint(100, 101))  # Shift adds
    assert canvas.selection == (low.id, high.id)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(300, 250))  # empty: deselects
    assert canvas.selection == ()


def test_a_rectangle_selects_what_it_encloses(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    red, blue, _ = three_strokes(session)
    canvas.set_tool(ToolKind.SELECT)
    drag(canvas, [(10, 30), (150, 100), (210, 120)])  # holds red and blue, not green
    assert set(canvas.selection) == {red.id, blue.id}
    QTest.keyClick(canvas, Qt.Key.Key_Escape)
    assert canvas.selection == ()
    drag(canvas, [(10, 30), (150, 100)])  # cuts through both: neither is inside
    assert canvas.selection == ()


def test_dragging_the_selection_moves_it_in_board_units(qtbot: QtBot) -> None:
    session = Session(qtbot, immediate=False)
    canvas = session.canvas
    session.immediate = True
    red, blue, green = three_strokes(session)
    session.immediate = False
    canvas.zoom_by(2.0, QPointF(0.0, 0.0))
    canvas.set_tool(ToolKind.SELECT)
    drag(canvas, [(20, 80), (420, 220)])  # red and blue, at twice the size
    assert set(canvas.selection) == {red.id, blue.id}
    QTest.mousePress(canvas, LEFT, NONE, QPoint(100, 100))  # on red (50 on the board)
    QTest.mouseMove(canvas, QPoint(120, 120))
    QTest.mouseMove(canvas, QPoint(160, 140))
    # While dragging the selection is shown where it is going.
    image = session.image()
    assert pixel(image, 160, 140).rgb() == rgb(RED)
    assert is_background(pixel(image, 100, 100))
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(180, 160))
    [move] = session.sent
    assert isinstance(move, Move) and set(move.targets) == {red.id, blue.id}
    assert (move.dx, move.dy) == (40.0, 30.0)  # 80 x 60 pixels at 200%
    assert session.gestures == [[move.id]]
    # Pending: shown moved, not back where it was.
    image = session.image()
    assert pixel(image, 180, 160).rgb() == rgb(RED) and is_background(pixel(image, 100, 100))
    session.deliver()
    obj = session.board.object(red.id)
    assert obj is not None and (obj.dx, obj.dy) == (40.0, 30.0)
    image = session.image()
    assert pixel(image, 180, 160).rgb() == rgb(RED) and is_background(pixel(image, 100, 100))
    assert session.board.object(green.id).dx == 0.0  # type: ignore[union-attr]
    assert set(canvas.selection) == {red.id, blue.id}  # still selected, at the new place


def test_arrow_keys_nudge_the_selection_and_a_run_of_them_is_one_move(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    red, blue, green = three_strokes(session)
    canvas.set_tool(ToolKind.SELECT)
    for key in (Qt.Key.Key_Right,) * 3:
        QTest.keyClick(canvas, key)
    assert session.sent == []  # nothing selected: the keys are not the tool's
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 50))
    QTest.mouseClick(canvas, LEFT, SHIFT, QPoint(100, 100))
    for key in (Qt.Key.Key_Right,) * 3 + (Qt.Key.Key_Up,):
        QTest.keyClick(canvas, key)
    QTest.keyClick(canvas, Qt.Key.Key_Down, SHIFT)  # ten at a time
    # Shown moved at once (3 right, 9 down), sent once the keys rest.
    assert session.sent == []
    image = session.image()
    assert pixel(image, 100, 109).rgb() == rgb(BLUE) and is_background(pixel(image, 100, 100))
    qtbot.waitUntil(lambda: bool(session.sent), timeout=5_000)
    [move] = session.sent
    assert isinstance(move, Move) and set(move.targets) == {red.id, blue.id}
    assert (move.dx, move.dy) == (3.0, 9.0)
    assert session.gestures == [[move.id]]  # one undo step
    assert session.board.object(green.id).dx == 0.0  # type: ignore[union-attr]
    assert set(canvas.selection) == {red.id, blue.id}


def test_a_nudge_goes_before_what_comes_next(qtbot: QtBot) -> None:
    """A pending nudge is sent before anything that must come after it: another selection's
    nudge, a click, Delete, another tool, or an undo (``settle``)."""
    session = Session(qtbot)
    canvas = session.canvas
    red, blue, _ = three_strokes(session)
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 50))
    QTest.keyClick(canvas, Qt.Key.Key_Left)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 100))  # blue: red's nudge goes first
    QTest.keyClick(canvas, Qt.Key.Key_Down)
    canvas.settle()  # as an undo does
    QTest.keyClick(canvas, Qt.Key.Key_Up)
    QTest.keyClick(canvas, Qt.Key.Key_Delete)
    moves = [(op.targets, op.dx, op.dy) for op in session.sent if isinstance(op, Move)]
    assert moves == [((red.id,), -1.0, 0.0), ((blue.id,), 0.0, 1.0), ((blue.id,), 0.0, -1.0)]
    assert isinstance(session.sent[-1], Erase) and session.sent[-1].targets == (blue.id,)
    assert len(session.gestures) == 4


def test_delete_erases_the_selection(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    red, blue, green = three_strokes(session)
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 100))
    QTest.mouseClick(canvas, LEFT, SHIFT, QPoint(100, 150))
    QTest.keyClick(canvas, Qt.Key.Key_Delete)
    [erase] = session.sent
    assert isinstance(erase, Erase) and set(erase.targets) == {blue.id, green.id}
    assert [obj.id for obj in session.board.objects()] == [red.id]
    assert canvas.selection == ()
    canvas.select_all()
    QTest.keyClick(canvas, Qt.Key.Key_Backspace)
    assert session.board.objects() == []


def test_selection_follows_objects_erased_by_others(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    red, blue, _ = three_strokes(session)
    canvas.set_tool(ToolKind.SELECT)
    canvas.select_all()
    session.apply(Erase(OpId(5, 1), (red.id,)))
    assert red.id not in canvas.selection and blue.id in canvas.selection
    canvas.set_tool(ToolKind.PEN)
    assert canvas.selection == ()


# -- read-only --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(ToolKind))
def test_read_only_blocks_every_tool(qtbot: QtBot, kind: ToolKind) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    three_strokes(session)
    canvas.set_read_only(True)
    canvas.set_tool(kind)
    drag(canvas, [(100, 40), (120, 100), (150, 160)])
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(100, 100))
    QTest.keyClicks(canvas, "abc")
    QTest.keyClick(canvas, Qt.Key.Key_Delete)
    assert session.sent == [] and session.gestures == []
    assert not canvas.drawing
    # The view still moves.
    canvas.zoom_in()
    assert canvas.zoom > 1.0


def test_going_read_only_drops_the_gesture_in_progress(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.RECT)
    QTest.mousePress(canvas, LEFT, NONE, QPoint(10, 10))
    QTest.mouseMove(canvas, QPoint(80, 80))
    canvas.set_read_only(True)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(80, 80))
    assert session.sent == []


# -- ops that fit the transport -------------------------------------------------------------------


def test_erasing_or_moving_many_objects_takes_ops_that_fit_a_payload(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    canvas.max_payload = RawCore.max_payload
    dots = [Stroke(OpId(2**32 - 1, 2**40 + i), (5.0 + i, 5.0), RED, 2.0) for i in range(300)]
    for dot in dots:
        session.apply(dot)
    canvas.select_all()
    QTest.mousePress(canvas, LEFT, NONE, QPoint(100, 5))
    QTest.mouseMove(canvas, QPoint(100, 50))
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(100, 105))
    moves = list(session.sent)
    assert len(moves) > 1 and all(isinstance(op, Move) for op in moves)
    assert all(len(encode_op(op)) <= RawCore.max_payload for op in moves)
    assert sorted(t for op in moves for t in op.targets) == [dot.id for dot in dots]  # type: ignore[union-attr]
    assert session.gestures == [[op.id for op in moves]]
    assert {(obj.dx, obj.dy) for obj in session.board.objects()} == {(0.0, 100.0)}
    QTest.keyClick(canvas, Qt.Key.Key_Delete)
    erases = session.sent[len(moves) :]
    assert len(erases) > 1 and all(isinstance(op, Erase) for op in erases)
    assert all(len(encode_op(op)) <= RawCore.max_payload for op in erases)
    assert session.board.objects() == [] and len(session.gestures) == 2


def test_target_ops_split_exactly_at_capacity() -> None:
    ids = [OpId(2**32 - 1, 2**63 - 1 - i) for i in range(1000)]
    capacity = max_targets_per_op(RawCore.max_payload)
    counter = itertools.count(1)
    erases = erase_ops(ids, lambda: OpId(2**32 - 1, 2**63 - next(counter)), RawCore.max_payload)
    assert [len(op.targets) for op in erases[:-1]] == [capacity] * (len(erases) - 1)
    assert all(len(encode_op(op)) <= RawCore.max_payload for op in erases)
    moves = move_ops(ids, -1e9, 0.5, lambda: OpId(1, 1), RawCore.max_payload)
    assert all(len(encode_op(op)) <= RawCore.max_payload for op in moves)
    # One more target would not have fitted in the largest of them, a transform.
    fullest = Transform(OpId(2**32 - 1, 2**63 - 1), tuple(ids[: capacity + 1]), _FULL_MATRIX)
    assert len(encode_op(fullest)) > RawCore.max_payload
    assert len(encode_op(dataclasses.replace(fullest, targets=fullest.targets[:-1]))) <= (
        RawCore.max_payload
    )
