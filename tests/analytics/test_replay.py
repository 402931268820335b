"""``python -m analytics replay``: boards rebuilt in Spark against the live sessions'.

One replay run (in the test run's SparkSession) over simulated sessions of both transports
and the hand-built board J of report_logs.py, whose reference log starts from a snapshot and
ends with a real picture pasted (a BLOB and an IMAGE).
The expected boards are computed apart from the job: the simulator's own final hashes, a
plain-Python fold of the reference log through the app's Replica, and the board model alone.
"""

from __future__ import annotations

import math
import os
from contextlib import redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from PySide6.QtGui import QImage
from pyspark.sql import SparkSession

from analytics.__main__ import EXIT_OK, EXIT_PROBLEM, main
from analytics.frames import view_of
from analytics.replay import ReplayConfig, SessionSpan, TimeKind, frame_times, parse_times
from analytics.report import read_thumbnails
from tests.analytics.report_logs import (
    AFTER_JOIN_OPS,
    BOARD_J,
    GREEN,
    JOINED_OPS,
    PICTURE,
    PICTURE_BOX,
    board_of,
    green_png,
    write_joiner_logs,
)
from tests.analytics.simulated import simulate
from whiteboard.presence import is_presence
from whiteboard.replica import Replica
from whiteboard.sessionlog import DeliveredRecord, StateReceivedRecord, read_log
from whiteboard.transport.events import Delivered

SIMULATIONS = (  # (transport, seed, start): one board session each
    ("rmp", 1, "2024-03-11T09:30:00Z"),
    ("mtp", 2, "2024-03-12T09:30:00Z"),
)
AT = (7.0, 21.5, 60.0, 150.0)  # seconds after each session's start
SIZE = (160, 120)
KEYFRAME_EVERY = 16  # small, so that the 60-op sessions' frames start from keyframes


@dataclass(frozen=True)
class Replayed:
    out: Path
    frames: list[dict[str, Any]]
    live_hash: dict[str, str]  # by multicast group: the simulator's converged board
    logs: dict[str, list[Path]]  # by multicast group
    printed: str


