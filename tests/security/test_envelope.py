"""The sealed envelope (whiteboard/security, issue 21): what opens, what is refused and
counted, what a stranger can make a member keep."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whiteboard.security import (
    ENVELOPE_OVERHEAD,
    Opener,
    Sealer,
    SealError,
    SealFailure,
    SessionKey,
    derive_session_key,
    is_sealed,
)
from whiteboard.security.envelope import HEADER_SIZE
from whiteboard.security.keys import PassphraseError

GROUP = "239.255.7.7:5007"


@pytest.fixture(scope="module")
def key() -> SessionKey:
    return derive_session_key("correct horse battery staple", GROUP, "design review")


@pytest.fixture(scope="module")
def other_key() -> SessionKey:
    return derive_session_key("another passphrase entirely", GROUP, "design review")


def failure_of(opener: Opener, datagram: bytes) -> SealFailure:
    with pytest.raises(SealError) as caught:
        opener.open(datagram)
    return caught.value.failure


def test_a_sealed_datagram_opens_once_with_its_sender_and_hides_its_payload(
    key: SessionKey,
) -> None:
    sealer, opener = Sealer(key), Opener(key)
    payload = b'{"name": "Alice", "stroke": [1, 2, 3]}'
    datagram = sealer.seal(payload)
    assert len(datagram) == len(payload) + ENVELOPE_OVERHEAD and is_sealed(datagram)
    assert b"Alice" not in datagram and payload not in datagram
    assert opener.open(datagram) == (sealer.sender, payload)
    assert failure_of(opener, datagram) is SealFailure.REPLAYED
    assert opener.refused == {SealFailure.REPLAYED: 1}
    assert sealer.seal(payload) != datagram  # a new counter, a new ciphertext


def test_another_passphrase_or_session_is_told_apart_from_a_forgery(
    key: SessionKey, other_key: SessionKey
) -> None:
    ours = Opener(key)
    assert failure_of(ours, Sealer(other_key).seal(b"x")) is SealFailure.FOREIGN_KEY
    renamed = derive_session_key("correct horse battery staple", GROUP, "another session")
    assert renamed.key_id != key.key_id
    assert failure_of(ours, Sealer(renamed).seal(b"x")) is SealFailure.FOREIGN_KEY
    # A forger who copies our key id in clear still lacks the key.
    forged = bytearray(Sealer(other_key).seal(b"clear the board"))
    forged[4:12] = Sealer(key).seal(b"")[4:12]  # today's key id of our session
    assert failure_of(ours, bytes(forged)) is SealFailure.FORGED
    assert failure_of(ours, b"\x80\x00 an RMP datagram in clear") is SealFailure.NOT_SEALED
    assert failure_of(ours, b"WBs\x01short") is SealFailure.MALFORMED
    assert failure_of(ours, b"WBs\x02" + bytes(60)) is SealFailure.MALFORMED
    assert ours.senders == 0  # nothing kept for any of them


def test_every_altered_byte_is_refused(key: SessionKey) -> None:
    sealer = Sealer(key)
    datagram = sealer.seal(b"a stroke of 32 bytes, more or less")
    for index in range(len(datagram)):
        altered = bytearray(datagram)
        altered[index] ^= 0x01
        opener = Opener(key)
        failure = failure_of(opener, bytes(altered))
        expected = (
            SealFailure.NOT_SEALED
            if index < 3
            else SealFailure.MALFORMED
            if index == 3
            else SealFailure.FOREIGN_KEY
            if index < 12
            else SealFailure.FORGED
        )
        assert failure is expected, index
    assert Opener(key).open(datagram)[1] == b"a stroke of 32 bytes, more or less"


def test_reordering_within_the_window_is_accepted_and_older_is_refused(key: SessionKey) -> None:
    sealer, opener = Sealer(key), Opener(key, window=64)
    datagrams = [sealer.seal(bytes([n])) for n in range(200)]
    for n in (5, 3, 4, 0, 1, 2):
        assert opener.open(datagrams[n])[1] == bytes([n])
    assert opener.open(datagrams[150])[1] == bytes([150])
    assert failure_of(opener, datagrams[6]) is SealFailure.REPLAYED  # 144 behind: too old
    assert opener.open(datagrams[100])[1] == bytes([100])  # 50 behind: within the window
    assert failure_of(opener, datagrams[100]) is SealFailure.REPLAYED


def test_a_flood_of_forgeries_from_new_senders_leaves_nothing_behind(key: SessionKey) -> None:
    opener = Opener(key)
    key_id = Sealer(key).seal(b"")[4:12]
    for _ in range(500):
        forged = b"WBs\x01" + key_id + os.urandom(8) + os.urandom(8) + os.urandom(40)
        assert failure_of(opener, forged) is SealFailure.FORGED
    assert opener.senders == 0 and opener.refused[SealFailure.FORGED] == 500


def test_the_senders_kept_are_bounded(key: SessionKey) -> None:
    opener = Opener(key, max_senders=3)
    sealers = [Sealer(key) for _ in range(5)]
    for sealer in sealers:
        opener.open(sealer.seal(b"hello"))
    assert opener.senders == 3


def test_a_sender_id_has_eight_bytes(key: SessionKey) -> None:
    with pytest.raises(ValueError, match="8 bytes"):
        Sealer(key, sender=b"short")


def test_the_key_depends_on_every_input_and_refuses_short_passphrases() -> None:
    base = derive_session_key("twelve chars", GROUP, "s")
    assert derive_session_key("twelve chars\n", GROUP, "s") == base  # a file's line end
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in "twelve")  # NFKC: one spelling
    assert derive_session_key(fullwidth + " chars", GROUP, "s") == base
    assert derive_session_key("twelve chars", "239.255.7.8:5007", "s") != base
    assert "root" not in repr(base) and base.root.hex() not in repr(base)
    with pytest.raises(PassphraseError, match="at least 8 characters"):
        derive_session_key("short", GROUP)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_are_refused_with_a_reason_never_an_exception(data: bytes) -> None:
    key = SessionKey(bytes(32), bytes(8), bytes(32))
    opener = Opener(key)
    for candidate in (data, b"WBs\x01" + bytes(8) + data):
        with pytest.raises(SealError):
            opener.open(candidate)
    assert opener.senders == 0


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=100), st.data())
def test_a_sealed_datagram_altered_anywhere_never_opens(
    payload: bytes, data: st.DataObject
) -> None:
    key = SessionKey(bytes(range(32)), bytes(range(8)), bytes(32))
    datagram = bytearray(Sealer(key).seal(payload))
    index = data.draw(st.integers(0, len(datagram) - 1))
    datagram[index] ^= data.draw(st.integers(1, 255))
    cut = data.draw(st.integers(HEADER_SIZE, len(datagram)))
    with pytest.raises(SealError):
        Opener(key).open(bytes(datagram[:cut]))


DAY = 86_400.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_recording_of_an_earlier_days_session_does_not_open(key: SessionKey) -> None:
    """The same passphrase, group and name every week: without epochs, Monday's traffic sent
    again on Tuesday opened at a member that had not heard its senders (a fresh window)."""
    monday = Clock(20 * DAY + 3600.0)
    recorded = [Sealer(key, wall=monday).seal(f"stroke {n}".encode()) for n in range(5)]
    assert all(Opener(key, wall=monday).open(d) for d in recorded[:1])  # Monday: it opens
    tuesday = Clock(21 * DAY + 3600.0)
    fresh = Opener(key, wall=tuesday)
    assert {failure_of(fresh, d) for d in recorded} == {SealFailure.STALE}
    wednesday = Opener(key, wall=Clock(22 * DAY + 3600.0))
    assert {failure_of(wednesday, d) for d in recorded} == {SealFailure.FOREIGN_KEY}
    assert fresh.senders == wednesday.senders == 0


def test_a_session_goes_on_across_midnight(key: SessionKey) -> None:
    clock = Clock(20 * DAY - 10.0)
    sealer, member = Sealer(key, wall=clock), Opener(key, wall=clock)
    slow_clock = Clock(clock.now - 5.0)
    slow = Sealer(key, wall=slow_clock)  # a member whose clock is 5 s behind
    late = sealer.seal(b"just before midnight")
    assert member.open(late)[1] == b"just before midnight"
    assert member.open(slow.seal(b"heard before midnight"))[1] == b"heard before midnight"
    clock.now, slow_clock.now = 20 * DAY + 1.0, 20 * DAY - 4.0
    delayed = sealer.seal(b"after")  # under the new day's keys; the counter goes on
    assert delayed[4:12] != late[4:12]
    assert member.open(delayed)[1] == b"after"
    assert failure_of(member, late) is SealFailure.REPLAYED
    # The slow member, heard yesterday, still seals under yesterday's keys: it opens.
    assert member.open(slow.seal(b"slow clock, known"))[1] == b"slow clock, known"
    # A member first heard now under yesterday's keys: refused, as a recording would be.
    newcomer = Sealer(key, wall=Clock(20 * DAY - 2.0))
    assert failure_of(member, newcomer.seal(b"x")) is SealFailure.STALE
