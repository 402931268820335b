"""Board files (``.wbd``): saving a board to disk and opening it again. Qt-free.

A file is a fixed header, a small metadata map, the board's :meth:`~Board.snapshot` (the full
op log, so undo history survives and late ops still land in the right place) and a SHA-256 of
everything before it. docs/board-file.md describes it byte by byte.

Opening is a trust boundary like the network: a file may be damaged, cut short, something else
renamed, or written by a newer app. :func:`open_board` raises :class:`BoardFileError` and
nothing else, with a message naming the file that a person can act on, and returns a new
board; it never touches one the caller already has.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgpack

from whiteboard import __version__
from whiteboard.board import Board, SnapshotError

FILE_EXTENSION = ".wbd"
# For QFileDialog: getOpenFileName/getSaveFileName(..., filter=FILE_FILTER).
FILE_FILTER = f"Whiteboard files (*{FILE_EXTENSION})"

# PNG's trick: a byte with the high bit set catches 7-bit transfers, CR LF and LF catch newline
# conversion, and 0x1A stops a DOS `type`. Never changes, whatever the format version.
MAGIC = b"\x89WBD\r\n\x1a\n"
# Format 2 (issue 20) is format 1's layout holding ops an older app cannot read: the edits
# (RESTYLE, REORDER, EDIT_TEXT, TRANSFORM) and images (BLOB, IMAGE). A board without them is
# still written as format 1, so that an older app opens it; one with them says "newer".
FORMAT_VERSION = 2
FORMAT_1_KINDS = frozenset(range(1, 12))  # STROKE..REDO
# The header of formats 1 and 2: magic, version, ~version, metadata length, snapshot length
# (big-endian). Only the magic and the version (the first 10 bytes) are the same in every
# format.
_VERSION = struct.Struct(">HH")
_HEADER = struct.Struct(">8sHHIQ")
HEADER_BYTES = _HEADER.size  # 24
CHECKSUM_BYTES = 32  # SHA-256 of every byte before it
MAX_FILE_BYTES = 256 << 20
MAX_METADATA_BYTES = 64 << 10
MAX_TITLE_CHARS = 1000

_MEBI = 1 << 20


class BoardFileError(ValueError):
    """A board file that cannot be saved or opened. ``str()`` is a sentence for the user."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True, slots=True)
class BoardFileMetadata:
    title: str
    created: datetime  # when the file was written, timezone-aware (UTC)
    app_version: str  # version of the app that wrote it
    board_hash: str  # Board.hash() of the saved board, checked on opening


@dataclass(frozen=True, slots=True)
class OpenedBoard:
    board: Board
    metadata: BoardFileMetadata


def ensure_extension(path: str | os.PathLike[str]) -> Path:
    """``path`` ending in ``.wbd``: Qt's own (non-native) save dialog does not always add it."""
    path = Path(path)
    if path.suffix.lower() == FILE_EXTENSION:
        return path
    return path.with_name(path.name + FILE_EXTENSION)


# -- encoding -------------------------------------------------------------------------------


def encode_board(board: Board, *, title: str = "", created: datetime | None = None) -> bytes:
    """The bytes of a board file. Raises ValueError for a bad title or a board too large."""
    return _encode(board, _metadata_for(board, title, created))


def _metadata_for(board: Board, title: str, created: datetime | None) -> BoardFileMetadata:
    if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
        raise ValueError(f"a board title must be a str of at most {MAX_TITLE_CHARS} characters")
    if not title.isascii():
        try:
            title.encode()
        except UnicodeEncodeError:
            raise ValueError("a board title must be valid Unicode (no lone surrogates)") from None
    if created is None:
        created = datetime.now(UTC)
    elif created.tzinfo is None:
        raise ValueError("created must be timezone-aware")
    # Whole seconds: what the file keeps, so the metadata returned equals the one read back.
    created = created.astimezone(UTC).replace(microsecond=0)
    return BoardFileMetadata(title, created, __version__, board.hash())


def _encode(board: Board, metadata: BoardFileMetadata) -> bytes:
    packed = msgpack.packb(
        {
            "title": metadata.title,
            "created": metadata.created.isoformat(),
            "app_version": metadata.app_version,
            "board_hash": metadata.board_hash,
        },
        use_bin_type=True,
    )
    snapshot = board.snapshot()
    size = HEADER_BYTES + len(packed) + len(snapshot) + CHECKSUM_BYTES
    if len(packed) > MAX_METADATA_BYTES or size > MAX_FILE_BYTES:
        # Never write a file that open_board would refuse.
        raise ValueError(f"the board is too large to save ({size / _MEBI:.0f} MiB)")
    return frame(packed, snapshot, format_for_board(board))


