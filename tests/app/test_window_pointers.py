"""Live pointers between real windows on real loopback multicast (issue 19, point 2): each
window shows the other's pointer with its name, glides it, hides it when it leaves the board,
and none of it reaches the board or its hash; sharing can be turned off."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.app.mouse import PRESS, RELEASE, mouse
from tests.app.test_window_mtp import host_and_participant
from tests.app.test_window_rmp import open_rmp_window
from whiteboard.app.tools import ToolKind
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig

WAIT_MS = 30_000  # MTP's master probes for a web first; the machine stalls on top of it


def pair(qtbot: QtBot, net: NetConfig, transport: str) -> tuple[MainWindow, MainWindow]:
    if transport == "mtp":
        return host_and_participant(qtbot, net)
    ann = open_rmp_window(qtbot, net, "ann")
    qtbot.waitUntil(lambda: not ann.canvas.is_read_only(), timeout=WAIT_MS)
    bea = open_rmp_window(qtbot, net, "bea")
    qtbot.waitUntil(lambda: not bea.canvas.is_read_only(), timeout=WAIT_MS)
    return ann, bea


def point_at(window: MainWindow, x: int, y: int) -> None:
    mouse(window.canvas, x, y)


def trails(window: MainWindow) -> dict[int, list[tuple[float, float, float]]]:
    return window.pointers.overlay.lasers.trails(time.monotonic())


def leave(window: MainWindow) -> None:
    QApplication.sendEvent(window.canvas, QEvent(QEvent.Type.Leave))


def shown_at(watcher: MainWindow, member: int) -> QPoint | None:
    at = watcher.pointers.overlay.widget_position(member)
    return None if at is None else at.toPoint()


@pytest.mark.network
@pytest.mark.parametrize("transport", ["rmp", "mtp"])
def test_each_window_shows_the_others_pointer_and_never_its_board(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    first, second = pair(qtbot, net, transport)
    hashes = (first.replica.board.hash(), second.replica.board.hash())
    mover = first.transport.member_id

    # Moved until the other has heard of it (a newcomer is known after its first packets).
    def seen(x: int, y: int) -> bool:
        point_at(first, x, y)
        return shown_at(second, mover) == QPoint(x, y)

    qtbot.waitUntil(lambda: seen(120, 90), timeout=WAIT_MS)
    # Named and coloured as the members panel names the member (once its presence came).
    qtbot.waitUntil(
        lambda: second.pointers._label(mover) == (first.display_name, first.presence.colour),
        timeout=WAIT_MS,
    )
    # A click on the pointer's name follows its member, and draws nothing.
    overlay = second.pointers.overlay
    tip = overlay.widget_position(mover)
    assert tip is not None
    _, label = overlay._label_box(first.display_name, tip, QFontMetrics(overlay.font()))
    mouse(second.canvas, label.center().x(), label.center().y(), PRESS)
    mouse(second.canvas, label.center().x(), label.center().y(), RELEASE)
    assert second.pointers.following.followed == mover
    assert len(second.replica.board) == 0 and not second.canvas.pending_ops()
    second.pointers.following.stop()
    # The view is the same on both (an empty board at 100%), so the position is too; after
    # a move it glides there and settles on it.
    for x in range(130, 260, 10):
        point_at(first, x, 150)
        qtbot.wait(5)
    qtbot.waitUntil(lambda: shown_at(second, mover) == QPoint(250, 150), timeout=WAIT_MS)
    # And the other way.
    point_at(second, 60, 70)
    qtbot.waitUntil(
        lambda: shown_at(first, second.transport.member_id) == QPoint(60, 70), timeout=WAIT_MS
    )
    # The laser pointer (K): a trail the other sees, and that fades within about a second.
    first.canvas.set_tool(ToolKind.LASER)
    mouse(first.canvas, 100, 200, PRESS)
    for x in range(110, 300, 10):
        mouse(first.canvas, x, 200, held=True)
        qtbot.wait(10)
    mouse(first.canvas, 290, 200, RELEASE)
    qtbot.waitUntil(lambda: mover in trails(second), timeout=WAIT_MS)
    assert mover in trails(first)  # ours too
    assert len(trails(second)[mover]) >= 3
    qtbot.waitUntil(lambda: trails(second) == {} and trails(first) == {}, timeout=3000)
    # Leaving the canvas hides it at once for the others.
    leave(first)
    qtbot.waitUntil(lambda: shown_at(second, mover) is None, timeout=WAIT_MS)
    # Never in the board: nothing was drawn, and neither hash moved.
    assert (first.replica.board.hash(), second.replica.board.hash()) == hashes
    assert len(first.replica.board) == len(second.replica.board) == 0
    assert first.pointers.sharing.sent >= 3


@pytest.mark.network
def test_sharing_turned_off_hides_ours_and_sends_no_more(qtbot: QtBot, net: NetConfig) -> None:
    ann, bea = pair(qtbot, net, "rmp")
    me = ann.transport.member_id

    def seen() -> bool:
        point_at(ann, 100, 100)
        return shown_at(bea, me) is not None

    qtbot.waitUntil(seen, timeout=WAIT_MS)
    ann.pointers.action.setChecked(False)  # View ▸ Share my pointer
    qtbot.waitUntil(lambda: shown_at(bea, me) is None, timeout=WAIT_MS)
    sent = ann.pointers.sharing.sent
    for x in range(110, 200, 10):
        point_at(ann, x, 120)
        qtbot.wait(40)
    assert ann.pointers.sharing.sent == sent and shown_at(bea, me) is None


def visible(window: MainWindow) -> tuple[float, float, float, float]:
    rect = window.canvas.visible_board_rect()
    return rect.left(), rect.top(), rect.right(), rect.bottom()


def shows(follower: MainWindow, leader: MainWindow) -> bool:
    """The follower's canvas shows all the leader's does, zoomed to fit (touching two sides)."""
    fx0, fy0, fx1, fy1 = visible(follower)
    lx0, ly0, lx1, ly1 = visible(leader)
    slack = 2.0 / follower.canvas.zoom  # a pixel or two of rounding to the device grid
    inside = fx0 <= lx0 + slack and fy0 <= ly0 + slack and fx1 >= lx1 - slack and fy1 >= ly1 - slack
    snug = min(abs(fx0 - lx0) + abs(fx1 - lx1), abs(fy0 - ly0) + abs(fy1 - ly1)) <= 2 * slack
    return inside and snug


@pytest.mark.network
@pytest.mark.parametrize("transport", ["rmp", "mtp"])
def test_following_a_member_shows_their_view_until_one_moves_oneself(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    leader, follower = pair(qtbot, net, transport)
    follower.resize(900, 500)  # another size and shape: fitted, not copied
    leader.canvas.zoom_by(2.0)
    leader.canvas.pan_by(-150, 80)
    # Chosen in the members panel (a double-click on the leader's row).
    qtbot.waitUntil(lambda: leader.transport.member_id in follower.health, timeout=WAIT_MS)
    follower.members_panel.member_chosen.emit(leader.transport.member_id)
    assert follower.pointers.following.followed == leader.transport.member_id
    assert "Following" in follower.statusBar().currentMessage()
    qtbot.waitUntil(lambda: shows(follower, leader), timeout=WAIT_MS)
    # The leader moves on; the follower goes along.
    leader.canvas.pan_by(300, -40)
    leader.canvas.zoom_by(0.5)
    qtbot.waitUntil(lambda: shows(follower, leader), timeout=WAIT_MS)
    # The follower zooms by itself: following ends, and the leader's moves no longer carry it.
    follower.canvas.zoom_in()
    assert follower.pointers.following.followed is None
    before = visible(follower)
    leader.canvas.pan_by(-500, 0)
    qtbot.wait(800)
    assert visible(follower) == before
    assert follower.replica.board.hash() == leader.replica.board.hash()


@pytest.mark.network
def test_asking_everyone_to_follow_prompts_the_others_who_may_accept(
    qtbot: QtBot, net: NetConfig
) -> None:
    leader, other = pair(qtbot, net, "rmp")
    leader.canvas.zoom_by(1.5)
    leader.pointers.ask_action.trigger()  # View > Ask everyone to follow me
    qtbot.waitUntil(lambda: other.pointers.prompt is not None, timeout=WAIT_MS)
    prompt = other.pointers.prompt
    assert prompt is not None and leader.display_name in prompt.text()
    assert other.pointers.following.followed is None  # nothing until they accept
    follow = next(b for b in prompt.buttons() if b.text() == "Follow")
    follow.click()
    assert other.pointers.following.followed == leader.transport.member_id
    qtbot.waitUntil(lambda: shows(other, leader), timeout=WAIT_MS)
    # The request, repeated for a few seconds, does not ask again.
    qtbot.wait(1500)
    assert other.pointers.prompt is prompt
