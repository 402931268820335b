"""Reading a session log back, whatever state its writer left it in. Qt-free.

* A file that is not a session log, or whose preamble or header record is damaged, raises
  :class:`SessionLogError` naming the file: without its header a log cannot say which session
  it records.
* A **torn tail** (the writer was killed or the machine lost power mid-write: the last record
  is cut short, fails its CRC as the file's last record, or the file ends in zeros) ends the
  records: every whole record before it is read, and the :class:`ReadReport` says how many
  bytes were left and warns.
* **Damage in the middle** (a record that fails its CRC with more bytes after it) ends the
  records there too, with a warning naming the offset: past a bad length nothing can be
  trusted to be where a record starts. Nothing after it is read.
* A record whose frame is whole but whose contents are invalid, or of a kind this version
  does not know (a newer app's), is skipped with a warning: the framing around it is intact.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from whiteboard.board.files import describe_os_error
from whiteboard.security import OpAuthority
from whiteboard.sessionlog.format import (
    FORMAT_VERSION,
    FRAME,
    MAGIC,
    MAX_RECORD_BYTES,
    PREAMBLE,
    SCHEMA_VERSION,
    EndRecord,
    Record,
    SessionHeader,
    SessionLogError,
    decode_record,
    frame_crc,
)
from whiteboard.sessionlog.sealing import (
    SEALED_FORMAT_VERSION,
    LogOpener,
    RecordingLocked,
    Unlock,
    drawing_key_of,
    opener_for,
)

NO_SECRET = Unlock()  # for logs in clear: an encrypted one then says what it needs
MAX_WARNINGS = 20  # about single records; more are summed up in one line
_ZERO_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class ReadReport:
    """What reading a log found, besides its records."""

    name: str
    size: int  # bytes in the file when it was opened
    records: int  # whole records read, the header included (skipped ones too)
    valid_bytes: int  # the prefix of the file those records fill
    torn_bytes: int  # bytes after it that were not read (a torn tail, or after damage)
    corrupt_offset: int | None  # where damage with whole records after it was found
    skipped: int  # whole records not returned: invalid contents or unknown kinds
    clean_end: bool  # the writer closed the log properly (an END record)
    warnings: tuple[str, ...]


class SessionLogReader:
    """The records of one log, read lazily. ``header`` is read on construction; iterate for
    the rest; :attr:`report` is complete once the iteration has ended."""

    def __init__(
        self,
        stream: BinaryIO,
        name: str = "the session log",
        unlock: Unlock = NO_SECRET,
    ) -> None:
        """``unlock``: what opens an encrypted recording (sealing.py); unused for others."""
        self._stream = stream
        self.name = name
        self._unlock = unlock
        self._opener: LogOpener | None = None
        self._frame_index = 0  # of the frames after an encrypted log's frame 0: the nonce
        stream.seek(0, os.SEEK_END)
        self._size = stream.tell()
        stream.seek(0)
        self._records = 0
        self._pos = 0
        self._torn_bytes = 0
        self._corrupt_offset: int | None = None
        self._skipped_unknown = 0
        self._skipped_invalid: list[str] = []
        self._warnings: list[str] = []
        self._clean_end = False
        self._done = False
        self.header = self._read_header()

    # -- the header --------------------------------------------------------------------------

    def _fail(self, problem: str) -> SessionLogError:
        return SessionLogError(f"{self.name} {problem}")

    def _read_header(self) -> SessionHeader:
        if self._size == 0:
            raise self._fail("is empty, not a session log")
        start = self._stream.read(PREAMBLE.size)
        if not MAGIC.startswith(start[: len(MAGIC)]):
            raise self._fail("is not a whiteboard session log")
        if len(start) < PREAMBLE.size:
            raise self._fail("is damaged (cut short in its first bytes)")
        _, version = PREAMBLE.unpack(start)
        if version > SEALED_FORMAT_VERSION:
            raise self._fail(
                f"was written by a newer version of the app (log format {version}); "
                f"this app reads formats {FORMAT_VERSION} and {SEALED_FORMAT_VERSION}"
            )
        if version not in (FORMAT_VERSION, SEALED_FORMAT_VERSION):
            raise self._fail("is damaged (its format version is unreadable)")
        self._pos = PREAMBLE.size
        if version == SEALED_FORMAT_VERSION:
            seal, _ = self._next_frame()
            if seal is None:
                raise self._fail("is damaged (cut short in its encryption header)")
            try:
                self._opener = opener_for(seal, self._unlock)
            except RecordingLocked as exc:
                raise RecordingLocked(f"{self.name} {exc}", exc.key_id, exc.tried) from None
            except SessionLogError as exc:
                raise self._fail(str(exc)) from None
        body, problem = self._next_frame()
        if body is None:
            why = "its header is damaged" if problem == "corrupt" else "cut short in its header"
            raise self._fail(f"is damaged ({why}): it cannot tell which session it records")
        try:
            header = decode_record(self._opened(body))
        except SessionLogError as exc:
            raise self._fail(f"is damaged (its header is invalid: {exc})") from None
        if not isinstance(header, SessionHeader):
            raise self._fail("is damaged (it does not start with a header record)")
        if self._opener is not None and (
            header.key_id != self._opener.key.key_id.hex()
            or header.drawing_key != drawing_key_of(self._opener.key)
        ):
            # Anyone with the view code can write such a file: it must name its session's
            # drawing key, not one of its own, by which its replay would take its own ops
            # as a drawer's, nor none, by which it would take ops with no proof.
            raise self._fail(
                "does not name its session's keys: it was not recorded by a member of that "
                "session, and is not replayed"
            )
        self._records = 1
        if header.schema_version > SCHEMA_VERSION:
            self._warnings.append(
                f"{self.name} was written with record schema {header.schema_version}; fields "
                f"added after schema {SCHEMA_VERSION} are not shown"
            )
        return header

    # -- records -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Record]:
        while not self._done:
            offset = self._pos
            try:
                body, problem = self._next_frame()
            except OSError as error:
                self._done = True
                raise self._fail(f"could not be read: {describe_os_error(error)}") from None
            if body is None:
                self._end(offset, problem)
                return
            self._records += 1
            try:
                record = decode_record(self._opened(body))
            except SessionLogError as exc:
                self._skipped_invalid.append(f"the record at byte {offset} was skipped: {exc}")
                continue
            if record is None:
                self._skipped_unknown += 1
            elif isinstance(record, SessionHeader):
                self._skipped_invalid.append(
                    f"the record at byte {offset} was skipped: a second header"
                )
            else:
                self._clean_end = isinstance(record, EndRecord)
                yield record

    @property
    def encrypted(self) -> bool:
        """Whether the file is an encrypted recording (opened with its passphrase)."""
        return self._opener is not None

    def _opened(self, body: bytes) -> bytes:
        """A frame's record body: as it is, or decrypted with the frame's place as its nonce
        (a frame altered or swapped fails alone; one dropped or added shifts those after it)."""
        if self._opener is None:
            return body
        index = self._frame_index
        self._frame_index += 1
        return self._opener.open(index, body)

    def _next_frame(self) -> tuple[bytes | None, str]:
        """The body of the frame at the current position, and the position moved past it;
        or None and "end", "torn" or "corrupt" (the position then stays)."""
        pos, size = self._pos, self._size
        if pos == size:
            return None, "end"
        self._stream.seek(pos)
        head = self._stream.read(FRAME.size)
        if len(head) < FRAME.size:
            return None, "torn"
        length, crc = FRAME.unpack(head)
        if length > MAX_RECORD_BYTES:
            return None, self._classify(pos, last=False)
        if pos + FRAME.size + length > size:
            return None, "torn"  # the last record, cut short while being written
        body = self._stream.read(length)
        if len(body) < length:  # the file shrank under us
            return None, "torn"
        if frame_crc(length, body) != crc:
            return None, self._classify(pos, last=pos + FRAME.size + length == size)
        self._pos = pos + FRAME.size + length
        return body, "ok"

    def _classify(self, pos: int, last: bool) -> str:
        # A damaged last record, or zeros to the end (a file system that grew the file but
        # never wrote the data before a power cut), is what a crash leaves: a torn tail.
        return "torn" if last or self._zeros_from(pos) else "corrupt"

    def _zeros_from(self, pos: int) -> bool:
        self._stream.seek(pos)
        while chunk := self._stream.read(_ZERO_CHUNK):
            if chunk.count(0) != len(chunk):
                return False
        return True

    def _end(self, offset: int, problem: str) -> None:
        self._done = True
        left = self._size - offset
        self._torn_bytes = left
        if problem == "torn":
            self._warnings.append(
                f"{self.name} ends with a torn record ({left} bytes not read after byte "
                f"{offset}): the session's writer stopped in the middle of writing it"
            )
        elif problem == "corrupt":
            self._corrupt_offset = offset
            self._warnings.append(
                f"{self.name} is damaged at byte {offset}: the {left} bytes from there on "
                f"were not read"
            )

    # -- the report --------------------------------------------------------------------------

    @property
    def report(self) -> ReadReport:
        warnings = list(self._warnings)
        invalid = self._skipped_invalid
        warnings += invalid[:MAX_WARNINGS]
        if len(invalid) > MAX_WARNINGS:
            warnings.append(f"... and {len(invalid) - MAX_WARNINGS} more records were skipped")
        if self._skipped_unknown:
            warnings.append(
                f"{self._skipped_unknown} records of kinds this version does not know were "
                "skipped (written by a newer app?)"
            )
        return ReadReport(
            name=self.name,
            size=self._size,
            records=self._records,
            valid_bytes=self._pos,
            torn_bytes=self._torn_bytes,
            corrupt_offset=self._corrupt_offset,
            skipped=self._skipped_unknown + len(invalid),
            clean_end=self._clean_end,
            warnings=tuple(warnings),
        )

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> SessionLogReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def open_log(path: str | os.PathLike[str], unlock: Unlock = NO_SECRET) -> SessionLogReader:
    """Open a log and read its header. :class:`SessionLogError`, naming the file, and nothing
    else if it cannot be read or is not a session log, or is an encrypted recording that
    ``unlock`` does not open."""
    path = Path(path)
    name = f'"{path.name or path}"'
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise SessionLogError(f"{name} is a folder, not a session log")
        if not stat.S_ISREG(info.st_mode):
            # A FIFO or a device could block or never end.
            raise SessionLogError(f"{name} is not a regular file")
        stream = path.open("rb")
    except OSError as error:
        raise SessionLogError(f"{name} could not be opened: {describe_os_error(error)}") from None
    try:
        return SessionLogReader(stream, name, unlock)
    except OSError as error:
        stream.close()
        raise SessionLogError(f"{name} could not be read: {describe_os_error(error)}") from None
    except BaseException:
        stream.close()
        raise


@dataclass(frozen=True, slots=True)
class SessionLog:
    header: SessionHeader
    records: tuple[Record, ...]
    report: ReadReport


def op_authority(header: SessionHeader) -> OpAuthority | None:
    """What checks the ops of a recorded private session as its member did: the drawing
    key's public half from the header (docs/session-log.md). None for a session in clear, or
    a private one recorded before viewers existed, whose ops carry no proofs."""
    if header.drawing_key is None:
        return None
    try:
        return OpAuthority(bytes.fromhex(header.drawing_key))
    except ValueError:
        raise SessionLogError("the log's drawing key is not an Ed25519 public key") from None


def read_log(path: str | os.PathLike[str], unlock: Unlock = NO_SECRET) -> SessionLog:
    """A whole log in memory (fine for tests and summaries; :func:`open_log` streams)."""
    with open_log(path, unlock) as reader:
        records = tuple(reader)
        return SessionLog(reader.header, records, reader.report)


__all__ = [
    "ReadReport",
    "SessionLog",
    "SessionLogReader",
    "op_authority",
    "open_log",
    "read_log",
]
