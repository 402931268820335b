"""``python -m analytics``: the analytics jobs on the command line.

    python -m analytics metrics INPUT... --out DIR [--master local[*]|spark://host:7077]

also runs under spark-submit (``spark-submit analytics/__main__.py metrics ...``): then the
master and settings are spark-submit's. See docs/analytics.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from analytics import TABLES, AnalyticsError

EXIT_OK = 0
EXIT_PROBLEM = 2  # a message a person can act on, no traceback (as the whiteboard command)
STAGING = ".staging"  # inside --out: Spark skips names starting with "." when reading


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
        "others' work and network health, one Parquet table each",
        description="Read session logs or their export and write one Parquet table per metric "
        "family under --out: " + ", ".join(TABLES) + ".",
    )
    metrics.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="session logs (*.wblog, or folders of them), or the output folder of "
        "'whiteboard log export' (Parquet or JSON lines; any URI Spark reads)",
    )
    metrics.add_argument(
        "--out", required=True, metavar="DIR", help="a folder, or any URI Spark writes to"
    )
    metrics.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="Spark master: local[*] (the default: all cores here), local[N], "
        "spark://host:7077, ... (under spark-submit, its --master is used)",
    )
    metrics.add_argument(
        "--format",
        choices=("auto", "wblog", "parquet", "jsonl"),
        default="auto",
        help="what INPUT holds (default: tell from the files)",
    )
    metrics.add_argument(
        "--idle-s",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="a gap between ops longer than this is idle (default 60)",
    )
    metrics.add_argument(
        "--window-s",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="a member is active for this long after each op, for simultaneity (default 10)",
    )
    metrics.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_conf_item,
        help="a Spark setting, as spark-submit's --conf (repeatable)",
    )
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "python -m analytics") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        return run_metrics(args)
    except AnalyticsError as exc:
        print(f"analytics: {exc}", file=sys.stderr)
        return EXIT_PROBLEM


def run_metrics(args: argparse.Namespace) -> int:
    try:
        from analytics.load import InputFormat, load_rows, resolve_format
        from analytics.metrics import MetricsConfig, compute, write_tables
        from analytics.session import build_session
        from analytics.summary import collect_summary, format_summary
    except ImportError as exc:
        raise AnalyticsError(
            f"the analytics need PySpark and pyarrow ({exc}): install the 'analytics' extra, "
            "for example .venv/bin/pip install -e '.[analytics]'"
        ) from None
    from pyspark.sql import SparkSession

    config = MetricsConfig(idle_s=args.idle_s, window_s=args.window_s)
    fmt = resolve_format(args.inputs, InputFormat(args.format))
    out: str = args.out
    if fmt is InputFormat.WBLOG and "://" in out:
        raise AnalyticsError(
            "session logs are staged inside --out, which must then be a folder (on a disk "
            "every executor shares, on a cluster): export them first "
            "(whiteboard log export --format parquet) to write to a URI"
        )
    staging = Path(out) / STAGING
    started = time.monotonic()
    reused = SparkSession.getActiveSession() is not None
    spark = build_session(args.master, dict(args.conf))
    ready = time.monotonic()
    try:
        shutil.rmtree(staging, ignore_errors=True)  # an earlier run's, if it was killed
        loaded = load_rows(spark, args.inputs, staging, fmt)
        for message in (*loaded.failed, *loaded.warnings):
            print(f"analytics: {message}", file=sys.stderr)
        tables = compute(loaded.rows, config, loaded.geometry)
        write_tables(tables, out)
        summary = format_summary(*collect_summary(tables))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not reused:
            spark.stop()
    done = time.monotonic()
    print(summary)
    print()
    if not loaded.geometry:
        print(
            "ink lengths and edits of others' work are unknown (?): the export does not "
            "record op geometry; give the .wblog logs to compute them"
        )
    print(
        f"wrote {len(tables)} tables to {out} ({', '.join(tables)}) in {done - ready:.1f} s "
        f"(Spark started in {ready - started:.1f} s)"
    )
    return EXIT_OK


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds > 0")
    return value


def _conf_item(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


if __name__ == "__main__":
    sys.exit(main())
