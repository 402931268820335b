"""A passphrase remembered in the system keyring only when asked (issue 21): the real
``keyring`` library, with an in-memory backend standing in for the desktop's keyring (this
machine has none, which the dialog must also handle)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import click, retype
from tests.app.test_start_dialog import SAVED, open_dialog, press_ok
from whiteboard.app.remembered import SERVICE, PassphraseStore
from whiteboard.app.settings import save_settings
from whiteboard.app.start_dialog import NO_KEYRING, StartDialog, choose_session

PASSPHRASE = "a long and private passphrase"


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.entries.pop((service, username), None) is None:
            raise PasswordDeleteError("nothing to delete")


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


def test_without_a_keyring_nothing_is_offered(qtbot: QtBot) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        assert not PassphraseStore().available()
        dialog = open_dialog(qtbot)
        assert not dialog.remember_box.isEnabled()
        assert dialog.remember_box.toolTip() == NO_KEYRING
    finally:
        keyring.set_keyring(previous)


def answer_dialog(qtbot: QtBot, action: object) -> None:
    def run() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, StartDialog))
        assert callable(action)
        action(dialog)
        press_ok(qtbot, dialog)

    QTimer.singleShot(200, run)


def test_a_passphrase_is_remembered_when_asked_and_forgotten_when_not(
    qtbot: QtBot, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)
    save_settings(store, SAVED)

    def type_and_remember(dialog: StartDialog) -> None:
        assert dialog.remember_box.isEnabled() and not dialog.remember_box.isChecked()
        retype(qtbot, dialog.passphrase_edit, PASSPHRASE)
        click(qtbot, dialog.remember_box)

    answer_dialog(qtbot, type_and_remember)
    chosen = choose_session(store)
    assert chosen is not None and chosen.remember_passphrase
    assert memory_keyring.entries == {(SERVICE, SAVED.group): PASSPHRASE}
    assert PASSPHRASE not in (tmp_path / "whiteboard.ini").read_text()

    seen: list[tuple[str, bool]] = []

    def look_then_forget(dialog: StartDialog) -> None:
        seen.append((dialog.passphrase_edit.text(), dialog.remember_box.isChecked()))
        click(qtbot, dialog.remember_box)

    answer_dialog(qtbot, look_then_forget)
    chosen = choose_session(store)
    assert seen == [(PASSPHRASE, True)]  # next time: filled in from the keyring
    assert chosen is not None and chosen.passphrase == PASSPHRASE
    assert not chosen.remember_passphrase and memory_keyring.entries == {}
