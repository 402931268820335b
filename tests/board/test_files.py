"""Board files: round trips, the documented layout, and every way opening a file can fail."""

from __future__ import annotations

import hashlib
import os
import random
import stat
import struct
from datetime import UTC, datetime
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.board.board_strategies import board_of, scenarios
from whiteboard import __version__
from whiteboard.board import (
    Board,
    Clear,
    Erase,
    Move,
    OpId,
    OpKind,
    Redo,
    Shape,
    Stroke,
    Text,
    Undo,
    files,
)
from whiteboard.board.files import (
    CHECKSUM_BYTES,
    FILE_EXTENSION,
    FILE_FILTER,
    FORMAT_VERSION,
    HEADER_BYTES,
    MAGIC,
    MAX_FILE_BYTES,
    BoardFileError,
    BoardFileMetadata,
    OpenedBoard,
    decode_board,
    encode_board,
    ensure_extension,
    frame,
    open_board,
    save_board,
)

NAME = "team-plan.wbd"
CREATED = datetime(2024, 5, 17, 9, 30, 15, tzinfo=UTC)
RED = 0xFFFF0000

FUZZ = settings(max_examples=300)
ROUND_TRIPS = settings(max_examples=60)


def sample_board() -> Board:
    """Every drawing kind, plus history a file must keep: undone, redone and late ops."""
    a, b = 1, 2
    board = Board()
    board.apply((10,), Stroke(OpId(a, 1), (0.0, 0.0, 50.5, 40.25, 80.0, 10.0), RED, 3.0))
    board.apply((20,), Shape(OpId(b, 1), OpKind.RECT, 5.0, 5.0, 60.0, 30.0, RED, 2.0, 0xFF00FF00))
    board.apply((30,), Text(OpId(a, 2), 10.0, 100.0, "Hello, wörld", 0xFF0000FF, 24.0))
    board.apply((40,), Move(OpId(b, 2), (OpId(a, 1),), 12.5, -3.0))
    board.apply((50,), Shape(OpId(b, 3), OpKind.ARROW, 0.0, 0.0, 90.0, 90.0, RED, 4.0))
    board.apply((60,), Undo(OpId(b, 4), OpId(b, 3)))  # the arrow: undone
    board.apply((70,), Erase(OpId(a, 3), (OpId(b, 1),)))
    board.apply((80,), Undo(OpId(a, 4), OpId(a, 3)))  # the erase: undone
    board.apply((90,), Redo(OpId(a, 5), OpId(a, 3)))  # ... and redone
    board.apply((15,), Stroke(OpId(b, 5), (200.0, 200.0), RED, 8.0))  # late, a dot
    board.apply((100,), Clear(OpId(b, 6)))
    board.apply((110,), Undo(OpId(b, 7), OpId(b, 6)))  # the clear: undone
    return board


def assert_same_board(opened: Board, original: Board) -> None:
    assert opened.log() == original.log()
    assert opened.objects() == original.objects()
    assert opened.hash() == original.hash()
    assert opened.last_key == original.last_key
    for _, op in original.log():
        assert opened.key(op.id) == original.key(op.id)
        assert opened.in_effect(op.id) == original.in_effect(op.id)


def valid_file() -> bytes:
    return encode_board(sample_board(), title="Plan", created=CREATED)


def parts(data: bytes) -> tuple[bytes, bytes]:
    """The metadata and snapshot bytes of a valid file."""
    _, _, _, metadata_len, snapshot_len = struct.unpack_from(">8sHHIQ", data)
    metadata_end = HEADER_BYTES + metadata_len
    return data[HEADER_BYTES:metadata_end], data[metadata_end : metadata_end + snapshot_len]


def metadata_bytes(board: Board, **changes: object) -> bytes:
    fields: dict[str, object] = {
        "title": "Plan",
        "created": CREATED.isoformat(),
        "app_version": __version__,
        "board_hash": board.hash(),
    }
    fields.update(changes)
    return msgpack.packb({k: v for k, v in fields.items() if v is not None})


