"""What a member's role lets it do shows in the window: a viewer (an MTP consumer, RFC 1301
§3.1.1, which receives only) finds its drawing tools disabled and told why, its looking tools
enabled; a member that sends finds every tool enabled."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_window import open_window
from tests.app.test_window_mtp import open_mtp_window
from whiteboard.app.session import VIEWER_REASON
from whiteboard.net.runtime import NetConfig


@pytest.mark.network
def test_a_viewers_drawing_tools_are_disabled_and_say_why(qtbot: QtBot, net: NetConfig) -> None:
    viewer = open_mtp_window(qtbot, net, "viewer", "consumer")
    toolbar = viewer.toolbar
    drawing = toolbar.drawing_actions()
    assert drawing and not any(action.isEnabled() for action in drawing)
    assert not toolbar.width_box.isEnabled()
    assert all(VIEWER_REASON in action.toolTip() for action in drawing)
    assert viewer.canvas.toolTip() == VIEWER_REASON
    assert not viewer.open_action.isEnabled() and not viewer.clear_action.isEnabled()
    # Looking stays possible: saving, exporting, the view menu's zoom.
    assert viewer.save_action.isEnabled() and viewer.export_action.isEnabled()
    zooms = [a for a in viewer.actions() if a.text().startswith("Zoom")]
    assert zooms and all(a.isEnabled() for a in zooms)


@pytest.mark.network
def test_a_member_that_sends_has_every_tool(qtbot: QtBot, net: NetConfig) -> None:
    window = open_window(qtbot, net, "alice")
    toolbar = window.toolbar
    assert all(action.isEnabled() for action in toolbar.drawing_actions())
    assert toolbar.width_box.isEnabled()
    assert not any(VIEWER_REASON in action.toolTip() for action in toolbar.drawing_actions())
    assert window.canvas.toolTip() == "" and window.open_action.isEnabled()
