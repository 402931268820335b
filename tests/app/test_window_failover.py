"""App windows on MTP over real loopback multicast when the host dies (master failover, an
extension to RFC 1301: mtp/failover.py): the host's transport is killed mid-session (its
sockets closed, nothing said), the participants draw on through the outage, and they end in
one web, under a new master, with equal boards that hold everything they drew."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from mtp.core import MtpCore
from tests.app.test_window import PATH, drag
from tests.app.test_window_mtp import WAIT_MS, open_mtp_window, ready
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig
from whiteboard.transport.interface import MemberState


def core(window: MainWindow) -> MtpCore:
    mtp = window.transport.core
    assert isinstance(mtp, MtpCore)
    return mtp


@pytest.mark.network
def test_the_participants_keep_the_board_when_the_host_dies(qtbot: QtBot, net: NetConfig) -> None:
    host = open_mtp_window(qtbot, net, "host", "master")
    qtbot.waitUntil(lambda: ready(host), timeout=WAIT_MS)
    ann = open_mtp_window(qtbot, net, "ann", "producer")
    bob = open_mtp_window(qtbot, net, "bob", "producer")
    qtbot.waitUntil(lambda: ready(ann) and ready(bob), timeout=WAIT_MS)
    drag(ann, PATH)
    drag(host, [(x, y + 100) for x, y in PATH])
    qtbot.waitUntil(lambda: all(len(w.replica.board) == 2 for w in (ann, bob)), timeout=WAIT_MS)
    old_web = core(ann).web.id
    # The successors are named in the master's heartbeat before it dies.
    qtbot.waitUntil(lambda: bool(core(ann)._failover.order), timeout=WAIT_MS)

    host.carrier.release()  # the host's process is gone: not a word more from it
    drag(bob, [(x + 200, y) for x, y in PATH])  # drawn in the outage, before anyone noticed
    qtbot.waitUntil(lambda: core(ann).web.id not in (0, old_web), timeout=WAIT_MS)
    drag(ann, [(x + 200, y + 100) for x, y in PATH])  # drawn under the new master
    qtbot.waitUntil(
        lambda: (
            all(len(w.replica.board) == 4 for w in (ann, bob))
            and ann.replica.board.hash() == bob.replica.board.hash()
        ),
        timeout=WAIT_MS,
    )
    assert core(ann).web.id == core(bob).web.id != old_web
    assert [core(w).is_master for w in (ann, bob)].count(True) == 1
    # Both can still draw, say they are connected again, and know the host has gone.
    assert ready(ann) and ready(bob)
    for window in (ann, bob):
        qtbot.waitUntil(lambda w=window: w.state_view.label.toolTip() == "Connected")
    # The one that took over is told, and its label names its new role; the other's does not.
    heir, other = (ann, bob) if core(ann).is_master else (bob, ann)
    assert "(host)" in heir.transport_label.text()
    assert (
        "you host this board now"
        in heir.state_view.notice.toolTip() + heir.state_view.notice.text()
    )
    assert "(host)" not in other.transport_label.text()
    states = {row.member: row.state for row in ann.health.rows()}
    assert states[host.transport.member_id] is MemberState.LEFT
