"""The ``replay`` job: every board session's board at chosen times, as a table of board hashes
and as PNG frames painted on the executors (docs/analytics.md, "Replay").

A board session's board is its reference log's (:mod:`analytics.boards`): the ops that log
delivered, in its order, on top of the board another member gave it if it joined a board
already drawn on. The board at time *T* holds the records the reference delivered up to *T*.

In Spark:

1. **Records.** The reference log's delivered ops (their bytes and order keys, from the rows)
   and the board it was given when joining, numbered ``n`` = 1, 2, ... in its order.
2. **Frames.** Per board session the requested times (the driver works them out from each
   session's span), and for each the number of records delivered by then, ``n_at``: one sort
   of records and frame times together, with a running maximum.
3. **Keyframes.** One fold per board session, on an executor (a Python UDF over the
   session's records): a snapshot of the board every ``keyframe_every`` records, kept only
   where a frame needs one, and the view every frame of the session shares.
4. **Frames painted.** One task per group of frames (repartitioned so that they spread over
   the executors): each loads its nearest keyframe, folds the few records after it (at most
   ``keyframe_every - 1``), hashes the board and paints it into a PNG with offscreen Qt,
   written to ``--out``, which every executor must be able to write.

The UDFs are plain (pickled) Python UDFs, not pandas or Arrow ones: those need pandas, which
the project does not depend on.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from analytics import AnalyticsError
from analytics.boards import UNBOUNDED, board_logs, is_delivered_op
from analytics.frames import (
    FoldRecord,
    View,
    board_at,
    keyframes,
    render_png,
    worker_name,
    write_png,
)

US = 1_000_000
DEFAULT_FRAMES = 10
DEFAULT_SIZE = (640, 480)
DEFAULT_KEYFRAME_EVERY = 1000
MAX_FRAMES_PER_SESSION = 10_000
MAX_SIDE = 8192  # pixels: a frame is a picture to look at, not a poster
TABLE = "frames.parquet"  # inside --out, beside the PNGs' folder
FRAMES_DIR = "frames"

# What the rows hold for one record of a reference log that changes its board.
RECORD = StructType(
    [
        StructField("n", LongType()),
        StructField("origin", LongType()),
        StructField("order_key", ArrayType(LongType())),
        StructField("payload", BinaryType()),
        StructField("state", BinaryType()),
    ]
)
KEYFRAMES_RESULT = StructType(
    [
        StructField("view", ArrayType(DoubleType())),
        StructField("final_hash", StringType()),
        StructField(
            "keyframes",
            ArrayType(
                StructType([StructField("base", LongType()), StructField("snapshot", BinaryType())])
            ),
        ),
        StructField("no_key", LongType()),
        StructField("rejected", LongType()),
        StructField("bad_states", LongType()),
    ]
)
FRAME_RESULT = StructType(
    [
        StructField("board_hash", StringType()),
        StructField("ops_applied", LongType()),
        StructField("objects", LongType()),
        StructField("png", StringType()),
        StructField("rendered_on", StringType()),
        StructField("render_task", LongType()),
    ]
)


class TimeKind(StrEnum):
    OFFSET = "offset"  # seconds after the board session's start
    ABSOLUTE = "absolute"  # a moment, UTC


@dataclass(frozen=True)
class FrameTime:
    kind: TimeKind
    us: int  # an offset or a moment, in microseconds


@dataclass(frozen=True)
class ReplayConfig:
    at: tuple[FrameTime, ...] = ()  # given times; else every_s; else `frames` evenly spaced
    every_s: float | None = None
    frames: int = DEFAULT_FRAMES
    width: int = DEFAULT_SIZE[0]
    height: int = DEFAULT_SIZE[1]
    keyframe_every: int = DEFAULT_KEYFRAME_EVERY

    def __post_init__(self) -> None:
        if self.frames < 1:
            raise ValueError("frames must be at least 1")
        if self.every_s is not None and not self.every_s > 0:
            raise ValueError("every_s must be a number of seconds > 0")
        if not (1 <= self.width <= MAX_SIDE and 1 <= self.height <= MAX_SIDE):
            raise ValueError(f"a frame's sides must be 1 to {MAX_SIDE} pixels")
        if self.keyframe_every < 1:
            raise ValueError("keyframe_every must be at least 1")


@dataclass(frozen=True)
class SessionSpan:
    """A board session as the driver sees it: when it starts (its first log's start) and
    ends (the reference's last record that changed the board, or its last record at all)."""

    board_session: str
    start_us: int
    end_us: int
    records: int


@dataclass(frozen=True)
class ReplayResult:
    frames: DataFrame  # the table as written
    spans: tuple[SessionSpan, ...]
    missing_states: tuple[str, ...]  # board sessions whose reference's joining board is unknown


# -- options ---------------------------------------------------------------------------------


def parse_times(text: str) -> tuple[FrameTime, ...]:
    """``90,300.5,2024-03-11T09:45:00Z``: seconds after each session's start, or moments
    (ISO 8601, UTC unless a zone is given). Raises ValueError with a message."""
    times: list[FrameTime] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise ValueError(f"{text!r} has an empty time in it")
        try:
            seconds = float(item)
        except ValueError:
            times.append(FrameTime(TimeKind.ABSOLUTE, _moment_us(item)))
            continue
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"{item} is not a number of seconds >= 0")
        times.append(FrameTime(TimeKind.OFFSET, round(seconds * US)))
    return tuple(times)


def parse_size(text: str) -> tuple[int, int]:
    """``640x480`` as ``(640, 480)``. Raises ValueError with a message."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if match is None:
        raise ValueError(f"{text!r} is not a size like 640x480")
    width, height = int(match[1]), int(match[2])
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise ValueError(f"{text}: each side must be 1 to {MAX_SIDE} pixels")
    return width, height


def _moment_us(text: str) -> int:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is neither seconds after the start nor a time like 2024-03-11T09:45:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return round(when.timestamp() * US)


def frame_times(span: SessionSpan, config: ReplayConfig) -> list[int]:
    """The times (µs) of a session's frames, in order: those asked for that fall within the
    session, and always its end last. Raises AnalyticsError for too many."""
    start, end = span.start_us, span.end_us
    times: set[int] = {end}
    if config.at:
        for when in config.at:
            t = start + when.us if when.kind is TimeKind.OFFSET else when.us
            if start <= t <= end:
                times.add(t)
    elif config.every_s is not None:
        step = max(1, round(config.every_s * US))
        count = (end - start) // step
        if count >= MAX_FRAMES_PER_SESSION:
            raise AnalyticsError(
                f"--every {config.every_s:g} makes {count + 1:,} frames of {span.board_session} "
                f"({(end - start) / US / 60:.1f} min); at most {MAX_FRAMES_PER_SESSION:,} per "
                "session: give a longer interval"
            )
        times.update(start + k * step for k in range(1, count + 1))
    else:
        times.update(start + (k * (end - start)) // config.frames for k in range(1, config.frames))
    return sorted(times)


def session_folder(board_session: str) -> str:
    """A board session's name as a folder name any file system takes:
    ``2024-03-11T09-30-00Z_rmp_239.255.26.222-21915``."""
    return re.sub(r"[^0-9A-Za-z._-]", "_", board_session.replace(":", "-").replace(" ", "_"))


# -- the job ---------------------------------------------------------------------------------


def reference_records(rows: DataFrame) -> tuple[DataFrame, DataFrame]:
    """``(records, sessions)``: every record of a reference log that changes its board,
    numbered in the log's order; and per board session its start, end and record count, and
    how many boards received when joining are unknown (not in the input)."""
    logs = board_logs(rows)
    reference = logs.filter("reference").select("session_id", "board_session")
    ops = (
        rows.filter(is_delivered_op() & F.col("payload").isNotNull())
        .join(reference, "session_id")
        .select(
            "board_session",
            "session_id",
            "seq",
            "t_us",
            F.col("origin"),
            F.col("order_key"),
            F.col("payload"),
            F.lit(None).cast(BinaryType()).alias("state"),
        )
    )
    received = rows.filter(F.col("kind") == "state_received").join(reference, "session_id")
    received = received.select(
        "board_session",
        "session_id",
        "seq",
        "t_us",
        F.lit(None).cast(LongType()).alias("origin"),
        F.lit(None).cast(ArrayType(LongType())).alias("order_key"),
        F.lit(None).cast(BinaryType()).alias("payload"),
        F.col("payload").alias("state"),
    )
    numbered = Window.partitionBy("board_session").orderBy("seq")
    records = (
        ops.unionByName(received)
        .withColumn("n", F.row_number().over(numbered).cast(LongType()))
        .drop("session_id", "seq")
    )
    spans = (
        logs.groupBy("board_session")
        .agg(F.min("start_us").alias("start_us"), F.max("end_us").alias("log_end_us"))
        .join(
            records.groupBy("board_session").agg(
                F.max("t_us").alias("last_us"),
                F.count("*").alias("records"),
                F.count(F.when(F.col("payload").isNull() & F.col("state").isNull(), True)).alias(
                    "missing_states"
                ),
            ),
            "board_session",
            "left",
        )
        .select(
            "board_session",
            "start_us",
            F.coalesce("last_us", "log_end_us").alias("end_us"),
            F.coalesce("records", F.lit(0)).alias("records"),
            F.coalesce("missing_states", F.lit(0)).alias("missing_states"),
        )
    )
    return records, spans


def replay(
    spark: SparkSession,
    rows: DataFrame,
    out: Path,
    config: ReplayConfig,
) -> ReplayResult:
    """Compute the frames of every board session in ``rows``, paint them into
    ``out/frames/<session>/NNNN.png`` and write the table ``out/frames.parquet``."""
    out = out.resolve()  # the executors' working folder is not ours
    records, spans_df = reference_records(rows)
    records = records.cache()
    collected = spans_df.orderBy("board_session").collect()
    spans = tuple(SessionSpan(r.board_session, r.start_us, r.end_us, r.records) for r in collected)
    missing = tuple(r.board_session for r in collected if r.missing_states)
    frame_rows = [
        (span.board_session, index, t, t == times[-1], (t - span.start_us) / US)
        for span in spans
        for times in (frame_times(span, config),)
        for index, t in enumerate(times)
    ]
    frames = spark.createDataFrame(
        frame_rows,
        StructType(
            [
                StructField("board_session", StringType()),
                StructField("frame", IntegerType()),
                StructField("t_us", LongType()),
                StructField("final", BooleanType()),
                StructField("at_s", DoubleType()),
            ]
        ),
    )
    frames = _with_records_by_then(frames, records, config.keyframe_every).cache()
    parallel = max(1, spark.sparkContext.defaultParallelism)

    # One fold per board session, spread over the executors.
    wanted = (
        frames.filter(F.col("base") > 0)
        .groupBy("board_session")
        .agg(F.collect_set("base").alias("bases"))
    )
    per_session = (
        spans_df.select("board_session")
        .join(
            records.groupBy("board_session").agg(
                F.collect_list(F.struct(*RECORD.fieldNames())).alias("records")
            ),
            "board_session",
            "left",
        )
        .join(wanted, "board_session", "left")
        .repartition(min(len(spans), 4 * parallel) or 1, "board_session")
    )
    folded = (
        per_session.select("board_session", _keyframes_udf("records", "bases").alias("k"))
        .select("board_session", "k.*")
        .cache()
    )
    keyed = folded.select("board_session", F.explode("keyframes").alias("kf")).select(
        "board_session", "kf.base", "kf.snapshot"
    )

    # The records after each frame's keyframe, and the frame painted.
    tails = (
        records.alias("r")
        .join(
            frames.select("board_session", "frame", "base", "n_at").alias("f"),
            (F.col("r.board_session") == F.col("f.board_session"))
            & (F.col("r.n") > F.col("f.base"))
            & (F.col("r.n") <= F.col("f.n_at")),
        )
        .groupBy("f.board_session", "f.frame")
        .agg(F.collect_list(F.struct(*(f"r.{name}" for name in RECORD.fieldNames()))).alias("tail"))
    )
    to_paint = (
        frames.join(keyed, ["board_session", "base"], "left")
        .join(folded.select("board_session", "view"), "board_session")
        .join(tails, ["board_session", "frame"], "left")
        # A number of partitions, not columns alone: adaptive execution would merge small
        # partitions into one task, and paint every frame in turn.
        .repartition(min(len(frame_rows), 4 * parallel) or 1, "board_session", "frame")
    )
    paint = _frame_udf(str(out), config.width, config.height)
    painted = to_paint.select(
        "board_session",
        "frame",
        "t_us",
        "at_s",
        "final",
        F.col("n_at").alias("records"),
        paint("board_session", "frame", "snapshot", "tail", "view").alias("p"),
    ).select(
        "board_session",
        "frame",
        "t_us",
        "at_s",
        "final",
        "records",
        "p.ops_applied",
        "p.objects",
        "p.board_hash",
        "p.png",
        F.lit(config.width).alias("width"),
        F.lit(config.height).alias("height"),
        "p.rendered_on",
        "p.render_task",
    )
    table = str(out / TABLE)
    painted.orderBy("board_session", "frame").write.mode("overwrite").parquet(table)
    folded.unpersist()
    frames.unpersist()
    records.unpersist()
    return ReplayResult(spark.read.parquet(table), spans, missing)


def _with_records_by_then(frames: DataFrame, records: DataFrame, keyframe_every: int) -> DataFrame:
    """``frames`` with ``n_at``, the records of the reference delivered by each frame's time
    (the greatest ``n`` with ``t_us`` at most the frame's), and ``base``, its keyframe."""
    events = records.select(
        "board_session",
        "t_us",
        F.lit(0).alias("order"),  # at the same time, a record counts for the frame
        "n",
        F.lit(None).cast(IntegerType()).alias("frame"),
    ).unionByName(
        frames.select(
            "board_session",
            "t_us",
            F.lit(1).alias("order"),
            F.lit(None).cast(LongType()).alias("n"),
            "frame",
        )
    )
    upto = Window.partitionBy("board_session").orderBy("t_us", "order").rowsBetween(UNBOUNDED, 0)
    by_then = (
        events.withColumn("n_at", F.coalesce(F.max("n").over(upto), F.lit(0)))
        .filter(F.col("frame").isNotNull())
        .select("board_session", "frame", "n_at")
    )
    base = (F.floor(F.col("n_at") / keyframe_every) * keyframe_every).cast(LongType())
    return frames.join(by_then, ["board_session", "frame"]).withColumn("base", base)


# -- the UDFs (run on the executors) -----------------------------------------------------------


def _fold_records(rows: Sequence[Any] | None) -> list[FoldRecord]:
    return [
        FoldRecord(
            n=row.n,
            origin=row.origin,
            order_key=None if row.order_key is None else tuple(row.order_key),
            payload=None if row.payload is None else bytes(row.payload),
            state=None if row.state is None else bytes(row.state),
        )
        for row in rows or ()
    ]


def _keyframes_udf(records: str, bases: str) -> Any:
    def run(rows: Sequence[Any] | None, wanted: Sequence[int] | None) -> dict[str, Any]:
        result = keyframes(_fold_records(rows), wanted or ())
        return {
            "view": result.view.as_list(),
            "final_hash": result.final_hash,
            "keyframes": [{"base": b, "snapshot": s} for b, s in result.snapshots.items()],
            "no_key": result.stats.no_key,
            "rejected": result.stats.rejected,
            "bad_states": result.stats.bad_states,
        }

    # Non-deterministic: else Spark may run it once per field of its result read.
    udf = F.udf(run, KEYFRAMES_RESULT, useArrow=False).asNondeterministic()
    return udf(records, bases)


def _frame_udf(out: str, width: int, height: int) -> Any:
    def run(
        board_session: str,
        frame: int,
        snapshot: bytes | None,
        tail: Sequence[Any] | None,
        view: Sequence[float],
    ) -> dict[str, Any]:
        board, _ = board_at(None if snapshot is None else bytes(snapshot), _fold_records(tail))
        png = f"{FRAMES_DIR}/{session_folder(board_session)}/{frame:04d}.png"
        write_png(Path(out) / png, render_png(board, View(*view), width, height))
        context = TaskContext.get()
        return {
            "board_hash": board.hash(),
            "ops_applied": len(board),
            "objects": len(board.objects()),
            "png": png,
            "rendered_on": worker_name(),
            "render_task": None if context is None else context.taskAttemptId(),
        }

    return F.udf(run, FRAME_RESULT, useArrow=False).asNondeterministic()


# -- the command -------------------------------------------------------------------------------

# Executors paint with Qt, and have no display.
EXECUTOR_ENV = {"spark.executorEnv.QT_QPA_PLATFORM": "offscreen"}


def config_of(args: argparse.Namespace) -> ReplayConfig:
    """The job's options, checked: AnalyticsError names the one that is wrong."""
    try:
        at = parse_times(args.at) if args.at is not None else ()
    except ValueError as exc:
        raise AnalyticsError(f"--at: {exc}") from None
    try:
        width, height = parse_size(args.size)
    except ValueError as exc:
        raise AnalyticsError(f"--size: {exc}") from None
    frames = _whole(args.frames, "--frames")
    keyframe_every = _whole(args.keyframe_every, "--keyframe-every")
    return ReplayConfig(at, args.every, frames, width, height, keyframe_every)


def _whole(text: str, option: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise AnalyticsError(f"{option}: {text!r} is not a whole number") from None
    if value < 1:
        raise AnalyticsError(f"{option}: {text} is not a whole number >= 1")
    return value


def run_replay(args: argparse.Namespace) -> int:
    """``python -m analytics replay``: the options as analytics.__main__ parses them."""
    from analytics.load import STAGING, InputFormat, recording_unlock, resolve_format, spark_rows

    config = config_of(args)
    fmt = resolve_format(args.inputs, InputFormat(args.format))
    if "://" in args.out:
        raise AnalyticsError(
            "--out must be a folder (on a disk every executor shares, on a cluster): the "
            "executors write the frames' PNG files into it"
        )
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(out / FRAMES_DIR, ignore_errors=True)  # an earlier run's frames
    except OSError as exc:
        raise AnalyticsError(
            f'"{out}" cannot be used as the output folder: {exc.strerror}'
        ) from None
    conf = {**EXECUTOR_ENV, **dict(args.conf)}
    with spark_rows(
        args.inputs, fmt, out / STAGING, args.master, conf, recording_unlock(args)
    ) as run:
        result = replay(run.spark, run.rows, out, config)
        finals = collect_final(result.frames)
        count = result.frames.count()
    done = time.monotonic()
    for board_session in result.missing_states:
        print(
            f"analytics: {board_session}: its reference log joined a board already drawn on, "
            "too large to have been recorded: its frames show only the ops delivered after "
            "joining",
            file=sys.stderr,
        )
    print(format_summary(result.spans, finals))
    print()
    print(
        f"wrote {_count(count, 'frame')} of {_count(len(result.spans), 'board session')} to {out} "
        f"({TABLE}, {FRAMES_DIR}/<session>/NNNN.png) in {done - run.ready:.1f} s "
        f"(Spark started in {run.startup_s:.1f} s)"
    )
    return 0


# -- the summary -----------------------------------------------------------------------------


def collect_final(table: DataFrame) -> list[Mapping[str, Any]]:
    """Each board session's last frame, for the summary."""
    return [row.asDict() for row in table.filter("final").orderBy("board_session").collect()]


def format_summary(
    spans: Sequence[SessionSpan], finals: Sequence[Mapping[str, Any]], limit: int = 10
) -> str:
    by_session = {row["board_session"]: row for row in finals}
    lines: list[str] = []
    for span in spans[:limit]:
        final = by_session.get(span.board_session)
        if final is None:
            continue
        lines.append(
            f"{span.board_session}: {_count(final['frame'] + 1, 'frame')} over "
            f"{(span.end_us - span.start_us) / US / 60:.1f} min; final board "
            f"{final['board_hash']} ({final['ops_applied']:,} ops, "
            f"{final['objects']:,} objects)"
        )
    if len(spans) > limit:
        lines.append(f"... and {len(spans) - limit} more board sessions (see the table)")
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


__all__ = [
    "DEFAULT_FRAMES",
    "DEFAULT_KEYFRAME_EVERY",
    "DEFAULT_SIZE",
    "FRAMES_DIR",
    "TABLE",
    "FrameTime",
    "ReplayConfig",
    "ReplayResult",
    "SessionSpan",
    "TimeKind",
    "collect_final",
    "format_summary",
    "frame_times",
    "parse_size",
    "parse_times",
    "reference_records",
    "replay",
    "run_replay",
    "session_folder",
]
