"""Reading back: torn tails give every whole record before them, damage in the middle stops
there, and a file that is not a log is refused with a message naming it."""

from __future__ import annotations

import dataclasses
import io
import os
import struct
from pathlib import Path

import msgpack
import pytest

from whiteboard.sessionlog import (
    FailureRecord,
    LocalOpRecord,
    SessionHeader,
    SessionLogError,
    SessionLogReader,
    SessionLogWriter,
    new_header,
    open_log,
    read_log,
)
from whiteboard.sessionlog.format import encode_record, frame, preamble

T0 = 1_700_000_000.0


def header() -> SessionHeader:
    return new_header(
        transport="raw",
        params={},
        group="239.255.42.1:5000",
        iface=None,
        ttl=1,
        member_id=1,
        member_name="ann",
        now=T0,
    )


def records(n: int) -> list[LocalOpRecord]:
    return [LocalOpRecord(i, bytes([i % 256]) * (i % 50 + 1)) for i in range(n)]


def write_log(path: Path, body: list[LocalOpRecord]) -> list[int]:
    """Write a log of ``body``; return the offset at which each record's frame ends."""
    with SessionLogWriter(path, header()) as writer:
        for record in body:
            writer.append(record)
    data = path.read_bytes()
    ends, pos = [], len(preamble())
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        pos += 8 + length
        ends.append(pos)
    return ends  # ends[0] is the header's