def refused(data: bytes, name: str = NAME) -> str:
    """The message opening ``data`` gives; it must name the file."""
    with pytest.raises(BoardFileError) as caught:
        decode_board(data, Path("/somewhere") / name)
    message = str(caught.value)
    assert f'"{name}"' in message
    assert caught.value.path == Path("/somewhere") / name
    return message


# -- round trips ----------------------------------------------------------------------------


def test_save_and_open_keep_the_whole_log(tmp_path: Path) -> None:
    board = sample_board()
    path = tmp_path / NAME
    saved = save_board(path, board, title="Plan for May")
    opened = open_board(path)

    assert isinstance(opened, OpenedBoard)
    assert_same_board(opened.board, board)
    assert opened.metadata == saved
    assert opened.metadata.title == "Plan for May"
    assert opened.metadata.app_version == __version__
    assert opened.metadata.board_hash == board.hash()
    assert opened.metadata.created.tzinfo is not None
    assert abs((datetime.now(UTC) - opened.metadata.created).total_seconds()) < 600
    # The history is live: a late op and an undo land as they would have on the original.
    for target in (board, opened.board):
        target.apply((5,), Erase(OpId(3, 1), (OpId(1, 1),)))  # before the stroke: no effect
        target.apply((120,), Undo(OpId(2, 8), OpId(2, 2)))  # the move: undone
        target.apply((130,), Redo(OpId(2, 9), OpId(2, 3)))  # the arrow: back
    assert_same_board(opened.board, board)


def test_empty_board_round_trip(tmp_path: Path) -> None:
    path = tmp_path / NAME
    save_board(path, Board())
    opened = open_board(path)
    assert len(opened.board) == 0 and opened.board.hash() == Board().hash()
    assert opened.metadata.title == ""


def test_each_open_returns_a_new_board(tmp_path: Path) -> None:
    path = tmp_path / NAME
    save_board(path, sample_board())
    first, second = open_board(path), open_board(path)
    assert first.board is not second.board
    first.board.apply((999,), Clear(OpId(5, 1)))
    assert second.board.hash() == sample_board().hash()


@ROUND_TRIPS
@given(scenarios())
def test_any_log_round_trips(log: list) -> None:
    board = board_of(log)
    opened = decode_board(encode_board(board, title="t"))
    assert_same_board(opened.board, board)


@ROUND_TRIPS
@given(st.text(max_size=files.MAX_TITLE_CHARS))
def test_any_title_round_trips(title: str) -> None:
    try:
        title.encode()
    except UnicodeEncodeError:
        # Lone surrogates have no UTF-8: such a title is refused when saving.
        with pytest.raises(ValueError, match="valid Unicode"):
            encode_board(Board(), title=title)
        return
    assert decode_board(encode_board(Board(), title=title)).metadata.title == title


def test_title_too_long_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BoardFileError, match="could not be saved"):
        save_board(tmp_path / NAME, Board(), title="x" * (files.MAX_TITLE_CHARS + 1))
    assert list(tmp_path.iterdir()) == []


# -- layout ---------------------------------------------------------------------------------


def test_layout_is_as_documented() -> None:
    board = sample_board()
    data = encode_board(board, title="Plan", created=CREATED)
    magic, version, check, metadata_len, snapshot_len = struct.unpack_from(">8sHHIQ", data)
    assert magic == MAGIC == b"\x89WBD\r\n\x1a\n"
    # A board of drawings only is written in format 1, which an older app reads too.
    assert (version, check) == (1, 0xFFFE) and FORMAT_VERSION == 2
    assert HEADER_BYTES == 24 and CHECKSUM_BYTES == 32
    assert len(data) == 24 + metadata_len + snapshot_len + 32
    metadata, snapshot = parts(data)
    assert msgpack.unpackb(metadata) == {
        "title": "Plan",
        "created": "2024-05-17T09:30:15+00:00",
        "app_version": __version__,
        "board_hash": board.hash(),
    }
    assert snapshot == board.snapshot()
    assert data[-32:] == hashlib.sha256(data[:-32]).digest()


