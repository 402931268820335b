"""The session key: derived from the passphrase with scrypt (memory-hard, RFC 7914), salted
with the group and the session's name, so that one passphrase gives each session its own key
and a table precomputed for one session is no use for another. Sub-keys come from it by HKDF
(RFC 5869), each for one purpose; the key id is one of them, sent in clear (docs/security.md).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

# scrypt's cost: 2**15 x 8 x 128 bytes = 32 MiB and ~0.2 s on this project's 2-CPU machine,
# once per session; every guess of an attacker who captured traffic costs the same.
SCRYPT_N = 2**15
SCRYPT_R = 8
SCRYPT_P = 1
KEY_ID_SIZE = 8
# Keys change every UTC day (an epoch): traffic recorded in one day's session does not open in
# another day's with the same passphrase (envelope.py).
EPOCH_S = 86_400
MIN_PASSPHRASE = 8  # characters; shorter ones are refused with a message
MAX_PASSPHRASE = 1024
_SALT_LABEL = b"whiteboard session v1\x00"


class PassphraseError(ValueError):
    """A passphrase that cannot be used, with a message for the person who gave it."""


@dataclass(frozen=True)
class SessionKey:
    """What a member of a private session holds: never the passphrase, never sent."""

    root: bytes = field(repr=False)  # 32 bytes from scrypt
    key_id: bytes  # KEY_ID_SIZE bytes, in clear in every envelope: which session this is

    def subkey(self, purpose: bytes, length: int = 32) -> bytes:
        """A key for one purpose only (HKDF-SHA256 expand of the root)."""
        return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose).derive(
            self.root
        )

    def epoch_key_id(self, epoch: int) -> bytes:
        """The key id on the wire during ``epoch`` (a UTC day): which session, which day."""
        return self.subkey(b"key id " + _epoch_bytes(epoch), KEY_ID_SIZE)

    def sender_key(self, epoch: int, sender: bytes) -> bytes:
        """The encryption key of ``sender`` (its random run id) during ``epoch``."""
        return self.subkey(b"seal sender " + _epoch_bytes(epoch) + sender)


def epoch_of(wall: float) -> int:
    """The epoch (UTC day) of the wall-clock time ``wall`` (seconds since 1970)."""
    return int(wall // EPOCH_S)


def _epoch_bytes(epoch: int) -> bytes:
    return (epoch % 2**32).to_bytes(4, "big")


def normalise_passphrase(passphrase: str) -> bytes:
    """The bytes a passphrase stands for: NFKC (one spelling for what looks alike) and the line
    end a passphrase file ends with removed. Raises PassphraseError if unusable."""
    text = unicodedata.normalize("NFKC", passphrase).rstrip("\r\n")
    if len(text) < MIN_PASSPHRASE:
        raise PassphraseError(
            f"a session passphrase needs at least {MIN_PASSPHRASE} characters "
            f"(this one has {len(text)})"
        )
    if len(text) > MAX_PASSPHRASE:
        raise PassphraseError(f"a session passphrase has at most {MAX_PASSPHRASE} characters")
    return text.encode("utf-8")


def derive_session_key(passphrase: str, group: str, session: str = "") -> SessionKey:
    """The key of the session ``session`` on multicast ``group`` ("239.255.1.2:5000") for
    ``passphrase``. Takes about 0.2 s: derive once per session, not per datagram."""
    salt = _SALT_LABEL + group.encode("utf-8") + b"\x00" + session.encode("utf-8")
    root = Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(
        normalise_passphrase(passphrase)
    )
    key_id = HKDF(
        algorithm=hashes.SHA256(), length=KEY_ID_SIZE, salt=None, info=b"key id"
    ).derive(root)
    return SessionKey(root, key_id)
