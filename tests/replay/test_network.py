"""The network lane: the marks a log's records make, exactly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.replay.handmade import ME, at, write_log
from tests.replay.recorded import PEERS, RecordedSession
from whiteboard.replay import MarkKind, NetworkMark, count_by_kind, load_timeline
from whiteboard.sessionlog import (
    CountersRecord,
    FailureRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    StateSentRecord,
    read_log,
)


def test_each_kind_of_record_makes_its_mark(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "a.wblog",
        [
            ReadyRecord(at(0.5)),
            MemberRecord(at(1), 0xB, "joining"),
            MemberRecord(at(1.5), 0xB, "active"),  # the same join: no second mark
            ProtocolRecord(at(2), "nack_sent", {"source": 0xB, "options": 2}),
            ProtocolRecord(at(3), "retransmission", {"source": ME, "seq": 7, "to": 0xB}),
            ProtocolRecord(at(3.5), "join_answered", {"answerer": 0xB}),  # not on the lane
            CountersRecord(at(5), {"nacks_received": 3, "retransmissions": 1}),
            CountersRecord(at(10), {"nacks_received": 5, "retransmissions": 1}),
            StateSentRecord(at(11), 1, 2000),
            MemberRecord(at(12), 0xB, "suspected"),
            MemberRecord(at(13), 0xB, "left"),
            FailureRecord(at(14), "no word from 0000000b"),
        ],
    )
    marks = load_timeline(log).marks
    assert [(m.t_us, m.kind, m.count, m.member) for m in marks] == [
        (at(0.5), MarkKind.JOIN, 1, ME),
        (at(1), MarkKind.JOIN, 1, 0xB),
        (at(2), MarkKind.NACK_SENT, 1, None),
        (at(3), MarkKind.RETRANSMISSION, 1, None),
        (at(5), MarkKind.NACK_RECEIVED, 3, None),
        (at(10), MarkKind.NACK_RECEIVED, 2, None),
        (at(11), MarkKind.BOARD_TRANSFER, 1, None),
        (at(12), MarkKind.LEAVE, 1, 0xB),
        (at(13), MarkKind.LEAVE, 1, 0xB),
        (at(14), MarkKind.FAILURE, 1, None),
    ]
    assert marks[2].detail == "nack_sent (source 11, options 2)"
    assert marks[-1].detail == "no word from 0000000b"
    assert count_by_kind(marks)[MarkKind.NACK_RECEIVED] == 5


def test_retransmissions_only_counted_come_from_the_counters(tmp_path: Path) -> None:
    """MTP reports no retransmission one by one: its counter's increases are the marks."""
    log = write_log(
        tmp_path / "m.wblog",
        [
            ProtocolRecord(at(1), "nak_sent", {"message": 4, "packets": 1, "to": 0xB}),
            CountersRecord(at(5), {"retransmissions": 4}),
            CountersRecord(at(10), {"retransmissions": 4}),
            CountersRecord(at(15), {"retransmissions": 6}),
        ],
        transport="mtp",
    )
    marks = load_timeline(log).marks
    assert marks == (
        NetworkMark(at(1), MarkKind.NACK_SENT, detail="nak_sent (message 4, packets 1, to 11)"),
        NetworkMark(at(5), MarkKind.RETRANSMISSION, 4, detail="counted"),
        NetworkMark(at(15), MarkKind.RETRANSMISSION, 2, detail="counted"),
    )


def test_the_lane_of_a_recorded_session_holds_its_nacks_retransmissions_and_joins(
    recorded: RecordedSession,
) -> None:
    for peer in range(PEERS):
        records = read_log(recorded.logs[peer]).records
        marks = load_timeline(recorded.logs[peer]).marks
        kinds = Counter(m.kind for m in marks)
        named = Counter(r.name for r in records if isinstance(r, ProtocolRecord))
        assert named["nack_sent"] > 0 and named["retransmission"] > 0  # a lossy session
        assert kinds[MarkKind.NACK_SENT] == named["nack_sent"]
        assert kinds[MarkKind.RETRANSMISSION] == named["retransmission"]
        others = {m for m in recorded.member_ids if m != recorded.member_ids[peer]}
        joined = {m.member for m in marks if m.kind is MarkKind.JOIN}
        assert others <= joined  # everyone else was seen joining
        assert recorded.member_ids[peer] in joined  # and this member itself (Ready)
        assert [m.t_us for m in marks] == sorted(m.t_us for m in marks)
