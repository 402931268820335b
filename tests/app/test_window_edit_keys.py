"""Editing from the keyboard in real windows, on RMP and on MTP over loopback multicast: a
run of arrow-key nudges reaches the other member as one move, an undo right after a nudge
undoes that nudge (it is sent first), and Ctrl+D duplicates; equal boards on both sides."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.app.test_window import drag
from tests.app.test_window_editing import focus, press
from tests.app.test_window_mtp import WAIT_MS, host_and_participant, ready
from tests.app.test_window_rmp import open_rmp_window
from whiteboard.app.window import MainWindow
from whiteboard.board import BoardObject, OpKind
from whiteboard.net.runtime import NetConfig

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def rmp_pair(qtbot: QtBot, net: NetConfig) -> tuple[MainWindow, MainWindow]:
    alice = open_rmp_window(qtbot, net, "alice")
    qtbot.waitUntil(lambda: ready(alice), timeout=WAIT_MS)
    bob = open_rmp_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: ready(bob), timeout=WAIT_MS)
    return alice, bob


PAIRS: dict[str, Callable[[QtBot, NetConfig], tuple[MainWindow, MainWindow]]] = {
    "rmp": rmp_pair,
    "mtp": host_and_participant,
}


# The rectangle, the first run of nudges, the nudge left, and the undo of that one.
EDITS = [OpKind.RECT, OpKind.MOVE, OpKind.MOVE, OpKind.UNDO]


def kinds(window: MainWindow) -> list[OpKind]:
    return [op.kind for _, op in window.replica.board.log()]


def rectangle_for_both(qtbot: QtBot, alice: MainWindow, bob: MainWindow) -> None:
    """Alice draws a rectangle (60, 60)-(160, 140); back once Bob has it."""
    press(alice, "r")
    drag(alice, [(60, 60), (120, 100), (160, 140)])
    qtbot.waitUntil(lambda: len(bob.replica.board) == 1, timeout=WAIT_MS)


def only(window: MainWindow) -> BoardObject:
    [obj] = window.replica.board.objects()
    return obj


@pytest.mark.network
@pytest.mark.parametrize("transport", sorted(PAIRS))
def test_a_nudged_rectangle_moves_for_both_and_undo_takes_the_last_nudge_back(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    alice, bob = PAIRS[transport](qtbot, net)
    rectangle_for_both(qtbot, alice, bob)
    press(alice, "v")
    QTest.mouseClick(alice.canvas, LEFT, NONE, QPoint(60, 100))  # on its left side
    assert len(alice.canvas.selection) == 1
    focus(alice)
    for _ in range(5):
        QTest.keyClick(alice.canvas, Qt.Key.Key_Right)
    QTest.keyClick(alice.canvas, Qt.Key.Key_Down, SHIFT)
    moved = (5.0, 10.0)  # board units: the window opens at 100%, unpanned
    qtbot.waitUntil(lambda: (only(bob).dx, only(bob).dy) == moved, timeout=WAIT_MS)
    assert (only(alice).dx, only(alice).dy) == moved

    QTest.keyClick(alice.canvas, Qt.Key.Key_Left)
    QTest.keySequence(alice, "Ctrl+Z")  # at once: the nudge goes first, then its undo
    qtbot.waitUntil(lambda: kinds(alice) == kinds(bob) == EDITS, timeout=WAIT_MS)
    assert (only(alice).dx, only(alice).dy) == (only(bob).dx, only(bob).dy) == moved
    assert alice.replica.board.hash() == bob.replica.board.hash()

    QTest.keySequence(alice, "Ctrl+D")  # a copy beside it: a new rectangle for both
    qtbot.waitUntil(lambda: kinds(alice) == kinds(bob) == [*EDITS, OpKind.RECT], timeout=WAIT_MS)
    assert alice.replica.board.hash() == bob.replica.board.hash()
