"""Viewers in the app (issue 21 point 2): a drawer copies the private session's view code; a
window that joins with it shows the board as it is drawn, says it only watches, has its
drawing tools disabled, and even an op it is made to send is applied by no one."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import retype
from tests.app.test_start_dialog import SAVED, open_dialog, press_ok
from tests.app.test_window import PATH, drag
from tests.app.test_window_private import PASSPHRASE, WAIT_MS, open_window
from whiteboard.app.members_panel import PRIVATE_VIEWERS_TEXT, VIEWING_TEXT
from whiteboard.app.session import VIEW_CODE_REASON
from whiteboard.app.view_code import COPIED
from whiteboard.board import OpId, Stroke, Tool
from whiteboard.net.runtime import NetConfig
from whiteboard.security import derive_session_key
from whiteboard.security.keys import session_key_from_view_code
from whiteboard.security.strength import VIEW_CODE_HINT


def test_the_start_dialog_takes_a_view_code_where_the_passphrase_goes(qtbot: QtBot) -> None:
    code = derive_session_key(PASSPHRASE, SAVED.group, viewers=True).view_code()
    dialog = open_dialog(qtbot)
    retype(qtbot, dialog.passphrase_edit, code[:-3])
    assert "mistyped" in dialog.strength_label.text()
    press_ok(qtbot, dialog)
    assert dialog.isVisible() and "mistyped" in dialog.rows["passphrase"].error.text()
    retype(qtbot, dialog.passphrase_edit, code)
    assert dialog.strength_label.text() == VIEW_CODE_HINT
    press_ok(qtbot, dialog)
    chosen = dialog.chosen()
    assert chosen is not None
    key = chosen.session_key()
    assert key is not None and not key.can_draw
    assert key.key_id == derive_session_key(PASSPHRASE, SAVED.group, viewers=True).key_id


@pytest.mark.network
@pytest.mark.parametrize(
    ("transport", "host", "member"), [("rmp", None, None), ("mtp", "master", "producer")]
)
def test_a_window_with_the_view_code_watches_and_cannot_draw(
    qtbot: QtBot, net: NetConfig, transport: str, host: str | None, member: str | None
) -> None:
    key = derive_session_key(PASSPHRASE, str(net.group), viewers=True)
    alice, _ = open_window(qtbot, net, transport, "alice", host, key)
    assert alice.members_panel.privacy.text() == PRIVATE_VIEWERS_TEXT
    assert alice.view_code_action.isEnabled()
    qtbot.waitUntil(lambda: not alice.canvas.is_read_only(), timeout=WAIT_MS)
    alice.view_code_action.trigger()
    code = QApplication.clipboard().text()
    assert code == key.view_code() and alice.statusBar().currentMessage() == COPIED

    viewer_key = session_key_from_view_code(code)
    vic, _ = open_window(qtbot, net, transport, "vic", member, viewer_key)
    assert "view only" in vic.transport_label.text()
    assert vic.members_panel.privacy.text() == VIEWING_TEXT
    assert not vic.members_panel.view_code_button.isVisibleTo(vic.members_panel)
    assert vic.canvas.toolTip() == VIEW_CODE_REASON
    assert not any(action.isEnabled() for action in vic.toolbar.drawing_actions())
    assert not vic.clear_action.isEnabled()

    drag(alice, PATH)
    qtbot.waitUntil(lambda: len(vic.replica.board) == 1, timeout=WAIT_MS)
    assert vic.replica.board.hash() == alice.replica.board.hash()
    drag(vic, [(x, y + 100) for x, y in PATH])  # the canvas takes no drawing
    # A viewer made to send an op anyway (a changed copy of the app would): nobody applies it.
    forged = Stroke(OpId(vic.transport.member_id, 99), (0.0, 0.0, 50.0, 50.0), 1, 2.0, Tool.PEN)
    assert vic._send_op(forged)
    qtbot.waitUntil(lambda: alice.replica.stats.unproven >= 1, timeout=WAIT_MS)
    qtbot.wait(300)
    assert len(alice.replica.board) == len(vic.replica.board) == 1
    assert vic.replica.stats.unproven >= 1  # its own op, delivered back, is refused too
