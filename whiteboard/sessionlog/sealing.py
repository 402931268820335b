"""Recordings encrypted at rest (issue 21 point 3): a private session's log sealed with a key
from the session's own, so that the file opens only for who knows the passphrase (or holds
the view code). Qt-free.

A sealed log is format 2 (docs/session-log.md, *Encrypted recordings*)::

    preamble   "\\x89WBLOG\\r\\n", u16 2
    frame 0    in clear: msgpack ["wb-sealed-log", 1, key_id (bin 8), salt (bin 16), group]
    frame i    ChaCha20-Poly1305(record key, nonce = 4 zero bytes || u64 i - 1, record body,
               associated data = "whiteboard sealed log v1")

The frames are those of a clear log (length, CRC-32 of the sealed body), so a torn tail is
told from damage as before. The record key is HKDF of the session's view secret with the
file's random salt (``SessionKey.subkey``): one key per file, and a record's place in the
file is its nonce, so records cannot be moved, dropped from the middle or swapped between
files without failing their tag. The key id says which session's passphrase opens the file;
the group (which every datagram of the session showed anyway) lets a passphrase derive the
key. Nothing else is in clear: not the header, not a name, not an op.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

import msgpack
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from whiteboard.security import SessionKey, derive_session_keys, is_view_code
from whiteboard.security.keys import KEY_ID_SIZE, session_key_from_view_code
from whiteboard.sessionlog.format import SessionLogError

SEALED_FORMAT_VERSION = 2
SEAL_MAGIC = "wb-sealed-log"
SEAL_VERSION = 1
SALT_SIZE = 16
TAG_SIZE = 16
_AAD = b"whiteboard sealed log v1"
_NONCE = struct.Struct(">4xQ")
MAX_GROUP = 256


@dataclass(frozen=True)
class Unlock:
    """What opens encrypted recordings: a passphrase or view code (None: none given), and
    the session's name if it had one; or the key of a session one is in (``keys``: the app
    opens that session's recordings without asking). Its repr hides the secrets."""

    secret: str | None = field(default=None, repr=False)
    session_name: str = ""
    keys: tuple[SessionKey, ...] = field(default=(), repr=False)
    # Keys derived from ``secret``, by group: scrypt takes ~0.2 s, and an export of many
    # recordings of one session derives it once.
    # Not an argument: a copy with another secret (dataclasses.replace) starts afresh.
    derived: dict[str, tuple[SessionKey, ...]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )


def drawing_key_of(key: SessionKey | None) -> str | None:
    """What a log's header names as its session's drawing key (hex): the public key whose
    proofs its ops carry, or None for a session in clear or one without viewers."""
    if key is None or key.drawing_public is None:
        return None
    return key.drawing_public.hex()


class RecordingLocked(SessionLogError):
    """An encrypted recording that what was given does not open: none given (``tried``
    False), or a passphrase of another session (True)."""

    def __init__(self, message: str, key_id: bytes, tried: bool) -> None:
        super().__init__(message)
        self.key_id = key_id
        self.tried = tried


class LogSealer:
    """Seals one log's records, in order, under a key of its own."""

    @classmethod
    def for_session(cls, key: SessionKey | None, group: str, encrypt: bool) -> LogSealer | None:
        """The sealer of a session's recording: a private session's (``key``; ``group`` the
        one its key was salted with) if asked to ``encrypt``; None to record in clear."""
        return cls(key, group) if key is not None and encrypt else None

    def __init__(self, key: SessionKey, group: str) -> None:
        self.key_id = key.key_id
        self.salt = os.urandom(SALT_SIZE)
        self.group = group
        self._aead = ChaCha20Poly1305(_record_key(key, self.salt))
        self._index = 0

    def seal_frame(self) -> bytes:
        """The body of frame 0, in clear: which session's key opens the file."""
        data: bytes = msgpack.packb(
            [SEAL_MAGIC, SEAL_VERSION, self.key_id, self.salt, self.group], use_bin_type=True
        )
        return data

    def seal(self, body: bytes) -> bytes:
        sealed = self._aead.encrypt(_NONCE.pack(self._index), body, _AAD)
        self._index += 1
        return sealed


