"""The record codec: exact round trips of every kind, the documented bytes, readable errors."""

from __future__ import annotations

import struct
import tempfile
import zlib
from dataclasses import replace
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sessionlog.strategies import body_records, headers, records_by_kind
from whiteboard.sessionlog import (
    DeliveredRecord,
    ReadyRecord,
    RecordKind,
    SessionHeader,
    SessionLogError,
    SessionLogWriter,
    read_log,
)
from whiteboard.sessionlog.format import (
    MAGIC,
    MAX_RECORD_BYTES,
    decode_record,
    encode_record,
    frame,
    preamble,
    to_us,
)


def test_every_kind_has_a_strategy() -> None:
    # A new kind must join the round-trip tests below.
    assert set(records_by_kind) == set(RecordKind)


@pytest.mark.parametrize("kind", list(RecordKind), ids=lambda kind: kind.name)
def test_round_trip_of_every_record_kind(kind: RecordKind) -> None:
    @settings(max_examples=80)
    @given(records_by_kind[kind])
    def check(record: object) -> None:
        body = encode_record(record)  # type: ignore[arg-type]
        decoded = decode_record(body)
        assert decoded == record
        assert type(decoded) is type(record)
        assert decoded is not None and decoded.kind is kind
        assert encode_record(decoded) == body

    check()


@settings(max_examples=60)
@given(headers, st.lists(body_records, max_size=30))
def test_round_trip_through_a_file(header: SessionHeader, records: list[object]) -> None:
    # Each example in its own folder: tmp_path would be shared by all of them.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.wblog"
        with SessionLogWriter(path, header) as writer:
            for record in records:
                writer.append(record)  # type: ignore[arg-type]
        log = read_log(path)
    assert log.header == header
    assert list(log.records) == records
    assert log.report.warnings == ()
    assert log.report.torn_bytes == 0
    assert log.report.records == len(records) + 1


def test_preamble_and_frame_are_the_documented_bytes() -> None:
    assert preamble() == b"\x89WBLOG\r\n\x00\x01"
    assert bytes.fromhex("89 57 42 4C 4F 47 0D 0A") == MAGIC
    body = encode_record(ReadyRecord(1_700_000_000_000_000))
    framed = frame(body)
    length, crc = struct.unpack(">II", framed[:8])
    assert length == len(body)
    assert crc == zlib.crc32(framed[:4] + body)  # the length bytes are covered too
    assert framed[8:] == body


def test_delivered_is_the_documented_array() -> None:
    record = DeliveredRecord(1_000_000, 7, (1_700_000_000_000_000, 7, 3), 999_000, True, b"op")
    assert msgpack.unpackb(encode_record(record)) == [
        1, 1_000_000, 7, [1_700_000_000_000_000, 7, 3], 999_000, True, b"op"
    ]  # fmt: skip


def test_unknown_kinds_decode_to_none_and_extra_fields_are_ignored() -> None:
    assert decode_record(msgpack.packb([99, 5, "from a newer app"])) is None
    newer = msgpack.packb([int(RecordKind.READY), 5, "a field added later"])
    assert decode_record(newer) == ReadyRecord(5)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"\xc1", "not valid msgpack"),
        (msgpack.packb({"kind": 1}), "not an array"),
        (msgpack.packb([1]), "not an array"),
        (msgpack.packb(["1", 5]), "kind must be an int"),
        (msgpack.packb([4, 2**63]), "'t_us' must be an int64"),
        (msgpack.packb([1, 5, 7, [1], 0, False]), "DELIVERED record needs 5 fields"),
        (msgpack.packb([1, 5, 7, [], 0, False, b""]), "'order_key' must be 1 to 16 ints"),
        (msgpack.packb([1, 5, 7, [1], 0, 1, b""]), "'late' must be true or false"),
        (msgpack.packb([2, 5, "text"]), "'payload' must be bytes"),
        (msgpack.packb([3, 5, -1, "active"]), "'member' must be a member id"),
        (msgpack.packb([9, 5, "nack_sent", {"x": [1]}]), "'fields' must be a map"),
        (msgpack.packb([10, 5, {"sent": 1.5}]), "'counters' must be a map"),
        (msgpack.packb([9, 5, "x", {b"key": 1}], use_bin_type=True), "'fields' must be a map"),
        (msgpack.packb([5, 5, -1, 3]), "'received' must be an int >= 0"),
    ],
)
def test_invalid_records_raise_session_log_error_saying_what(body: bytes, words: str) -> None:
    with pytest.raises(SessionLogError, match=words):
        decode_record(body)


def test_frames_refuse_bodies_over_the_limit() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        frame(b"\x00" * (MAX_RECORD_BYTES + 1))


@pytest.mark.parametrize(
    ("seconds", "micros"),
    [(1.5, 1_500_000), (0.0000014, 1), (float("nan"), 0), (float("inf"), 0), (1e300, 0)],
)
def test_clock_readings_become_int_microseconds(seconds: float, micros: int) -> None:
    assert to_us(seconds) == micros


def test_a_private_sessions_key_id_is_a_trailing_header_field_older_readers_skip() -> None:
    base = SessionHeader(1, "0" * 16, "0.1", "rmp", {}, "239.255.1.1:5000", None, 0, 7, "ann")
    private = SessionHeader(
        1, "0" * 16, "0.1", "rmp", {}, "239.255.1.1:5000", None, 0, 7, "ann", key_id="ab" * 8
    )
    clear_items = msgpack.unpackb(encode_record(base))
    private_items = msgpack.unpackb(encode_record(private))
    assert private_items == [*clear_items, "ab" * 8]  # a session in clear: the bytes as before
    assert decode_record(encode_record(private)) == private
    # The drawing key's public half follows it (viewers, docs/security.md).
    signed = replace(private, drawing_key="cd" * 32)
    signed_items = msgpack.unpackb(encode_record(signed))
    assert signed_items == [*private_items, "cd" * 32]
    assert decode_record(encode_record(signed)) == signed
    # A newer writer's further fields are still ignored.
    newer = msgpack.packb([*signed_items, "a field from the future"])
    assert decode_record(newer) == signed
    bad = msgpack.packb([*clear_items, "not a key id"])
    with pytest.raises(SessionLogError, match="key_id"):
        decode_record(bad)
    with pytest.raises(SessionLogError, match="drawing_key"):
        decode_record(msgpack.packb([*private_items, "not a public key"]))
