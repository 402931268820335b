"""Take the user guide's screenshots from the real app, as a person sees it.

Run under a virtual X server, on this machine's loopback only (TTL 0)::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python docs/make_screenshots.py [GROUP ...]

GROUP is ``dialogs``, ``main``, ``session`` (the session states) or ``private`` (a private
session, docs/security.md); all of them by default.
It opens real windows on a real RMP session on loopback multicast, draws in them with real
mouse and keyboard events, and grabs the X screen (``QScreen.grabWindow``) into
``docs/images/*.png``. Nothing is mocked; what you see is what the app does.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

from PySide6.QtCore import (
    QEvent,
    QEventLoop,
    QPoint,
    QPointF,
    Qt,
    QTimer,
)
from PySide6.QtGui import (
    QColor,
    QCursor,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QMouseEvent,
    QPainter,
)
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from whiteboard.app.about import show_about
from whiteboard.app.identity import application
from whiteboard.app.pictures import encode_picture
from whiteboard.app.settings import SessionSettings
from whiteboard.app.settings_dialog import SettingsDialog
from whiteboard.app.start_dialog import StartDialog
from whiteboard.app.tools import ToolKind
from whiteboard.app.window import MainWindow
from whiteboard.board import OpKind
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.security.keys import session_key_from_view_code

IMAGES = Path(__file__).parent / "images"
LEFT = Qt.MouseButton.LeftButton
NONE = Qt.KeyboardModifier.NoModifier


def settle(ms: int = 300) -> None:
    """Let the event loop run (network, timers, paints) for a moment: this is a script that
    takes pictures, not a test; a generous pause is the point."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    for _ in range(int(seconds * 10)):
        if condition():
            return
        settle(100)
    raise SystemExit(f"gave up waiting for {what}")


def shoot(widget: QWidget, name: str) -> None:
    settle(400)
    screen = QGuiApplication.primaryScreen()
    frame = widget.frameGeometry()
    pixmap = screen.grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height())
    IMAGES.mkdir(exist_ok=True)
    path = IMAGES / f"{name}.png"
    pixmap.save(str(path))
    print(f"wrote {path} ({pixmap.width()}x{pixmap.height()})")


def open_menu(window: MainWindow, title: str) -> QMenu:
    """The menu bar's menu ``title`` ("&Edit"), open as a click on it opens it."""
    bar = window.menuBar()
    [entry] = [action for action in bar.actions() if action.text() == title]
    menu = entry.menu()
    assert isinstance(menu, QMenu)
    menu.popup(bar.mapToGlobal(bar.actionGeometry(entry).bottomLeft()))
    settle()
    return menu


def drag(window: MainWindow, points: list[tuple[int, int]]) -> None:
    canvas = window.canvas
    QTest.mousePress(canvas, LEFT, NONE, QPoint(*points[0]))
    for x, y in points[1:-1]:
        QTest.mouseMove(canvas, QPoint(x, y))
        settle(5)
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(*points[-1]))
    settle(50)


def point(window: MainWindow, x: int, y: int) -> None:
    """The mouse over ``window``'s canvas, no button held (sent to the canvas: the windows
    overlap on the screen)."""
    canvas = window.canvas
    at = QPointF(x, y)
    move = QMouseEvent(QEvent.Type.MouseMove, at, canvas.mapToGlobal(at), Qt.MouseButton.NoButton,
                       Qt.MouseButton.NoButton, NONE)  # fmt: skip
    QApplication.sendEvent(canvas, move)


def press(window: MainWindow, kind: QEvent.Type, x: int, y: int) -> None:
    """A left-button press, move (held) or release, sent to ``window``'s canvas."""
    canvas = window.canvas
    at = QPointF(x, y)
    held = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else LEFT
    button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else LEFT
    event = QMouseEvent(kind, at, canvas.mapToGlobal(at), button, held, NONE)
    QApplication.sendEvent(canvas, event)


