"""The settings dialog, driven as a person would: keys into fields, clicks on buttons. OK must
not close it while a setting is unusable, and must say why next to the setting."""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QDialogButtonBox,
    QLineEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from whiteboard.app.interfaces import InterfaceChoice
from whiteboard.app.settings import (
    GROUP_MESSAGE,
    SessionSettings,
    colour_for_name,
)
from whiteboard.app.settings_dialog import SettingsDialog

INTERFACES = [
    InterfaceChoice("System default", ""),
    InterfaceChoice("lo — 127.0.0.1 (loopback: this computer only)", "127.0.0.1"),
    InterfaceChoice("eth9 — 192.168.7.20", "192.168.7.20"),
]
LOCAL = frozenset({"127.0.0.1", "192.168.7.20"})
W = TypeVar("W", bound=QWidget)
BASE = SessionSettings(display_name="Ada", colour=colour_for_name("Ada"))


def open_dialog(qtbot: QtBot, settings: SessionSettings = BASE) -> SettingsDialog:
    dialog = SettingsDialog(settings, interfaces=INTERFACES, local_addresses=LOCAL)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def click(qtbot: QtBot, button: QAbstractButton) -> None:
    # Near the left edge: a check box or radio button stretched by its layout reacts to clicks
    # on its indicator and text only, not on the empty middle of the widget.
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def click_ok(qtbot: QtBot, dialog: SettingsDialog) -> None:
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)


def retype(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)
    assert edit.text() == text


def choose(qtbot: QtBot, box: QComboBox, value: object) -> None:
    """With the keyboard: Home, then Down to the item."""
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Home)
    for _ in range(box.findData(value)):
        qtbot.keyClick(box, Qt.Key.Key_Down)
    assert box.currentData() == value


def param(dialog: SettingsDialog, transport: str, name: str, kind: type[W]) -> W:
    editor = dialog.advanced_forms[transport].editors[name]
    assert isinstance(editor, kind)
    return editor


def test_a_bad_group_is_refused_next_to_the_field_and_the_dialog_stays_open(
    qtbot: QtBot,
) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.group_edit, "10.1.2.3:5000")
    click_ok(qtbot, dialog)
    error = dialog.rows["group"].error
    assert error.isVisible()
    assert error.text() == GROUP_MESSAGE
    assert dialog.problems_label.isVisible()
    assert dialog.isVisible()
    assert dialog.result() == 0 and dialog.session_settings() is None
    assert dialog.focusWidget() is dialog.group_edit  # straight back to the field to fix
    # Fixed, OK closes it, and the message is gone.
    retype(qtbot, dialog.group_edit, "239.255.3.4:5000")
    click_ok(qtbot, dialog)
    assert not dialog.isVisible()
    assert dialog.session_settings() == SessionSettings(
        display_name="Ada", colour=BASE.colour, group="239.255.3.4:5000"
    )


def test_an_empty_name_is_refused(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.name_edit, "")
    click_ok(qtbot, dialog)
    assert dialog.rows["display_name"].error.isVisible()
    assert "Name must be 1-40 characters" in dialog.rows["display_name"].error.text()
    assert dialog.isVisible()


