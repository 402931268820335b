"""Recordings encrypted at rest (issue 21 point 3): a private session's log opens only with
its passphrase or view code; nothing of the session is in clear but its key id and group;
a record altered, moved or dropped from the middle fails, and the rest still read."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest

from tests.sessionlog.test_reader import header
from whiteboard.board import OpId, Stroke, Tool, encode_op
from whiteboard.security import SessionKey, derive_session_key
from whiteboard.security.keys import session_key_from_view_code
from whiteboard.sessionlog import (
    LocalOpRecord,
    LogSealer,
    RecordingLocked,
    SessionHeader,
    SessionLogError,
    SessionLogWriter,
    Unlock,
    read_log,
)
from whiteboard.sessionlog.export import export_logs
from whiteboard.sessionlog.format import frame_crc
from whiteboard.sessionlog.summary import summarize

PASSPHRASE = "a long and private passphrase"
GROUP = "239.255.42.1:5000"
KEY = derive_session_key(PASSPHRASE, GROUP, viewers=True)
OP = encode_op(Stroke(OpId(1, 1), (1.5, 2.5, 30.25, 40.75), 0xFF00FF00, 2.0, Tool.PEN))


HEADER = dataclasses.replace(
    header(), key_id=KEY.key_id.hex(), drawing_key=KEY.drawing_public.hex()
)


def write_sealed(path: Path, n: int = 5) -> list[LocalOpRecord]:
    body = [LocalOpRecord(1_000 + i, OP + bytes([i])) for i in range(n)]
    with SessionLogWriter(path, HEADER, sealer=LogSealer(KEY, GROUP)) as writer:
        for record in body:
            writer.append(record)
    return body


def frames(data: bytes) -> list[tuple[int, int]]:
    """(offset, length) of every frame after the preamble."""
    found, pos = [], 10
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        found.append((pos, length))
        pos += 8 + length
    return found


def refresh_crc(data: bytearray, offset: int, length: int) -> None:
    """What an attacker who edits a record does: make its frame whole again."""
    body = bytes(data[offset + 8 : offset + 8 + length])
    data[offset + 4 : offset + 8] = struct.pack(">I", frame_crc(length, body))


def test_a_sealed_log_opens_with_the_passphrase_or_view_code_and_shows_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.wblog"
    body = write_sealed(path)
    raw = path.read_bytes()
    assert raw[8:10] == b"\x00\x02"
    assert b"ann" not in raw and OP[:20] not in raw and b"raw" not in raw
    for unlock in (
        Unlock(PASSPHRASE),
        Unlock(KEY.view_code()),
        Unlock(keys=(derive_session_key("other phrase", GROUP, viewers=True), KEY)),
    ):
        log = read_log(path, unlock)
        assert log.header == HEADER and list(log.records) == body
        assert log.report.warnings == ()


def test_a_sealed_log_says_what_it_needs_and_refuses_another_sessions_passphrase(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.wblog"
    write_sealed(path)
    with pytest.raises(RecordingLocked, match="encrypted recording of a private session") as none:
        read_log(path)
    assert none.value.key_id == KEY.key_id and not none.value.tried
    assert KEY.key_id.hex() in str(none.value) and "--passphrase-file" in str(none.value)
    with pytest.raises(RecordingLocked, match="another private session") as wrong:
        read_log(path, Unlock("another long passphrase"))
    assert wrong.value.tried
    with pytest.raises(RecordingLocked, match="another private session"):
        read_log(path, Unlock(PASSPHRASE, session_name="standup"))  # salted otherwise
    with pytest.raises(RecordingLocked, match="at least 8 characters"):
        read_log(path, Unlock("short"))


def test_an_altered_or_moved_record_fails_alone_and_the_others_still_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.wblog"
    body = write_sealed(path)
    data = bytearray(path.read_bytes())
    spans = frames(bytes(data))  # the seal frame, the header, then the records
    offset, length = spans[3]  # the second record
    data[offset + 8 + 5] ^= 0x01
    refresh_crc(data, offset, length)
    path.write_bytes(bytes(data))
    log = read_log(path, Unlock(PASSPHRASE))
    assert list(log.records) == [body[0], *body[2:]]
    assert any("does not decrypt" in warning for warning in log.report.warnings)

    # Two records swapped, each whole: neither opens in the other's place.
    fresh = tmp_path / "t.wblog"
    body = write_sealed(fresh)
    data = bytearray(fresh.read_bytes())
    (a, la), (b, lb) = frames(bytes(data))[2:4]
    first, second = bytes(data[a : a + 8 + la]), bytes(data[b : b + 8 + lb])
    data[a : b + 8 + lb] = second + first
    fresh.write_bytes(bytes(data))
    log = read_log(fresh, Unlock(PASSPHRASE))
    assert list(log.records) == body[2:]
    assert log.report.skipped == 2


def test_a_torn_tail_of_a_sealed_log_reads_as_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.wblog"
    body = write_sealed(path)
    path.write_bytes(path.read_bytes()[:-7])
    log = read_log(path, Unlock(PASSPHRASE))
    assert list(log.records) == body[:-1] and log.report.torn_bytes > 0


def test_summary_and_export_open_a_sealed_log_given_its_passphrase(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "s.wblog"
    path.parent.mkdir()
    write_sealed(path)
    summary = summarize(path, Unlock(PASSPHRASE))
    assert summary["encrypted"] is True and summary["member_name"] == "ann"
    refused = export_logs([path.parent], tmp_path / "out")
    assert refused.sessions == 0 and "encrypted recording" in refused.failed[0]
    result = export_logs([path.parent], tmp_path / "out2", unlock=Unlock(PASSPHRASE))
    assert result.sessions == 1 and result.rows == 6 and not result.failed


def assert_refused(path: Path, header: SessionHeader, key: SessionKey) -> None:
    """A recording sealed with ``key`` under ``header`` does not open with the passphrase."""
    path.unlink(missing_ok=True)
    with SessionLogWriter(path, header, sealer=LogSealer(key, GROUP)):
        pass
    with pytest.raises(SessionLogError, match="does not name its session's keys"):
        read_log(path, Unlock(PASSPHRASE))


def test_a_log_written_with_the_view_code_cannot_name_a_drawing_key_of_its_own(
    tmp_path: Path,
) -> None:
    """Anyone with the view code can write an encrypted recording; one whose header names
    another drawing key (by which its replay would take the writer's ops as a drawer's) is
    refused, while the session's own opens."""
    viewer = session_key_from_view_code(KEY.view_code())
    honest_header = dataclasses.replace(HEADER, key_id=KEY.key_id.hex())
    forged = dataclasses.replace(honest_header, drawing_key="ab" * 32)
    # Nor may it leave its session unnamed (no key id: a session in clear, taken unproven),
    # with or without the drawing key, or name no drawing key (ops taken with no proof).
    for refused in (
        forged,
        dataclasses.replace(honest_header, key_id=None, drawing_key=None),
        dataclasses.replace(honest_header, key_id=None),
        dataclasses.replace(forged, drawing_key=None),
    ):
        assert_refused(tmp_path / "refused.wblog", refused, viewer)
    honest = dataclasses.replace(forged, drawing_key=KEY.drawing_public.hex())
    path = tmp_path / "honest.wblog"
    with SessionLogWriter(path, honest, sealer=LogSealer(viewer, GROUP)):
        pass
    assert read_log(path, Unlock(PASSPHRASE)).header == honest


