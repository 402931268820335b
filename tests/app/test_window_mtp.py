"""App windows on MTP over real loopback multicast: one hosts (the master, RFC 1301 §3.1),
one participates, a third joins late and gets the board first (TR 90-1141 §3.4); all three
end with the same board (hash)."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, drag
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig

WAIT_MS = 30_000  # the master probes for a web first (10 heartbeats); the VM may stall on top


def open_mtp_window(
    qtbot: QtBot, net: NetConfig, name: str, role: str, **params: object
) -> MainWindow:
    window = MainWindow("mtp", net, {"profile": "lan", "role": role, **params}, name)
    qtbot.addWidget(window)
    window.resize(900, 500)
    window.show()
    qtbot.waitExposed(window)
    return window


def host_and_participant(
    qtbot: QtBot, net: NetConfig, **params: object
) -> tuple[MainWindow, MainWindow]:
    """An MTP host and a participant, "ann", both in the web."""
    host = open_mtp_window(qtbot, net, "host", "master", **params)
    qtbot.waitUntil(lambda: ready(host), timeout=WAIT_MS)
    ann = open_mtp_window(qtbot, net, "ann", "producer", **params)
    qtbot.waitUntil(lambda: ready(ann), timeout=WAIT_MS)
    return host, ann


def ready(window: MainWindow) -> bool:
    return not window.canvas.is_read_only()


@pytest.mark.network
def test_a_host_a_participant_and_a_late_joiner_share_one_board(
    qtbot: QtBot, net: NetConfig
) -> None:
    host = open_mtp_window(qtbot, net, "host", "master")
    assert "(host)" in host.transport_label.text()
    qtbot.waitUntil(lambda: ready(host), timeout=WAIT_MS)
    ann = open_mtp_window(qtbot, net, "ann", "producer")
    qtbot.waitUntil(lambda: ready(ann), timeout=WAIT_MS)

    drag(ann, PATH)
    drag(host, [(x, y + 100) for x, y in PATH])
    qtbot.waitUntil(
        lambda: len(host.replica.board) == 2 and len(ann.replica.board) == 2, timeout=WAIT_MS
    )
    assert host.replica.board.hash() == ann.replica.board.hash()
    # One total order: both applied the ops under the same keys.
    assert host.replica.board.log() == ann.replica.board.log()

    late = open_mtp_window(qtbot, net, "late", "producer")
    qtbot.waitUntil(lambda: ready(late), timeout=WAIT_MS)
    # The board came as the joiner's first message, before it could draw.
    assert len(late.replica.board) == 2 and late.replica.stats.ops_applied == 0
    drag(late, [(x + 200, y) for x, y in PATH])
    qtbot.waitUntil(
        lambda: all(len(w.replica.board) == 3 for w in (host, ann, late)), timeout=WAIT_MS
    )
    assert len({w.replica.board.hash() for w in (host, ann, late)}) == 1


@pytest.mark.network
def test_a_viewer_sees_the_board_and_cannot_draw(qtbot: QtBot, net: NetConfig) -> None:
    host = open_mtp_window(qtbot, net, "host", "master")
    qtbot.waitUntil(lambda: ready(host), timeout=WAIT_MS)
    drag(host, PATH)
    qtbot.waitUntil(lambda: len(host.replica.board) == 1, timeout=WAIT_MS)
    viewer = open_mtp_window(qtbot, net, "viewer", "consumer")
    assert "(viewer)" in viewer.transport_label.text()
    qtbot.waitUntil(lambda: len(viewer.replica.board) == 1, timeout=WAIT_MS)
    assert viewer.replica.board.hash() == host.replica.board.hash()
    assert viewer.canvas.is_read_only()
    # A viewer never sends a presence: its join request carried its name card (issue 17),
    # so the host lists it by name, with its colour, never as "joining…".
    viewer_id = viewer.transport.member_id
    qtbot.waitUntil(
        lambda: any(r.member == viewer_id and r.name == "viewer" for r in host.health.rows()),
        timeout=WAIT_MS,
    )
    (row,) = [r for r in host.health.rows() if r.member == viewer_id]
    assert row.colour == viewer.presence.colour
    drag(viewer, [(x, y + 50) for x, y in PATH])
    drag(host, [(x, y + 150) for x, y in PATH])
    qtbot.waitUntil(
        lambda: len(viewer.replica.board) == 2 and len(host.replica.board) == 2,
        timeout=WAIT_MS,
    )
    assert viewer.replica.board.hash() == host.replica.board.hash()
    # The viewer's drag sent nothing: every op is the host's.
    authors = {op.id.author for _, op in host.replica.board.log()}
    assert authors == {host.transport.member_id}
    assert viewer.transport.counters()["sent"] == 0
