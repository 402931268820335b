"""Editing a text in place (issue 20, point 3) with real mouse and keyboard events on the
canvas: a double-click with the select tool, or a click with the text tool, opens the editor
on the text's words where it is shown, with the text hidden under it; Shift+Enter starts a
new line, Enter sends one TextEdit, Escape sends nothing, an emptied text is erased."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.app.test_canvas import BLUE, Session
from whiteboard.app.tools import TextTool, ToolKind
from whiteboard.board import Erase, OpId, Text, TextEdit, Transform

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
LABEL = Text(OpId(7, 1), 40.0, 50.0, "Hello", BLUE, 24.0)


def with_label(qtbot: QtBot) -> Session:
    session = Session(qtbot)
    session.apply(LABEL)
    return session


def editor_of(session: Session) -> TextTool:
    tool = session.canvas.active_tool
    assert isinstance(tool, TextTool) and tool.editor is not None
    return tool


def shown(session: Session) -> Text:
    obj = session.board.object(LABEL.id)
    assert obj is not None and isinstance(obj.op, Text)
    return obj.op


def test_a_double_click_edits_a_text_and_enter_sends_one_text_edit(qtbot: QtBot) -> None:
    session = with_label(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseDClick(canvas, LEFT, NONE, QPoint(50, 60))
    tool = editor_of(session)
    editor = tool.editor
    assert editor is not None and editor.text() == "Hello"
    assert editor.pos() == QPoint(40, 50)  # where the text is shown (100%, unpanned)
    assert canvas.lifted_opacity(LABEL.id) == 0.0  # the text itself is hidden meanwhile
    QTest.keyClick(editor, Qt.Key.Key_Return, SHIFT)  # a new line, not a commit
    QTest.keyClicks(editor, "world")
    assert tool.editor is editor
    QTest.keyClick(editor, Qt.Key.Key_Return)
    [edit] = session.sent
    assert edit == TextEdit(edit.id, LABEL.id, "Hello\nworld", 24.0)
    assert shown(session).text == "Hello\nworld" and session.gestures == [[edit.id]]
    # Back to the select tool, with the text selected, and shown again.
    assert canvas.tool is ToolKind.SELECT and canvas.selection == (LABEL.id,)
    assert canvas.lifted_opacity(LABEL.id) is None


def test_the_text_tool_edits_a_text_it_clicks_and_escape_sends_nothing(qtbot: QtBot) -> None:
    session = with_label(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.TEXT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(50, 60))
    editor = editor_of(session).editor
    assert editor is not None and editor.text() == "Hello"
    QTest.keyClicks(editor, " again")
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    assert session.sent == [] and shown(session) == LABEL
    assert canvas.lifted_opacity(LABEL.id) is None
    # Unchanged words send nothing either; the tool stays the text tool.
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(50, 60))
    QTest.keyClick(editor_of(session).editor, Qt.Key.Key_Return)
    assert session.sent == [] and canvas.tool is ToolKind.TEXT


def test_an_emptied_text_is_erased(qtbot: QtBot) -> None:
    session = with_label(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseDClick(canvas, LEFT, NONE, QPoint(50, 60))
    editor = editor_of(session).editor
    assert editor is not None
    editor.selectAll()
    QTest.keyClick(editor, Qt.Key.Key_Delete)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    [erase] = session.sent
    assert erase == Erase(erase.id, (LABEL.id,)) and session.board.objects() == []


def test_a_new_size_while_editing_goes_with_the_words(qtbot: QtBot) -> None:
    session = with_label(qtbot)
    canvas = session.canvas
    canvas.set_tool(ToolKind.TEXT)
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(50, 60))
    tool = editor_of(session)
    tool.set_font_size(48.0)  # as the tool bar's text size does
    assert tool.editor is not None and tool.editor.font().pixelSize() == 48
    QTest.keyClick(tool.editor, Qt.Key.Key_Return)
    [edit] = session.sent
    assert isinstance(edit, TextEdit) and (edit.text, edit.font_size) == ("Hello", 48.0)


def test_a_resized_text_is_edited_where_and_as_large_as_it_is_shown(qtbot: QtBot) -> None:
    session = with_label(qtbot)
    session.apply(Transform(OpId(7, 2), (LABEL.id,), (2.0, 0.0, 0.0, 2.0, -30.0, -40.0)))
    canvas = session.canvas
    canvas.set_tool(ToolKind.SELECT)
    QTest.mouseDClick(canvas, LEFT, NONE, QPoint(70, 80))  # shown from (50, 60), twice as big
    tool = editor_of(session)
    assert tool.editor is not None
    assert tool.editor.pos() == QPoint(50, 60) and tool.editor.font().pixelSize() == 48
    QTest.keyClicks(tool.editor, "!")
    QTest.keyClick(tool.editor, Qt.Key.Key_Return)
    [edit] = session.sent
    assert edit == TextEdit(edit.id, LABEL.id, "Hello!", 24.0)  # its own size, as drawn
    obj = session.board.object(LABEL.id)
    assert obj is not None and obj.linear == (2.0, 0.0, 0.0, 2.0)  # still placed so
