"""The sealed envelope: every datagram of a private session, whatever its transport, travels
inside one (docs/security.md has the byte layout and the reasons).

    magic "WBs" | version 1 | key id (8) | sender (8) | counter (8) | ciphertext | tag (16)

ChaCha20-Poly1305 (RFC 8439) under a key of the sender's own, derived from the session key, the
epoch (the UTC day) and the sender's random 64-bit id, with the counter as the nonce: a nonce
never repeats under one key, across restarts too (each run draws a new id). The key id on the
wire is the epoch's. The 28-byte header is authenticated associated data. An opener rejects,
counted by kind and before any protocol core sees it, what is not sealed, what belongs to
another session or day (key id), what fails authentication, what it has accepted before (a
replay window per sender), and yesterday's datagrams from a sender it did not know yesterday
(a recording of an earlier session with the same passphrase does not open). A stranger's
datagram costs one key derivation and one failed decryption, and leaves nothing behind: state
is kept per sender only once one of its datagrams proved authentic, for at most
``max_senders`` senders.
"""

from __future__ import annotations

import enum
import os
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from whiteboard.security.keys import KEY_ID_SIZE, SessionKey, epoch_of
from whiteboard.security.replay import DEFAULT_WINDOW, ReplayWindow

MAGIC = b"WBs"
VERSION = 1
SENDER_SIZE = 8
COUNTER_SIZE = 8
TAG_SIZE = 16
HEADER_SIZE = len(MAGIC) + 1 + KEY_ID_SIZE + SENDER_SIZE + COUNTER_SIZE  # 28
ENVELOPE_OVERHEAD = HEADER_SIZE + TAG_SIZE  # 44 bytes a datagram grows by
MAX_SENDERS = 1024  # senders whose key and replay window are kept (least recently heard go)
_VERSION_AT = len(MAGIC)
_KEY_AT = _VERSION_AT + 1
_SENDER_AT = _KEY_AT + KEY_ID_SIZE
_COUNTER_AT = _SENDER_AT + SENDER_SIZE
_NONCE_PAD = bytes(12 - COUNTER_SIZE)


class SealFailure(enum.Enum):
    """Why a datagram was not opened; each is counted under its value."""

    NOT_SEALED = "clear_dropped"  # no envelope: a member without a passphrase, or a stranger
    FOREIGN_KEY = "foreign_key_dropped"  # another private session on the same group
    MALFORMED = "envelope_malformed"  # our magic, but too short or another version
    FORGED = "auth_failures"  # our key id, but not made with our key, or altered on the way
    REPLAYED = "replays_dropped"  # authentic, but accepted before (or too old to tell)
    STALE = "stale_dropped"  # an earlier day's keys, from a sender not heard that day


class SealError(Exception):
    def __init__(self, failure: SealFailure, detail: str) -> None:
        super().__init__(detail)
        self.failure = failure


def is_sealed(datagram: bytes) -> bool:
    """Whether ``datagram`` is in an envelope (of any session); for a member without a
    passphrase, to tell the person that a private session shares its group."""
    return datagram[: len(MAGIC)] == MAGIC


def _sender_cipher(key: SessionKey, epoch: int, sender: bytes) -> ChaCha20Poly1305:
    return ChaCha20Poly1305(key.sender_key(epoch, sender))


class _KeyIds:
    """Our session's key ids on the wire around now: yesterday's, today's and tomorrow's (a
    member whose clock is a little off, or a session across midnight), by epoch."""

    def __init__(self, key: SessionKey, wall: Callable[[], float]) -> None:
        self._key = key
        self._wall = wall
        self.current = epoch_of(wall())
        self._ids = self._around(self.current)

    def _around(self, epoch: int) -> dict[bytes, int]:
        return {self._key.epoch_key_id(e): e for e in (epoch - 1, epoch, epoch + 1)}

    def epoch_of(self, key_id: bytes) -> int | None:
        current = epoch_of(self._wall())
        if current != self.current:
            self.current, self._ids = current, self._around(current)
        return self._ids.get(key_id)


def unseal(
    key: SessionKey, datagram: bytes, wall: Callable[[], float] = time.time
) -> bytes | None:
    """The datagram inside an envelope of ``key``'s session (of around ``wall``'s day),
    authenticated, or None; with no replay window: for tools that look at traffic (the
    simulator's loss accounting), never for a member's input (Opener)."""
    data = bytes(datagram)
    if data[:_VERSION_AT] != MAGIC or len(data) < ENVELOPE_OVERHEAD:
        return None
    epoch = _KeyIds(key, wall).epoch_of(data[_KEY_AT:_SENDER_AT])
    if epoch is None:
        return None
    try:
        return _decrypt(_sender_cipher(key, epoch, data[_SENDER_AT:_COUNTER_AT]), data)
    except InvalidTag:
        return None


def _decrypt(cipher: ChaCha20Poly1305, data: bytes) -> bytes:
    """The datagram in the envelope ``data``: its counter the nonce, its header the
    associated data. ``InvalidTag`` if it was not sealed with ``cipher`` or was altered."""
    return cipher.decrypt(
        _NONCE_PAD + data[_COUNTER_AT:HEADER_SIZE], data[HEADER_SIZE:], data[:HEADER_SIZE]
    )


