"""Two app windows on RMP over real loopback multicast, the second joining late: it gets the
board image (RR-2100 §2.8) before it may draw, then both draw and agree."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, drag
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig

WAIT_MS = 30_000  # RMP's join waits for answers (5 tries); the VM may stall on top


def open_rmp_window(qtbot: QtBot, net: NetConfig, name: str) -> MainWindow:
    window = MainWindow("rmp", net, {"profile": "lan"}, name)
    qtbot.addWidget(window)
    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.mark.network
def test_a_late_window_gets_the_board_image_and_both_converge(qtbot: QtBot, net: NetConfig) -> None:
    alice = open_rmp_window(qtbot, net, "alice")
    assert alice.canvas.is_read_only()  # joining: nobody may draw before the join completes
    qtbot.waitUntil(lambda: not alice.canvas.is_read_only(), timeout=WAIT_MS)
    drag(alice, PATH)
    qtbot.waitUntil(lambda: len(alice.replica.board) == 1, timeout=WAIT_MS)

    bob = open_rmp_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: not bob.canvas.is_read_only(), timeout=WAIT_MS)
    # The stroke came in the image, not as a delivery: Bob joined after it was drawn.
    assert len(bob.replica.board) == 1
    assert bob.replica.stats.ops_applied == 0
    drag(bob, [(x, y + 100) for x, y in PATH])
    qtbot.waitUntil(
        lambda: len(alice.replica.board) == 2 and len(bob.replica.board) == 2, timeout=WAIT_MS
    )
    assert alice.replica.board.hash() == bob.replica.board.hash()
