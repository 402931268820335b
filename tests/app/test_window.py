"""Whole windows on real loopback multicast: draw with the mouse in one, see it in the other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from whiteboard.app.canvas import BACKGROUND
from whiteboard.app.qt_reactor import QtReactor
from whiteboard.app.window import MainWindow
from whiteboard.board import Stroke
from whiteboard.net.runtime import NetConfig, open_transport
from whiteboard.transport.events import Event, Failure

WAIT_MS = 10_000


def open_window(qtbot: QtBot, net: NetConfig, name: str) -> MainWindow:
    window = MainWindow("raw", net, {}, name)
    # Registered windows are closed by pytest-qt even if the test fails: they leave.
    qtbot.addWidget(window)
    # A canvas wide enough (~500 px) that another member's pointer name, drawn right of its tip,
    # never lies where a test starts a stroke: a press on a name follows its member instead.
    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    return window


def drag(window: MainWindow, points: list[tuple[int, int]]) -> None:
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    canvas = window.canvas
    QTest.mousePress(canvas, left, none, QPoint(*points[0]))
    for x, y in points[1:-1]:
        QTest.mouseMove(canvas, QPoint(x, y))
    QTest.mouseRelease(canvas, left, none, QPoint(*points[-1]))


PATH = [(40 + 10 * k, 80) for k in range(12)] + [(150, 80 + 10 * k) for k in range(1, 8)]


@pytest.fixture
def window_a(qtbot: QtBot, net: NetConfig) -> Iterator[MainWindow]:
    yield open_window(qtbot, net, "alice")


@pytest.mark.network
def test_drawing_in_one_window_delivers_the_stroke_back(qtbot: QtBot, window_a: MainWindow) -> None:
    assert not window_a.canvas.is_read_only()  # raw joins at once
    drag(window_a, PATH)
    qtbot.waitUntil(lambda: len(window_a.replica.board) == 1, timeout=WAIT_MS)
    [obj] = window_a.replica.board.objects()
    assert isinstance(obj.op, Stroke)
    assert obj.op.id.author == window_a.transport.member_id
    points = list(zip(obj.op.points[::2], obj.op.points[1::2], strict=True))
    # Simplified, but along the path: its ends, its corner, nothing off it.
    assert points[0] == (40.0, 80.0) and points[-1] == (150.0, 150.0)
    assert (150.0, 80.0) in points
    assert all((y == 80.0 and 40 <= x <= 150) or (x == 150.0 and 80 <= y <= 150) for x, y in points)
    assert window_a.canvas.pending_ops() == ()
    # One op, and the presences that tell the others who we are (whiteboard/presence.py).
    assert window_a.presence.sent_count >= 1
    assert window_a.transport.counters()["sent"] == 1 + window_a.presence.sent_count


@pytest.mark.network
def test_two_windows_converge(qtbot: QtBot, net: NetConfig, window_a: MainWindow) -> None:
    window_b = open_window(qtbot, net, "bob")
    qtbot.waitUntil(
        lambda: window_a.member_count() == 2 and window_b.member_count() == 2, timeout=WAIT_MS
    )
    window_a.set_colour(0xFFE53935)
    drag(window_a, PATH)
    qtbot.waitUntil(lambda: len(window_b.replica.board) == 1, timeout=WAIT_MS)
    assert window_a.replica.board.hash() == window_b.replica.board.hash()
    [obj] = window_b.replica.board.objects()
    assert isinstance(obj.op, Stroke) and obj.op.colour == 0xFFE53935

    window_b.canvas.finish_rendering()  # every tile in view, whatever the first paint did
    image = window_b.canvas.grab().toImage()
    ratio = image.devicePixelRatio()  # grab() is in device pixels, the board in logical ones
    for x, y in [(95, 80), (150, 120)]:
        colour = image.pixelColor(round(x * ratio), round(y * ratio))
        assert colour.rgb() != BACKGROUND.rgb()
        assert colour.rgb() == QColor.fromRgba(0xFFE53935).rgb()

    # And back the other way, on top of it.
    drag(window_b, [(300, 200), (320, 220), (340, 200)])
    qtbot.waitUntil(lambda: len(window_a.replica.board) == 2, timeout=WAIT_MS)
    assert window_a.replica.board.hash() == window_b.replica.board.hash()
    assert "2 members" in window_a.members_label.text()
    assert "2 ops" in window_b.ops_label.text()

    # Leaving: the raw transport finishes at once, and the other member hears the BYE.
    window_a.close()
    assert window_a.transport.finished
    assert not window_a.isVisible()
    qtbot.waitUntil(lambda: window_b.member_count() == 1, timeout=WAIT_MS)
    window_b.close()
    assert window_b.transport.finished


@pytest.mark.network
def test_problems_reach_the_status_bar_not_a_traceback(
    qtbot: QtBot, net: NetConfig, window_a: MainWindow
) -> None:
    # Another member on the group sends a payload that is not an op.
    events: list[Event] = []
    rogue, _ = open_transport("raw", net, QtReactor(), events.append)
    rogue.open()
    rogue.send(b"not an op")
    # Issue 17: problems are notices fitted to their room beside the session state, the
    # whole text in the tooltip (a temporary message ran under the permanent labels).
    notice = window_a.state_view.notice
    qtbot.waitUntil(lambda: "Ignored a bad drawing" in notice.text(), timeout=WAIT_MS)
    assert notice.toolTip() == notice.text()
    assert len(window_a.replica.board) == 0
    assert window_a.replica.stats.rejected == 1
    rogue.close()

    window_a._on_event(Failure("the group went quiet"))
    assert notice.text() == "the group went quiet"


@pytest.mark.network
def test_cannot_send_after_leaving(qtbot: QtBot, window_a: MainWindow) -> None:
    window_a.close()
    assert window_a.canvas.is_read_only()
    drag(window_a, PATH)
    assert len(window_a.replica.board) == 0
