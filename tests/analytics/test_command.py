"""``python -m analytics metrics`` end to end on simulated sessions, in this process (so in
the test run's one SparkSession), and the command's checks that need no Spark."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from analytics import TABLES, AnalyticsError
from analytics.__main__ import EXIT_OK, EXIT_PROBLEM, main
from analytics.load import InputFormat, load_rows
from tests.analytics.simulated import simulate
from whiteboard.board import OpKind, decode_op
from whiteboard.presence import is_presence
from whiteboard.sessionlog import DeliveredRecord, read_log
from whiteboard.sessionlog.export import export_logs
from whiteboard.sessionlog.rows import COLUMNS

SIMULATIONS = (  # (transport, seed, start): two board sessions, one per transport
    ("rmp", 1, "2024-03-11T09:30:00Z"),
    ("mtp", 2, "2024-03-12T09:30:00Z"),
)


@pytest.fixture(scope="module")
def sim_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sim-logs")
    for transport, seed, start in SIMULATIONS:
        simulate(folder, transport, seed, start, messages=60, loss=0.02)
    return folder


def documented_columns() -> dict[str, list[str]]:
    """The columns of each table as docs/analytics.md lists them ("The tables")."""
    doc = (Path(__file__).parents[2] / "docs" / "analytics.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([\w, ]+) \|$", doc, re.MULTILINE)
    return {name: columns.split(", ") for name, columns in rows if name in TABLES}


def ops_by_author(folder: Path) -> dict[str, Counter[int]]:
    """Per multicast group (one board session each here), the ops each member made, counted
    in plain Python from the logs: every log of a complete simulation delivered them all.
    A picture's BLOB is no one's op (docs/analytics.md, "Board sessions"): its IMAGE is."""
    counts: dict[str, Counter[int]] = {}
    for path in sorted(folder.glob("*.wblog")):
        log = read_log(path)
        ops = (
            decode_op(record.payload)
            for record in log.records
            if isinstance(record, DeliveredRecord) and not is_presence(record.payload)
        )
        counted = Counter(op.id.author for op in ops if op.kind is not OpKind.BLOB)
        # Every member's log agrees: no log is the odd one out.
        assert counts.setdefault(log.header.group, counted) == counted, path.name
    return counts


def test_metrics_on_simulated_sessions(
    spark: SparkSession, sim_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "metrics"
    assert main(["metrics", str(sim_logs), "--out", str(out)]) == EXIT_OK

    documented = documented_columns()
    for name in TABLES:
        assert list((out / name).glob("*.parquet")), f"no {name} table"
        assert pq.read_table(out / name).schema.names == documented[name], name
    assert not (out / ".staging").exists()
    sessions = pq.read_table(out / "sessions").to_pylist()
    contribution = pq.read_table(out / "contribution").to_pylist()
    group_of = {s["board_session"]: s["group"] for s in sessions}
    assert sorted(s["transport"] for s in sessions) == ["mtp", "rmp"]
    from_spark: dict[str, Counter[int]] = {}
    for row in contribution:
        if row["ops"]:
            from_spark.setdefault(group_of[row["board_session"]], Counter())[row["member"]] = row[
                "ops"
            ]
    assert from_spark == ops_by_author(sim_logs)
    transports = {
        row["transport"] for row in pq.read_table(out / "network_by_transport").to_pylist()
    }
    assert transports == {"mtp", "rmp"}

    printed = capsys.readouterr().out
    for board in group_of:
        assert board in printed
    assert f"wrote {len(TABLES)} tables" in printed
    assert "of the drawn area shared" in printed


def test_a_parquet_export_is_read_with_the_documented_columns(
    spark: SparkSession, sim_logs: Path, tmp_path: Path
) -> None:
    result = export_logs([sim_logs], tmp_path / "export", "parquet")
    loaded = load_rows(spark, [str(tmp_path / "export")], tmp_path / "staging")
    assert loaded.format is InputFormat.PARQUET
    assert loaded.rows.columns == [name for name, _ in COLUMNS]
    assert loaded.rows.count() == result.rows


def test_an_export_from_before_the_op_columns_is_refused_saying_to_export_again(
    spark: SparkSession, sim_logs: Path, tmp_path: Path
) -> None:
    new = ("payload", "ink_length", "bbox", "target_authors")
    log = next(sim_logs.glob("*.wblog"))
    export_logs([log], tmp_path / "parquet", "parquet")
    old_parquet = tmp_path / "old-parquet"
    for file in (tmp_path / "parquet").glob("date=*/*.parquet"):
        table = pq.read_table(file, partitioning=None)
        target = old_parquet / file.relative_to(tmp_path / "parquet")
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.drop_columns(list(new)), target)
    export_logs([log], tmp_path / "jsonl", "jsonl")
    old_jsonl = tmp_path / "old-jsonl"
    for file in (tmp_path / "jsonl").glob("date=*/*.jsonl"):
        target = old_jsonl / file.relative_to(tmp_path / "jsonl")
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.loads(line) for line in file.read_text().splitlines()]
        target.write_text(
            "".join(
                json.dumps({k: v for k, v in row.items() if k not in new}) + "\n" for row in lines
            )
        )
    for folder in (old_parquet, old_jsonl):
        with pytest.raises(AnalyticsError, match="older 'whiteboard log export'") as caught:
            load_rows(spark, [str(folder)], tmp_path / "staging")
        assert "payload, ink_length, bbox, target_authors" in str(caught.value)
        assert "export the logs again" in str(caught.value)
    # Some other table altogether is not mistaken for an old export.
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    with pytest.raises(AnalyticsError, match="not a session-log export"):
        load_rows(spark, [str(other)], tmp_path / "staging")


def test_inputs_that_are_neither_logs_nor_exports_are_refused_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["metrics", str(tmp_path), "--out", str(tmp_path / "out")]) == EXIT_PROBLEM
    assert "holds no session logs (*.wblog) and no exported rows" in capsys.readouterr().err
    missing = tmp_path / "nowhere"
    assert main(["metrics", str(missing), "--out", str(tmp_path / "out")]) == EXIT_PROBLEM
    assert f'"{missing}" does not exist' in capsys.readouterr().err


def test_the_whiteboard_command_runs_the_analytics_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from whiteboard.cli import main as whiteboard_main

    (tmp_path / "notes.txt").write_text("hello")
    assert whiteboard_main(["analytics", "metrics", str(tmp_path), "--out", "x"]) == EXIT_PROBLEM
    assert "holds no session logs (*.wblog)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        whiteboard_main(["analytics", "--help"])
    assert capsys.readouterr().out.startswith("usage: whiteboard analytics")


def test_an_encrypted_recording_needs_its_passphrase(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The jobs open encrypted recordings given --passphrase-file, and say what they need
    without it (the export runs before any Spark job)."""
    from tests.sessionlog.test_sealing import write_sealed

    logs = tmp_path / "logs"
    logs.mkdir()
    write_sealed(logs / "private.wblog")
    assert main(["metrics", str(logs), "--out", str(tmp_path / "out")]) == EXIT_PROBLEM
    assert "encrypted recording of a private session" in capsys.readouterr().err
    wrong = tmp_path / "wrong"
    wrong.write_text("not this session's passphrase\n")
    args = ["metrics", str(logs), "--out", str(tmp_path / "out"), "--passphrase-file"]
    assert main([*args, str(wrong)]) == EXIT_PROBLEM
    assert "another private session" in capsys.readouterr().err
    assert main([*args, str(tmp_path / "missing")]) == EXIT_PROBLEM
    assert "cannot read the passphrase file" in capsys.readouterr().err
