"""Exporting logs as tables: JSON lines or Parquet, one row per record, partitioned by date.

``OUT/date=YYYY-MM-DD/part-<session id>.jsonl`` (or ``.parquet``): the Hive layout, which
Spark, DuckDB and pandas read as one table with a ``date`` column. Each file is written under
a temporary name and renamed when complete, so an interrupted export leaves no half file, and
exporting a session again replaces its files.

Binary columns (an op's ``payload``) are base64 text in JSON lines, which is how Spark's JSON
reader reads a binary field and how its JSON writer writes one.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from whiteboard.board.files import describe_os_error
from whiteboard.sessionlog.format import SessionLogError
from whiteboard.sessionlog.paths import LOG_EXTENSION
from whiteboard.sessionlog.reader import NO_SECRET, open_log
from whiteboard.sessionlog.rows import BINARY_COLUMNS, COLUMNS, Row, date_of, rows_of
from whiteboard.sessionlog.sealing import Unlock

FORMATS = ("jsonl", "parquet")
PARQUET_BATCH = 8192  # rows per Parquet row group write: bounded memory for any log
PYARROW_HINT = (
    "Parquet export needs pyarrow, which is not installed: install it with "
    "'.venv/bin/pip install pyarrow' (or the 'analytics' extra: pip install -e '.[analytics]'), "
    "or export with --format jsonl"
)
_SAFE_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


class ExportError(ValueError):
    """The export as a whole cannot be done (no pyarrow, an output folder that cannot be
    written). Problems with single logs are reported in :class:`ExportResult` instead."""


@dataclass(frozen=True, slots=True)
class ExportResult:
    sessions: int  # logs exported
    rows: int
    files: tuple[Path, ...]  # files written
    warnings: tuple[str, ...]  # about logs exported anyway (torn tails, skipped records...)
    failed: tuple[str, ...]  # why each log that was not exported was not


def parquet_available() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def expand_logs(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[str]]:
    """The logs named: files as given, folders as the ``*.wblog`` files in them (sorted);
    and a message for each folder with none."""
    logs: list[Path] = []
    problems: list[str] = []
    for item in map(Path, paths):
        if item.is_dir():
            found = sorted(item.glob(f"*{LOG_EXTENSION}"))
            if not found:
                problems.append(f'"{item}" is a folder with no session logs (*{LOG_EXTENSION})')
            logs += found
        else:
            logs.append(item)
    return logs, problems


def export_logs(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    fmt: str = "jsonl",
    unlock: Unlock = NO_SECRET,
) -> ExportResult:
    """Export every log in ``paths`` (files or folders) to ``out``, opening encrypted ones
    with ``unlock``. A log that cannot be read is left out and said why in ``failed``; the
    others are exported."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}: choose {' or '.join(FORMATS)}")
    if fmt == "parquet" and not parquet_available():
        raise ExportError(PYARROW_HINT)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ExportError(
            f'the output folder "{out}" could not be created: {describe_os_error(error)}'
        ) from None
    logs, failed = expand_logs(paths)
    warnings: list[str] = []
    files: list[Path] = []
    seen: dict[str, Path] = {}
    sessions = rows = 0
    for path in logs:
        try:
            reader = open_log(path, unlock)
        except SessionLogError as exc:
            failed.append(str(exc))
            continue
        with reader:
            session_id = reader.header.session_id
            if session_id in seen:
                warnings.append(
                    f'"{path.name}" records the same session ({session_id}) as '
                    f'"{seen[session_id].name}": not exported twice'
                )
                continue
            seen[session_id] = path
            sink = _JsonlSink(out, session_id) if fmt == "jsonl" else _ParquetSink(out, session_id)
            try:
                count = 0
                for row in rows_of(reader.header, iter(reader)):
                    sink.add(date_of(row["t_us"]), row)
                    count += 1
                files += sink.commit()
            except SessionLogError as exc:
                sink.abort()
                failed.append(str(exc))
                continue
            except OSError as error:
                sink.abort()
                raise ExportError(
                    f'the export to "{out}" failed: {describe_os_error(error)}'
                ) from None
            except BaseException:
                sink.abort()
                raise
            warnings += reader.report.warnings
            sessions += 1
            rows += count
    return ExportResult(sessions, rows, tuple(files), tuple(warnings), tuple(failed))