def test_edits_are_the_result(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    choose(qtbot, dialog.transport_box, "mtp")
    retype(qtbot, dialog.group_edit, "239.255.10.20:30000")
    choose(qtbot, dialog.iface_box, "127.0.0.1")
    dialog.ttl_spin.setFocus()
    qtbot.keyClick(dialog.ttl_spin, Qt.Key.Key_Down)  # 1 -> 0: this computer only
    retype(qtbot, dialog.name_edit, "  Grace  ")
    choose(qtbot, dialog.role_box, "viewer")
    choose(qtbot, dialog.profile_box, "seed")
    click_ok(qtbot, dialog)
    assert dialog.session_settings() == SessionSettings(
        transport="mtp",
        group="239.255.10.20:30000",
        iface="127.0.0.1",
        ttl=0,
        display_name="Grace",
        colour=BASE.colour,
        mtp_role="viewer",
        profile="seed",
    )


def test_role_is_only_for_mtp(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    assert dialog.transport == "rmp"
    assert not dialog.role_box.isEnabled()
    choose(qtbot, dialog.transport_box, "mtp")
    assert dialog.role_box.isEnabled()
    assert dialog.advanced_toggle.text() == "Advanced: MTP parameters"
    choose(qtbot, dialog.transport_box, "raw")
    assert not dialog.role_box.isEnabled()


def test_advanced_values_are_checked_by_the_transport(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    choose(qtbot, dialog.transport_box, "mtp")
    assert not dialog.advanced_box.isVisible()
    click(qtbot, dialog.advanced_toggle)
    assert dialog.advanced_box.isVisible()
    window = param(dialog, "mtp", "window", QLineEdit)
    retype(qtbot, window, "5000")
    click_ok(qtbot, dialog)
    assert dialog.isVisible() and dialog.session_settings() is None
    assert dialog.advanced_error.isVisible()
    assert dialog.advanced_error.text() == "mtp window must be at most 1024 packets"
    assert "color" in dialog.advanced_forms["mtp"].labels["window"].styleSheet()
    retype(qtbot, window, "100")
    click_ok(qtbot, dialog)
    result = dialog.session_settings()
    assert result is not None and result.advanced == {"mtp": {"window": 100}}
    # window_max moves with it (64 in the lan profile), as mtp's params say.
    assert result.to_transport_params() == {"profile": "lan", "window": 100, "role": "producer"}


def test_a_problem_in_a_transport_not_shown_still_opens_the_advanced_section(
    qtbot: QtBot,
) -> None:
    dialog = open_dialog(qtbot)
    choose(qtbot, dialog.transport_box, "mtp")
    click(qtbot, dialog.advanced_toggle)
    retype(qtbot, param(dialog, "mtp", "tokens", QLineEdit), "13")
    click(qtbot, dialog.advanced_toggle)  # folded again
    choose(qtbot, dialog.transport_box, "rmp")
    click_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert dialog.advanced_box.isVisible()
    assert dialog.advanced_error.text().startswith("MTP: mtp parameter tokens must be from 1 to 12")


def test_a_value_that_is_not_a_number_is_named(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    click(qtbot, dialog.advanced_toggle)
    retype(qtbot, param(dialog, "rmp", "window", QLineEdit), "lots")
    retype(qtbot, param(dialog, "rmp", "rate", QLineEdit), "fast")
    click_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert dialog.advanced_error.text().splitlines() == [
        # In the order of the form, which is the order of the params dataclass.
        "rmp parameter rate must be a number, got 'fast'",
        "rmp parameter window must be a whole number, got 'lots'",
    ]
    labels = dialog.advanced_forms["rmp"].labels
    assert "color" in labels["rate"].styleSheet() and "color" in labels["window"].styleSheet()
    assert labels["image_part"].styleSheet() == ""


def test_only_values_that_differ_from_the_profile_are_kept(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    click(qtbot, dialog.advanced_toggle)
    retype(qtbot, param(dialog, "rmp", "nack_retry", QLineEdit), "0.25")
    retype(qtbot, param(dialog, "rmp", "wait_interval", QLineEdit), "4,5")
    passive = param(dialog, "rmp", "passive_join", QCheckBox)
    assert not passive.isChecked()
    passive.setFocus()
    qtbot.keyClick(passive, Qt.Key.Key_Space)
    click_ok(qtbot, dialog)
    result = dialog.session_settings()
    assert result is not None
    assert result.advanced == {"rmp": {"wait_interval": 4.5, "passive_join": True}}


def test_placeholders_are_the_profile_defaults_and_follow_the_profile(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    nack_retry = param(dialog, "rmp", "nack_retry", QLineEdit)
    assert nack_retry.placeholderText() == "0.25"  # lan
    assert nack_retry.text() == ""
    choose(qtbot, dialog.profile_box, "seed")
    assert nack_retry.placeholderText() == "1"  # the report's second
    assert param(dialog, "mtp", "heartbeat", QLineEdit).placeholderText() == "0.2"
    click_ok(qtbot, dialog)
    result = dialog.session_settings()
    assert result is not None and result.profile == "seed" and result.advanced == {}


def test_saved_overrides_are_shown_in_their_fields(qtbot: QtBot) -> None:
    settings = SessionSettings(
        display_name="Ada",
        transport="mtp",
        advanced={"mtp": {"tokens": 2, "join_with_state": False, "transport_type": "1xn"}},
    )
    dialog = open_dialog(qtbot, settings)
    assert param(dialog, "mtp", "tokens", QLineEdit).text() == "2"
    assert not param(dialog, "mtp", "join_with_state", QCheckBox).isChecked()
    assert param(dialog, "mtp", "transport_type", QComboBox).currentData() == "1xn"
    click_ok(qtbot, dialog)
    assert dialog.session_settings() == settings


def test_restore_defaults(qtbot: QtBot) -> None:
    settings = SessionSettings(
        display_name="Ada",
        transport="raw",
        ttl=9,
        profile="seed",
        advanced={"raw": {"hello_interval": 2.0}},
    )
    dialog = open_dialog(qtbot, settings)
    retype(qtbot, dialog.group_edit, "nonsense")
    click_ok(qtbot, dialog)
    assert dialog.rows["group"].error.isVisible()
    restore = dialog.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
    qtbot.mouseClick(restore, Qt.MouseButton.LeftButton)
    assert not dialog.rows["group"].error.isVisible()
    assert dialog.isVisible()
    click_ok(qtbot, dialog)
    assert dialog.session_settings() == SessionSettings()


def test_the_colour_button_picks_a_colour(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    assert dialog.colour_button.text() == QColor.fromRgba(BASE.colour).name()
    assert dialog.auto_colour_box.isChecked()  # never chosen: a free colour each session
    qtbot.mouseClick(dialog.colour_button, Qt.MouseButton.LeftButton)
    picker = dialog.colour_dialog
    assert picker.isVisible()
    assert picker.currentColor().rgba() == BASE.colour
    picker.setCurrentColor(QColor("#123456"))
    [box] = picker.findChildren(QDialogButtonBox)
    qtbot.mouseClick(box.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
    assert not picker.isVisible()
    assert dialog.colour_button.text() == "#123456"
    assert not dialog.auto_colour_box.isChecked()  # picked: kept, even if another has it
    click_ok(qtbot, dialog)
    result = dialog.session_settings()
    assert result is not None and result.colour == 0xFF123456 and result.own_colour


def test_a_picked_colour_can_go_back_to_a_free_one(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot, replace(BASE, own_colour=True))
    assert not dialog.auto_colour_box.isChecked()
    click(qtbot, dialog.auto_colour_box)
    click_ok(qtbot, dialog)
    result = dialog.session_settings()
    assert result is not None and not result.own_colour


def test_a_saved_interface_this_machine_lacks_is_shown_and_refused(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot, SessionSettings(display_name="Ada", iface="198.51.100.7"))
    assert dialog.iface_box.currentText() == "198.51.100.7 (not found on this computer)"
    click_ok(qtbot, dialog)
    assert "198.51.100.7 is not on this machine" in dialog.rows["iface"].error.text()
    choose(qtbot, dialog.iface_box, "")
    click_ok(qtbot, dialog)
    result = dialog.session_settings()
    assert result is not None and result.iface == ""


def test_cancel_gives_nothing(qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.name_edit, "Zed")
    cancel = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    assert dialog.session_settings() is None


@pytest.mark.parametrize("transport", ["rmp", "mtp", "raw"])
def test_every_transport_has_a_form_of_its_parameters(qtbot: QtBot, transport: str) -> None:
    dialog = open_dialog(qtbot)
    form = dialog.advanced_forms[transport]
    assert form.editors  # generated from the params dataclass
    choose(qtbot, dialog.transport_box, transport)
    assert dialog.advanced_stack.currentWidget() is form