@pytest.fixture(scope="module")
def replayed(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Replayed:
    sims = tmp_path_factory.mktemp("sim-logs")
    live: dict[str, str] = {}
    logs: dict[str, list[Path]] = {}
    for transport, seed, start in SIMULATIONS:
        result = simulate(sims, transport, seed, start, messages=60, loss=0.02)
        assert result["converged"] and result["complete"]
        group = read_log(result["logs"][0]).header.group
        live[group] = result["board_hash"]
        logs[group] = [Path(p) for p in result["logs"]]
    joiner = tmp_path_factory.mktemp("joiner-logs")
    joiner_logs = write_joiner_logs(joiner)
    logs[read_log(joiner_logs[0]).header.group] = joiner_logs

    out = tmp_path_factory.mktemp("replay")
    argv = ["replay", str(sims), str(joiner), "--out", str(out), "--size", "x".join(map(str, SIZE))]
    argv += ["--at", ",".join(map(str, AT)), "--keyframe-every", str(KEYFRAME_EVERY)]
    printed = StringIO()
    with redirect_stdout(printed):
        assert main(argv) == EXIT_OK
    frames = pq.read_table(out / "frames.parquet").to_pylist()
    return Replayed(out, frames, live, logs, printed.getvalue())


def group_of(board_session: str) -> str:
    return board_session.rsplit(" ", 1)[1]


def reference_board(paths: list[Path], until_us: int) -> tuple[str, int]:
    """(hash, ops) of the board of the reference log (docs/analytics.md: the most ops
    delivered, then the earliest start, then the smallest session id) with what it
    delivered up to ``until_us``, folded as the live app folds it."""
    logs = [read_log(path) for path in paths]

    def ops(log: Any) -> int:
        return sum(
            1 for r in log.records if isinstance(r, DeliveredRecord) and not is_presence(r.payload)
        )

    reference = min(logs, key=lambda log: (-ops(log), log.header.t_us, log.header.session_id))
    replica = Replica()
    for record in reference.records:
        if record.t_us > until_us:
            break
        if isinstance(record, DeliveredRecord):
            event = Delivered(record.origin, record.order_key, 0.0, record.payload, False, 0.0)
            replica.apply_delivered(event)
        elif isinstance(record, StateReceivedRecord):
            replica.load_state(record.state)
    return replica.board.hash(), len(replica.board)


def test_replay_ends_with_the_live_board_of_each_simulated_session(replayed: Replayed) -> None:
    finals = {group_of(f["board_session"]): f for f in replayed.frames if f["final"]}
    for group, live_hash in replayed.live_hash.items():
        assert finals[group]["board_hash"] == live_hash
        assert finals[group]["ops_applied"] == 60
        assert live_hash in replayed.printed


def test_a_frame_holds_the_ops_the_reference_delivered_by_its_time(replayed: Replayed) -> None:
    checked = 0
    for group, paths in replayed.logs.items():
        start = min(read_log(path).header.t_us for path in paths)
        frames = [f for f in replayed.frames if group_of(f["board_session"]) == group]
        for frame in frames:
            assert frame["t_us"] == start + round(frame["at_s"] * 1_000_000)
            expected = reference_board(paths, frame["t_us"])
            assert (frame["board_hash"], frame["ops_applied"]) == expected, frame
            checked += 1
        # Mid-session frames are boards of their own, not the end's.
        final = next(f for f in frames if f["final"])
        assert all(f["ops_applied"] < final["ops_applied"] for f in frames if not f["final"])
        assert len({f["board_hash"] for f in frames}) > 1
    assert checked == sum(1 for _ in replayed.frames)


def test_a_late_joiners_board_starts_from_the_snapshot_it_was_given(replayed: Replayed) -> None:
    frames = {f["at_s"]: f for f in replayed.frames if f["board_session"] == BOARD_J}
    after_join = board_of(JOINED_OPS)
    assert (frames[7.0]["board_hash"], frames[7.0]["ops_applied"]) == (after_join.hash(), 3)
    two_more = board_of(JOINED_OPS + AFTER_JOIN_OPS[:2])
    assert (frames[21.5]["board_hash"], frames[21.5]["ops_applied"]) == (two_more.hash(), 5)
    final = next(f for f in frames.values() if f["final"])
    assert final["board_hash"] == board_of(JOINED_OPS + AFTER_JOIN_OPS).hash()
    assert final["board_hash"] != board_of(AFTER_JOIN_OPS).hash()  # the snapshot counts
    # 60 and 150 s are after its end: 24 s, when cy pasted the picture.
    assert sorted(frames) == [7.0, 21.5, 24.0]


def test_a_pasted_picture_is_replayed_and_painted_from_its_blob(
    replayed: Replayed, qapp: Any
) -> None:
    """Board J's last ops are a real PNG's BLOB and its IMAGE: the final frame's board is the
    plain-Python fold's, holds the bytes, and shows the picture's green in the image's box."""
    final = next(f for f in replayed.frames if f["board_session"] == BOARD_J and f["final"])
    expected = board_of(JOINED_OPS + AFTER_JOIN_OPS)
    assert expected.blob(PICTURE.digest) == green_png()
    assert final["board_hash"] == expected.hash()
    paths = replayed.logs[group_of(BOARD_J)]
    assert (final["board_hash"], final["ops_applied"]) == reference_board(paths, final["t_us"])
    # 3 + 6 ops, the BLOB one of them; objects: 3 + 3 strokes, one erased, and the image
    # (the BLOB is no object).
    assert (final["ops_applied"], final["objects"]) == (9, 6)

    image = QImage.fromData((replayed.out / final["png"]).read_bytes())  # Qt tells a PNG
    width, height = SIZE
    # Where the frame shows the board (analytics.frames.render_png): the session's view,
    # scaled to fit and centred.
    view = view_of(expected)
    scale = min(width / view.width, height / view.height)
    left = (width - view.width * scale) / 2 - view.x0 * scale
    top = (height - view.height * scale) / 2 - view.y0 * scale
    x, y, w, h = PICTURE_BOX
    x0, y0 = math.ceil(left + x * scale) + 1, math.ceil(top + y * scale) + 1
    x1, y1 = math.floor(left + (x + w) * scale) - 2, math.floor(top + (y + h) * scale) - 2
    assert x1 - x0 >= 20 and y1 - y0 >= 15  # the picture is large in the frame
    inside = {image.pixel(px, py) for px in range(x0, x1 + 1) for py in range(y0, y1 + 1)}
    assert inside == {GREEN}  # the picture, not the grey frame of missing bytes
    # Nothing else is green: the pixels just outside the box (the strokes are black).
    beside = [(x0 - 4, (y0 + y1) // 2), (x1 + 4, (y0 + y1) // 2), ((x0 + x1) // 2, y1 + 4)]
    assert all(image.pixel(px, py) != GREEN for px, py in beside)
    # Earlier frames, before the paste, show no green at all.
    for frame in replayed.frames:
        if frame["board_session"] == BOARD_J and not frame["final"]:
            earlier = QImage.fromData((replayed.out / frame["png"]).read_bytes())
            pixels = {earlier.pixel(px, py) for px in range(width) for py in range(height)}
            assert GREEN not in pixels, frame["png"]


def test_frames_are_pngs_of_the_requested_size_painted_by_executor_tasks(
    replayed: Replayed, qapp: Any
) -> None:
    for frame in replayed.frames:
        data = (replayed.out / frame["png"]).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        image = QImage.fromData(data, "PNG")
        assert (image.width(), image.height()) == SIZE == (frame["width"], frame["height"])
        if frame["objects"]:
            colours = {image.pixel(x, y) for x in range(0, SIZE[0], 2) for y in range(SIZE[1])}
            assert len(colours) > 1, frame["png"]  # something is drawn on the white
        assert frame["render_task"] is not None
        _host, pid = frame["rendered_on"].rsplit(":", 1)
        assert int(pid) != os.getpid()
    assert len({f["render_task"] for f in replayed.frames}) > 1


def test_frame_times_fall_within_each_session_and_end_at_its_end() -> None:
    span = SessionSpan("b", 1_000_000, 101_000_000, 5)  # from 1 s to 101 s

    def seconds(config: ReplayConfig) -> list[float]:
        return [t / 1_000_000 for t in frame_times(span, config)]

    assert seconds(ReplayConfig(frames=4)) == [26, 51, 76, 101]
    assert seconds(ReplayConfig(every_s=30)) == [31, 61, 91, 101]
    # Offsets from the start; moments as they are; after the end: left out.
    at = parse_times("10,1970-01-01T00:00:50Z,500")
    assert seconds(ReplayConfig(at=at)) == [11, 50, 101]
    assert [t.kind for t in at] == [TimeKind.OFFSET, TimeKind.ABSOLUTE, TimeKind.OFFSET]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--at", "soon"], "--at: 'soon' is neither seconds after the start nor a time"),
        (["--at", "-5"], "--at: -5 is not a number of seconds >= 0"),
        (["--size", "0x10"], "--size: 0x10: each side must be 1 to 8192 pixels"),
        (["--size", "big"], "--size: 'big' is not a size like 640x480"),
        (["--frames", "0"], "--frames: 0 is not a whole number >= 1"),
    ],
)
def test_bad_options_are_refused_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    write_joiner_logs(tmp_path)
    out = str(tmp_path / "out")
    assert main(["replay", str(tmp_path), "--out", out, *option]) == EXIT_PROBLEM
    assert message in capsys.readouterr().err


def test_the_report_shows_each_sessions_final_frame(replayed: Replayed) -> None:
    thumbnails = read_thumbnails(str(replayed.out))
    finals = {f["board_session"]: f["png"] for f in replayed.frames if f["final"]}
    assert thumbnails == {b: (replayed.out / png).read_bytes() for b, png in finals.items()}
    assert len(thumbnails) == len(replayed.logs)
