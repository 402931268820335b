"""Leaving asks first when it would lose something (whiteboard/app/leaving.py): the last member
on a board, or drawings not yet delivered; real windows on loopback multicast."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, WAIT_MS, drag, open_window
from whiteboard.app.import_sender import IMPORT_BATCH
from whiteboard.app.leaving import LeavingLoss
from whiteboard.app.window import MainWindow
from whiteboard.board import Board
from whiteboard.board.files import open_board, save_board
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.net.runtime import NetConfig

Button = QMessageBox.StandardButton


@dataclass
class Asked:
    """Each leaving question's text, answered from ``answers`` in turn (Cancel after)."""

    texts: list[str] = field(default_factory=list)
    answers: list[Button] = field(default_factory=list)

    def exec(self, box: QMessageBox) -> int:
        self.texts.append(box.text())
        return (self.answers.pop(0) if self.answers else Button.Cancel).value


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Asked:
    questions = Asked()
    # The real one waits for a click.
    monkeypatch.setattr(QMessageBox, "exec", lambda box: questions.exec(box))
    return questions


def draw_one(qtbot: QtBot, window: MainWindow) -> None:
    drag(window, PATH)
    qtbot.waitUntil(lambda: len(window.replica.board) == 1, timeout=WAIT_MS)


@pytest.mark.network
def test_the_last_member_is_asked_and_cancel_stays(
    qtbot: QtBot, net: NetConfig, asked: Asked
) -> None:
    alice = open_window(qtbot, net, "alice")
    draw_one(qtbot, alice)
    alice.quit_action.trigger()  # Ctrl+Q
    [text] = asked.texts
    assert "last member" in text
    assert alice.isVisible() and not alice.transport.finished

    asked.answers.append(Button.Discard)  # "Quit anyway"
    alice.quit_action.trigger()
    qtbot.waitUntil(lambda: not alice.isVisible(), timeout=WAIT_MS)


@pytest.mark.network
def test_save_first_saves_the_board_then_leaves(
    qtbot: QtBot, net: NetConfig, asked: Asked, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = open_window(qtbot, net, "alice")
    draw_one(qtbot, alice)
    path = tmp_path / "kept"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(path), ""))
    asked.answers.append(Button.Save)
    alice.quit_action.trigger()
    qtbot.waitUntil(lambda: not alice.isVisible(), timeout=WAIT_MS)
    saved = open_board(path.with_suffix(".wbd"))
    assert saved.board.hash() == alice.replica.board.hash()


@pytest.mark.network
def test_nothing_is_asked_with_others_on_the_board_or_an_empty_one(
    qtbot: QtBot, net: NetConfig, asked: Asked
) -> None:
    alone = open_window(qtbot, net, "alone")
    alone.quit_action.trigger()  # an empty board: nothing to lose
    qtbot.waitUntil(lambda: not alone.isVisible(), timeout=WAIT_MS)
    ann, bob = open_window(qtbot, net, "ann"), open_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: not ann.leaving_loss().last_member, timeout=WAIT_MS)
    draw_one(qtbot, ann)
    ann.quit_action.trigger()  # bob still has the board
    qtbot.waitUntil(lambda: not ann.isVisible(), timeout=WAIT_MS)
    assert asked.texts == []
    assert bob.isVisible()


def test_drawings_not_yet_delivered_are_asked_about_even_with_others() -> None:
    loss = LeavingLoss(last_member=False, objects=3, undelivered=1)
    text = loss.question()
    assert text is not None
    assert "A drawing of yours has not reached the others yet" in text
    assert "last member" not in text
    both = LeavingLoss(last_member=True, objects=3, undelivered=2).question()
    assert both is not None and "2 of your drawings have" in both and "last member" in both
    assert LeavingLoss(last_member=True, objects=0, undelivered=0).question() is None
    assert LeavingLoss(last_member=False, objects=5, undelivered=0).question() is None


@pytest.mark.network
def test_leaving_while_a_file_is_still_being_sent_asks_even_with_others(
    qtbot: QtBot, net: NetConfig, asked: Asked, tmp_path: Path
) -> None:
    ann, bob = open_window(qtbot, net, "ann"), open_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: not ann.leaving_loss().last_member, timeout=WAIT_MS)
    big = Board()
    rng = random.Random(3)
    for counter in range(1, IMPORT_BATCH + 51):
        big.apply((counter,), synthetic_stroke(7, counter, rng))
    path = tmp_path / "big.wbd"
    save_board(path, big)
    assert ann.files.open_board_from(path)  # the first batch is sent, the rest queued
    ann.quit_action.trigger()
    [text] = asked.texts
    assert "of your drawings have not reached the others yet" in text
    assert "last member" not in text
    assert ann.isVisible() and bob.isVisible()
