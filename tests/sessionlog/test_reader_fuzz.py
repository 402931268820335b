"""The reader meets any bytes calmly: SessionLogError (a file that is not a log) or records
and warnings, never another exception; and any prefix of a log reads as a prefix of it."""

from __future__ import annotations

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzzing import mutated
from tests.sessionlog.strategies import body_records, headers
from whiteboard.security import derive_session_key
from whiteboard.sessionlog import (
    LogSealer,
    Record,
    SessionHeader,
    SessionLogError,
    SessionLogReader,
    Unlock,
)
from whiteboard.sessionlog.format import encode_record, frame, preamble
from whiteboard.sessionlog.sealing import SEALED_FORMAT_VERSION

FUZZ = settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])


def log_bytes(header: SessionHeader, records: list[Record]) -> bytes:
    return preamble() + b"".join(frame(encode_record(r)) for r in [header, *records])


valid_logs = st.builds(log_bytes, headers, st.lists(body_records, max_size=8))


def read(data: bytes) -> tuple[list[Record], int, int] | None:
    """Records, valid bytes and torn bytes; None if the reader refused the file."""
    try:
        reader = SessionLogReader(io.BytesIO(data), "fuzz.wblog")
        records = list(reader)
    except SessionLogError as exc:
        assert "fuzz.wblog" in str(exc)
        return None
    report = reader.report
    assert report.valid_bytes + report.torn_bytes == len(data)
    assert report.records >= len(records) + 1
    return records, report.valid_bytes, report.torn_bytes


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_never_raise_anything_else(data: bytes) -> None:
    read(data)


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes_after_a_valid_preamble_never_raise_anything_else(tail: bytes) -> None:
    read(preamble() + tail)


@FUZZ
@given(mutated(valid_logs))
def test_mutated_logs_never_raise_anything_else(data: bytes) -> None:
    read(data)


@settings(max_examples=200)
@given(headers, st.lists(body_records, max_size=8), st.data())
def test_any_prefix_reads_as_a_prefix_of_the_records(
    header: SessionHeader, records: list[Record], data: st.DataObject
) -> None:
    whole = log_bytes(header, records)
    ends = [len(preamble() + frame(encode_record(header)))]
    for record in records:
        ends.append(ends[-1] + len(frame(encode_record(record))))
    cut = data.draw(st.integers(ends[0], len(whole)))
    result = read(whole[:cut])
    assert result is not None
    got, valid, torn = result
    complete = sum(1 for end in ends[1:] if end <= cut)
    assert got == records[:complete]
    assert valid == ends[complete]
    assert torn == cut - ends[complete]


KEY = derive_session_key("a long and private passphrase", "239.255.42.1:5000")
UNLOCK = Unlock(keys=(KEY,))


def sealed_log_bytes(header: SessionHeader, records: list[Record]) -> bytes:
    sealer = LogSealer(KEY, "239.255.42.1:5000")
    frames = [frame(sealer.seal(encode_record(r))) for r in [header, *records]]
    return preamble(SEALED_FORMAT_VERSION) + frame(sealer.seal_frame()) + b"".join(frames)


sealed_logs = st.builds(sealed_log_bytes, headers, st.lists(body_records, max_size=6))


@FUZZ
@given(mutated(sealed_logs))
def test_mutated_encrypted_logs_never_raise_anything_else(data: bytes) -> None:
    """An encrypted recording altered anywhere (its clear frame included): a refusal naming
    the file, or the records that still open, never another exception."""
    try:
        reader = SessionLogReader(io.BytesIO(data), "fuzz.wblog", UNLOCK)
        list(reader)
    except SessionLogError as exc:
        assert "fuzz.wblog" in str(exc)


@FUZZ
@given(st.binary(max_size=200))
def test_random_encryption_headers_are_refused_calmly(seal: bytes) -> None:
    data = preamble(SEALED_FORMAT_VERSION) + frame(seal) + bytes(40)
    try:
        SessionLogReader(io.BytesIO(data), "fuzz.wblog", UNLOCK)
    except SessionLogError as exc:
        assert "fuzz.wblog" in str(exc)
