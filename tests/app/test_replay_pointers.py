"""Pointers and laser trails in a replay (issue 19, point 5), from a hand-built log: where each
member pointed at the replay's time, named, never longer than 3 s after its last sample."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from whiteboard.app.replay_window import ReplayWindow
from whiteboard.pointer import PointerKind, PointerPosition, encode_pointer
from whiteboard.presence import BoardFingerprint, Presence, encode_presence
from whiteboard.replay import load_timeline
from whiteboard.sessionlog import DeliveredRecord, SessionLogWriter, new_header

T0 = 1_700_000_000.0
ME, BEA = 7, 9


def write_log(directory: Path) -> Path:
    header = new_header(transport="rmp", params={}, group="239.255.1.1:5000", iface=None,
                        ttl=0, member_id=ME, member_name="ann", now=T0)  # fmt: skip
    with SessionLogWriter.create(header, directory) as writer:
        presence = encode_presence(Presence("bea", 0xFF1E88E5, BoardFingerprint(0, None, "0" * 64)))
        writer.append(DeliveredRecord(round((T0 + 0.1) * 1e6), BEA, (1, BEA, 1), 0, False,
                                      presence))  # fmt: skip
        for step in range(20):  # bea's pointer from 1 s to 3 s, then her laser at 5 s
            at = T0 + 1 + step / 10
            position = PointerPosition(100.0 + 10 * step, 50.0, True, round(at * 1e6))
            writer.record_side(BEA, encode_pointer(position), at)
        for step in range(5):
            at = T0 + 5 + step / 10
            laser = PointerPosition(300.0, 100.0 + 10 * step, True, 0, PointerKind.LASER)
            writer.record_side(BEA, encode_pointer(laser), at)
        writer.record_side(ME, encode_pointer(PointerPosition(5.0, 5.0, True, 0)), T0 + 8)
        writer.record_counters({}, T0 + 12)
    [path] = directory.glob("*.wblog")
    return path


def test_a_replay_shows_where_members_pointed_at_its_time(qtbot: QtBot, tmp_path: Path) -> None:
    window = ReplayWindow(load_timeline(write_log(tmp_path)))
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    overlay = window.pointers.overlay
    s = 1_000_000
    start = window.timeline.start_us
    window.seek_to(start + round(0.5 * s))
    assert overlay.visible_members() == []  # nobody pointed yet
    window.seek_to(start + round(2.19 * s))  # her sample of 2.1 s, glided to (as lived)
    assert overlay.visible_members() == [BEA]
    assert overlay.cursors.position(BEA, (start + 2.19 * s) / s) == (210.0, 50.0)
    assert window.pointers._label(BEA) == ("bea", 0xFF1E88E5)
    window.seek_to(start + round(4.5 * s))  # 3 s after her last sample at 2.9 s: still there
    assert overlay.visible_members() == [BEA]
    window.seek_to(start + round(5.45 * s))  # her laser: a trail of the last second
    trails = overlay.lasers.trails((start + 5.45 * s) / s)
    assert [x for x, _, _ in trails[BEA]] == [300.0] * 5
    window.seek_to(start + round(7.0 * s))  # more than a second later: the trail is gone
    assert overlay.lasers.trails((start + 7.0 * s) / s) == {}
    window.seek_to(start + round(9.0 * s))  # our own pointer, recorded too
    assert ME in overlay.visible_members()
    window.seek_to(start + round(11.9 * s))
    assert overlay.visible_members() == []
    assert len(window.replay.board) == 0  # never on the board