def shoot_now(widget: QWidget, name: str) -> None:
    """:func:`shoot` without its pause: for what fades (a laser trail)."""
    settle(60)
    screen = QGuiApplication.primaryScreen()
    frame = widget.frameGeometry()
    pixmap = screen.grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height())
    path = IMAGES / f"{name}.png"
    pixmap.save(str(path))
    print(f"wrote {path} ({pixmap.width()}x{pixmap.height()})")


def wave(x0: int, y0: int, length: int, amplitude: int, step: int = 6) -> list[tuple[int, int]]:
    import math

    return [(x0 + k, y0 + round(amplitude * math.sin(k / 35.0))) for k in range(0, length, step)]


def sketch(window: MainWindow) -> None:
    """A small diagram: boxes, arrows, a label, freehand notes, a highlight."""
    canvas = window.canvas
    window.toolbar.set_colour(0xFF1E88E5)
    canvas.set_tool(ToolKind.RECT)
    drag(window, [(80, 90), (200, 150), (260, 170)])
    drag(window, [(420, 90), (520, 140), (600, 170)])
    window.toolbar.set_colour(0xFF000000)
    canvas.set_tool(ToolKind.ARROW)
    drag(window, [(265, 130), (330, 130), (415, 130)])
    canvas.set_tool(ToolKind.TEXT)
    canvas.font_size = 22.0
    for (x, y), label in [((110, 105), "client"), ((455, 105), "server")]:
        QTest.mouseClick(canvas, LEFT, NONE, QPoint(x, y))
        settle(100)
        editor = canvas.active_tool.editor  # the label being typed, over the canvas
        QTest.keyClicks(editor, label)
        QTest.keyClick(editor, Qt.Key.Key_Return)
    window.toolbar.set_colour(0xFFE53935)
    canvas.set_tool(ToolKind.PEN)
    drag(window, wave(90, 260, 480, 18))
    canvas.set_tool(ToolKind.ELLIPSE)
    drag(window, [(300, 300), (380, 350), (420, 380)])
    window.toolbar.set_colour(0xFFFB8C00)
    canvas.set_tool(ToolKind.HIGHLIGHTER)
    window.toolbar.set_width(24.0)
    drag(window, [(80, 200), (250, 200), (420, 200)])
    window.toolbar.set_width(3.0)
    canvas.set_tool(ToolKind.PEN)


def dialogs() -> None:
    start = StartDialog(SessionSettings(display_name="Ada"))
    start.show()
    shoot(start, "start-dialog")
    start.close()
    dialog = SettingsDialog(SessionSettings(display_name="Ada", transport="mtp"))
    dialog.show()
    shoot(dialog, "settings-dialog")
    dialog.close()


def private_session(net: NetConfig) -> None:
    """The start dialog with a passphrase typed, a private session's window, and a viewer's
    (joined with the view code)."""
    start = StartDialog(
        SessionSettings(display_name="Ada", group=str(net.group), allow_viewers=True)
    )
    start.show()
    QTest.keyClicks(start.passphrase_edit, "correct horse battery staple")
    shoot(start, "start-dialog-private")
    settings = start.collect()
    start.close()
    key = settings.session_key()
    windows = []
    for name, colour, y in (("Ada", 0xFFE53935, 40), ("Bob", 0xFF1E88E5, 340)):
        window = MainWindow("rmp", net, {"profile": "lan"}, name, colour=colour, key=key)
        window.setGeometry(40, y, 1200, 640)
        window.show()
        wait_for(lambda w=window: not w.canvas.is_read_only(), f"{name} to join")
        windows.append(window)
    ada, bob = windows
    drag(ada, wave(120, 200, 420, 30))
    drag(bob, wave(120, 320, 420, 20))
    wait_for(lambda: ada.replica.board.hash() == bob.replica.board.hash(), "the boards to agree")
    bob.hide()
    shoot(ada, "private-session")
    # Someone given the view code (Session > Copy view code) watches, and cannot draw.
    viewer_key = session_key_from_view_code(ada.copy_view_code() or "")
    vic = MainWindow("rmp", net, {"profile": "lan"}, "Vic", colour=0xFF43A047, key=viewer_key)
    vic.setGeometry(40, 40, 1200, 640)
    vic.show()
    wait_for(lambda: vic.replica.board.hash() == ada.replica.board.hash(), "Vic to see the board")
    wait_for(lambda: len(vic.replica.presence) >= 2, "Vic to hear the others' names")
    QTest.qWait(1500)  # the members panel refreshes on its own tick
    windows.append(vic)
    ada.hide()
    shoot(vic, "viewer-session")
    for window in windows:
        window.close()
    wait_for(lambda: all(w.transport.finished for w in windows), "leaving", 10)


