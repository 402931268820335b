"""Encrypted recordings in the app (issue 21 point 3): a private session's window records
its log encrypted (unless the start dialog's box is unticked); File > Open recording opens
the session's own recordings at once and asks for the passphrase of others, again if wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QInputDialog
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import retype
from tests.app.test_start_dialog import open_dialog, press_ok
from tests.app.test_window import PATH, drag
from tests.app.test_window_private import PASSPHRASE, WAIT_MS
from whiteboard.app.replay_window import LOCKED_TEXT, WRONG_SECRET, open_recording
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig
from whiteboard.security import derive_session_key
from whiteboard.sessionlog import RecordingLocked, Unlock, read_log


def test_the_start_dialog_offers_to_encrypt_a_private_sessions_recording(
    qtbot: QtBot,
) -> None:
    dialog = open_dialog(qtbot)
    assert dialog.encrypt_box.isChecked() and not dialog.encrypt_box.isEnabled()
    retype(qtbot, dialog.passphrase_edit, PASSPHRASE)
    assert dialog.encrypt_box.isEnabled()
    dialog.encrypt_box.setChecked(False)
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None and chosen.encrypt_recordings is False


@pytest.mark.network
def test_a_private_windows_recording_is_encrypted_and_opens_with_its_passphrase(
    qtbot: QtBot, net: NetConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = derive_session_key(PASSPHRASE, str(net.group))
    ada = MainWindow("rmp", net, {"profile": "lan"}, "ada", log_dir=tmp_path, key=key)
    qtbot.addWidget(ada)
    ada.show()
    qtbot.waitUntil(lambda: not ada.canvas.is_read_only(), timeout=WAIT_MS)
    drag(ada, PATH)
    qtbot.waitUntil(lambda: len(ada.replica.board) == 1, timeout=WAIT_MS)
    board_hash = ada.replica.board.hash()
    ada.close()
    qtbot.waitUntil(lambda: ada.session_log is None, timeout=WAIT_MS)
    [log] = tmp_path.glob("*.wblog")
    assert b"ada" not in log.read_bytes()
    with pytest.raises(RecordingLocked):
        read_log(log)
    assert read_log(log, Unlock(PASSPHRASE)).header.member_name == "ada"

    # The session's own key opens it without asking.
    asked: list[str] = []
    answers = iter([("a wrong passphrase", True), (PASSPHRASE, True)])

    def ask(parent: object, title: str, label: str, *rest: object) -> tuple[str, bool]:
        asked.append(label)
        return next(answers)

    monkeypatch.setattr(QInputDialog, "getText", ask)
    known = open_recording(log, None, (key,))
    assert known is not None and asked == []
    qtbot.addWidget(known)
    # Another window asks, and asks again after a wrong passphrase.
    window = open_recording(log, None)
    assert window is not None
    qtbot.addWidget(window)
    assert asked == [LOCKED_TEXT.format(name=log.name), WRONG_SECRET.format(name=log.name)]
    window.seek_to(window.timeline.end_us)
    assert window.replay.board.hash() == board_hash
