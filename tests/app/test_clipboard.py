"""Copy, cut, paste and duplicate in a real window on real loopback multicast (issue 20,
point 5): our own objects on the system clipboard with a PNG and an SVG of them for other
applications, pasted under the pointer as new drawings in one action; plain text pasted as
a text object; anything else refused with a message, nothing sent."""

from __future__ import annotations

import msgpack
import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt
from PySide6.QtGui import QCursor, QGuiApplication, QImage
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.app.test_window import WAIT_MS, drag, open_window
from tests.app.test_window_editing import focus, press
from whiteboard.app.clipboard import DUPLICATE_OFFSET, SVG_MIME
from whiteboard.app.render import bounds
from whiteboard.app.window import MainWindow
from whiteboard.board import BoardObject, OpKind, Shape, Text
from whiteboard.board.clip import CLIP_MAGIC, CLIP_MIME, decode_clip
from whiteboard.board.ops import MAX_TEXT_CHARS
from whiteboard.net.runtime import NetConfig

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier


def keys(window: MainWindow, sequence: str) -> None:
    focus(window)
    QTest.keySequence(window, sequence)


def pointer_at(window: MainWindow, x: int, y: int) -> tuple[float, float]:
    """Put the pointer over the canvas at (x, y); where that is on the board."""
    QCursor.setPos(window.canvas.mapToGlobal(QPoint(x, y)))
    return window.canvas.view.to_board(x, y)


def centre(obj: BoardObject) -> tuple[float, float]:
    x0, y0, x1, y1 = bounds(obj.op)
    return ((x0 + x1) / 2 + obj.dx, (y0 + y1) / 2 + obj.dy)


def objects(window: MainWindow) -> list[BoardObject]:
    return window.replica.board.objects()


@pytest.fixture
def window(qtbot: QtBot, net: NetConfig) -> MainWindow:
    """A window with one red rectangle, selected."""
    window = open_window(qtbot, net, "alice")
    press(window, "r")
    press(window, "2")
    drag(window, [(60, 60), (120, 100), (160, 140)])
    qtbot.waitUntil(lambda: len(window.replica.board) == 1, timeout=WAIT_MS)
    keys(window, "Ctrl+A")
    return window


@pytest.mark.network
def test_a_copy_pastes_under_the_pointer_as_a_new_selected_drawing(
    qtbot: QtBot, window: MainWindow
) -> None:
    keys(window, "Ctrl+C")
    mime = QGuiApplication.clipboard().mimeData()
    [copied] = decode_clip(bytes(mime.data(CLIP_MIME).data()))
    [original] = objects(window)
    assert copied == original.op
    image = QImage(mime.imageData())  # for other applications: the rectangle alone
    assert not image.isNull() and image.width() > 100
    assert b"<svg" in bytes(mime.data(SVG_MIME).data())

    at = pointer_at(window, 300, 200)
    keys(window, "Ctrl+V")
    qtbot.waitUntil(lambda: len(window.replica.board) == 2, timeout=WAIT_MS)
    pasted = next(obj for obj in objects(window) if obj.id != original.id)
    assert isinstance(pasted.op, Shape) and pasted.op.kind is OpKind.RECT
    assert pasted.op.colour == original.op.colour and pasted.op.id.author == original.op.id.author
    assert centre(pasted) == pytest.approx(at)
    assert window.canvas.selection == (pasted.id,)
    window.undo()  # one action: the paste goes, the original stays
    qtbot.waitUntil(lambda: [o.id for o in objects(window)] == [original.id], timeout=WAIT_MS)


@pytest.mark.network
def test_duplicate_puts_a_copy_beside_and_cut_takes_the_selection_away(
    qtbot: QtBot, window: MainWindow
) -> None:
    [original] = objects(window)
    keys(window, "Ctrl+D")
    qtbot.waitUntil(lambda: len(window.replica.board) == 2, timeout=WAIT_MS)
    copy = next(obj for obj in objects(window) if obj.id != original.id)
    x, y = centre(original)
    assert centre(copy) == pytest.approx((x + DUPLICATE_OFFSET, y + DUPLICATE_OFFSET))
    keys(window, "Ctrl+X")  # the copy, selected after the duplicate
    qtbot.waitUntil(lambda: [o.id for o in objects(window)] == [original.id], timeout=WAIT_MS)
    assert CLIP_MIME in QGuiApplication.clipboard().mimeData().formats()


@pytest.mark.network
def test_plain_text_pastes_as_a_text_object_and_a_long_one_is_cut_and_told(
    qtbot: QtBot, window: MainWindow
) -> None:
    QGuiApplication.clipboard().setText("hello\nworld")
    at = pointer_at(window, 250, 150)
    keys(window, "Ctrl+V")
    qtbot.waitUntil(lambda: len(window.replica.board) == 2, timeout=WAIT_MS)
    [text] = [obj.op for obj in objects(window) if isinstance(obj.op, Text)]
    assert text.text == "hello\nworld" and (text.x, text.y) == pytest.approx(at)
    QGuiApplication.clipboard().setText("x" * (MAX_TEXT_CHARS + 5))
    keys(window, "Ctrl+V")  # more than one datagram's drawing holds: the start of it
    qtbot.waitUntil(lambda: len(window.replica.board) == 3, timeout=WAIT_MS)
    longest = max(len(obj.op.text) for obj in objects(window) if isinstance(obj.op, Text))
    assert 100 < longest < MAX_TEXT_CHARS
    assert f"Pasted the first {longest:,} characters" in window.state_view.notice.text()


@pytest.mark.network
def test_a_damaged_clip_is_refused_with_a_message_and_nothing_is_sent(
    qtbot: QtBot, window: MainWindow
) -> None:
    sent = window.transport.counters()["sent"]
    mime = QMimeData()
    mime.setData(CLIP_MIME, msgpack.packb([CLIP_MAGIC, 1, [b"\x93\x01"]]))
    QGuiApplication.clipboard().setMimeData(mime)
    keys(window, "Ctrl+V")
    assert "Could not paste" in window.state_view.notice.text()
    assert "damaged" in window.state_view.notice.text()
    qtbot.wait(200)
    assert window.transport.counters()["sent"] == sent and len(window.replica.board) == 1
