"""Session logs, or their export, as one DataFrame of rows.

The rows are the export's (docs/session-log.md, "Exported rows": one row per record, with
every op's kind, id, ink length, bounding box, target authors and bytes). Logs are exported
to Parquet in a staging folder first and then read like any export, so every input gives the
same columns computed by the same code.

The staging folder is the caller's to provide and remove after the job: Spark reads files
lazily, on every action, so the staging must outlive the DataFrame. On a cluster it must be
on storage every executor reads (the CLI puts it inside ``--out``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from analytics import AnalyticsError
from whiteboard.sessionlog.cli import unlock_from
from whiteboard.sessionlog.export import ExportError, export_logs
from whiteboard.sessionlog.format import MAGIC
from whiteboard.sessionlog.paths import LOG_EXTENSION
from whiteboard.sessionlog.reader import NO_SECRET
from whiteboard.sessionlog.rows import COLUMNS
from whiteboard.sessionlog.sealing import Unlock

OUTDATED_EXPORT = (
    "was written by an older 'whiteboard log export', without the column(s) {missing}: "
    "export the logs again (or give the .wblog logs)"
)


class InputFormat(StrEnum):
    AUTO = "auto"
    WBLOG = "wblog"  # session logs, files or folders of them
    PARQUET = "parquet"  # whiteboard log export --format parquet
    JSONL = "jsonl"  # whiteboard log export --format jsonl


@dataclass(frozen=True)
class LoadedRows:
    rows: DataFrame  # the export's columns, in its order and types
    format: InputFormat
    warnings: tuple[str, ...] = ()  # about logs read anyway (torn tails, skipped records)
    failed: tuple[str, ...] = ()  # why each log left out was left out


def recording_unlock(args: argparse.Namespace) -> Unlock:
    """What opens encrypted recordings among a job's inputs (``--passphrase-file``, the
    environment, ``--session-name``); AnalyticsError if the passphrase file cannot be used."""
    try:
        return unlock_from(args)
    except ValueError as exc:
        raise AnalyticsError(str(exc)) from None


def load_rows(
    spark: SparkSession,
    inputs: Sequence[str],
    staging: Path,
    fmt: InputFormat = InputFormat.AUTO,
    unlock: Unlock = NO_SECRET,
) -> LoadedRows:
    """Every row of ``inputs``: logs (files or folders; ``unlock`` opens encrypted ones) or
    exported tables (folders as ``whiteboard log export`` wrote them, single files, or URIs
    Spark reads)."""
    fmt = resolve_format(inputs, fmt)
    if fmt is InputFormat.WBLOG:
        return _load_logs(spark, inputs, staging, unlock)
    if fmt is InputFormat.JSONL:
        _check_jsonl_columns(spark, inputs)
        # An explicit schema: inferring one would read every file twice, type a column that
        # is null throughout as string, and leave the base64 payload as text.
        frame = spark.read.schema(row_schema(COLUMNS)).json(list(inputs))
    else:
        frame = spark.read.parquet(*inputs)
    return LoadedRows(_normalised(frame), fmt)


# Where a job exports session logs for Spark to read, inside its --out folder: Spark skips
# names starting with "." when it reads the folder.
STAGING = ".staging"


@dataclass(frozen=True)
class SparkRun:
    """A job's SparkSession and the rows of its inputs (see :func:`spark_rows`)."""

    spark: SparkSession
    rows: DataFrame
    startup_s: float  # how long Spark took to start (0 if one was running)
    ready: float  # time.monotonic() once it had: a job's own time is counted from here


@contextmanager
def spark_rows(
    inputs: Sequence[str],
    fmt: InputFormat,
    staging: Path,
    master: str | None,
    conf: Mapping[str, str],
    unlock: Unlock = NO_SECRET,
) -> Iterator[SparkRun]:
    """Start Spark (or use the session running, as under spark-submit or in the tests) and
    read ``inputs``, for a job: logs are exported into ``staging`` first (emptied of an
    earlier, killed run's files, removed at the end). The inputs that could not be read are
    named on stderr. Spark is stopped at the end if it was started here."""
    from analytics.session import build_session

    started = time.monotonic()
    reused = SparkSession.getActiveSession() is not None
    spark = build_session(master, conf)
    ready = time.monotonic()
    try:
        shutil.rmtree(staging, ignore_errors=True)
        loaded = load_rows(spark, inputs, staging, fmt, unlock)
        for message in (*loaded.failed, *loaded.warnings):
            print(f"analytics: {message}", file=sys.stderr)
        yield SparkRun(spark, loaded.rows, ready - started, ready)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not reused:
            spark.stop()


def resolve_format(inputs: Sequence[str], fmt: InputFormat = InputFormat.AUTO) -> InputFormat:
    """``fmt``, or for AUTO what the inputs hold. Cheap, and no Spark: the command checks
    its inputs before it spends minutes starting Spark."""
    if not inputs:
        raise AnalyticsError("no input given")
    if fmt is not InputFormat.AUTO:
        return fmt
    found = {detect_format(path) for path in inputs}
    if len(found) > 1:
        raise AnalyticsError(
            "the inputs mix "
            + " and ".join(sorted(found))
            + ": give session logs or one kind of export, not both"
        )
    return found.pop()


