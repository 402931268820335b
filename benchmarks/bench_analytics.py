"""The metrics job's throughput: python benchmarks/bench_analytics.py DATA [--events N] [MASTER...]

Makes N export rows (default 10,000,000) once, cached in DATA, then runs the ``metrics`` job
on them with each master (default ``local[1]`` then ``local[2]``), each in a process of its
own, and prints events (rows) per second of the job, Spark's start-up excluded, and how the
throughput scales from the first master to the others.

The rows are realistic because they are real: a few simulated sessions (``whiteboard sim
--workload collab --log-dir``, RMP and MTP, 3 to 6 members) exported with ``whiteboard log
export --format parquet``, then copied under new session ids and shifted in time (a week per
copy: the same teams meeting again), so every copy is a board session of its own. The last
copy is cut to make exactly N rows, as logs cut short by a crash.

    python benchmarks/bench_analytics.py /tmp/wb-bench                  # 10M events
    python benchmarks/bench_analytics.py /tmp/wb-bench --events 1000000 local[2]
    python benchmarks/bench_analytics.py /tmp/wb-bench --conf spark.driver.memory=4g

One job runs per child process: ``--job MASTER INPUT OUT`` (internal) starts Spark, then
times ``python -m analytics metrics INPUT --out OUT`` in that session.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

DEFAULT_EVENTS = 10_000_000
DEFAULT_MASTERS = ("local[1]", "local[2]")
ROWS_PER_FILE = 1_000_000  # ten files for 10M: enough input splits for two cores
ROW_GROUP = 250_000
WEEK_US = 7 * 24 * 3600 * 1_000_000
MANIFEST = "_bench.json"  # Spark skips files starting with "_"

# (transport, peers, messages, seed, start): a mix of board sizes on both transports.
SIMULATIONS = (
    ("rmp", 4, 300, 1, "2024-03-11T09:30:00Z"),
    ("mtp", 4, 300, 2, "2024-03-12T09:30:00Z"),
    ("rmp", 6, 400, 3, "2024-03-13T14:00:00Z"),
    ("mtp", 3, 200, 4, "2024-03-14T10:00:00Z"),
    ("rmp", 5, 300, 5, "2024-03-15T16:00:00Z"),
    ("mtp", 6, 400, 6, "2024-03-16T11:00:00Z"),
)


@dataclass(frozen=True)
class Dataset:
    folder: Path
    events: int
    copies: int
    logs: int
    board_sessions: int
    megabytes: float


@dataclass(frozen=True)
class Timing:
    master: str
    startup_s: float  # starting the JVM and the SparkSession: not the job's
    job_s: float


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, metavar="DATA", help="a folder for the cached rows")
    parser.add_argument("masters", nargs="*", default=list(DEFAULT_MASTERS), metavar="MASTER")
    parser.add_argument("--events", type=_positive, default=DEFAULT_EVENTS, metavar="N")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting"
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also print where each job's time went (from Spark's event log, kept in DATA)",
    )
    args = parser.parse_intermixed_args(argv)
    dataset = prepare(args.data, args.events)
    print(
        f"{dataset.events:,} events: {dataset.copies} copies of {len(SIMULATIONS)} simulated "
        f"sessions, {dataset.board_sessions:,} board sessions, {dataset.logs:,} logs, "
        f"{dataset.megabytes:,.0f} MB of Parquet in {dataset.folder}"
    )
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'master':<12}{'Spark start':>12}{'job':>10}{'events/s':>12}{'load':>7}")
    timings: list[Timing] = []
    for master in args.masters:
        conf = list(args.conf)
        events_dir = args.data / "eventlog" / master.translate(str.maketrans("[]*", "__x"))
        if args.breakdown:
            shutil.rmtree(events_dir, ignore_errors=True)
            events_dir.mkdir(parents=True)
            conf += [f"{key}={value}" for key, value in event_log_conf(events_dir).items()]
        timing = run_job(master, dataset, args.data / "out", conf)
        timings.append(timing)
        rate = dataset.events / timing.job_s
        print(
            f"{master:<12}{timing.startup_s:>10.1f} s{timing.job_s:>8.1f} s{rate:>12,.0f}"
            f"{os.getloadavg()[0]:>7.1f}",
            flush=True,
        )
        if args.breakdown:
            print(format_breakdown(breakdown(events_dir), timing.job_s), flush=True)
    base = timings[0]
    for timing in timings[1:]:
        print(f"{timing.master} / {base.master}: {base.job_s / timing.job_s:.2f}x the throughput")
    return 0


# -- the rows ----------------------------------------------------------------------------------


def prepare(data: Path, events: int) -> Dataset:
    """The folder of ``events`` rows, made unless an earlier run left it."""
    folder = data / f"events-{events}"
    manifest = folder / MANIFEST
    if manifest.exists():
        return Dataset(folder=folder, **json.loads(manifest.read_text()))
    base = base_export(data / "base")
    print(f"writing {events:,} events to {folder} ...", flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    copies, logs, boards = write_copies(base, folder, events)
    size = sum(path.stat().st_size for path in folder.glob("*.parquet")) / 1e6
    dataset = Dataset(folder, events, copies, logs, boards, round(size, 1))
    facts = {key: value for key, value in asdict(dataset).items() if key != "folder"}
    manifest.write_text(json.dumps(facts))  # last: a run cut short is redone
    return dataset


def base_export(folder: Path) -> pa.Table:
    """The simulated sessions as exported rows (made once)."""
    export = folder / "export"
    if not (folder / MANIFEST).exists():
        shutil.rmtree(folder, ignore_errors=True)
        logs = folder / "logs"
        for transport, peers, messages, seed, start in SIMULATIONS:
            _whiteboard("sim", "--transport", transport, "--workload", "collab", "--peers",
                        str(peers), "--messages", str(messages), "--loss", "0.02",
                        "--jitter-ms", "2", "--seed", str(seed), "--start", start,
                        "--log-dir", str(logs), "--json")  # fmt: skip
        _whiteboard("log", "export", str(logs), "--format", "parquet", "--out", str(export))
        (folder / MANIFEST).write_text("{}")
    table = pq.read_table(export)
    # The date partition is the export's folder layout, not a column of its rows.
    table = table.drop_columns([name for name in ("date",) if name in table.column_names])
    return table.sort_by([("session_id", "ascending"), ("seq", "ascending")])


def write_copies(base: pa.Table, folder: Path, events: int) -> tuple[int, int, int]:
    """Copies of ``base`` under new session ids, each a week after the one before, cut to
    ``events`` rows: ``(copies, logs, board sessions)`` written."""
    sessions = pc.unique(base["session_id"])
    slot = pc.index_in(base["session_id"], value_set=sessions)
    boards_per_copy = len(SIMULATIONS)
    span = pc.max(base["t_us"]).as_py() - pc.min(base["t_us"]).as_py()
    stride = math.ceil((span + 1) / WEEK_US) * WEEK_US  # no copy overlaps another
    copies = math.ceil(events / base.num_rows)
    written = logs = 0
    parts = PartFiles(folder, base.schema)
    try:
        for copy in range(copies):
            rows = min(base.num_rows, events - written)
            ids = pa.array([_session_id(sid, copy) for sid in sessions.to_pylist()], pa.string())
            shift = copy * stride
            table = base.slice(0, rows)
            table = _replace(table, "session_id", ids.take(slot.slice(0, rows)))
            table = _replace(table, "t_us", pc.add(table["t_us"], shift))
            table = _replace(table, "sent_us", pc.add(table["sent_us"], shift))
            parts.write(table)
            written += rows
            logs += len(pc.unique(table["session_id"]))
    finally:
        parts.close()
    return copies, logs, copies * boards_per_copy


class PartFiles:
    """Part files of ROWS_PER_FILE rows each, filled one table after another."""

    def __init__(self, folder: Path, schema: pa.Schema) -> None:
        self.folder, self.schema = folder, schema
        self.files = 0
        self._writer: pq.ParquetWriter | None = None
        self._rows = 0  # in the open file

    def write(self, table: pa.Table) -> None:
        while table.num_rows:
            if self._writer is None:
                path = self.folder / f"part-{self.files:05d}.parquet"
                self._writer, self._rows = pq.ParquetWriter(path, self.schema), 0
                self.files += 1
            room = ROWS_PER_FILE - self._rows
            chunk, table = table.slice(0, room), table.slice(room)
            self._writer.write_table(chunk, row_group_size=ROW_GROUP)
            self._rows += chunk.num_rows
            if self._rows == ROWS_PER_FILE:
                self.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _replace(table: pa.Table, name: str, column: pa.Array | pa.ChunkedArray) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, column)


def _session_id(original: str, copy: int) -> str:
    # 16 hex digits, as the app's: unique per (log, copy).
    return hashlib.blake2b(f"{original}/{copy}".encode(), digest_size=8).hexdigest()


def _whiteboard(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "whiteboard", *args], check=True, capture_output=True)


# -- the job -----------------------------------------------------------------------------------


def run_job(master: str, dataset: Dataset, out: Path, conf: Sequence[str]) -> Timing:
    """The job with ``master`` in a child process of its own (a JVM of its own)."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, __file__, "--job", master, str(dataset.folder), str(out)]
    done = subprocess.run([*command, *conf], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the job on {master} failed:\n{done.stderr[-3000:]}")
    timing = json.loads(done.stdout.strip().splitlines()[-1])
    return Timing(master, timing["startup_s"], timing["job_s"])


def job(master: str, folder: str, out: str, conf: Sequence[str]) -> None:
    """In the child: start Spark (timed apart), then the metrics command in its session."""
    from analytics.__main__ import EXIT_OK
    from analytics.__main__ import main as analytics_main
    from analytics.session import build_session

    settings = dict(item.split("=", 1) for item in conf)
    started = time.monotonic()
    spark = build_session(master, settings)
    ready = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()):  # the job's summary: not needed here
        status = analytics_main(["metrics", folder, "--out", out])
    done = time.monotonic()
    spark.stop()
    if status != EXIT_OK:
        raise SystemExit(status)
    print(json.dumps({"startup_s": ready - started, "job_s": done - ready}))