class LogOpener:
    """Opens the records of one sealed log, given its frame 0 and the person's secret."""

    def __init__(self, key: SessionKey, salt: bytes) -> None:
        self.key = key
        self._aead = ChaCha20Poly1305(_record_key(key, salt))

    def open(self, index: int, sealed: bytes) -> bytes:
        """Record ``index`` (0 for the header); :class:`SessionLogError` if it fails."""
        try:
            return self._aead.decrypt(_NONCE.pack(index), sealed, _AAD)
        except InvalidTag:
            raise SessionLogError(
                "it does not decrypt (altered, or moved from elsewhere in the file)"
            ) from None


def opener_for(seal_frame: bytes, unlock: Unlock) -> LogOpener:
    """The opener of a sealed log whose frame 0 is ``seal_frame``, for ``unlock``'s
    passphrase or view code; :class:`SessionLogError` saying what to do if there is none or
    it is another session's."""
    key_id, salt, group = _read_seal_frame(seal_frame)
    for known in unlock.keys:
        if known.key_id == key_id:
            return LogOpener(known, salt)
    secret, session_name = unlock.secret, unlock.session_name
    if secret is None:
        raise RecordingLocked(
            f"is an encrypted recording of a private session (key id {key_id.hex()}): give "
            "its passphrase or view code (--passphrase-file FILE, or the "
            "WHITEBOARD_PASSPHRASE environment variable) to open it",
            key_id,
            tried=False,
        )
    try:
        keys = unlock.derived.get(group) or _keys_of(secret, group, session_name)
    except ValueError as exc:
        raise RecordingLocked(
            f"cannot be opened with that passphrase: {exc}", key_id, tried=True
        ) from None
    unlock.derived[group] = keys
    for key in keys:
        if key.key_id == key_id:
            return LogOpener(key, salt)
    opens = " or ".join(key.key_id.hex() for key in keys)
    raise RecordingLocked(
        f"is a recording of another private session (key id {key_id.hex()}; that "
        f"passphrase opens {opens}): check the passphrase, and the session name if it had "
        "one (--session-name)",
        key_id,
        tried=True,
    )


def _keys_of(secret: str, group: str, session_name: str) -> tuple[SessionKey, ...]:
    """The keys ``secret`` opens on ``group``: a view code's, or a passphrase's session with
    and without viewers (one scrypt for both)."""
    if is_view_code(secret):
        return (session_key_from_view_code(secret),)
    keys = derive_session_keys(secret, group, session_name)
    return (keys.without_viewers, keys.with_viewers)


def _read_seal_frame(body: bytes) -> tuple[bytes, bytes, str]:
    try:
        item = msgpack.unpackb(body, raw=False)
    except Exception:  # msgpack raises several unrelated types for bad input
        item = None
    if not (
        isinstance(item, list)
        and len(item) >= 5
        and item[:2] == [SEAL_MAGIC, SEAL_VERSION]
        and isinstance(item[2], bytes)
        and len(item[2]) == KEY_ID_SIZE
        and isinstance(item[3], bytes)
        and len(item[3]) == SALT_SIZE
        and isinstance(item[4], str)
        and len(item[4]) <= MAX_GROUP
    ):
        raise SessionLogError("is damaged (its encryption header is invalid)")
    return item[2], item[3], item[4]


def _record_key(key: SessionKey, salt: bytes) -> bytes:
    return key.subkey(b"recording " + salt)


__all__ = [
    "SEALED_FORMAT_VERSION",
    "LogOpener",
    "LogSealer",
    "RecordingLocked",
    "Unlock",
    "opener_for",
]
