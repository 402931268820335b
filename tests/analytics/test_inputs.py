"""What the analytics work out before Spark: input formats, options, the session's settings
and the printed summary. No SparkSession is used here. (Op geometry is the export's:
tests/sessionlog/test_export.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from analytics import AnalyticsError
from analytics.__main__ import build_parser
from analytics.load import InputFormat, detect_format, resolve_format
from analytics.metrics import MetricsConfig
from analytics.session import is_local
from analytics.summary import format_summary
from tests.analytics.handmade import write_logs
from whiteboard.sessionlog.export import export_logs


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
        ["metrics", "in", "--out", "o", "--idle-s", "30", "--conf", "spark.x=a=b", "--near-px", "0"]
    )
    assert (args.idle_s, args.window_s, args.master, args.conf) == (
        30.0,
        10.0,
        None,
        [("spark.x", "a=b")],
    )
    assert (args.near_px, args.cell_px) == (0.0, 64.0)  # near 0: only touching boxes
    bad_options = (
        ["--idle-s", "0"],
        ["--window-s", "nan"],
        ["--conf", "novalue"],
        ["--near-px", "-1"],
        ["--near-px", "inf"],
        ["--cell-px", "0"],
        ["--cell-px", "wide"],
    )
    for bad in bad_options:
        with pytest.raises(SystemExit):
            parser.parse_args(["metrics", "in", "--out", "o", *bad])
    with pytest.raises(ValueError, match="idle_s"):
        MetricsConfig(idle_s=-1)
    with pytest.raises(ValueError, match="cell_px"):
        MetricsConfig(cell_px=0)
    with pytest.raises(ValueError, match="near_px"):
        MetricsConfig(near_px=float("nan"))


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
        "co_edits": 17,
        "overlap_index": 0.25,
        "top_pair": {
            "member_a": 0xAB,
            "name_a": None,
            "member_b": 0xCD,
            "name_b": "bo",
            "weight": 21,
        },
    }
    member = {
        "board_session": board["board_session"],
        "member": 0xAB,
        "name": None,
        "ops": 900,
        "op_share": 0.75,
        "ink_length": 1234.4,
        "ink_share": 0.5,
        "active_s": 300.0,
        "turns": 20,
        "erases_of_others": 2,
        "moves_of_others": 0,
        "territoriality": 0.875,
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
    assert lines[3] == (
        "  17 co-edits, strongest tie 000000ab & bo (weight 21); 25% of the drawn area shared"
    )
    assert lines[5].split() == [
        "000000ab",
        "900",
        "(75%)",
        "1,234",
        "(50%)",
        "5.0",
        "min",
        "20",
        "2",
        "er,",
        "0",
        "mv",
        "88%",
        "4",
        "1",
        "1.5",
        "s",
    ]
    board["top_pair"] = None  # nobody interacted
    assert "  17 co-edits; 25% of the drawn area shared" in format_summary([board], [], [], total=1)
    assert "... and 2 more board sessions" in text
    assert text.endswith("join 1.5 s on average, 1.5 s at most")