def test_created_is_kept_to_the_second_in_utc() -> None:
    local = datetime(2024, 5, 17, 11, 30, 15, 999_999).astimezone()
    opened = decode_board(encode_board(Board(), created=local))
    assert opened.metadata.created == local.replace(microsecond=0)
    assert opened.metadata.created.utcoffset().total_seconds() == 0


def test_extension_and_filter() -> None:
    assert FILE_EXTENSION == ".wbd"
    assert "(*.wbd)" in FILE_FILTER
    assert ensure_extension("a/plan") == Path("a/plan.wbd")
    assert ensure_extension("a/plan.WBD") == Path("a/plan.WBD")
    assert ensure_extension("plan.v2") == Path("plan.v2.wbd")


# -- damaged, foreign, unreadable -----------------------------------------------------------


def test_a_flipped_byte_anywhere_is_refused() -> None:
    data = valid_file()
    regions = {
        "magic": range(0, 8),
        "version": range(8, 12),
        "lengths": range(12, 24),
        "body": range(24, len(data) - 32),
        "checksum": range(len(data) - 32, len(data)),
    }
    assert len(regions["body"]) > 200
    for region, offsets in regions.items():
        for offset in offsets:
            for mask in (0x01, 0x80, 0xFF):
                damaged = bytearray(data)
                damaged[offset] ^= mask
                message = refused(bytes(damaged))
                if region == "magic":
                    assert "is not a whiteboard file" in message
                elif region == "version":
                    assert "is damaged (its format version is unreadable)" in message
                elif region == "lengths":
                    assert "is damaged (cut short" in message or "unexpected bytes" in message
                else:
                    assert message.endswith("is damaged (checksum mismatch)"), message


def test_a_cut_short_file_is_refused_at_every_length() -> None:
    data = valid_file()
    assert refused(b"") == f'"{NAME}" is empty, not a whiteboard file'
    for length in range(1, len(data)):
        assert "is damaged (cut short" in refused(data[:length])


def test_bytes_after_the_end_are_refused() -> None:
    assert "is damaged (3 unexpected bytes after its end)" in refused(valid_file() + b"abc")


@pytest.mark.parametrize(
    "content",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00",
        b"%PDF-1.4\n%%EOF\n",
        b"PK\x03\x04" + bytes(40),
        b"hello, this is a text file\n",
        sample_board().snapshot(),  # a bare snapshot is not a file
        random.Random(7).randbytes(5000),
        b"\x00",
    ],
    ids=["png", "pdf", "zip", "text", "snapshot", "random", "nul"],
)
def test_a_foreign_file_is_not_a_whiteboard_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(content)
    with pytest.raises(BoardFileError) as caught:
        open_board(path)
    assert str(caught.value) == '"photo.png" is not a whiteboard file'


def test_a_newer_format_is_refused_by_its_number() -> None:
    metadata, snapshot = parts(valid_file())
    assert refused(frame(metadata, snapshot, version=3)) == (
        f'"{NAME}" was saved by a newer version of the app (format 3); this app reads formats'
        " 1 to 2"
    )
    # A newer format may have a different layout: only magic and version are read.
    for tail in (b"", b"anything at all"):
        newer = frame(metadata, snapshot, version=3)[:12] + tail
        assert "newer version of the app (format 3)" in refused(newer)
    assert "is damaged (unknown format 0)" in refused(frame(metadata, snapshot, version=0))


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"board_hash": "0" * 64}, "the board inside does not match its saved hash"),
        ({"board_hash": None}, "bad metadata: 'board_hash' must be a str"),
        ({"title": 7}, "bad metadata: 'title' must be a str"),
        ({"created": "yesterday"}, "bad metadata: 'created' is not a date: 'yesterday'"),
        ({"created": "2024-05-17T09:30:15"}, "bad metadata: 'created' has no time zone"),
        ({"title": "x" * 1001}, "bad metadata: the title is longer than 1000 characters"),
    ],
)
def test_bad_contents_under_a_good_checksum_are_refused(
    changes: dict[str, object], problem: str
) -> None:
    board = sample_board()
    data = frame(metadata_bytes(board, **changes), board.snapshot())
    assert refused(data) == f'"{NAME}" is damaged ({problem})'


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        (b"\xc1", "bad metadata: not valid msgpack"),
        (msgpack.packb([1, 2]), "bad metadata: not a map"),
        (msgpack.packb({1: "x"}), "bad metadata: not valid msgpack"),
        (b"", "bad metadata: not valid msgpack"),
    ],
)
def test_unreadable_metadata_is_refused(metadata: bytes, problem: str) -> None:
    assert f"is damaged ({problem}" in refused(frame(metadata, sample_board().snapshot()))


