"""The start dialog: host or join, prefilled from the saved settings, and what each choice
means for each transport (hosting MTP is being its master; for RMP and raw it is a fresh
group)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import INTERFACES, LOCAL, choose, click, retype
from whiteboard.app.settings import (
    GROUP_MESSAGE,
    SessionSettings,
    fresh_group,
    read_settings,
    save_settings,
)
from whiteboard.app.start_dialog import StartDialog, choose_session

SEED = 7
SAVED = SessionSettings(
    transport="rmp", group="239.255.50.60:31000", display_name="Ada", colour=0xFF1E88E5, ttl=2
)


@pytest.fixture
def store(tmp_path: Path) -> QSettings:
    store = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)
    save_settings(store, SAVED)
    return store


def open_dialog(qtbot: QtBot, settings: SessionSettings = SAVED) -> StartDialog:
    dialog = StartDialog(
        settings, rng=random.Random(SEED), interfaces=INTERFACES, local_addresses=LOCAL
    )
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def press_ok(qtbot: QtBot, dialog: StartDialog) -> None:
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)


def test_join_is_prefilled_from_the_saved_settings(qtbot: QtBot, store: QSettings) -> None:
    dialog = open_dialog(qtbot, read_settings(store, LOCAL).settings)
    assert dialog.join_radio.isChecked() and not dialog.hosting
    assert dialog.name_edit.text() == "Ada"
    assert dialog.group_edit.text() == "239.255.50.60:31000"
    assert dialog.transport_box.currentData() == "rmp"
    assert dialog.ok_button.text() == "&Join"
    press_ok(qtbot, dialog)
    assert not dialog.isVisible()
    assert dialog.chosen() == SAVED


def test_hosting_rmp_suggests_a_fresh_group_and_shows_it(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    expected = fresh_group(random.Random(SEED))
    click(qtbot, dialog.host_radio)
    assert dialog.hosting
    assert dialog.group_edit.text() == expected != SAVED.group
    assert expected in dialog.hint_label.text()
    assert "RMP" in dialog.hint_label.text()
    assert dialog.ok_button.text() == "&Host"
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None
    # Nothing else differs: for RMP a host is a member like any other.
    assert chosen == replace(SAVED, group=expected)
    assert chosen.to_transport_params() == {"profile": "lan"}


def test_hosting_mtp_is_being_its_master(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    choose(qtbot, dialog.transport_box, "mtp")
    click(qtbot, dialog.host_radio)
    assert "ends for everyone when you close it" in dialog.hint_label.text()
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None
    assert (chosen.transport, chosen.mtp_role) == ("mtp", "host")
    assert chosen.to_transport_params()["role"] == "master"


@pytest.mark.parametrize(
    ("saved_role", "joined_as"),
    [("host", "producer"), ("producer", "producer"), ("viewer", "viewer")],
)
def test_joining_mtp_is_never_as_master(qtbot: QtBot, saved_role: str, joined_as: str) -> None:
    saved = replace(SAVED, transport="mtp", mtp_role=saved_role)
    dialog = open_dialog(qtbot, saved)
    assert "needs its host" in dialog.hint_label.text()
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None and chosen.mtp_role == joined_as
    assert chosen.group == SAVED.group


def test_each_mode_keeps_its_own_group(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.group_edit, "239.255.1.1:1111")
    click(qtbot, dialog.host_radio)
    hosted = dialog.group_edit.text()
    assert hosted == fresh_group(random.Random(SEED))
    click(qtbot, dialog.join_radio)
    assert dialog.group_edit.text() == "239.255.1.1:1111"
    click(qtbot, dialog.host_radio)
    assert dialog.group_edit.text() == hosted


def test_a_bad_group_keeps_the_dialog_open(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.group_edit, "239.1.2.3")
    retype(qtbot, dialog.name_edit, "")
    press_ok(qtbot, dialog)
    assert dialog.isVisible() and dialog.chosen() is None
    assert dialog.rows["group"].error.isVisible()
    assert dialog.rows["group"].error.text() == GROUP_MESSAGE
    assert dialog.rows["display_name"].error.isVisible()
    assert dialog.focusWidget() is dialog.name_edit  # the first field to fix


def test_a_problem_in_a_setting_not_shown_points_to_more_settings(qtbot: QtBot) -> None:
    saved = replace(SAVED, iface="198.51.100.7")
    dialog = open_dialog(qtbot, saved)
    press_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert dialog.problems_label.isVisible()
    assert "198.51.100.7 is not on this machine" in dialog.problems_label.text()
    assert "More settings" in dialog.problems_label.text()


def test_more_settings_are_taken_into_the_session(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.name_edit, "Bea")
    qtbot.mouseClick(dialog.more_button, Qt.MouseButton.LeftButton)
    more = dialog.more_dialog
    assert more is not None and more.isVisible()
    assert more.name_edit.text() == "Bea"  # what was typed here, not what was saved
    choose(qtbot, more.transport_box, "mtp")
    choose(qtbot, more.role_box, "host")
    more.ttl_spin.setFocus()
    qtbot.keyClick(more.ttl_spin, Qt.Key.Key_Up)  # 2 -> 3
    qtbot.mouseClick(
        more.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton
    )
    assert not more.isVisible()
    # Host chosen as the MTP role there is the Host mode here, on the group shown there.
    assert dialog.hosting
    assert dialog.transport_box.currentData() == "mtp"
    assert dialog.group_edit.text() == SAVED.group
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None
    assert (chosen.display_name, chosen.ttl, chosen.transport, chosen.mtp_role) == (
        "Bea",
        3,
        "mtp",
        "host",
    )


def test_cancelled_more_settings_change_nothing(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    qtbot.mouseClick(dialog.more_button, Qt.MouseButton.LeftButton)
    more = dialog.more_dialog
    assert more is not None
    retype(qtbot, more.name_edit, "Zed")
    cancel = more.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert dialog.name_edit.text() == "Ada"
    press_ok(qtbot, dialog)
    assert dialog.chosen() == SAVED


def test_cancel_is_none(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    cancel = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible() and dialog.chosen() is None


def test_choose_session_loads_reports_and_saves(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "whiteboard.ini"
    path.write_text("[session]\ndisplay_name=Cy\ngroup=239.255.8.9:22000\nttl=many\n")
    store = QSettings(str(path), QSettings.Format.IniFormat)
    seen: list[StartDialog] = []

    def answer() -> None:
        # Runs inside the dialog's own event loop (exec), as a person's click would.
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, StartDialog)
        seen.append(dialog)
        retype(qtbot, dialog.name_edit, "Cyd")
        qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))

    QTimer.singleShot(0, answer)
    chosen = choose_session(store)
    [dialog] = seen
    assert "ttl" in dialog.notice_label.text() and "'many'" in dialog.notice_label.text()
    assert chosen is not None
    assert (chosen.display_name, chosen.group, chosen.ttl) == ("Cyd", "239.255.8.9:22000", 1)
    reloaded = read_settings(QSettings(str(path), QSettings.Format.IniFormat))
    assert reloaded.settings == chosen and reloaded.reset == ()


def test_choose_session_cancelled_saves_nothing(qtbot: QtBot, store: QSettings) -> None:
    def cancel() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, StartDialog)
        retype(qtbot, dialog.name_edit, "Zed")
        dialog.reject()

    QTimer.singleShot(0, cancel)
    assert choose_session(store) is None
    assert read_settings(store, LOCAL).settings == SAVED


def test_a_fields_problem_is_shown_whole(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.group_edit, "239.1.2.3")
    press_ok(qtbot, dialog)
    error = dialog.rows["group"].error
    qtbot.waitUntil(lambda: error.isVisible())
    QApplication.processEvents()
    # Two lines or more at the dialog's width: the label is as tall as its text needs there
    # (it was given one line's height, clipping the text top and bottom).
    assert error.wordWrap()
    needed = error.heightForWidth(error.width())
    assert needed > error.fontMetrics().height() * 1.5
    assert error.height() >= needed
    assert error.sizeHint().width() <= error.width()
    assert error.geometry().bottom() < dialog.rows["group"].height()


def test_a_fields_problem_goes_once_the_field_is_right(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    height = dialog.height()
    retype(qtbot, dialog.group_edit, "239.1.2.3")
    retype(qtbot, dialog.name_edit, "")
    press_ok(qtbot, dialog)
    assert dialog.rows["group"].error.isVisible()
    assert dialog.rows["display_name"].error.isVisible()
    retype(qtbot, dialog.group_edit, "239.255.1.2:5000")
    assert not dialog.rows["group"].error.isVisible()
    assert dialog.rows["group"].error.text() == ""
    # The other field's problem stays until it is fixed too.
    assert dialog.rows["display_name"].error.isVisible()
    retype(qtbot, dialog.name_edit, "Ada")
    assert not dialog.rows["display_name"].error.isVisible()
    # The room the messages took goes with them.
    qtbot.waitUntil(lambda: dialog.height() == height)
    # No problem appears while typing: only OK shows them.
    retype(qtbot, dialog.group_edit, "nonsense")
    assert not dialog.rows["group"].error.isVisible()