def main_window(net: NetConfig) -> None:
    ada = MainWindow("rmp", net, {"profile": "lan"}, "Ada", colour=0xFFE53935)
    ada.setGeometry(40, 40, 1200, 640)
    ada.show()
    wait_for(lambda: not ada.canvas.is_read_only(), "Ada to join")
    sketch(ada)
    bob = MainWindow("rmp", net, {"profile": "lan"}, "Bob", colour=0xFF1E88E5)
    bob.setGeometry(360, 340, 1200, 640)
    bob.show()
    wait_for(lambda: not bob.canvas.is_read_only(), "Bob to join (and get the board)")
    window_colour = 0xFF43A047
    bob.toolbar.set_colour(window_colour)
    drag(bob, wave(120, 420, 420, 25))
    wait_for(lambda: ada.replica.board.hash() == bob.replica.board.hash(), "the boards to agree")
    for window in (ada, bob):
        wait_for(lambda w=window: "agree" in w.agreement_label.text(), "the agreement check", 20)
    bob.hide()
    shoot(ada, "main-window")
    # Bob points at the server box: Ada sees his pointer, named (docs/user-guide.md).
    for k in range(16):
        point(bob, 330 + 12 * k, 250 - 7 * k)
        settle(35)
    wait_for(lambda: bool(ada.pointers.overlay.visible_members()), "Bob's pointer at Ada's")
    shoot(ada, "pointers")
    # Bob circles the client box with the laser pointer (K): Ada sees the trail fading.
    bob.canvas.set_tool(ToolKind.LASER)
    laser = [(170 + round(120 * math.cos(t / 8)), 130 + round(60 * math.sin(t / 8)))
             for t in range(0, 44)]  # fmt: skip
    press(bob, QEvent.Type.MouseButtonPress, *laser[0])
    for x, y in laser[1:]:
        press(bob, QEvent.Type.MouseMove, x, y)
        settle(12)
    wait_for(lambda: bool(ada.pointers.overlay.lasers.trails(time.monotonic())), "the laser")
    shoot_now(ada, "laser")
    press(bob, QEvent.Type.MouseButtonRelease, *laser[-1])
    bob.canvas.set_tool(ToolKind.PEN)
    ada.canvas.set_tool(ToolKind.SELECT)
    drag(ada, [(60, 70), (300, 190), (620, 190)])  # rubber band around the two boxes
    shoot(ada, "selection")
    # Ada copies the two boxes and pastes them under her pointer; the Edit menu says how.
    drawn = len(ada.replica.board)
    copied = len(ada.canvas.selection)
    ada.clipboard.copy()
    QCursor.setPos(ada.canvas.mapToGlobal(QPoint(420, 390)))
    ada.clipboard.paste()
    wait_for(lambda: len(ada.replica.board) == drawn + copied, "the pasted boxes")
    menu = open_menu(ada, "&Edit")
    shoot(ada, "clipboard")
    menu.hide()
    # Ada duplicates the pasted boxes, makes the copies blue and half see-through from the
    # tool bar, and sends them one step backward, under the boxes they overlap.
    drawn = len(ada.replica.board)
    ada.clipboard.duplicate()
    wait_for(lambda: len(ada.replica.board) == drawn + copied, "the duplicates")
    ada.toolbar.colour_actions[0xFF1E88E5].trigger()
    opacity = ada.toolbar.opacity_box
    opacity.setCurrentIndex(opacity.findData(128))
    opacity.activated.emit(opacity.currentIndex())
    backward = ada.selection_edits.actions[2]  # Arrange > Send backward
    backward.trigger()
    log = ada.replica.board.log
    wait_for(lambda: any(op.kind == OpKind.REORDER for _, op in log()), "the reorder")
    menu = open_menu(ada, "&Arrange")
    shoot(ada, "arrange")
    menu.hide()
    # Ada double-clicks the first label and adds a line to it (Shift+Enter), in place.
    client = next(o for o in ada.replica.board.objects() if getattr(o.op, "text", "") == "client")
    ada.canvas.edit_text(client.id)
    text_tool = ada.canvas.active_tool
    editor = getattr(text_tool, "editor", None)
    assert editor is not None, "the text editor did not open"
    QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    QTest.keyClicks(editor, "(browser)")
    settle()
    shoot(ada, "text-editing")
    editor.returnPressed.emit()
    # Ada selects the top two boxes and their arrow, and turns them by the round handle.
    ada.canvas.set_tool(ToolKind.SELECT)
    drag(ada, [(60, 70), (300, 190), (620, 190)])
    select = ada.canvas.active_tool
    box = getattr(select, "selection_box", lambda: None)()
    assert box is not None, "nothing selected to turn"
    view = ada.canvas.view
    cx, cy = view.to_widget((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    hx, hy = view.to_widget((box[0] + box[2]) / 2, box[1])
    press(ada, QEvent.Type.MouseButtonPress, round(hx), round(hy - 24))
    for step in range(1, 9):  # from straight above the middle, 20 degrees clockwise
        angle = -math.pi / 2 + math.radians(20.0) * step / 8
        x, y = cx + 150 * math.cos(angle), cy + 150 * math.sin(angle)
        press(ada, QEvent.Type.MouseMove, round(x), round(y))
        settle(20)
    shoot(ada, "transform")
    press(ada, QEvent.Type.MouseButtonRelease, round(x), round(y))
    # Ada pastes a picture (a landscape drawn here) beside the diagram; Bob gets it too.
    ada.clipboard.images.insert_bytes(landscape(), ada.canvas.view.to_board(680, 110))
    wait_for(lambda: ada.replica.board.hash() == bob.replica.board.hash(), "the picture at Bob's")
    shoot(ada, "pictures")
    about = show_about(ada)  # Help > About Whiteboard
    settle()
    shoot(about, "about-box")
    about.close()
    for window in (ada, bob):
        window.close()
    wait_for(lambda: ada.transport.finished and bob.transport.finished, "leaving", 10)


def host_dies_under_ann(net: NetConfig, params: dict[str, object]) -> tuple[MainWindow, MainWindow]:
    """An MTP host and Ann, who sketches; then the host's computer stops (its sockets closed
    at once, as when its process is killed)."""
    host = MainWindow("mtp", net, {**params, "role": "master"}, "Host")
    host.setGeometry(40, 40, 900, 560)
    host.show()
    wait_for(lambda: not host.canvas.is_read_only(), "the host to found the web")
    ann = MainWindow("mtp", net, {**params, "role": "producer"}, "Ann", colour=0xFF1E88E5)
    ann.setGeometry(40, 40, 1000, 600)
    ann.show()
    wait_for(lambda: not ann.canvas.is_read_only(), "Ann to join")
    sketch(ann)
    wait_for(lambda: len(host.replica.board) == len(ann.replica.board), "the host's board")
    wait_for(lambda: "Host" in [r[0] for r in ann.members_panel.row_texts()], "the host's name")
    host.hide()
    host._presence_timer.stop()  # as a killed process: no more presences
    host.carrier.release()  # the host's computer stops: nothing more from it
    return host, ann


def host_taken_over(net: NetConfig) -> None:
    """An MTP session whose host's computer stops: a participant takes over (master
    failover, docs/mtp.md), says so, and shows the host as left."""
    params = {"profile": "lan"}
    _, ann = host_dies_under_ann(net, params)
    host_row = lambda: next(r for r in ann.members_panel.row_texts() if r[0] == "Host")  # noqa: E731
    wait_for(lambda: host_row()[1] == "left", "Ann to see the host gone", 40)
    wait_for(lambda: "Connected" in ann.state_view.label.text(), "Ann to take over", 20)
    shoot(ann, "session-failover")
    ann.close()
    wait_for(lambda: ann.transport.finished, "leaving", 10)


def session_states(net: NetConfig) -> None:
    """An MTP session as RFC 1301 has it (``failover=false``: the web ends with its host)
    whose host's computer stops (its sockets closed at once, as when its process is killed):
    the participant shows *reconnecting*, what it tries and why; then a host that leaves
    ends the session, with a stroke of Ann's not delivered (shown dimmed)."""
    params = {"profile": "lan", "failover": False}
    host, ann = host_dies_under_ann(net, params)
    wait_for(lambda: "Reconnecting" in ann.state_view.label.text(), "Ann to notice", 40)
    shoot(ann, "session-reconnecting")
    # Then the host comes back and leaves properly: the session ends for everyone.
    ann.switch_session(ann.spec)  # Ann starts afresh, to be in a web when it ends
    host = MainWindow("mtp", net, {**params, "role": "master"}, "Host")
    host.show()
    host.hide()
    wait_for(
        lambda: not ann.canvas.is_read_only() and "Connected" in ann.state_view.label.text(),
        "Ann to join the new host",
        60,
    )
    wait_for(lambda: "Host" in [r[0] for r in ann.members_panel.row_texts()], "its name")
    # Ann draws a last stroke and the host leaves before granting it (no event handled in
    # between): it is not delivered, and stays on Ann's screen dimmed, to be sent again.
    ann.toolbar.set_colour(0xFF1E88E5)
    canvas, stroke = ann.canvas, wave(120, 480, 380, 25)
    QTest.mousePress(canvas, LEFT, NONE, QPoint(*stroke[0]))
    for x, y in stroke[1:-1]:
        QTest.mouseMove(canvas, QPoint(x, y))
    QTest.mouseRelease(canvas, LEFT, NONE, QPoint(*stroke[-1]))
    host.close()
    wait_for(lambda: "ended" in ann.state_view.label.text(), "the session to end", 30)
    shoot(ann, "session-ended")
    ann.close()
    wait_for(lambda: ann.transport.finished and host.transport.finished, "leaving", 10)


def landscape() -> bytes:
    """A small picture as a person might paste: sky, sun, hills (PNG bytes)."""
    image = QImage(220, 147, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.scale(220 / 360, 220 / 360)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(0, 0, 0, 240)
    sky.setColorAt(0.0, QColor(70, 130, 220))
    sky.setColorAt(1.0, QColor(200, 225, 250))
    painter.fillRect(0, 0, 360, 240, sky)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(255, 200, 40))
    painter.drawEllipse(QPointF(270, 70), 32, 32)
    for colour, top, bulge in ((QColor(90, 160, 80), 150, 60), (QColor(50, 120, 60), 185, 40)):
        painter.setBrush(colour)
        painter.drawEllipse(QPointF(100, top + bulge), 220, bulge * 1.6)
        painter.drawEllipse(QPointF(320, top + bulge + 10), 200, bulge * 1.4)
    painter.end()
    return encode_picture(image)


def main() -> int:
    _app = application()  # named, with the icon, as the app is; kept alive till the end
    groups = set(sys.argv[1:]) or {"dialogs", "main", "session", "private"}
    rng = random.Random()
    group = GroupAddress(f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}", 40123)
    net = NetConfig(group=group, iface="127.0.0.1", ttl=0)
    if "dialogs" in groups:
        dialogs()
    if "main" in groups:
        main_window(net)
    if "session" in groups:
        session_net = NetConfig(
            group=GroupAddress(group.host, group.port + 1), iface="127.0.0.1", ttl=0
        )
        host_taken_over(NetConfig(GroupAddress(group.host, group.port + 2), "127.0.0.1", 0))
        session_states(session_net)
    if "private" in groups:
        private_session(NetConfig(GroupAddress(group.host, group.port + 3), "127.0.0.1", 0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