def format_for_board(board: Board) -> int:
    """The oldest format that holds ``board``'s ops: 1 unless it has edits or images."""
    if all(op.kind in FORMAT_1_KINDS for _, op in board.log()):
        return 1
    return FORMAT_VERSION


def frame(metadata: bytes, snapshot: bytes, version: int = FORMAT_VERSION) -> bytes:
    """Header + parts + checksum, with no check of the parts (tests build odd files with it)."""
    header = _HEADER.pack(MAGIC, version, version ^ 0xFFFF, len(metadata), len(snapshot))
    body = header + metadata + snapshot
    return body + hashlib.sha256(body).digest()


# -- decoding -------------------------------------------------------------------------------


def decode_board(data: bytes, path: str | os.PathLike[str] = "the file") -> OpenedBoard:
    """The board in a file's bytes. Raises :class:`BoardFileError`, and nothing else.

    ``path`` only names the file in messages. The checks go from the outside in, so that the
    message describes the first thing wrong: not ours at all, from the future, cut short,
    damaged, and only then what is inside.
    """
    path = Path(path)
    name = _quoted(path)

    def fail(problem: str) -> BoardFileError:
        return BoardFileError(f"{name} {problem}", path)

    def damaged(why: str) -> BoardFileError:
        return fail(f"is damaged ({why})")

    if not data:
        raise fail("is empty, not a whiteboard file")
    if len(data) > MAX_FILE_BYTES:
        raise fail(_too_large())
    if not data.startswith(MAGIC):
        # Shorter than the magic but agreeing with it: ours, cut short.
        raise damaged("cut short") if MAGIC.startswith(data) else fail("is not a whiteboard file")
    if len(data) < len(MAGIC) + _VERSION.size:
        raise damaged("cut short")
    version, check = _VERSION.unpack_from(data, len(MAGIC))
    if version ^ check != 0xFFFF:
        # A flipped bit in the version would otherwise pose as a file from the future.
        raise damaged("its format version is unreadable")
    if version > FORMAT_VERSION:
        raise fail(
            f"was saved by a newer version of the app (format {version}); "
            f"this app reads formats 1 to {FORMAT_VERSION}"
        )
    if version < 1:
        raise damaged(f"unknown format {version}")
    if len(data) < HEADER_BYTES:
        raise damaged("cut short")
    *_, metadata_len, snapshot_len = _HEADER.unpack_from(data)
    expected = HEADER_BYTES + metadata_len + snapshot_len + CHECKSUM_BYTES
    if len(data) < expected:
        raise damaged(f"cut short: {len(data)} of {expected} bytes")
    if len(data) > expected:
        raise damaged(f"{len(data) - expected} unexpected bytes after its end")
    body_end = expected - CHECKSUM_BYTES
    if hashlib.sha256(memoryview(data)[:body_end]).digest() != data[body_end:]:
        raise damaged("checksum mismatch")

    # The checksum matched, so what follows only fails for a file written wrongly on purpose
    # or by a broken writer; still a person gets a sentence, not a traceback.
    metadata_end = HEADER_BYTES + metadata_len
    try:
        metadata = _decode_metadata(data[HEADER_BYTES:metadata_end])
    except ValueError as error:
        raise damaged(f"bad metadata: {error}") from None
    try:
        board = Board.from_snapshot(data[metadata_end:body_end])
    except SnapshotError as error:
        raise damaged(f"the board inside is invalid: {error}") from None
    if board.hash() != metadata.board_hash:
        raise damaged("the board inside does not match its saved hash")
    return OpenedBoard(board, metadata)


def _quoted(path: Path) -> str:
    # The name alone reads best in a dialog; the error's .path has the rest.
    return f'"{path.name or path}"'


def _too_large() -> str:
    return f"is too large to be a whiteboard file (over {MAX_FILE_BYTES // _MEBI} MiB)"