class Sealer:
    """Seals what one member sends. ``sender`` (random by default) must never be reused with
    the same session key: a member draws a new one for every run. ``wall``: the wall clock,
    whose UTC day picks the epoch's keys (the simulator's virtual time in the simulator)."""

    def __init__(
        self, key: SessionKey, sender: bytes | None = None, wall: Callable[[], float] = time.time
    ) -> None:
        self.sender = os.urandom(SENDER_SIZE) if sender is None else sender
        if len(self.sender) != SENDER_SIZE:
            raise ValueError(f"a sender id has {SENDER_SIZE} bytes, not {len(self.sender)}")
        self._key = key
        self._wall = wall
        self._epoch: int | None = None
        self._prefix = b""
        self._cipher: ChaCha20Poly1305 | None = None
        self.counter = 0  # across epochs: a nonce is never used twice under one sender key

    def seal(self, payload: bytes) -> bytes:
        counter = self.counter
        if counter >= 1 << (8 * COUNTER_SIZE):
            raise RuntimeError("this sender's nonces are spent: start a new run")
        epoch = epoch_of(self._wall())
        if epoch != self._epoch or self._cipher is None:
            self._epoch = epoch
            key_id = self._key.epoch_key_id(epoch)
            self._prefix = MAGIC + bytes([VERSION]) + key_id + self.sender
            self._cipher = _sender_cipher(self._key, epoch, self.sender)
        self.counter = counter + 1
        counter_bytes = counter.to_bytes(COUNTER_SIZE, "big")
        header = self._prefix + counter_bytes
        return header + self._cipher.encrypt(_NONCE_PAD + counter_bytes, payload, header)


@dataclass(slots=True)
class _Sender:
    window: ReplayWindow
    ciphers: dict[int, ChaCha20Poly1305] = field(default_factory=dict)  # by epoch


class Opener:
    """Opens what the members of one private session send; counts what it refuses."""

    def __init__(
        self,
        key: SessionKey,
        max_senders: int = MAX_SENDERS,
        window: int = DEFAULT_WINDOW,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._key = key
        self._max_senders = max_senders
        self._window = window
        self._key_ids = _KeyIds(key, wall)
        # sender id -> its replay window and keys, least recently heard first
        self._senders: OrderedDict[bytes, _Sender] = OrderedDict()
        self.refused: Counter[SealFailure] = Counter()

    @property
    def senders(self) -> int:
        return len(self._senders)

    def open(self, datagram: bytes) -> tuple[bytes, bytes]:
        """(sender id, payload) of an authentic datagram never accepted before; raises
        SealError (counted in ``refused``) otherwise."""
        try:
            return self._open(datagram)
        except SealError as exc:
            self.refused[exc.failure] += 1
            raise

    def _open(self, datagram: bytes) -> tuple[bytes, bytes]:
        data = bytes(datagram)  # no copy for bytes; a buffer is read once, as it is now
        if data[:_VERSION_AT] != MAGIC:
            raise SealError(SealFailure.NOT_SEALED, "a datagram in clear in a private session")
        if len(data) < ENVELOPE_OVERHEAD or data[_VERSION_AT] != VERSION:
            raise SealError(SealFailure.MALFORMED, "an envelope too short or of another version")
        epoch = self._key_ids.epoch_of(data[_KEY_AT:_SENDER_AT])
        if epoch is None:
            raise SealError(SealFailure.FOREIGN_KEY, "a datagram of another private session")
        sender = data[_SENDER_AT:_COUNTER_AT]
        counter = int.from_bytes(data[_COUNTER_AT:HEADER_SIZE], "big")
        known = self._senders.get(sender)
        if known is None and epoch < self._key_ids.current:
            # Yesterday's keys open only for a member heard before midnight: a member new to
            # us must send under today's (a recording of an earlier session does not open).
            raise SealError(SealFailure.STALE, "a datagram of an earlier day from a new sender")
        if known is not None and not known.window.check(counter):
            raise SealError(SealFailure.REPLAYED, f"counter {counter} was accepted before")
        cipher = known.ciphers.get(epoch) if known is not None else None
        if cipher is None:
            cipher = _sender_cipher(self._key, epoch, sender)
        try:
            payload = _decrypt(cipher, data)
        except InvalidTag:
            raise SealError(SealFailure.FORGED, "a datagram that fails authentication") from None
        if known is None:
            known = self._senders[sender] = _Sender(ReplayWindow(self._window))
            if len(self._senders) > self._max_senders:
                self._senders.popitem(last=False)
        else:
            self._senders.move_to_end(sender)
        if epoch not in known.ciphers:
            for old in [e for e in known.ciphers if e < epoch - 1]:
                del known.ciphers[old]  # at most three epochs' keys a sender
            known.ciphers[epoch] = cipher
        known.window.accept(counter)
        return sender, payload