def test_an_export_of_many_recordings_derives_the_key_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import whiteboard.sessionlog.sealing as sealing

    folder = tmp_path / "logs"
    folder.mkdir()
    for n in range(3):
        write_sealed(folder / f"{n}.wblog", 1)
    derivations: list[str] = []
    real = sealing.derive_session_keys

    def counted(secret: str, group: str, session: str = "") -> object:
        derivations.append(group)
        return real(secret, group, session)

    monkeypatch.setattr(sealing, "derive_session_keys", counted)
    result = export_logs([folder], tmp_path / "out", unlock=Unlock(PASSPHRASE))
    assert not result.failed and derivations == [GROUP]


def test_a_recording_of_a_session_without_viewers_opens_with_its_passphrase(
    tmp_path: Path,
) -> None:
    """One passphrase, two sessions (with and without viewers): the passphrase opens a
    recording of either, and the one without viewers names no drawing key, its ops having
    no proofs; one that names a drawing key is refused."""
    closed = derive_session_key(PASSPHRASE, GROUP)
    assert not closed.viewers and closed.key_id != KEY.key_id
    own = dataclasses.replace(HEADER, key_id=closed.key_id.hex(), drawing_key=None)
    path = tmp_path / "closed.wblog"
    with SessionLogWriter(path, own, sealer=LogSealer(closed, GROUP)) as writer:
        writer.append(LocalOpRecord(1_000, OP))
    log = read_log(path, Unlock(PASSPHRASE))
    assert log.header == own and list(log.records) == [LocalOpRecord(1_000, OP)]
    with pytest.raises(RecordingLocked, match="another private session"):
        read_log(path, Unlock(KEY.view_code()))  # the other session's view code
    # A sealed file must say which session it is (one that claims to be in clear is
    # refused), and name no drawing key in a session without viewers.
    assert_refused(tmp_path / "anonymous.wblog", dataclasses.replace(own, key_id=None), closed)
    named = dataclasses.replace(own, drawing_key=KEY.drawing_public.hex())
    assert_refused(tmp_path / "named.wblog", named, closed)


def test_a_header_with_a_drawing_key_but_no_key_id_is_refused() -> None:
    """Only a private session has a drawing key; a header naming one without a key id (which
    our writer never makes) would be taken for a session in clear by what checks proofs."""
    import msgpack

    from whiteboard.sessionlog.format import decode_record, record_items

    items = record_items(dataclasses.replace(HEADER, key_id=None, drawing_key=None))
    items += [None, KEY.drawing_public.hex()]
    with pytest.raises(SessionLogError, match="'drawing_key' comes without a 'key_id'"):
        decode_record(msgpack.packb(items))
