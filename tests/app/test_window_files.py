"""Saving, opening and exporting boards from real windows on real loopback multicast."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, WAIT_MS, drag, open_window
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig


@pytest.fixture
def warnings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    # The real one is modal and would wait for a click.
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text: shown.append(text))
    return shown


def draw_two(qtbot: QtBot, window: MainWindow) -> None:
    drag(window, PATH)
    drag(window, [(x, y + 120) for x, y in PATH])
    qtbot.waitUntil(lambda: len(window.replica.board) == 2, timeout=WAIT_MS)


@pytest.mark.network
def test_a_saved_board_opened_into_a_session_replaces_everyones_board(
    qtbot: QtBot, net: NetConfig, tmp_path: Path, warnings: list[str]
) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    draw_two(qtbot, alice)
    saved = [
        (o.kind, o.op.points if hasattr(o.op, "points") else None)
        for o in alice.replica.board.objects()
    ]
    path = tmp_path / "plan.wbd"
    assert alice.files.save_board_to(path) and path.stat().st_size > 0

    alice.clear_board()
    drag(bob, [(300, 300), (350, 350)])
    qtbot.waitUntil(lambda: len(alice.replica.board.objects()) == 1, timeout=WAIT_MS)

    assert bob.files.open_board_from(path)
    qtbot.waitUntil(
        lambda: len(alice.replica.board.objects()) == 2 and len(bob.replica.board.objects()) == 2,
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: alice.replica.board.hash() == bob.replica.board.hash(), timeout=WAIT_MS)
    shown = [
        (o.kind, o.op.points if hasattr(o.op, "points") else None)
        for o in bob.replica.board.objects()
    ]
    assert shown == saved  # the same picture, now drawn by bob
    assert {o.op.id.author for o in bob.replica.board.objects()} == {bob.transport.member_id}
    assert warnings == []
    # Undo brings the board back as it was before the file.
    bob.undo()
    qtbot.waitUntil(lambda: len(alice.replica.board.objects()) == 1, timeout=WAIT_MS)


@pytest.mark.network
def test_a_damaged_file_says_so_and_changes_nothing(
    qtbot: QtBot, net: NetConfig, tmp_path: Path, warnings: list[str]
) -> None:
    alice = open_window(qtbot, net, "alice")
    draw_two(qtbot, alice)
    path = tmp_path / "plan.wbd"
    alice.files.save_board_to(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    before = alice.replica.board.hash()
    assert not alice.files.open_board_from(path)
    [message] = warnings
    assert "plan.wbd" in message and "damaged" in message
    assert alice.replica.board.hash() == before
    assert alice.transport.counters()["sent"] == 2 + alice.presence.sent_count


@pytest.mark.network
def test_export_writes_a_png_of_the_board(
    qtbot: QtBot, net: NetConfig, tmp_path: Path, warnings: list[str]
) -> None:
    alice = open_window(qtbot, net, "alice")
    draw_two(qtbot, alice)
    path = tmp_path / "board.png"
    assert alice.files.export_board_to(path)
    image = QImage(str(path))
    assert not image.isNull() and image.width() > 100
    assert "Exported board.png" in alice.statusBar().currentMessage()
    assert not alice.files.export_board_to(tmp_path / "board.doc")
    assert warnings and "board.doc" in warnings[0]


def save_damaged(window: MainWindow, path: Path) -> None:
    window.files.save_board_to(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@dataclass
class Questions:
    """The questions asked (their texts), answered from ``answers`` in turn, Cancel after."""

    asked: list[str] = field(default_factory=list)
    answers: list[QMessageBox.StandardButton] = field(default_factory=list)

    def ask(self, _parent: object, _title: str, text: str, *_rest: object) -> object:
        self.asked.append(text)
        return self.answers.pop(0) if self.answers else QMessageBox.StandardButton.Cancel


@pytest.fixture
def questions(monkeypatch: pytest.MonkeyPatch) -> Questions:
    asked = Questions()
    monkeypatch.setattr(QMessageBox, "question", asked.ask)  # the real one waits for a click
    return asked


def choose_file(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *_args: (str(path), ""))


@pytest.mark.network
def test_open_reports_a_damaged_file_without_asking_to_replace_the_board(
    qtbot: QtBot,
    net: NetConfig,
    tmp_path: Path,
    warnings: list[str],
    questions: Questions,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice = open_window(qtbot, net, "alice")
    draw_two(qtbot, alice)
    path = tmp_path / "board1.wbd"
    save_damaged(alice, path)
    choose_file(monkeypatch, path)
    alice.files.ask_open_board()
    [message] = warnings
    assert "board1.wbd" in message and "damaged" in message
    assert questions.asked == []  # nothing to replace the board with: nothing asked
    assert "Opening" not in alice.statusBar().currentMessage()
    assert len(alice.replica.board) == 2


@pytest.mark.network
def test_open_asks_after_reading_and_leaves_no_stale_status(
    qtbot: QtBot,
    net: NetConfig,
    tmp_path: Path,
    warnings: list[str],
    questions: Questions,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice = open_window(qtbot, net, "alice")
    draw_two(qtbot, alice)
    path = tmp_path / "board1.wbd"
    assert alice.files.save_board_to(path)
    choose_file(monkeypatch, path)

    alice.files.ask_open_board()  # answered Cancel
    [question] = questions.asked
    assert "board1.wbd" in question
    assert alice.statusBar().currentMessage() == ""
    assert alice.transport.counters()["sent"] == 2 + alice.presence.sent_count  # nothing imported

    questions.answers.append(QMessageBox.StandardButton.Yes)
    alice.files.ask_open_board()
    qtbot.waitUntil(lambda: "Opened board1.wbd" in alice.statusBar().currentMessage())
    assert warnings == []
    # The clear and the file's two strokes were sent: the board is the file's again.
    qtbot.waitUntil(lambda: len(alice.replica.board.objects()) == 2, timeout=WAIT_MS)
