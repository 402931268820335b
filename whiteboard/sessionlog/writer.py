"""Writing a session log: append-only, buffered, flushed at least every second. Qt-free.

No thread and no timer of its own: the owner drives it. Every :meth:`SessionLogWriter.append`
flushes if the buffer is full or its oldest record has waited :data:`FLUSH_DELAY_S`; an idle
session needs :meth:`~SessionLogWriter.maybe_flush` called every :data:`FLUSH_TICK_S` or
sooner (:func:`whiteboard.sessionlog.recording.keep_flushing` does it on a reactor), so that
every record reaches the operating system within ``FLUSH_DELAY_S + FLUSH_TICK_S`` = 1 second.

Once written, a record survives the process being killed (``kill -9``): the kernel has it. Only
:meth:`~SessionLogWriter.close` forces it to the disk (``fsync``); after a power cut the last
seconds may be missing, which the reader reports as a torn tail, never more.

Recording must never stop a session: a full disk or a record that cannot be encoded is logged
once and counted (:attr:`~SessionLogWriter.dropped`), never raised from ``append``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from whiteboard.sessionlog.format import (
    MAX_RECORD_BYTES,
    CountersRecord,
    EndRecord,
    FollowRecord,
    LocalOpRecord,
    Record,
    SessionHeader,
    SideRecord,
    UndeliveredRecord,
    encode_record,
    frame,
    preamble,
    to_us,
)
from whiteboard.sessionlog.paths import default_log_dir, log_file_name
from whiteboard.sessionlog.sealing import SEALED_FORMAT_VERSION, TAG_SIZE, LogSealer
from whiteboard.sessionlog.side import SideSampler

log = logging.getLogger(__name__)

BUFFER_LIMIT = 256 << 10  # bytes held before a write, whatever the time
FLUSH_DELAY_S = 0.5  # the oldest buffered record waits at most this long for a flush call...
FLUSH_TICK_S = 0.5  # ... and an owner calls maybe_flush at least this often: 1 s in all
FILE_MODE = 0o600  # what people drew is theirs: the log is readable by its owner only
DIR_MODE = 0o700


class SessionLogWriter:
    """One session's log file. Creating it writes the preamble and ``header`` at once, so a
    log that exists always says which session it is."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: SessionHeader,
        *,
        buffer_limit: int = BUFFER_LIMIT,
        flush_delay: float = FLUSH_DELAY_S,
        sealer: LogSealer | None = None,
    ) -> None:
        """``sealer``: a private session's, to encrypt the recording at rest (sealing.py)."""
        self.path = Path(path)
        self._sealer = sealer
        self.header = header
        self.buffer_limit = buffer_limit
        self.flush_delay = flush_delay
        self.records = 1  # records appended, the header included (some may be dropped)
        self.dropped = 0  # records lost to an error (see ``error``) or appended after close
        self.error: str | None = None  # why the writer stopped writing, if it did
        self.closed = False
        self._buffer = bytearray()
        self._buffered = 0  # records in the buffer
        self._pending_since: float | None = None  # time of the oldest unflushed record
        self._side = SideSampler()  # the side channel's payloads, sampled (side.py)
        # O_EXCL: a log is one session's, never appended to another's or overwritten.
        self._fd = os.open(
            self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _O_BINARY, FILE_MODE
        )
        try:
            if sealer is None:
                start = preamble()
            else:
                start = preamble(SEALED_FORMAT_VERSION) + frame(sealer.seal_frame())
            _write_all(self._fd, start + self._frame(encode_record(header)))
        except BaseException:
            # No half-made log left behind: a file that exists says which session it is.
            os.close(self._fd)
            with contextlib.suppress(OSError):
                self.path.unlink()
            raise

    @classmethod
    def create(
        cls,
        header: SessionHeader,
        directory: str | os.PathLike[str] | None = None,
        sealer: LogSealer | None = None,
    ) -> SessionLogWriter:
        """A new log named ``YYYYMMDD-HHMMSS-<session id>.wblog`` in ``directory`` (default:
        :func:`~whiteboard.sessionlog.paths.default_log_dir`), created if missing, encrypted
        if ``sealer``. Raises ``OSError`` if the folder or file cannot be created."""
        folder = Path(directory) if directory is not None else default_log_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        path = folder / log_file_name(header.t_us, header.session_id)
        return cls(path, header, sealer=sealer)

    def _frame(self, body: bytes) -> bytes:
        if self._sealer is None:
            return frame(body)
        if len(body) + TAG_SIZE > MAX_RECORD_BYTES:
            # Refused before sealing: a sealed record's nonce is its place, none is skipped.
            raise ValueError(f"a record of {len(body)} bytes is too large to seal")
        return frame(self._sealer.seal(body))

    # -- recording ---------------------------------------------------------------------------

    def append(self, record: Record) -> None:
        """Buffer one record; write the buffer if it is full or has waited long enough. Never
        raises: see the module's notes."""
        if self.closed or self.error is not None:
            self.dropped += 1
            return
        try:
            data = self._frame(encode_record(record))  # sealed in order: its place, its nonce
        except (TypeError, ValueError, OverflowError) as exc:
            # A record we built wrongly: a bug, but one that must not end the session.
            self.dropped += 1
            log.warning(
                "session log %s: a %s record was not written: %s",
                self.path.name,
                record.kind.name,
                exc,
            )
            return
        now = record.t_us / 1_000_000
        if self._pending_since is None:
            self._pending_since = now
        self._buffer += data
        self._buffered += 1
        self.records += 1
        if len(self._buffer) >= self.buffer_limit:
            self.flush()
        else:
            self.maybe_flush(now)

    def record_local_op(self, payload: bytes, now: float) -> None:
        """A payload this member sent (an op, or a presence): call it with what was given to
        ``transport.send``."""
        self.append(LocalOpRecord(to_us(now), bytes(payload)))

    def record_undelivered(self, payload: bytes, now: float) -> None:
        """An op this member sent that the session is ending without delivering back (its
        encoding, as it was sent): call it before :meth:`close`."""
        self.append(UndeliveredRecord(to_us(now), bytes(payload)))

    def record_side(self, origin: int, payload: bytes, now: float) -> None:
        """A side-channel payload (a pointer, a view) from ``origin``, this member's own
        included: kept if the sampler takes it (whiteboard/sessionlog/side.py)."""
        if self._side.keep(origin, now):
            self.append(SideRecord(to_us(now), origin, bytes(payload)))

    def record_follow(self, member: int | None, now: float) -> None:
        """This member's window began following ``member``'s view (None: stopped)."""
        self.append(FollowRecord(to_us(now), member or 0))

    def record_counters(self, counters: Mapping[str, int], now: float) -> None:
        """A snapshot of ``transport.counters()``: worth recording before :meth:`close`."""
        plain = {str(k): int(v) for k, v in counters.items() if isinstance(v, int)}
        self.append(CountersRecord(to_us(now), plain))

    # -- flushing ----------------------------------------------------------------------------

    def maybe_flush(self, now: float) -> bool:
        """Write the buffer if its oldest record has waited :attr:`flush_delay` or more by
        ``now``; True if it wrote. Call it at least every :data:`FLUSH_TICK_S`."""
        if self._pending_since is None or now - self._pending_since < self.flush_delay:
            return False
        self.flush()
        return True

    def flush(self) -> None:
        """Hand everything buffered to the operating system now."""
        if self._buffer and self.error is None and not self.closed:
            data, self._buffer = self._buffer, bytearray()  # no copy: states can be large
            self._write(data)
            if self.error is not None:
                self.dropped += self._buffered
        self._buffered = 0
        self._pending_since = None

    def close(self, now: float | None = None) -> None:
        """Write an END record (at ``now``, if given: its absence marks an abrupt end), flush,
        force the file to disk and close it. Safe to call twice."""
        if self.closed:
            return
        if now is not None:
            self.append(EndRecord(to_us(now)))
        self.flush()
        self.closed = True
        if self.error is None:
            with contextlib.suppress(OSError):  # the data is written; fsync is a bonus
                os.fsync(self._fd)
        os.close(self._fd)

    def __enter__(self) -> SessionLogWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _write(self, data: bytes | bytearray) -> None:
        try:
            _write_all(self._fd, data)
        except OSError as exc:
            # The disk is full, or gone: stop recording, keep the session. What was written
            # before stays readable; a partial record at the end reads as a torn tail.
            self.error = f"could not write {self.path}: {exc.strerror or exc}"
            log.warning("session log stopped: %s", self.error)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows would translate line ends without it


__all__ = ["BUFFER_LIMIT", "FLUSH_DELAY_S", "FLUSH_TICK_S", "SessionLogWriter"]
