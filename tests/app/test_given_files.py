"""Files given to the app, as a desktop gives a double-clicked one (``whiteboard FILE``): a
board opens into the session once it is joined, a recording opens its replay, anything else is
told. And the app's identity: its icon on every window, its About box with its version."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from whiteboard import __version__
from whiteboard.app import main
from whiteboard.app.about import show_about
from whiteboard.app.replay_window import ReplayWindow
from whiteboard.app.window import MainWindow
from whiteboard.board import Board, OpId, Stroke, Tool
from whiteboard.board.files import save_board
from whiteboard.cli import COMMANDS, _wants_app, build_parser
from whiteboard.desktop import assets
from whiteboard.net.runtime import NetConfig

WAIT_S = 30.0


@pytest.fixture
def errors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(main, "show_error", shown.append)  # the real one is a modal dialog
    return shown


def a_board_file(path: Path) -> Path:
    board = Board()
    for n in range(2):
        points = (10.0, 10.0 + 40 * n, 200.0, 30.0 + 40 * n)
        board.apply((n + 1,), Stroke(OpId(7, n + 1), points, 0xFF1E88E5, 3.0, Tool.PEN))
    save_board(path, board, title="meeting")
    return path


def visible(kind: type) -> list[object]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


@pytest.mark.network
def test_a_board_given_opens_into_the_session_once_it_is_joined(
    qtbot: QtBot, errors: list[str], net: NetConfig, tmp_path: Path
) -> None:
    # Renamed without its extension: known by its first bytes.
    path = a_board_file(tmp_path / "meeting.wbd").rename(tmp_path / "meeting")
    seen: list[MainWindow] = []
    ticks = [0]

    def look() -> None:
        ticks[0] += 1
        windows = [w for w in visible(MainWindow) if isinstance(w, MainWindow)]
        if windows and (len(windows[0].replica.board.objects()) == 2 or ticks[0] > WAIT_S * 10):
            seen.extend(windows)
            windows[0].close()
        else:
            QTimer.singleShot(100, look)

    QTimer.singleShot(100, look)
    argv = [str(path), "--group", str(net.group), "--iface", "127.0.0.1", "--ttl", "0"]
    assert main.run_app(argv) == 0
    assert errors == []
    [window] = seen
    assert len(window.replica.board.objects()) == 2, "the board was not opened"
    assert "Opened meeting" in window.statusBar().currentMessage()
    # Every window and dialog shows the app's icon, at every size a desktop asks for.
    icon = QApplication.windowIcon()
    sizes = {size.width() for size in icon.availableSizes()}
    assert set(assets.ICON_SIZES) <= sizes and not window.windowIcon().isNull()
    assert QApplication.desktopFileName() == assets.APP_ID
    help_menu = [a.text() for a in window.menuBar().actions()]
    assert "&Help" in help_menu
    box = show_about(window)
    assert f"Whiteboard {__version__}" in box.text() and not box.iconPixmap().isNull()
    box.close()
    # Help > Replay a sample session: the shipped recording in a replay window.
    [help_action] = [a for a in window.menuBar().actions() if a.text() == "&Help"]
    [sample_action] = [a for a in help_action.menu().actions() if "sample" in a.text()]
    sample_action.trigger()
    replays = [w for w in visible(ReplayWindow) if isinstance(w, ReplayWindow)]
    assert len(replays) == 1 and replays[0].timeline.header.group == assets_group()
    replays[0].close()
    window.deleteLater()


def test_a_recording_given_opens_its_replay(
    qtbot: QtBot, errors: list[str], tmp_path: Path
) -> None:
    sample = tmp_path / "session.wblog"
    shutil.copyfile(str(assets.samples()[0]), sample)
    seen: list[ReplayWindow] = []

    def close_replay() -> None:
        windows = [w for w in visible(ReplayWindow) if isinstance(w, ReplayWindow)]
        seen.extend(windows)
        for window in windows:
            window.close()
        if not windows:
            QTimer.singleShot(100, close_replay)

    QTimer.singleShot(100, close_replay)
    assert main.run_app([str(sample)]) == 0
    assert errors == [] and len(seen) == 1
    assert seen[0].timeline.header.group == assets_group()


def assets_group() -> str:
    from whiteboard.sessionlog import read_log

    return read_log(str(assets.samples()[0])).header.group


def test_a_damaged_recording_given_is_told_in_a_message_box(
    qtbot: QtBot, errors: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text, *_a: told.append(text))
    cut = tmp_path / "cut.wblog"
    cut.write_bytes(assets.samples()[0].read_bytes()[:6])
    assert main.run_app([str(cut)]) == 2
    assert told and "cut.wblog" in told[0]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.txt", b"hello", "neither a whiteboard board (.wbd) nor a session recording"),
        ("missing.wbd", None, "cannot open"),
        ("cut.wbd", b"\x89WBD", "cut short"),
    ],
)
def test_any_other_file_given_is_told_before_any_session(
    qtbot: QtBot, errors: list[str], tmp_path: Path, name: str, content: bytes | None,
    message: str,
) -> None:  # fmt: skip
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main.run_app([str(path), "--iface", "127.0.0.1"]) == main.EXIT_CANNOT_OPEN
    [said] = errors
    assert message in said and "Traceback" not in said
    assert visible(MainWindow) == []


def test_the_command_line_routes_files_to_the_app(tmp_path: Path) -> None:
    parser = build_parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    assert set(COMMANDS) == set(sub.choices)  # type: ignore[arg-type]
    assert _wants_app(["meeting.wbd"]) and _wants_app(["session.WBLOG"])
    renamed = tmp_path / "board"
    renamed.write_bytes(b"")
    assert _wants_app([str(renamed)])
    assert not _wants_app(["sim", "--peers", "3"]) and not _wants_app(["--version"])


@pytest.mark.network
def test_a_board_given_to_a_viewer_is_said_not_opened(
    qtbot: QtBot, errors: list[str], net: NetConfig, tmp_path: Path
) -> None:
    path = a_board_file(tmp_path / "meeting.wbd")
    said: list[str] = []

    def look() -> None:
        windows = [w for w in visible(MainWindow) if isinstance(w, MainWindow)]
        if not windows:
            QTimer.singleShot(50, look)
            return
        said.append(windows[0].statusBar().currentMessage())
        windows[0].close()

    QTimer.singleShot(50, look)
    argv = [str(path), "--transport", "mtp", "--role", "viewer", "--group", str(net.group),
            "--iface", "127.0.0.1", "--ttl", "0"]  # fmt: skip
    assert main.run_app(argv) == 0
    assert said and said[0].startswith("meeting.wbd was not opened: You joined as a viewer")


@pytest.mark.network
def test_a_board_waiting_for_its_session_is_not_opened_into_the_next(
    qtbot: QtBot, net: NetConfig, tmp_path: Path
) -> None:
    """Given before the session was joined, a board belongs to that session: if the window
    moves to another session first, it is said not opened, and the other stays untouched."""
    from dataclasses import replace

    from tests.app.test_window import open_window
    from whiteboard.board.files import open_board
    from whiteboard.net.sockets import GroupAddress

    window = open_window(qtbot, net, "dora")
    window.files.open_when_joined(open_board(a_board_file(tmp_path / "m.wbd")), "m.wbd")
    other = replace(net, group=GroupAddress(net.group.host, net.group.port + 1))
    window.switch_session(replace(window.spec, net=other))
    qtbot.waitUntil(lambda: "was not opened" in window.statusBar().currentMessage(), timeout=10_000)
    qtbot.waitUntil(lambda: not window.canvas.is_read_only(), timeout=30_000)
    qtbot.wait(600)  # three polls of the board's timer, had it kept going
    assert window.replica.board.objects() == []
