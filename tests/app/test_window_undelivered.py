"""Issue 17, no local op is lost: real windows on MTP over real loopback multicast, the RFC's
web (failover off, RFC 1301 §3.2.5: the web ends with its master). The host is killed; a
stroke drawn meanwhile is never accepted; when the web ends it is kept, dimmed, with a
tooltip, counted in the status and recorded in the session log; the next session sends it and
everyone's board holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, drag
from tests.app.test_window_health import kill_hard
from tests.app.test_window_mtp import WAIT_MS, host_and_participant, open_mtp_window, ready
from tests.app.test_window_session_state import RFC_END
from whiteboard.app.local_edits import UNDELIVERED_OPACITY
from whiteboard.app.session import SessionSpec
from whiteboard.app.session_state import SessionLink
from whiteboard.app.undelivered import UNDELIVERED_TIP
from whiteboard.app.window import MainWindow
from whiteboard.board import Stroke, decode_op
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.sessionlog import UndeliveredRecord, read_log

LATER = [(x + 200, y + 100) for x, y in PATH]  # drawn while the host is gone


def strand_a_stroke(qtbot: QtBot, net: NetConfig) -> tuple[MainWindow, MainWindow, Path]:
    """A host and ann; ann draws one stroke that is delivered, then another, and the host
    closes the web (RFC 1301 §3.3.2) before it could grant that one a token: the web ends
    with it unsent ("the mtp master closed the web; 1 payload not sent in this web"). Returns
    (host, ann, the log of ann's ended session), once her session ended and the host finished."""
    host, ann = host_and_participant(qtbot, net, **RFC_END)
    drag(ann, PATH)
    qtbot.waitUntil(lambda: len(host.replica.board) == 1, timeout=WAIT_MS)
    # No event is handled between the two: the host hears ann's token request only once it
    # is leaving, and a leaving master grants nothing.
    drag(ann, LATER)
    host.close()
    assert len(ann.canvas.pending_ops()) == 1
    assert ann.session_log is not None
    ended_log = ann.session_log.path
    qtbot.waitUntil(lambda: ann.session.state.link is SessionLink.ENDED, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: host.transport.finished, timeout=WAIT_MS)
    return host, ann, ended_log


def hover(window: MainWindow, point: tuple[int, int]) -> str:
    canvas = window.canvas
    local = QPoint(*point)
    QApplication.sendEvent(
        canvas, QHelpEvent(QEvent.Type.ToolTip, local, canvas.mapToGlobal(local))
    )
    return QToolTip.text() if QToolTip.isVisible() else ""


@pytest.mark.network
def test_a_stroke_the_ended_web_never_delivered_is_kept_dimmed_and_recorded(
    qtbot: QtBot, net: NetConfig
) -> None:
    """Before: the stroke vanished from ann's screen with the session (dropped from the
    pending ops), in silence, and her log held only a LOCAL_OP like any other."""
    _, ann, ended_log = strand_a_stroke(qtbot, net)
    assert ann.session_log is None  # closed with the session
    (kept,) = ann.canvas.pending_ops()
    assert ann.canvas.undelivered_count() == 1
    assert ann.canvas._edits.opacity(kept) == UNDELIVERED_OPACITY
    assert kept not in ann.replica.board  # shown, not on the board
    assert "1 drawing not delivered" in ann.session.state.detail
    assert "1 drawing not delivered" in ann.state_view.banner.message.text()
    assert "1 not delivered" in ann.ops_label.text()
    assert hover(ann, LATER[3]) == UNDELIVERED_TIP
    assert not ann.canvas.undelivered_at(QPointF(*PATH[3]))  # a delivered stroke: no such tip
    records = read_log(ended_log).records
    undelivered = [r for r in records if isinstance(r, UndeliveredRecord)]
    assert [decode_op(r.payload).id for r in undelivered] == [kept]


@pytest.mark.network
def test_joining_again_sends_the_kept_stroke_and_both_boards_hold_it(
    qtbot: QtBot, net: NetConfig
) -> None:
    host, ann, _ = strand_a_stroke(qtbot, net)
    (kept,) = ann.canvas.pending_ops()
    again = open_mtp_window(qtbot, net, "again", "master", **RFC_END)  # someone hosts anew
    qtbot.waitUntil(lambda: ready(again), timeout=WAIT_MS)
    ann.state_view.banner.join_button.click()
    qtbot.waitUntil(lambda: ready(ann), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: len(again.replica.board) == 1 and len(ann.replica.board) == 1, timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: not ann.canvas.pending_ops(), timeout=WAIT_MS)
    assert ann.canvas.undelivered_count() == 0 and "not delivered" not in ann.ops_label.text()
    assert ann.replica.board.hash() == again.replica.board.hash()
    (obj,) = again.replica.board.objects()
    # The same stroke, under ann's id in the new session.
    assert isinstance(obj.op, Stroke) and obj.op.id.author == ann.transport.member_id
    assert obj.op.id != kept
    assert not ann.canvas.undelivered_at(QPointF(*LATER[3]))
    del host


@pytest.mark.network
def test_hosting_anew_sends_the_kept_stroke_and_a_joiner_gets_it(
    qtbot: QtBot, net: NetConfig
) -> None:
    host, ann, _ = strand_a_stroke(qtbot, net)
    ann.state_view.banner.host_button.click()
    qtbot.waitUntil(lambda: ready(ann), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: len(ann.replica.board) == 2, timeout=WAIT_MS)
    assert not ann.canvas.pending_ops()
    bob = open_mtp_window(qtbot, net, "bob", "producer", **RFC_END)
    qtbot.waitUntil(lambda: ready(bob), timeout=WAIT_MS)
    assert len(bob.replica.board) == 2
    assert bob.replica.board.hash() == ann.replica.board.hash()
    del host


@pytest.mark.network
def test_a_stroke_kept_while_rejoining_goes_with_a_switch_to_another_session(
    qtbot: QtBot, net: NetConfig
) -> None:
    """The session left: the host died, ann draws while her MTP member asks to rejoin (its
    core keeps the stroke for the next web), then switches to another session in the
    settings. The stroke is not left behind with the old transport: it is kept, and the new
    session's board gets it."""
    host, ann = host_and_participant(qtbot, net, **RFC_END)
    kill_hard(host)
    qtbot.waitUntil(lambda: ann.session.state.link is SessionLink.RECONNECTING, timeout=WAIT_MS)
    drag(ann, LATER)
    assert len(ann.canvas.pending_ops()) == 1
    other = NetConfig(GroupAddress(net.group.host, net.group.port + 1), net.iface, net.ttl)
    elsewhere = MainWindow("mtp", other, {"profile": "lan", "role": "master"}, "elsewhere")
    qtbot.addWidget(elsewhere)
    qtbot.waitUntil(lambda: ready(elsewhere), timeout=WAIT_MS)

    ann.switch_session(SessionSpec("mtp", other, {"profile": "lan", "role": "producer"}))

    qtbot.waitUntil(lambda: ready(ann) and ann.spec.net == other, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: len(elsewhere.replica.board) == 1 and not ann.canvas.pending_ops(),
        timeout=WAIT_MS,
    )
    assert ann.replica.board.hash() == elsewhere.replica.board.hash()