def test_an_invalid_board_inside_is_refused() -> None:
    board = sample_board()
    message = refused(frame(metadata_bytes(board), b"\x93\xa3abc"))
    assert "is damaged (the board inside is invalid: " in message


def test_unknown_metadata_keys_are_ignored() -> None:
    board = sample_board()
    opened = decode_board(frame(metadata_bytes(board, colour_theme="dark"), board.snapshot()))
    assert opened.board.hash() == board.hash()


def test_a_folder_a_missing_file_and_an_unreadable_one(tmp_path: Path) -> None:
    folder = tmp_path / "boards.wbd"
    folder.mkdir()
    with pytest.raises(BoardFileError, match=r'^"boards.wbd" is a folder, not a whiteboard file$'):
        open_board(folder)
    with pytest.raises(BoardFileError, match=r'^"gone.wbd" could not be opened: there is no such'):
        open_board(tmp_path / "gone.wbd")
    (tmp_path / NAME).write_bytes(valid_file())
    with pytest.raises(BoardFileError, match=r'^"x.wbd" could not be opened: a part of the path'):
        open_board(tmp_path / NAME / "x.wbd")


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe.wbd"
    os.mkfifo(fifo)
    # Reading would block forever: nothing writes to it.
    with pytest.raises(BoardFileError, match=r'^"pipe.wbd" is not a regular file$'):
        open_board(fifo)


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.wbd"
    with path.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(BoardFileError) as caught:
        open_board(path)
    assert str(caught.value) == '"huge.wbd" is too large to be a whiteboard file (over 256 MiB)'


def test_bytes_over_the_limit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The file may grow between stat() and read(): the bytes are checked too.
    data = valid_file()
    monkeypatch.setattr(files, "MAX_FILE_BYTES", len(data) - 1)
    assert "is too large to be a whiteboard file" in refused(data)


# -- fuzzing --------------------------------------------------------------------------------


def opens_or_is_refused(data: bytes) -> None:
    try:
        result = decode_board(data, NAME)
    except BoardFileError as error:
        assert f'"{NAME}"' in str(error)
    else:
        assert isinstance(result.board, Board)
        assert isinstance(result.metadata, BoardFileMetadata)


@FUZZ
@given(st.binary(max_size=2000))
def test_random_bytes_open_or_are_refused(data: bytes) -> None:
    opens_or_is_refused(data)


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_after_the_magic_open_or_are_refused(tail: bytes) -> None:
    opens_or_is_refused(MAGIC + tail)


edits = st.lists(
    st.tuples(st.sampled_from(("set", "insert", "delete")), st.integers(0), st.integers(0, 255)),
    min_size=1,
    max_size=6,
)


def mutate(data: bytes, changes: list[tuple[str, int, int]]) -> bytes:
    result = bytearray(data)
    for action, position, value in changes:
        where = position % (len(result) + 1)
        if action == "insert":
            result.insert(where, value)
        elif result and action == "delete":
            del result[where % len(result)]
        elif result:
            result[where % len(result)] = value
    return bytes(result)


@FUZZ
@given(edits, st.integers(0, 2**20))
def test_mutated_files_open_or_are_refused(changes: list, cut: int) -> None:
    data = mutate(valid_file(), changes)
    opens_or_is_refused(data)
    opens_or_is_refused(data[: cut % (len(data) + 1)])


@FUZZ
@given(edits, st.booleans())
def test_mutated_contents_under_a_good_checksum_open_or_are_refused(
    changes: list, in_metadata: bool
) -> None:
    # Past the checksum: what a broken or hostile writer could produce.
    metadata, snapshot = parts(valid_file())
    if in_metadata:
        metadata = mutate(metadata, changes)
    else:
        snapshot = mutate(snapshot, changes)
    opens_or_is_refused(frame(metadata, snapshot))


