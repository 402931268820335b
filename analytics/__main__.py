"""``python -m analytics``: the analytics jobs on the command line.

    python -m analytics metrics INPUT... --out DIR [--master local[*]|spark://host:7077]

also runs under spark-submit (``spark-submit analytics/__main__.py metrics ...``): then the
master and settings are spark-submit's. See docs/analytics.md.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from analytics import MISSING_EXTRA, TABLES, AnalyticsError, cluster
from whiteboard.security.passphrase_source import add_passphrase_options

EXIT_OK = 0
EXIT_PROBLEM = 2  # a message a person can act on, no traceback (as the whiteboard command)


def build_parser(prog: str = "python -m analytics") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Collaboration analytics over recorded whiteboard sessions, on Spark "
        "(docs/analytics.md).",
    )
    jobs = parser.add_subparsers(dest="job", metavar="JOB", required=True)
    metrics = jobs.add_parser(
        "metrics",
        help="contribution, participation, turn-taking, simultaneity, idle gaps, edits of "
        "others' work, network health, the interaction graph, territory and the activity "
        "timeline, one Parquet table each",
        description="Read session logs or their export and write one Parquet table per metric "
        "family under --out: " + ", ".join(TABLES) + ".",
    )
    _add_inputs(metrics, "+", "")
    metrics.add_argument(
        "--out", required=True, metavar="DIR", help="a folder, or any URI Spark writes to"
    )
    _add_metric_options(metrics)
    _add_spark_options(metrics)
    cluster.add_parser(jobs)
    _add_replay_parser(jobs)
    _add_report_parser(jobs)
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "python -m analytics") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        if args.job == "cluster":
            return cluster.run(args)
        if args.job in ("replay", "report"):
            return _run_spark_job(args)
        return run_metrics(args)
    except AnalyticsError as exc:
        print(f"analytics: {exc}", file=sys.stderr)
        return EXIT_PROBLEM


def run_metrics(args: argparse.Namespace) -> int:
    try:
        from analytics.load import (
            STAGING,
            InputFormat,
            recording_unlock,
            resolve_format,
            spark_rows,
        )
        from analytics.metrics import MetricsConfig, compute, read_tables, write_tables
        from analytics.summary import collect_summary, format_summary
    except ImportError as exc:
        raise _without_spark(exc) from None

    config = MetricsConfig.of(args)
    fmt = resolve_format(args.inputs, InputFormat(args.format))
    out: str = args.out
    if fmt is InputFormat.WBLOG and "://" in out:
        raise AnalyticsError(
            "session logs are staged inside --out, which must then be a folder (on a disk "
            "every executor shares, on a cluster): export them first "
            "(whiteboard log export --format parquet) to write to a URI"
        )
    with spark_rows(
        args.inputs, fmt, Path(out) / STAGING, args.master, dict(args.conf), recording_unlock(args)
    ) as run:
        tables = compute(run.rows, config)
        write_tables(tables, out)
        summary = format_summary(*collect_summary(read_tables(run.spark, out)))
    done = time.monotonic()
    print(summary)
    print()
    print(
        f"wrote {len(tables)} tables to {out} ({', '.join(tables)}) in {done - run.ready:.1f} s "
        f"(Spark started in {run.startup_s:.1f} s)"
    )
    return EXIT_OK


def _without_spark(exc: ImportError) -> AnalyticsError:
    return AnalyticsError(MISSING_EXTRA.format(missing=exc))


def _run_spark_job(args: argparse.Namespace) -> int:
    """``replay`` and ``report``: their modules import PySpark, so they are imported here."""
    try:
        if args.job == "replay":
            from analytics.replay import run_replay as run
        else:
            from analytics.report import run_report as run
    except ImportError as exc:
        raise _without_spark(exc) from None
    return run(args)


def _add_inputs(job: argparse.ArgumentParser, count: str, extra: str) -> None:
    job.add_argument(
        "inputs",
        nargs=count,
        metavar="INPUT",
        help="session logs (*.wblog, or folders of them), or the output folder of "
        "'whiteboard log export' (Parquet or JSON lines; any URI Spark reads)" + extra,
    )
    add_passphrase_options(job, session_name=True, reads_recordings=True)


def _add_metric_options(job: argparse.ArgumentParser) -> None:
    """The metrics' tuning, for ``metrics`` and for ``report`` (which computes them)."""
    job.add_argument(
        "--idle-s",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="a gap between ops longer than this is idle (default 60)",
    )
    job.add_argument(
        "--window-s",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="a member is active for this long after each op (simultaneity), and drawings "
        "this close in time may be co-edits (interactions) (default 10)",
    )
    job.add_argument(
        "--near-px",
        type=_pixels(zero=True),
        default=150.0,
        metavar="PX",
        help="drawings whose boxes are this close, in board units, are near each other "
        "(interactions; default 150)",
    )
    job.add_argument(
        "--cell-px",
        type=_pixels(zero=False),
        default=64.0,
        metavar="PX",
        help="the side of a territory grid cell, in board units (default 64)",
    )


