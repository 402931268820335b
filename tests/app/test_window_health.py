"""Presence, the members panel, board agreement and resync, with real windows on real
loopback multicast."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, WAIT_MS, drag, open_window
from tests.app.test_window_rmp import WAIT_MS as RMP_WAIT_MS
from tests.app.test_window_rmp import open_rmp_window
from whiteboard.app import window as window_module
from whiteboard.app.settings import SessionSettings
from whiteboard.app.window import MainWindow
from whiteboard.board import OpId, Stroke
from whiteboard.net.runtime import NetConfig
from whiteboard.transport.events import JoinProgress


def names_in_panel(window: MainWindow) -> list[str]:
    return [row[0] for row in window.members_panel.row_texts()]


def inject_lost_stroke(window: MainWindow) -> None:
    """An op only this replica has, as if everyone else had lost it for good."""
    stroke = Stroke(OpId(window.transport.member_id, 10_000), (5.0, 5.0, 60.0, 60.0), 0xFF000000, 3)
    change = window.replica.board.apply((2**62,), stroke)
    window.canvas.board_changed(change)


@pytest.fixture
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    # Presence every 0.2 s and a difference believed after 0.5 s of rest, instead of 2 s and
    # 5 s: the rule is the same (tests/app/test_health.py checks it in virtual time).
    monkeypatch.setattr(window_module, "PRESENCE_MS", 200)
    monkeypatch.setattr(window_module, "AGREEMENT_SETTLE_S", 0.5)


@pytest.mark.network
def test_members_see_each_others_names_and_that_their_boards_agree(
    qtbot: QtBot, net: NetConfig, quick_settle: None
) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: "alice" in names_in_panel(bob), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "bob" in names_in_panel(alice), timeout=WAIT_MS)
    assert names_in_panel(alice)[0] == "alice (you)"
    drag(alice, PATH)
    qtbot.waitUntil(
        lambda: (
            len(bob.replica.board) == 1
            and "boards agree" in alice.agreement_label.text()
            and "boards agree" in bob.agreement_label.text()
        ),
        timeout=WAIT_MS,
    )
    assert alice.replica.board.hash() == bob.replica.board.hash()
    assert alice.replica.stats.rejected == bob.replica.stats.rejected == 0
    assert not alice.resync_action.isEnabled()


@pytest.mark.network
def test_a_replica_that_diverged_is_told_so(
    qtbot: QtBot, net: NetConfig, quick_settle: None
) -> None:
    alice = open_window(qtbot, net, "alice")
    bob = open_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: "alice" in names_in_panel(bob), timeout=WAIT_MS)
    inject_lost_stroke(bob)
    qtbot.waitUntil(lambda: "differs from alice" in bob.agreement_label.text(), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "differs from bob" in alice.agreement_label.text(), timeout=WAIT_MS)
    assert any("differs" in row for row in bob.members_panel.row_texts()[1])
    # raw hands nobody a board: there is nothing to resync from.
    assert not bob.resync_action.isEnabled()


@pytest.mark.network
def test_resync_on_rmp_takes_the_others_board(
    qtbot: QtBot, net: NetConfig, quick_settle: None
) -> None:
    alice = open_rmp_window(qtbot, net, "alice")
    qtbot.waitUntil(lambda: not alice.canvas.is_read_only(), timeout=RMP_WAIT_MS)
    drag(alice, PATH)
    qtbot.waitUntil(lambda: len(alice.replica.board) == 1, timeout=RMP_WAIT_MS)
    bob = open_rmp_window(qtbot, net, "bob")
    qtbot.waitUntil(lambda: not bob.canvas.is_read_only(), timeout=RMP_WAIT_MS)
    inject_lost_stroke(bob)
    qtbot.waitUntil(lambda: bob.resync_action.isEnabled(), timeout=RMP_WAIT_MS)
    old_member = bob.transport.member_id
    bob.resync_action.trigger()
    qtbot.waitUntil(
        lambda: bob.transport.member_id != old_member and not bob.canvas.is_read_only(),
        timeout=RMP_WAIT_MS,
    )
    assert len(bob.replica.board) == 1
    assert bob.replica.board.hash() == alice.replica.board.hash()
    qtbot.waitUntil(lambda: "boards agree" in bob.agreement_label.text(), timeout=RMP_WAIT_MS)
    # And the session goes on: bob draws, alice sees it.
    drag(bob, [(x, y + 100) for x, y in PATH])
    qtbot.waitUntil(lambda: len(alice.replica.board) == 2, timeout=RMP_WAIT_MS)
    assert bob.replica.board.hash() == alice.replica.board.hash()


@pytest.mark.network
def test_the_join_progress_shows_while_the_board_arrives(qtbot: QtBot, net: NetConfig) -> None:
    window = open_rmp_window(qtbot, net, "ada")
    window._on_event(JoinProgress(3, 10))
    assert window.join_progress.isVisible()
    assert (window.join_progress.value(), window.join_progress.maximum()) == (3, 10)
    assert "received 3 of 10 parts" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: not window.canvas.is_read_only(), timeout=RMP_WAIT_MS)
    assert not window.join_progress.isVisible()


@pytest.mark.network
def test_changing_the_transport_leaves_cleanly_and_joins_anew(qtbot: QtBot, net: NetConfig) -> None:
    window = open_window(qtbot, net, "ada")
    drag(window, PATH)
    qtbot.waitUntil(lambda: len(window.replica.board) == 1, timeout=WAIT_MS)
    old = window.transport
    chosen = SessionSettings(
        transport="rmp",
        group=str(net.group),
        iface="127.0.0.1",
        ttl=0,
        display_name="Ada L.",
        colour=0xFF43A047,
        own_colour=True,  # chosen in the settings: kept (a default colour would be free-chosen)
    )
    window.apply_settings(chosen)
    qtbot.waitUntil(
        lambda: window.transport is not old and not window.canvas.is_read_only(),
        timeout=RMP_WAIT_MS,
    )
    assert old.finished and window.transport.name == "rmp"
    assert window.transport_label.text().startswith("rmp")
    assert window.own_presence().name == "Ada L." and window.canvas.colour == 0xFF43A047
    assert len(window.replica.board) == 1  # what we had stays
    drag(window, [(x, y + 100) for x, y in PATH])
    qtbot.waitUntil(lambda: len(window.replica.board) == 2, timeout=RMP_WAIT_MS)