# -- saving ---------------------------------------------------------------------------------


class PatchedOs:
    """The os module as files.py sees it, with some calls replaced: patching ``os`` itself
    would break every other user of os.write (pytest's capture, for one) during the test."""

    def __init__(self, **overrides: object) -> None:
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)


class DiskFull(OSError):
    def __init__(self) -> None:
        super().__init__(28, "No space left on device")  # ENOSPC


def test_a_failed_write_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / NAME
    save_board(path, Board(), title="old")
    old = path.read_bytes()
    real_write = os.write
    calls = 0

    def write_some_then_fail(fd: int, data: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise DiskFull()
        return real_write(fd, bytes(data)[:10])  # a short write: the loop must go on

    monkeypatch.setattr(files, "os", PatchedOs(write=write_some_then_fail))
    with pytest.raises(BoardFileError) as caught:
        save_board(path, sample_board(), title="new")
    assert str(caught.value) == f'"{NAME}" could not be saved: the disk is full'
    assert calls == 2
    assert path.read_bytes() == old
    assert sorted(tmp_path.iterdir()) == [path]  # no temporary file left


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_failure_at_the_last_steps_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    path = tmp_path / NAME
    save_board(path, Board(), title="old")
    old = path.read_bytes()

    def fail(*args: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files, "os", PatchedOs(**{step: fail}))
    with pytest.raises(BoardFileError, match=r"could not be saved: input/output error$"):
        save_board(path, sample_board())
    monkeypatch.undo()
    assert path.read_bytes() == old
    assert sorted(tmp_path.iterdir()) == [path]


def test_saving_over_a_file_replaces_it_and_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / NAME
    save_board(path, Board(), title="old")
    path.chmod(0o640)
    save_board(path, sample_board(), title="new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert open_board(path).metadata.title == "new"
    assert sorted(tmp_path.iterdir()) == [path]


def test_saving_through_a_symlink_replaces_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.wbd"
    save_board(target, Board())
    link = tmp_path / NAME
    link.symlink_to(target)
    save_board(link, sample_board())
    assert link.is_symlink()
    assert open_board(target).board.hash() == sample_board().hash()


def test_saving_where_it_cannot_be_saved(tmp_path: Path) -> None:
    folder = tmp_path / "boards.wbd"
    folder.mkdir()
    with pytest.raises(BoardFileError, match=r'^"boards.wbd" could not be saved: it is a folder$'):
        save_board(folder, Board())
    with pytest.raises(BoardFileError, match=r'^"x.wbd" could not be saved: there is no such'):
        save_board(tmp_path / "missing" / "x.wbd", Board())
    assert sorted(tmp_path.iterdir()) == [folder]
    assert list(folder.iterdir()) == []


def test_a_board_with_images_is_format_2_and_comes_back_with_its_pictures(
    tmp_path: Path,
) -> None:
    from whiteboard.board import Blob, Image, OpId, Transform

    board = sample_board()
    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4096  # 1 MiB: bytes kept exactly
    blob = Blob(OpId(7, 1), picture)
    board.apply((100,), blob)
    board.apply((101,), Image(OpId(7, 2), blob.digest, 10, 20, 300, 200, 128))
    board.apply((102,), Transform(OpId(7, 3), (OpId(7, 2),), (0.0, 1.0, -1.0, 0.0, 5.0, 6.0)))
    path = tmp_path / "with-picture.wbd"
    save_board(path, board, title="Pictures")
    data = path.read_bytes()
    assert struct.unpack_from(">HH", data, 8) == (2, 0xFFFD)
    opened = open_board(path).board
    assert opened.hash() == board.hash() and opened.blob(blob.digest) == picture
    assert opened.log() == board.log()
    # Format 2 is format 1's layout: a format-1 file (any older one) opens as before.
    metadata, snapshot = parts(encode_board(sample_board()))
    assert decode_board(frame(metadata, snapshot, version=1)).board.hash() == sample_board().hash()