def _decode_metadata(data: bytes) -> BoardFileMetadata:
    if len(data) > MAX_METADATA_BYTES:
        raise ValueError(f"{len(data)} bytes, more than {MAX_METADATA_BYTES}")
    try:
        item = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            max_bin_len=0,
            max_ext_len=0,
            max_str_len=MAX_METADATA_BYTES,
            max_array_len=1000,
            max_map_len=1000,
        )
    except Exception as error:  # msgpack raises several unrelated types for bad input
        raise ValueError(f"not valid msgpack ({type(error).__name__})") from None
    if not isinstance(item, dict):
        raise ValueError("not a map")
    # Unknown keys are ignored: a later format-1 writer may add some.
    title = _field(item, "title", str)
    created_text = _field(item, "created", str)
    app_version = _field(item, "app_version", str)
    board_hash = _field(item, "board_hash", str)
    if len(title) > MAX_TITLE_CHARS:
        raise ValueError(f"the title is longer than {MAX_TITLE_CHARS} characters")
    try:
        created = datetime.fromisoformat(created_text)
    except ValueError:
        raise ValueError(f"'created' is not a date: {created_text[:40]!r}") from None
    if created.tzinfo is None:
        raise ValueError("'created' has no time zone")
    return BoardFileMetadata(title, created, app_version, board_hash)


def _field(item: dict[str, Any], key: str, kind: type) -> Any:
    value = item.get(key)
    if type(value) is not kind:
        raise ValueError(f"{key!r} must be a {kind.__name__}")
    return value


# -- files ----------------------------------------------------------------------------------


def open_board(path: str | os.PathLike[str]) -> OpenedBoard:
    """Open a board file. Raises :class:`BoardFileError`, and nothing else."""
    path = Path(path)
    name = _quoted(path)
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise BoardFileError(f"{name} is a folder, not a whiteboard file", path)
        if not stat.S_ISREG(info.st_mode):
            # A FIFO or a device could block or never end.
            raise BoardFileError(f"{name} is not a regular file", path)
        if info.st_size > MAX_FILE_BYTES:
            raise BoardFileError(f"{name} {_too_large()}", path)
        with path.open("rb") as file:
            # One byte over the limit: the file may have grown since stat().
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise BoardFileError(
            f"{name} could not be opened: {describe_os_error(error)}", path
        ) from None
    return decode_board(data, path)


def save_board(path: str | os.PathLike[str], board: Board, *, title: str = "") -> BoardFileMetadata:
    """Save ``board`` to ``path`` atomically: afterwards the file is either the old one, intact,
    or the new one, complete, even if the app or the machine dies half way.

    Raises :class:`BoardFileError` (with the reason) if it cannot be saved; ``path`` is used
    exactly as given (see :func:`ensure_extension`). Returns the metadata written.
    """
    path = Path(path)
    name = _quoted(path)
    try:
        metadata = _metadata_for(board, title, None)
        data = _encode(board, metadata)
    except ValueError as error:
        raise BoardFileError(f"{name} could not be saved: {error}", path) from None
    try:
        write_atomically(path, data)
    except OSError as error:
        raise BoardFileError(
            f"{name} could not be saved: {describe_os_error(error)}", path
        ) from None
    return metadata


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it over
    ``path``. Raises OSError; on failure ``path`` is untouched and no temporary file remains."""
    if path.is_symlink():
        # Replace what the link points at, not the link itself.
        path = path.resolve()
    folder = path.parent
    temp, fd = _create_temp(path)
    try:
        try:
            with contextlib.suppress(FileNotFoundError):
                # Keep the old file's permissions; a new file gets the umask's (from os.open).
                mode = stat.S_IMODE(path.stat().st_mode)
                if hasattr(os, "fchmod"):
                    os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_folder(folder)


def _create_temp(path: Path) -> tuple[Path, int]:
    # Same folder, so os.replace is a rename within one file system; a dot name, so it stays
    # out of sight should a crash leave it behind.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return temp, os.open(temp, flags, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "could not create a temporary file", str(path.parent))


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable on POSIX; folders cannot be opened so on Windows.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def describe_os_error(error: OSError) -> str:
    """Why an OS call failed, in words for a dialog ("permission denied", "the disk is full")."""
    reasons = {
        errno.ENOENT: "there is no such file or folder",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EISDIR: "it is a folder",
        errno.ENOTDIR: "a part of the path is not a folder",
        errno.ENOSPC: "the disk is full",
        errno.EROFS: "the disk is read-only",
    }
    if error.errno in reasons:
        return reasons[error.errno]
    return (error.strerror or str(error)).lower()