def test_a_tail_cut_anywhere_reads_back_to_the_last_whole_record(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    body = records(6)
    ends = write_log(path, body)
    data = path.read_bytes()
    for cut in range(ends[0], len(data) + 1):
        path.write_bytes(data[:cut])
        log = read_log(path)
        whole = sum(1 for end in ends[1:] if end <= cut)
        assert list(log.records) == body[:whole], cut
        assert log.report.valid_bytes == ends[whole]
        assert log.report.torn_bytes == cut - ends[whole]
        assert log.report.corrupt_offset is None
        if cut == ends[whole]:
            assert log.report.warnings == ()
        else:
            (warning,) = log.report.warnings
            assert "torn record" in warning and path.name in warning


def test_a_damaged_last_record_is_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    body = records(4)
    ends = write_log(path, body)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the last record's body, as a crash mid-write can leave it
    path.write_bytes(data)
    log = read_log(path)
    assert list(log.records) == body[:3]
    assert log.report.torn_bytes == len(data) - ends[3]
    assert "torn record" in log.report.warnings[0]


def test_a_zero_filled_tail_is_a_torn_tail(tmp_path: Path) -> None:
    # What a file system may leave after a power cut: the size grew, the data never came.
    path = tmp_path / "s.wblog"
    body = records(3)
    write_log(path, body)
    with path.open("ab") as file:
        file.write(bytes(5000))
    log = read_log(path)
    assert list(log.records) == body
    assert log.report.torn_bytes == 5000
    assert log.report.corrupt_offset is None


def test_damage_in_the_middle_stops_there_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    body = records(10)
    ends = write_log(path, body)
    data = bytearray(path.read_bytes())
    data[ends[4] + 10] ^= 0x01  # inside record 5 (0-based), whole records follow it
    path.write_bytes(data)
    log = read_log(path)
    assert list(log.records) == body[:4]
    assert log.report.corrupt_offset == ends[4]
    assert log.report.torn_bytes == len(data) - ends[4]
    (warning,) = log.report.warnings
    assert f"damaged at byte {ends[4]}" in warning


def test_a_damaged_length_in_the_middle_stops_there(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    body = records(10)
    ends = write_log(path, body)
    data = bytearray(path.read_bytes())
    data[ends[2] : ends[2] + 4] = b"\xff\xff\xff\xff"  # 4 GiB: never allocated
    path.write_bytes(data)
    log = read_log(path)
    assert list(log.records) == body[:2]
    assert log.report.corrupt_offset == ends[2]


def _append_frames(path: Path, *bodies: bytes) -> None:
    with path.open("ab") as file:
        for body in bodies:
            file.write(frame(body))


def test_invalid_and_unknown_records_are_skipped_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    body = records(2)
    write_log(path, body)
    last = FailureRecord(9, "after the odd ones")
    _append_frames(
        path,
        msgpack.packb([2, 5, "payload must be bytes"]),
        msgpack.packb([77, 5, "a kind from a newer app"]),
        encode_record(header()),  # a second header
        encode_record(last),
    )
    log = read_log(path)
    assert list(log.records) == [*body, last]
    assert log.report.skipped == 3
    assert log.report.records == 1 + 2 + 3 + 1
    text = " | ".join(log.report.warnings)
    assert "'payload' must be bytes" in text
    assert "a second header" in text
    assert "1 records of kinds this version does not know" in text


def test_a_newer_record_schema_is_read_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    newer = dataclasses.replace(header(), schema_version=2)
    with SessionLogWriter(path, newer):
        pass
    log = read_log(path)
    assert log.header.schema_version == 2
    assert "record schema 2" in log.report.warnings[0]


# -- files that are not usable logs ------------------------------------------------------------


def _valid_start() -> bytes:
    return preamble() + frame(encode_record(header()))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", '"x.wblog" is empty, not a session log'),
        (b"hello, world\n", '"x.wblog" is not a whiteboard session log'),
        (b"\x89PNG\r\n\x1a\n" + bytes(40), '"x.wblog" is not a whiteboard session log'),
        (b"\x89WBL", '"x.wblog" is damaged (cut short in its first bytes)'),
        (
            b"\x89WBLOG\r\n\x00\x03" + bytes(20),
            '"x.wblog" was written by a newer version of the app (log format 3); '
            "this app reads formats 1 and 2",
        ),
        (b"\x89WBLOG\r\n\x00\x00", '"x.wblog" is damaged (its format version is unreadable)'),
        (
            preamble(),
            '"x.wblog" is damaged (cut short in its header): it cannot tell which session',
        ),
        (
            _valid_start()[:-3],
            '"x.wblog" is damaged (cut short in its header): it cannot tell which session',
        ),
        (
            preamble() + frame(encode_record(FailureRecord(1, "no header"))),
            '"x.wblog" is damaged (it does not start with a header record)',
        ),
        (
            preamble() + frame(msgpack.packb([0, 1, "too few"])),
            '"x.wblog" is damaged (its header is invalid: a HEADER record needs 10 fields',
        ),
    ],
    ids=[
        "empty", "text", "png", "short-magic", "newer-format", "version-0",
        "no-header", "header-cut", "first-not-header", "header-invalid",
    ],
)  # fmt: skip
def test_a_file_that_is_not_a_usable_log_is_refused_by_name(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = tmp_path / "x.wblog"
    path.write_bytes(data)
    with pytest.raises(SessionLogError) as caught:
        open_log(path)
    assert str(caught.value).startswith(message)


def test_a_damaged_header_is_refused_even_with_good_records_after_it(tmp_path: Path) -> None:
    path = tmp_path / "x.wblog"
    ends = write_log(path, records(5))
    data = bytearray(path.read_bytes())
    data[ends[0] - 2] ^= 0x40  # inside the header record's body
    path.write_bytes(data)
    with pytest.raises(SessionLogError, match=r'"x.wblog" is damaged \(its header is damaged\)'):
        read_log(path)


def test_folders_missing_files_and_devices_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    with pytest.raises(SessionLogError, match=r'"logs" is a folder, not a session log'):
        open_log(tmp_path / "logs")
    with pytest.raises(
        SessionLogError, match=r'"gone\.wblog" could not be opened: there is no such file'
    ):
        open_log(tmp_path / "gone.wblog")
    if os.name == "posix":
        fifo = tmp_path / "pipe.wblog"
        os.mkfifo(fifo)
        with pytest.raises(SessionLogError, match=r'"pipe\.wblog" is not a regular file'):
            open_log(fifo)


def test_a_stream_reads_like_a_file() -> None:
    body = records(3)
    data = _valid_start() + b"".join(frame(encode_record(r)) for r in body)
    reader = SessionLogReader(io.BytesIO(data), "memory")
    assert list(reader) == body
    assert reader.report.valid_bytes == len(data)