def _add_spark_options(job: argparse.ArgumentParser) -> None:
    """Where and how Spark runs, for every job that starts it."""
    job.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="Spark master: local[*] (the default: all cores here), local[N], "
        "spark://host:7077, ... (under spark-submit, its --master is used)",
    )
    job.add_argument(
        "--format",
        choices=("auto", "wblog", "parquet", "jsonl"),
        default="auto",
        help="what INPUT holds (default: tell from the files)",
    )
    job.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_conf_item,
        help="a Spark setting, as spark-submit's --conf (repeatable)",
    )


def _add_replay_parser(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # Values are checked by the job (analytics.replay), before Spark starts.
    replay = jobs.add_parser(
        "replay",
        help="every board session's board at chosen times: board hashes and PNG frames",
        description="Rebuild each board session's board at chosen times (always including "
        "its end) with the app's board model, and paint each into a PNG on the Spark "
        "executors: DIR/frames.parquet and DIR/frames/<session>/NNNN.png.",
    )
    _add_inputs(replay, "+", "")
    replay.add_argument(
        "--out", required=True, metavar="DIR", help="a folder (every executor must write it)"
    )
    when = replay.add_mutually_exclusive_group()
    when.add_argument(
        "--at",
        metavar="T,...",
        help="times: seconds after each session's start (90,300.5) or moments "
        "(2024-03-11T09:45:00Z)",
    )
    when.add_argument(
        "--every", type=_seconds, metavar="S", help="a frame every S seconds of each session"
    )
    when.add_argument(
        "--frames",
        default="10",
        metavar="N",
        help="N frames evenly spaced over each session, the last at its end (default 10)",
    )
    replay.add_argument("--size", default="640x480", metavar="WxH", help="default 640x480")
    replay.add_argument(
        "--keyframe-every",
        default="1000",
        metavar="N",
        help="a keyframe every N records of a session (default 1000)",
    )
    _add_spark_options(replay)


def _add_report_parser(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = jobs.add_parser(
        "report",
        help="one self-contained HTML file with plots per board session and across sessions",
        description="Compute the metrics (or read those of a metrics run: --metrics) and "
        "write one HTML file that works offline: per board session activity timelines, "
        "contributions, the interaction graph and network health; across sessions a table "
        "and distributions.",
    )
    _add_inputs(report, "*", "; none with --metrics")
    report.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    report.add_argument(
        "--metrics", metavar="DIR", help="the --out of a metrics run: its tables are used"
    )
    report.add_argument(
        "--replay", metavar="DIR", help="the --out of a replay run: its final frames are shown"
    )
    _add_metric_options(report)
    _add_spark_options(report)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds > 0")
    return value


def _pixels(zero: bool) -> Callable[[str], float]:
    """An argparse type: a finite number of board units, > 0 (or >= 0 if ``zero``)."""
    rule = ">= 0" if zero else "> 0"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of px") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise argparse.ArgumentTypeError(f"{text} is not a number of px {rule}")
        return value

    return parse


def _conf_item(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


if __name__ == "__main__":
    sys.exit(main())
