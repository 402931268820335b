"""What shows the session state (whiteboard/app/session_banner.py): text that fits its room,
and a banner that says what is happening unless the member is connected."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from whiteboard.app.session_banner import ElidedLabel, SessionBanner
from whiteboard.app.session_state import SessionLink, SessionState

LONG = (
    "no word from the mtp master for 10.0 s (more than retention heartbeats, RFC 1301 "
    "§3.2.5): rejoining the web"
)


def test_a_long_text_is_cut_to_its_room_and_whole_in_the_tooltip(qtbot: QtBot) -> None:
    """Issue 17: the status bar's failure ran under the labels beside it, cut off."""
    label = ElidedLabel()
    qtbot.addWidget(label)
    label.resize(200, 20)
    label.setText(LONG)
    label.show()
    assert label.text() == LONG and label.toolTip() == LONG
    assert label.shown_text().endswith("…") and len(label.shown_text()) < len(LONG)
    assert label.minimumSizeHint().width() <= 40  # never asks for the whole text's width
    label.resize(2000, 20)
    assert label.shown_text() == LONG


def test_the_banner_shows_unless_connected_and_offers_actions_once_ended(
    qtbot: QtBot,
) -> None:
    canvas = QWidget()
    qtbot.addWidget(canvas)
    canvas.resize(500, 400)
    calls: list[str] = []
    banner = SessionBanner(
        canvas, lambda: calls.append("host"), lambda: calls.append("save"), lambda: None
    )
    canvas.show()
    banner.show_state(SessionState(SessionLink.CONNECTED, "", True))
    assert banner.isHidden()
    banner.show_state(SessionState(SessionLink.RECONNECTING, LONG, True))
    assert banner.isVisible() and banner.action_row.isHidden()
    assert banner.width() <= canvas.width() and banner.height() >= banner.message.heightForWidth(
        banner.message.width()
    )
    banner.show_state(SessionState(SessionLink.ENDED, "The host ended the session."))
    assert not banner.action_row.isHidden()
    banner.host_button.click()
    banner.save_button.click()
    assert calls == ["host", "save"]
    banner.set_host_available(False)
    banner.show_state(SessionState(SessionLink.ENDED, "The host ended the session."))
    assert banner.host_button.isHidden() and "host a new board" not in banner.message.text()
    canvas.resize(300, 400)  # the banner follows the canvas's width
    assert banner.width() <= 300 - 2 * 12
