"""Reading a log into a timeline: what is a step, who took part, and logs that are damaged,
foreign or hold what the live member refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.replay.handmade import ME, at, write_log
from tests.replay.recorded import LATE, RecordedSession
from whiteboard.board import Board, Clear, Op, OpId, Stroke, encode_op
from whiteboard.presence import BoardFingerprint, Presence, encode_presence
from whiteboard.replay import OpStep, Replay, StateStep, load_timeline
from whiteboard.sessionlog import (
    DeliveredRecord,
    LocalOpRecord,
    SessionLogError,
    StateReceivedRecord,
    UndeliveredRecord,
)

OTHER = 0x0B


def stroke(author: int, counter: int, x: float = 0.0) -> Stroke:
    return Stroke(OpId(author, counter), (x, 0.0, x + 10.0, 5.0), 0xFF000000, 2.0)


def delivered(seconds: float, key: int, op: Op, origin: int | None = None) -> DeliveredRecord:
    origin = op.id.author if origin is None else origin
    return DeliveredRecord(at(seconds), origin, (key,), at(seconds), False, encode_op(op))


def presence(name: str, colour: int) -> bytes:
    return encode_presence(Presence(name, colour, BoardFingerprint(0, None, "0" * 64)))


def test_ops_are_steps_at_their_delivery_times_and_presences_name_the_members(
    tmp_path: Path,
) -> None:
    log = write_log(
        tmp_path / "a.wblog",
        [
            LocalOpRecord(at(0.1), presence("Ann", 0xFF112233)),
            DeliveredRecord(at(0.2), OTHER, (1,), at(0.2), False, presence("Bob", 0xFF445566)),
            delivered(1.0, 10, stroke(OTHER, 1)),
            delivered(2.0, 20, stroke(ME, 1)),
            delivered(1.5, 15, stroke(OTHER, 2)),  # a clock that stepped back: kept in order
        ],
    )
    timeline = load_timeline(log)
    assert [type(s) for s in timeline.steps] == [OpStep, OpStep, OpStep]
    assert timeline.times == (at(1.0), at(2.0), at(2.0))
    assert timeline.count_at(at(1.99)) == 1 and timeline.count_at(at(2.0)) == 3
    assert timeline.start_us == at(0) and timeline.end_us == at(100)
    assert [(m.name, m.colour, m.ops, m.me) for m in timeline.members] == [
        ("Ann", 0xFF112233, 1, True),
        ("Bob", 0xFF445566, 2, False),
    ]
    assert timeline.name == "a.wblog" and timeline.warnings == () and timeline.refused == 0


def test_what_the_live_replica_refused_is_left_out(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "r.wblog",
        [
            delivered(1.0, 10, stroke(OTHER, 1)),
            delivered(2.0, 20, stroke(ME, 5), origin=OTHER),  # claims another author
            DeliveredRecord(at(3.0), OTHER, (30,), at(3.0), False, b"\x93\x01\x02\x03"),
        ],
    )
    timeline = load_timeline(log)
    assert timeline.refused == 2 and len(timeline.steps) == 1
    replay = Replay(timeline)
    replay.seek(timeline.end_us)
    assert [obj.id for obj in replay.board.objects()] == [OpId(OTHER, 1)]


def test_a_board_given_on_joining_is_merged_with_what_the_member_had(tmp_path: Path) -> None:
    given = Board()
    given.apply((5,), stroke(OTHER, 1, 100.0))
    given.apply((8,), Clear(OpId(OTHER, 2)))
    given.apply((9,), stroke(OTHER, 3, 200.0))
    log = write_log(
        tmp_path / "s.wblog",
        [
            delivered(1.0, 4, stroke(ME, 1)),  # before the clear in the order: cleared
            StateReceivedRecord(at(2.0), len(given.snapshot()), 2_000_000, given.snapshot()),
            delivered(3.0, 12, stroke(ME, 2)),
        ],
    )
    timeline = load_timeline(log)
    assert [type(s) for s in timeline.steps] == [OpStep, StateStep, OpStep]
    replay = Replay(timeline)
    replay.seek(at(2.5))
    assert [obj.id for obj in replay.board.objects()] == [OpId(OTHER, 3)]
    assert len(replay.board) == 4
    replay.seek(timeline.end_us)
    assert [obj.id for obj in replay.board.objects()] == [OpId(OTHER, 3), OpId(ME, 2)]
    # Every drawing any moment may show, with its key, given boards included.
    drawings = timeline.drawings()
    assert [(op.id, key) for op, key in drawings] == [
        (OpId(ME, 1), (4,)),
        (OpId(OTHER, 1), (5,)),
        (OpId(OTHER, 3), (9,)),
        (OpId(ME, 2), (12,)),
    ]


def test_a_board_that_was_not_kept_or_cannot_load_is_a_warning(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "w.wblog",
        [
            StateReceivedRecord(at(1.0), 300_000_000, 1_000_000, b""),
            StateReceivedRecord(at(2.0), 4, 2_000_000, b"\x93\x01\x02\x03"),
            delivered(3.0, 12, stroke(ME, 2)),
        ],
    )
    timeline = load_timeline(log)
    assert len(timeline.steps) == 1
    assert "too large to keep in the log" in timeline.warnings[0]
    assert "1.0 s in" in timeline.warnings[0] and "300,000,000 bytes" in timeline.warnings[0]
    assert "was unusable" in timeline.warnings[1]


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        (b"", "is empty, not a session log"),
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "is not a whiteboard session log"),
        (b"hello, world", "is not a whiteboard session log"),
    ],
)
def test_a_file_that_is_not_a_log_is_refused_with_its_name(
    tmp_path: Path, contents: bytes, message: str
) -> None:
    path = tmp_path / "board.png"
    path.write_bytes(contents)
    with pytest.raises(SessionLogError, match=message) as raised:
        load_timeline(path)
    assert '"board.png"' in str(raised.value)


def test_a_folder_or_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SessionLogError, match="is a folder"):
        load_timeline(tmp_path)
    with pytest.raises(SessionLogError, match="could not be opened"):
        load_timeline(tmp_path / "gone.wblog")


def test_a_log_cut_short_replays_as_far_as_it_goes(
    recorded: RecordedSession, tmp_path: Path
) -> None:
    data = recorded.logs[LATE].read_bytes()
    torn = tmp_path / "torn.wblog"
    torn.write_bytes(data[: len(data) * 2 // 3])
    whole, cut = load_timeline(recorded.logs[LATE]), load_timeline(torn)
    assert any("torn record" in w for w in cut.warnings)
    assert 0 < len(cut.steps) < len(whole.steps)
    assert cut.steps == whole.steps[: len(cut.steps)]


def test_an_op_not_delivered_by_the_end_is_no_step(tmp_path: Path) -> None:
    """UNDELIVERED (issue 17): an op the session ended without delivering back. The replay
    shows the board as it was delivered, so it is not on it; a log with one replays as one
    without (an older reader skips the kind)."""
    log = write_log(
        tmp_path / "u.wblog",
        [
            delivered(1.0, 10, stroke(ME, 1)),
            LocalOpRecord(at(2.0), encode_op(stroke(ME, 2, x=50.0))),
            UndeliveredRecord(at(3.0), encode_op(stroke(ME, 2, x=50.0))),
        ],
    )
    timeline = load_timeline(log)
    assert len(timeline.steps) == 1 and timeline.warnings == () and timeline.refused == 0
    replay = Replay(timeline)
    replay.seek(timeline.end_us)
    assert [obj.id for obj in replay.board.objects()] == [OpId(ME, 1)]