def _file_stem(session_id: str) -> str:
    # The id comes from a file, which anyone may have written: never let it name a path.
    if _SAFE_ID.fullmatch(session_id):
        return f"part-{session_id}"
    return f"part-x{hashlib.sha256(session_id.encode(errors='replace')).hexdigest()[:16]}"


class _Sink(Protocol):
    def add(self, date: str, row: Row) -> None: ...

    def commit(self) -> list[Path]: ...

    def abort(self) -> None: ...


class _PartitionFiles:
    """The temporary and final names of one session's files, one per date."""

    def __init__(self, out: Path, session_id: str, extension: str) -> None:
        self.out = out
        self.stem = _file_stem(session_id)
        self.extension = extension
        self.temps: dict[str, Path] = {}

    def temp_for(self, date: str) -> Path:
        if date not in self.temps:
            folder = self.out / f"date={date}"
            folder.mkdir(exist_ok=True)
            self.temps[date] = folder / f".{self.stem}{self.extension}.tmp"
        return self.temps[date]

    def publish(self) -> list[Path]:
        final = []
        for temp in self.temps.values():
            target = temp.with_name(f"{self.stem}{self.extension}")
            os.replace(temp, target)
            final.append(target)
        return final

    def remove(self) -> None:
        for temp in self.temps.values():
            with contextlib.suppress(OSError):
                temp.unlink()


class _JsonlSink:
    def __init__(self, out: Path, session_id: str) -> None:
        self._files = _PartitionFiles(out, session_id, ".jsonl")
        self._open: dict[str, Any] = {}

    def add(self, date: str, row: Row) -> None:
        handle = self._open.get(date)
        if handle is None:
            handle = self._open[date] = self._files.temp_for(date).open("w", encoding="utf-8")
        handle.write(json.dumps(_json_row(row), separators=(",", ":"), ensure_ascii=False))
        handle.write("\n")

    def commit(self) -> list[Path]:
        self._close()
        return self._files.publish()

    def abort(self) -> None:
        self._close()
        self._files.remove()

    def _close(self) -> None:
        for handle in self._open.values():
            handle.close()
        self._open.clear()


def _json_row(row: Row) -> Row:
    """``row`` with its bytes as base64 text (standard alphabet, padded): JSON has no bytes."""
    encoded = dict(row)
    for name in BINARY_COLUMNS:
        value = encoded[name]
        if value is not None:
            encoded[name] = base64.b64encode(value).decode("ascii")
    return encoded


class _ParquetSink:
    def __init__(self, out: Path, session_id: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa, self._pq = pa, pq
        types = {
            "string": pa.string(),
            "int64": pa.int64(),
            "bool": pa.bool_(),
            "double": pa.float64(),
            "binary": pa.binary(),
            "list<int64>": pa.list_(pa.int64()),
            "list<double>": pa.list_(pa.float64()),
        }
        self._schema = pa.schema([(name, types[kind]) for name, kind in COLUMNS])
        self._files = _PartitionFiles(out, session_id, ".parquet")
        self._pending: dict[str, list[Row]] = {}
        self._writers: dict[str, Any] = {}

    def add(self, date: str, row: Row) -> None:
        rows = self._pending.setdefault(date, [])
        rows.append(row)
        if len(rows) >= PARQUET_BATCH:
            self._write(date)

    def _write(self, date: str) -> None:
        rows = self._pending.pop(date, [])
        if not rows:
            return
        writer = self._writers.get(date)
        if writer is None:
            path = self._files.temp_for(date)
            writer = self._writers[date] = self._pq.ParquetWriter(path, self._schema)
        writer.write_table(self._pa.Table.from_pylist(rows, schema=self._schema))

    def commit(self) -> list[Path]:
        for date in list(self._pending):
            self._write(date)
        self._close()
        return self._files.publish()

    def abort(self) -> None:
        self._pending.clear()
        self._close()
        self._files.remove()

    def _close(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()


__all__ = [
    "FORMATS",
    "PYARROW_HINT",
    "ExportError",
    "ExportResult",
    "expand_logs",
    "export_logs",
    "parquet_available",
]
