"""Session logs, or their export, as one DataFrame of rows.

The rows are the export's (docs/session-log.md, "Exported rows": 25 columns, one row per
record) plus two columns the export leaves out because it describes ops by their sizes:

* ``ink_length`` (double): a delivered STROKE's length, the sum of its segments' lengths;
* ``target_authors`` (array<bigint>): the authors of a delivered ERASE's or MOVE's targets,
  one item per target.

Both can only be computed from the ops themselves, so they are known when the input is
``.wblog`` files (read here through :mod:`whiteboard.sessionlog`) and null when it is an
export; :attr:`LoadedRows.geometry` says which.

Logs are first exported to Parquet in a staging folder that the caller provides and removes
after the job: Spark reads files lazily, on every action, so the staging must outlive the
DataFrame. On a cluster it must be on storage every executor reads (the CLI puts it inside
``--out``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from analytics import AnalyticsError
from whiteboard.board import OpDecodeError, decode_op
from whiteboard.board.ops import Erase, Move, Op, Stroke
from whiteboard.presence import is_presence
from whiteboard.sessionlog import DeliveredRecord, SessionLogError, open_log
from whiteboard.sessionlog.export import ExportError, expand_logs, export_logs
from whiteboard.sessionlog.format import MAGIC
from whiteboard.sessionlog.paths import LOG_EXTENSION
from whiteboard.sessionlog.rows import COLUMNS

GEOMETRY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("ink_length", "double"),
    ("target_authors", "list<int64>"),
)
_GEOMETRY_FILE_COLUMNS = (("session_id", "string"), ("seq", "int64"), *GEOMETRY_COLUMNS)
GEOMETRY_FILE_ROWS = 65_536  # rows per geometry file: bounded memory for any number of logs


class InputFormat(StrEnum):
    AUTO = "auto"
    WBLOG = "wblog"  # session logs, files or folders of them
    PARQUET = "parquet"  # whiteboard log export --format parquet
    JSONL = "jsonl"  # whiteboard log export --format jsonl


@dataclass(frozen=True)
class LoadedRows:
    rows: DataFrame  # the export's columns, then GEOMETRY_COLUMNS
    format: InputFormat
    geometry: bool  # whether ink_length and target_authors are known
    warnings: tuple[str, ...] = ()  # about logs read anyway (torn tails, skipped records)
    failed: tuple[str, ...] = ()  # why each log left out was left out


def load_rows(
    spark: SparkSession,
    inputs: Sequence[str],
    staging: Path,
    fmt: InputFormat = InputFormat.AUTO,
) -> LoadedRows:
    """Every row of ``inputs``: logs (files or folders) or exported tables (folders as
    ``whiteboard log export`` wrote them, single files, or URIs Spark reads)."""
    fmt = resolve_format(inputs, fmt)
    if fmt is InputFormat.WBLOG:
        return _load_logs(spark, inputs, staging)
    reader = spark.read
    if fmt is InputFormat.JSONL:
        # An explicit schema: inferring one would read every file twice and type a column
        # that is null throughout as string.
        frame = reader.schema(row_schema(COLUMNS)).json(list(inputs))
    else:
        frame = reader.parquet(*inputs)
    return LoadedRows(_with_geometry(_normalised(frame), None), fmt, geometry=False)


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


def stroke_length(points: Sequence[float]) -> float:
    """The length of a polyline given as flat ``x0, y0, x1, y1, ...``: 0 for a dot."""
    return math.fsum(
        math.hypot(points[i + 2] - points[i], points[i + 3] - points[i + 1])
        for i in range(0, len(points) - 2, 2)
    )


def op_geometry(op: Op) -> tuple[float | None, list[int] | None]:
    """``(ink_length, target_authors)`` of an op: what the export does not say about it."""
    match op:
        case Stroke():
            return stroke_length(op.points), None
        case Erase() | Move():
            return None, [target.author for target in op.targets]
    return None, None


def row_schema(columns: Sequence[tuple[str, str]]) -> StructType:
    """The Spark schema of columns named and typed as in ``whiteboard.sessionlog.rows``."""
    return StructType([StructField(name, _spark_type(kind), True) for name, kind in columns])


# -- logs ------------------------------------------------------------------------------------


def _load_logs(spark: SparkSession, inputs: Sequence[str], staging: Path) -> LoadedRows:
    rows_dir, geometry_dir = staging / "rows", staging / "geometry"
    try:
        result = export_logs(inputs, rows_dir, "parquet")
    except ExportError as exc:
        raise AnalyticsError(str(exc)) from None
    if result.sessions == 0:
        raise AnalyticsError(
            "no session log could be read" + "".join(f"\n  {why}" for why in result.failed)
        )
    write_geometry(inputs, geometry_dir)
    rows = _normalised(spark.read.parquet(str(rows_dir)))
    geometry = spark.read.schema(row_schema(_GEOMETRY_FILE_COLUMNS)).parquet(str(geometry_dir))
    return LoadedRows(
        _with_geometry(rows, geometry),
        InputFormat.WBLOG,
        geometry=True,
        warnings=result.warnings,
        failed=result.failed,
    )


def write_geometry(inputs: Sequence[str | os.PathLike[str]], folder: Path) -> int:
    """Write ``(session_id, seq, ink_length, target_authors)`` for every delivered STROKE,
    ERASE and MOVE of the logs as Parquet files in ``folder``; return the row count.

    Logs are walked as ``export_logs`` walks them (the same order, the same records, the
    same ``seq`` numbers, a session recorded twice taken once), so the rows join the export's
    on ``(session_id, seq)``."""
    schema = pa.schema(
        [
            ("session_id", pa.string()),
            ("seq", pa.int64()),
            ("ink_length", pa.float64()),
            ("target_authors", pa.list_(pa.int64())),
        ]
    )
    folder.mkdir(parents=True, exist_ok=True)
    pending: list[dict[str, object]] = []
    files = total = 0

    def flush() -> None:
        nonlocal files
        # An empty file too when there is nothing at all, so that Spark finds the schema.
        if pending or files == 0:
            pq.write_table(pa.Table.from_pylist(pending, schema), folder / f"part-{files}.parquet")
            files += 1
            pending.clear()

    logs, _ = expand_logs(inputs)
    seen: set[str] = set()
    for path in logs:
        try:
            reader = open_log(path)
        except SessionLogError:
            continue  # the export reported it
        with reader:
            session_id = reader.header.session_id
            if session_id in seen:
                continue
            seen.add(session_id)
            try:
                for seq, record in enumerate(reader, start=1):
                    if not isinstance(record, DeliveredRecord) or is_presence(record.payload):
                        continue
                    try:
                        ink, targets = op_geometry(decode_op(record.payload))
                    except OpDecodeError:
                        continue
                    if ink is None and targets is None:
                        continue
                    pending.append(
                        {"session_id": session_id, "seq": seq, "ink_length": ink,
                         "target_authors": targets}
                    )  # fmt: skip
                    total += 1
                    if len(pending) >= GEOMETRY_FILE_ROWS:
                        flush()
            except SessionLogError:
                continue  # the export left this log out too
    flush()
    return total


# -- columns ---------------------------------------------------------------------------------


def _normalised(frame: DataFrame) -> DataFrame:
    """The export's columns in its order and types, whatever else the input has (the
    ``date`` partition column) and whichever way a reader typed them."""
    missing = [name for name, _ in COLUMNS if name not in frame.columns]
    if missing:
        raise AnalyticsError(
            "the input is not a session-log export: it has no column " + ", ".join(missing)
        )
    return frame.select(*(F.col(name).cast(_spark_type(kind)) for name, kind in COLUMNS))


def _with_geometry(rows: DataFrame, geometry: DataFrame | None) -> DataFrame:
    if geometry is None:
        return rows.select(
            *rows.columns,
            *(F.lit(None).cast(_spark_type(kind)).alias(name) for name, kind in GEOMETRY_COLUMNS),
        )
    return rows.join(geometry, ["session_id", "seq"], "left").select(
        *rows.columns, *(name for name, _ in GEOMETRY_COLUMNS)
    )


def _spark_type(kind: str) -> DataType:
    return _SPARK_TYPES[kind]


_SPARK_TYPES: dict[str, DataType] = {
    "string": StringType(),
    "int64": LongType(),
    "bool": BooleanType(),
    "double": DoubleType(),
    "list<int64>": ArrayType(LongType()),
}


def _starts_with_magic(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


__all__ = [
    "GEOMETRY_COLUMNS",
    "InputFormat",
    "LoadedRows",
    "detect_format",
    "load_rows",
    "op_geometry",
    "resolve_format",
    "row_schema",
    "stroke_length",
    "write_geometry",
]