# -- where the time went -----------------------------------------------------------------------


def event_log_conf(folder: Path) -> dict[str, str]:
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": folder.resolve().as_uri(),
        "spark.eventLog.compress": "false",  # plain JSON lines, read below
        "spark.eventLog.rolling.enabled": "false",
    }


def breakdown(folder: Path) -> list[tuple[str, float]]:
    """``(what, seconds)`` per Spark SQL execution of a job's event log: a table written
    (named by its folder) or another action (named by Spark: ``collect at file:line``)."""
    (log,) = (path for path in folder.iterdir() if not path.name.startswith("."))
    started: dict[int, tuple[str, int]] = {}
    spent: list[tuple[str, float]] = []
    with log.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            kind = event["Event"].rsplit(".", 1)[-1]
            if kind == "SparkListenerSQLExecutionStart":
                plan = event.get("physicalPlanDescription", "")
                written = re.search(
                    r"InsertIntoHadoopFsRelationCommand\s+Input: \[\]\s+Arguments: file:([^,]+),",
                    plan,
                )
                what = f"write {Path(written.group(1)).name}" if written else event["description"]
                started[event["executionId"]] = (what, event["time"])
            elif kind == "SparkListenerSQLExecutionEnd" and event["executionId"] in started:
                what, at = started.pop(event["executionId"])
                spent.append((what, (event["time"] - at) / 1000))
    return spent


def format_breakdown(spent: Sequence[tuple[str, float]], job_s: float) -> str:
    actions = sum(seconds for _, seconds in spent)
    lines = [f"    {seconds:7.1f} s  {what}" for what, seconds in spent]
    lines.append(f"    {job_s - actions:7.1f} s  in the driver between actions (reading the")
    lines.append("               input's footers, building and planning the queries)")
    return "\n".join(lines)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("give a number of events > 0")
    return value


if __name__ == "__main__":
    if sys.argv[1:2] == ["--job"]:
        job(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        sys.exit(main())
