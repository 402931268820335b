"""What the analytics work out before Spark: input formats, op geometry, options, the
session's settings and the printed summary. No SparkSession is used here."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from analytics import AnalyticsError
from analytics.__main__ import build_parser
from analytics.load import (
    InputFormat,
    detect_format,
    op_geometry,
    resolve_format,
    stroke_length,
    write_geometry,
)
from analytics.metrics import MetricsConfig
from analytics.session import is_local
from analytics.summary import format_summary
from tests.analytics.handmade import write_logs
from whiteboard.board import Clear, Erase, Move, OpId, Stroke, Undo
from whiteboard.sessionlog.export import export_logs


def test_stroke_length_is_the_sum_of_its_segments() -> None:
    assert stroke_length((0.0, 0.0, 3.0, 4.0, 3.0, 10.0)) == 11.0
    assert stroke_length((5.0, 5.0)) == 0.0  # a dot
    assert stroke_length((0.0, 0.0, 1.0, 1.0)) == pytest.approx(math.sqrt(2))


def test_op_geometry_is_ink_for_strokes_and_target_authors_for_erase_and_move() -> None:
    assert op_geometry(Stroke(OpId(1, 1), (0, 0, 6, 8), 0, 1.0)) == (10.0, None)
    targets = (OpId(2, 5), OpId(1, 3), OpId(2, 6))
    assert op_geometry(Erase(OpId(1, 4), targets)) == (None, [2, 1, 2])
    assert op_geometry(Move(OpId(1, 4), targets, 1.0, 2.0)) == (None, [2, 1, 2])
    assert op_geometry(Undo(OpId(1, 7), OpId(1, 4))) == (None, None)
    assert op_geometry(Clear(OpId(1, 8))) == (None, None)


def test_geometry_rows_number_records_as_the_export_does(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    logs = write_logs(tmp_path / "logs")
    # ann's log: 5 strokes, an erase, a move; bob's: 3 strokes, the erase, the move; eve's: 2.
    assert write_geometry([tmp_path / "logs"], tmp_path / "geometry") == 7 + 5 + 2
    geometry = pq.read_table(tmp_path / "geometry").to_pylist()
    export_logs(logs, tmp_path / "export", "parquet")
    exported = {
        (row["session_id"], row["seq"]): row
        for row in pq.read_table(tmp_path / "export").to_pylist()
    }
    for row in geometry:
        op = exported[row["session_id"], row["seq"]]
        if op["op_kind"] == "STROKE":
            assert row["ink_length"] is not None and row["target_authors"] is None
        else:
            assert op["op_kind"] in ("ERASE", "MOVE")
            assert row["ink_length"] is None and row["target_authors"]


def test_formats_are_told_from_the_files(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_logs(logs)
    export_logs([logs], tmp_path / "jsonl", "jsonl")
    export_logs([logs], tmp_path / "parquet", "parquet")
    renamed = tmp_path / "a-log.bin"
    renamed.write_bytes(next(logs.glob("*.wblog")).read_bytes())
    assert detect_format(str(logs)) is InputFormat.WBLOG
    assert detect_format(str(renamed)) is InputFormat.WBLOG  # by its first bytes
    assert detect_format(str(tmp_path / "jsonl")) is InputFormat.JSONL
    assert detect_format(str(tmp_path / "parquet")) is InputFormat.PARQUET
    assert detect_format("hdfs://cluster/exports/2024") is InputFormat.PARQUET
    assert detect_format("s3a://bucket/rows.jsonl") is InputFormat.JSONL
    with pytest.raises(AnalyticsError, match="mix"):
        resolve_format([str(logs), str(tmp_path / "parquet")])
    with pytest.raises(AnalyticsError, match="local files"):
        detect_format("hdfs://cluster/x.wblog")
    # Given, a format is not second-guessed.
    assert resolve_format([str(logs)], InputFormat.JSONL) is InputFormat.JSONL


def test_options_are_checked() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["metrics", "in", "--out", "o", "--idle-s", "30", "--conf", "spark.x=a=b"]
    )
    assert (args.idle_s, args.window_s, args.master, args.conf) == (
        30.0,
        10.0,
        None,
        [("spark.x", "a=b")],
    )
    for bad in (["--idle-s", "0"], ["--window-s", "nan"], ["--conf", "novalue"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["metrics", "in", "--out", "o", *bad])
    with pytest.raises(ValueError, match="idle_s"):
        MetricsConfig(idle_s=-1)


def test_only_local_masters_bind_to_loopback() -> None:
    assert is_local(None) and is_local("local[*]") and is_local("local[2]")
    assert not is_local("spark://host:7077")


def test_the_summary_reads_as_a_table() -> None:
    board = {
        "board_session": "2024-03-11T09:30:00Z rmp 239.255.1.1:5000",
        "members": 2,
        "ops": 1200,
        "op_span_s": 600.0,
        "logs": 2,
        "gini": 0.25,
        "turns": 40,
        "handoffs_per_min": 3.9,
        "turn_entropy_bits": 0.95,
        "simultaneity": 0.125,
        "idle_gaps": 2,
        "idle_s": 150.0,
    }
    member = {
        "board_session": board["board_session"],
        "member": 0xAB,
        "name": None,
        "ops": 900,
        "op_share": 0.75,
        "ink_length": None,
        "ink_share": None,
        "active_s": 300.0,
        "turns": 20,
        "erases_of_others": None,
        "moves_of_others": None,
        "nacks_sent": 4,
        "late_deliveries": 1,
        "join_ms": 1500.0,
    }
    transport = {
        "transport": "rmp",
        "members": 2,
        "board_sessions": 1,
        "nacks_sent": 4,
        "retransmissions": 3,
        "late_share": 0.01,
        "join_ms_mean": 1500.0,
        "join_ms_max": 1500.0,
        "never_ready": 0,
    }
    text = format_summary([board], [member], [transport], total=3)
    lines = text.splitlines()
    assert (
        lines[0]
        == "2024-03-11T09:30:00Z rmp 239.255.1.1:5000: 2 members, 1,200 ops over 10.0 min, 2 logs"
    )
    assert "Gini 0.25; 40 turns, 3.90 hand-offs/min, turn entropy 0.95 bits" in lines[1]
    assert "2+ members active 12% of the active time; 2 idle gaps, 2.5 min in all" in lines[2]
    assert lines[4].split() == [
        "000000ab",
        "900",
        "(75%)",
        "?",
        "5.0",
        "min",
        "20",
        "?",
        "4",
        "1",
        "1.5",
        "s",
    ]
    assert "... and 2 more board sessions" in text
    assert text.endswith("join 1.5 s on average, 1.5 s at most")