def detect_format(path: str) -> InputFormat:
    """What ``path`` holds, from its name or, for a folder, the files in it."""
    if "://" in path:  # hdfs://, s3a://, file://...: only Spark can look inside
        if path.endswith(LOG_EXTENSION):
            raise AnalyticsError(
                f'"{path}": session logs are read from local files; export them '
                "(whiteboard log export --format parquet) and give the export instead"
            )
        return InputFormat.JSONL if path.endswith((".jsonl", ".json")) else InputFormat.PARQUET
    local = Path(path)
    if local.is_dir():
        if any(local.glob(f"*{LOG_EXTENSION}")):
            return InputFormat.WBLOG
        if any(local.rglob("*.parquet")):
            return InputFormat.PARQUET
        if any(local.rglob("*.jsonl")) or any(local.rglob("*.json")):
            return InputFormat.JSONL
        raise AnalyticsError(
            f'"{path}" holds no session logs (*{LOG_EXTENSION}) and no exported rows '
            "(*.parquet, *.jsonl)"
        )
    if not local.exists():
        raise AnalyticsError(f'"{path}" does not exist')
    if local.suffix == ".parquet":
        return InputFormat.PARQUET
    if local.suffix in (".jsonl", ".json"):
        return InputFormat.JSONL
    # A log whatever its name: it says so in its first bytes.
    return InputFormat.WBLOG if _starts_with_magic(local) else InputFormat.PARQUET


def row_schema(columns: Sequence[tuple[str, str]]) -> StructType:
    """The Spark schema of columns named and typed as in ``whiteboard.sessionlog.rows``."""
    return StructType([StructField(name, spark_type(kind), True) for name, kind in columns])


def spark_type(kind: str) -> DataType:
    """The Spark type of an export column's type (``whiteboard.sessionlog.rows.COLUMNS``)."""
    return _SPARK_TYPES[kind]


# -- inputs ------------------------------------------------------------------------------------


def _load_logs(
    spark: SparkSession, inputs: Sequence[str], staging: Path, unlock: Unlock
) -> LoadedRows:
    rows_dir = staging / "rows"
    try:
        result = export_logs(inputs, rows_dir, "parquet", unlock)
    except ExportError as exc:
        raise AnalyticsError(str(exc)) from None
    if result.sessions == 0:
        raise AnalyticsError(
            "no session log could be read" + "".join(f"\n  {why}" for why in result.failed)
        )
    return LoadedRows(
        _normalised(spark.read.parquet(str(rows_dir))),
        InputFormat.WBLOG,
        warnings=result.warnings,
        failed=result.failed,
    )


def _check_jsonl_columns(spark: SparkSession, inputs: Sequence[str]) -> None:
    """Refuse JSON lines from an older export. Read with a schema, a missing column would
    just be null throughout, and the metrics quietly wrong; its first line says which columns
    it has (every line has every column). One line is read, wherever the files are."""
    first = spark.read.text(list(inputs)).limit(1).collect()
    if not first:
        return
    try:
        names = set(json.loads(first[0].value))
    except (ValueError, TypeError):
        raise AnalyticsError(
            f"{_named(inputs)} is not a session-log export: its first line is not a JSON object"
        ) from None
    missing = [name for name, _ in COLUMNS if name not in names]
    if missing:
        raise AnalyticsError(f"{_named(inputs)} " + OUTDATED_EXPORT.format(missing=_list(missing)))


def _normalised(frame: DataFrame) -> DataFrame:
    """The export's columns in its order and types, whatever else the input has (the
    ``date`` partition column) and whichever way a reader typed them."""
    missing = [name for name, _ in COLUMNS if name not in frame.columns]
    if missing:
        known = {name for name, _ in COLUMNS[: -len(_ADDED_LAST)]}
        if known <= set(frame.columns):
            raise AnalyticsError("the input " + OUTDATED_EXPORT.format(missing=_list(missing)))
        raise AnalyticsError(
            "the input is not a session-log export: it has no column " + ", ".join(missing)
        )
    return frame.select(*(F.col(name).cast(spark_type(kind)) for name, kind in COLUMNS))


# The columns the export gained last (op bytes and geometry): an input with all the others is
# an older export, not some other table.
_ADDED_LAST = ("payload", "ink_length", "bbox", "target_authors")

_SPARK_TYPES: dict[str, DataType] = {
    "string": StringType(),
    "int64": LongType(),
    "bool": BooleanType(),
    "double": DoubleType(),
    "binary": BinaryType(),
    "list<int64>": ArrayType(LongType()),
    "list<double>": ArrayType(DoubleType()),
}


def _named(inputs: Sequence[str]) -> str:
    return f'"{inputs[0]}"' if len(inputs) == 1 else "the input"


def _list(names: Sequence[str]) -> str:
    return ", ".join(names)


def _starts_with_magic(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


__all__ = [
    "OUTDATED_EXPORT",
    "InputFormat",
    "LoadedRows",
    "detect_format",
    "load_rows",
    "resolve_format",
    "row_schema",
    "spark_type",
]
