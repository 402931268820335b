"""Editing in real windows on real loopback multicast: tool shortcuts, undo and redo of one's
own ops only (Excalidraw #7353, Drawpile #986), clearing with confirmation, live strokes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, WAIT_MS, drag, open_window
from whiteboard.app.tools import ToolKind
from whiteboard.app.window import MainWindow
from whiteboard.board import OpKind, Stroke
from whiteboard.net.runtime import NetConfig

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier


def authors(window: MainWindow) -> list[int]:
    return [obj.op.id.author for obj in window.replica.board.objects()]


def focus(window: MainWindow) -> None:
    """Shortcuts go to the active window, as on a desktop: make this one active."""
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)
    window.canvas.setFocus()


def press(window: MainWindow, key: str) -> None:
    """A shortcut as a person types it, in the window that has the focus."""
    focus(window)
    QTest.keyClicks(window.canvas, key)


@pytest.mark.network
def test_undo_and_redo_touch_only_my_own_strokes(qtbot: QtBot, net: NetConfig) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: alice.member_count() == 2, timeout=WAIT_MS)
    drag(alice, PATH)
    qtbot.waitUntil(lambda: len(bob.replica.board.objects()) == 1, timeout=WAIT_MS)
    drag(bob, [(x, y + 100) for x, y in PATH])
    qtbot.waitUntil(lambda: len(alice.replica.board.objects()) == 2, timeout=WAIT_MS)
    a, b = alice.transport.member_id, bob.transport.member_id

    # Alice undoes: her stroke goes, Bob's (drawn after hers) stays, on both boards.
    focus(alice)
    QTest.keySequence(alice, "Ctrl+Z")
    qtbot.waitUntil(lambda: authors(alice) == [b] and authors(bob) == [b], timeout=WAIT_MS)
    # Undo again: nothing of hers is left; Bob's stroke is never touched.
    alice.undo()
    assert not alice.undo_action.isEnabled()
    focus(alice)
    QTest.keySequence(alice, "Ctrl+Shift+Z")
    qtbot.waitUntil(lambda: sorted(authors(bob)) == sorted([a, b]), timeout=WAIT_MS)
    assert alice.replica.board.hash() == bob.replica.board.hash()


@pytest.mark.network
def test_tool_shortcuts_and_a_rectangle_drawn_with_the_mouse(qtbot: QtBot, net: NetConfig) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    for key, kind in [("r", ToolKind.RECT), ("l", ToolKind.LINE), ("e", ToolKind.ERASER)]:
        press(alice, key)
        assert alice.canvas.tool is kind
        assert alice.toolbar.tool_actions[kind].isChecked()
    press(alice, "r")
    press(alice, "2")  # the second colour of the palette
    drag(alice, [(50, 50), (120, 90), (200, 140)])
    qtbot.waitUntil(lambda: len(bob.replica.board.objects()) == 1, timeout=WAIT_MS)
    [obj] = bob.replica.board.objects()
    assert obj.op.kind is OpKind.RECT and obj.op.colour == 0xFFE53935
    # Tooltips name the shortcut.
    assert "(R)" in alice.toolbar.tool_actions[ToolKind.RECT].toolTip()


@pytest.mark.network
def test_clearing_asks_first_and_is_undoable(
    qtbot: QtBot, net: NetConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    drag(bob, PATH)
    qtbot.waitUntil(lambda: len(alice.replica.board.objects()) == 1, timeout=WAIT_MS)
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda *_args: answers.pop(0))
    alice.clear_action.trigger()  # cancelled: nothing sent
    alice.clear_action.trigger()
    qtbot.waitUntil(lambda: bob.replica.board.objects() == [], timeout=WAIT_MS)
    alice.undo()
    qtbot.waitUntil(lambda: len(bob.replica.board.objects()) == 1, timeout=WAIT_MS)


@pytest.mark.network
def test_others_see_a_stroke_while_it_is_drawn(qtbot: QtBot, net: NetConfig) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    canvas = alice.canvas
    QTest.mousePress(canvas, LEFT, NONE, QPoint(*PATH[0]))
    for x, y in PATH[1:10]:
        QTest.mouseMove(canvas, QPoint(x, y))
    canvas.flush_live_chunk()  # what the 50 ms timer does
    # The pen is still down, and Bob already has the first part.
    qtbot.waitUntil(lambda: len(bob.replica.board.objects()) == 1, timeout=WAIT_MS)
    assert canvas.drawing
    [first] = bob.replica.board.objects()
    assert isinstance(first.op, Stroke)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(*PATH[-1]))
    qtbot.waitUntil(lambda: len(bob.replica.board.objects()) >= 2, timeout=WAIT_MS)
    ends = [obj.op.points[-2:] for obj in bob.replica.board.objects()]
    assert (float(PATH[-1][0]), float(PATH[-1][1])) in [tuple(e) for e in ends]
    # The whole gesture is undone at once.
    alice.undo()
    qtbot.waitUntil(lambda: bob.replica.board.objects() == [], timeout=WAIT_MS)
