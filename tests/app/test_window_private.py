"""Private sessions in the app (issue 21): the start dialog takes a passphrase (hidden, with a
strength hint, never saved); windows with it draw together over RMP and MTP on real loopback
multicast, and a window on the same group without it sees nothing of theirs and is told why."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import click, retype
from tests.app.test_start_dialog import SAVED, open_dialog, press_ok
from tests.app.test_window import PATH, drag
from whiteboard.app import main
from whiteboard.app.members_panel import OPEN_TEXT, PRIVATE_TEXT
from whiteboard.app.settings import read_settings, save_settings
from whiteboard.app.start_dialog import StartDialog, choose_session
from whiteboard.app.view_code import NO_VIEWERS_SHORT
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig
from whiteboard.security import SessionKey, derive_session_key
from whiteboard.security.channel import SEALED_IN_PUBLIC
from whiteboard.security.strength import HINTS, Strength

WAIT_MS = 30_000
PASSPHRASE = "a long and private passphrase"


def test_the_passphrase_is_hidden_hinted_checked_and_never_saved(
    qtbot: QtBot, tmp_path: Path
) -> None:
    dialog = open_dialog(qtbot)
    edit = dialog.passphrase_edit
    assert edit.echoMode() is QLineEdit.EchoMode.Password
    assert dialog.strength_label.text() == HINTS[Strength.NONE]
    retype(qtbot, edit, "short")
    assert dialog.strength_label.text() == HINTS[Strength.TOO_SHORT]
    press_ok(qtbot, dialog)
    assert dialog.isVisible()  # refused, said under the field
    assert "at least 8 characters" in dialog.rows["passphrase"].error.text()
    retype(qtbot, edit, "password")
    assert dialog.strength_label.text() == HINTS[Strength.WEAK]
    assert not dialog.rows["passphrase"].error.text()  # the message goes once it is right
    retype(qtbot, edit, PASSPHRASE)
    assert dialog.strength_label.text() == HINTS[Strength.STRONG]
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None and chosen.passphrase == PASSPHRASE
    assert PASSPHRASE not in repr(chosen)
    key = chosen.session_key()
    assert key == derive_session_key(PASSPHRASE, SAVED.group)

    store = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)
    save_settings(store, chosen)
    assert PASSPHRASE not in (tmp_path / "whiteboard.ini").read_text()
    assert read_settings(store).settings.passphrase == ""


def test_choosing_a_session_saves_everything_but_the_passphrase(
    qtbot: QtBot, tmp_path: Path
) -> None:
    store = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)
    save_settings(store, SAVED)

    def answer() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, StartDialog))
        retype(qtbot, dialog.passphrase_edit, PASSPHRASE)
        press_ok(qtbot, dialog)

    QTimer.singleShot(200, answer)
    chosen = choose_session(store)
    assert chosen is not None and chosen.passphrase == PASSPHRASE
    assert PASSPHRASE not in (tmp_path / "whiteboard.ini").read_text()


def open_window(
    qtbot: QtBot,
    net: NetConfig,
    transport: str,
    name: str,
    role: str | None,
    key: SessionKey | None,
) -> tuple[MainWindow, list[str]]:
    params: dict[str, object] = {"profile": "lan"}
    if role is not None:
        params["role"] = role
    window = MainWindow(transport, net, params, name, key=key)
    told: list[str] = []
    tell = window.state_view.tell
    window.state_view.tell = lambda text: (told.append(text), tell(text))  # type: ignore[method-assign]
    qtbot.addWidget(window)
    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    return window, told


def test_letting_people_watch_is_a_choice_of_the_start_dialog_and_is_kept(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """Off by default; offered only with a passphrase (a view code's session has viewers);
    ticked with its key, it gives the session with viewers, and is remembered."""
    dialog = open_dialog(qtbot)
    box = dialog.viewers_box
    assert not box.isChecked() and not box.isEnabled()
    retype(qtbot, dialog.passphrase_edit, PASSPHRASE)
    assert box.isEnabled()
    click(qtbot, box)
    assert box.isChecked()
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None and chosen.allow_viewers
    key = chosen.session_key()
    assert key == derive_session_key(PASSPHRASE, SAVED.group, viewers=True) and key.viewers
    store = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)
    save_settings(store, chosen)
    assert read_settings(store).settings.allow_viewers
    code = derive_session_key(PASSPHRASE, SAVED.group, viewers=True).view_code()
    retype(qtbot, dialog.passphrase_edit, code)
    assert not box.isEnabled()


@pytest.mark.network
@pytest.mark.parametrize(
    ("transport", "host", "member"), [("rmp", None, None), ("mtp", "master", "producer")]
)
def test_windows_with_the_passphrase_draw_together_and_one_without_sees_nothing(
    qtbot: QtBot, net: NetConfig, transport: str, host: str | None, member: str | None
) -> None:
    key = derive_session_key(PASSPHRASE, str(net.group))
    alice, _ = open_window(qtbot, net, transport, "alice", host, key)
    assert "private" in alice.transport_label.text()
    assert alice.members_panel.privacy.text() == PRIVATE_TEXT
    qtbot.waitUntil(lambda: not alice.canvas.is_read_only(), timeout=WAIT_MS)
    # A session without viewers has no view code to give, and says how to get one.
    assert alice.members_panel.view_code_button.isHidden()
    QApplication.clipboard().setText("before")
    alice.view_code_action.trigger()
    assert alice.statusBar().currentMessage() == NO_VIEWERS_SHORT
    assert QApplication.clipboard().text() == "before"
    bob, _ = open_window(qtbot, net, transport, "bob", member, key)
    qtbot.waitUntil(lambda: not bob.canvas.is_read_only(), timeout=WAIT_MS)
    eve, eve_told = open_window(qtbot, net, transport, "eve", host, None)
    assert "private" not in eve.transport_label.text()
    assert eve.members_panel.privacy.text() == OPEN_TEXT
    qtbot.waitUntil(lambda: not eve.canvas.is_read_only(), timeout=WAIT_MS)

    drag(alice, PATH)
    drag(bob, [(x, y + 100) for x, y in PATH])
    drag(eve, [(x, y + 200) for x, y in PATH])
    qtbot.waitUntil(
        lambda: len(alice.replica.board) == 2 and len(bob.replica.board) == 2, timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: SEALED_IN_PUBLIC in eve_told, timeout=WAIT_MS)
    qtbot.wait(300)  # time for anything that was going to leak
    assert alice.replica.board.hash() == bob.replica.board.hash()
    assert len(eve.replica.board) == 1  # her own stroke only
    assert alice.transport.counters()["clear_dropped"] > 0  # eve's datagrams, refused
    assert eve.transport.counters()["sealed_dropped"] > 0
    assert eve.transport.counters().get("malformed_dropped", 0) == 0


@pytest.fixture
def errors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(main, "show_error", shown.append)  # the real one is a modal dialog
    return shown


def test_the_app_takes_a_passphrase_file_and_explains_a_bad_one(
    qtbot: QtBot, errors: list[str], tmp_path: Path
) -> None:
    session = ["--transport", "rmp", "--group", "239.255.201.7:23107", "--iface", "127.0.0.1"]
    short = tmp_path / "short"
    short.write_text("tiny\n")
    assert main.run_app([*session, "--passphrase-file", str(short)]) == main.EXIT_CANNOT_OPEN
    assert "at least 8 characters" in errors[-1] and "Traceback" not in errors[-1]
    assert main.run_app([*session, "--passphrase-file", str(tmp_path / "none")]) == 2
    assert "cannot read the passphrase file" in errors[-1]
    assert main.run_app([*session, "--allow-viewers"]) == main.EXIT_CANNOT_OPEN
    assert "--allow-viewers needs a private session" in errors[-1]


def test_the_settings_dialog_keeps_what_it_does_not_show(qtbot: QtBot) -> None:
    """Renaming oneself in Settings keeps the private session: the passphrase, the viewers
    choice and the recording's encryption are not fields of that dialog, and stay."""
    from tests.app.test_settings_dialog import INTERFACES, LOCAL
    from whiteboard.app.settings_dialog import SettingsDialog

    private = replace(
        SAVED, passphrase=PASSPHRASE, allow_viewers=True, encrypt_recordings=False
    )
    dialog = SettingsDialog(private, interfaces=INTERFACES, local_addresses=LOCAL)
    qtbot.addWidget(dialog)
    retype(qtbot, dialog.name_edit, "Grace")
    chosen, problems = dialog.collect()
    assert not problems and chosen.display_name == "Grace"
    assert chosen == replace(private, display_name="Grace")
    assert chosen.session_key() == private.session_key()


def test_a_passphrase_given_outside_prefills_the_start_dialog(
    qtbot: QtBot, tmp_path: Path
) -> None:
    store = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)

    def look_and_accept() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, StartDialog))
        assert dialog.passphrase_edit.text() == PASSPHRASE
        assert dialog.strength_label.text() == HINTS[Strength.STRONG]
        press_ok(qtbot, dialog)

    QTimer.singleShot(200, look_and_accept)
    chosen = choose_session(store, passphrase=PASSPHRASE, allow_viewers=True)
    assert chosen is not None and chosen.passphrase == PASSPHRASE
    assert chosen.allow_viewers  # --allow-viewers ticks the box
