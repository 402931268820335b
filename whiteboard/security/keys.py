"""The session key: derived from the passphrase with scrypt (memory-hard, RFC 7914), salted
with the group and the session's name, so that one passphrase gives each session its own key
and a table precomputed for one session is no use for another. Sub-keys come from it by HKDF
(RFC 5869), each for one purpose; the key id is one of them, sent in clear (docs/security.md).

Whether people may watch without drawing (issue 21 point 2) is chosen when the session
starts, and bound into its key: the two choices are two sessions, and their members do not
mistake each other's traffic. Without viewers, everyone who can seal a datagram holds the
passphrase and may draw, so ops need no proof and cost nothing more than in clear. With
viewers, two secrets come from the scrypt output: the *view secret*, which every envelope key
comes from, and the *drawing secret*, which the keys that make ops acceptable come from
(signing.py). A drawer holds both; a viewer is given a *view code*, the view secret with the
drawing key's public half, and can open and send datagrams but cannot make an op that anyone
applies. The proofs cost ~100 bytes an op (docs/security.md).
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
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
VIEW_SECRET_SIZE = 16  # bytes: 128 bits, what every envelope key of the session comes from
PUBLIC_KEY_SIZE = 32  # an Ed25519 public key (RFC 8032)
VIEW_CODE_PREFIX = "wbview1-"
_VIEW_CODE_CHECK = 3  # bytes of SHA-256 at the end of a view code: a mistyped code is told
_VIEW_CODE_BYTES = VIEW_SECRET_SIZE + PUBLIC_KEY_SIZE + _VIEW_CODE_CHECK


NO_VIEWERS = (
    "this session was started without viewers: to hand out view codes, start it with "
    "'Let people watch with a view code' (--allow-viewers)"
)


class PassphraseError(ValueError):
    """A passphrase that cannot be used, with a message for the person who gave it."""


@dataclass(frozen=True)
class SessionKey:
    """What a member of a private session holds: never the passphrase, never sent."""

    root: bytes = field(repr=False)  # every envelope key comes from it (the view secret)
    key_id: bytes  # KEY_ID_SIZE bytes, in clear in every envelope: which session this is
    # The Ed25519 public key whose signature makes an op acceptable; None in a session
    # without viewers, whose ops need no proof.
    drawing_public: bytes | None
    # What the keys that make ops come from (signing.py); None for a viewer.
    drawing_secret: bytes | None = field(default=None, repr=False)

    @property
    def can_draw(self) -> bool:
        return self.drawing_secret is not None

    @property
    def viewers(self) -> bool:
        """Whether the session lets people watch with a view code (and so proves its ops)."""
        return self.drawing_public is not None

    def view_code(self) -> str:
        """What a drawer hands to people who may watch but not draw: the view secret and the
        drawing key's public half, with a check against typing mistakes."""
        if self.drawing_public is None:
            raise PassphraseError(NO_VIEWERS)
        body = self.root + self.drawing_public
        code = body + hashlib.sha256(body).digest()[:_VIEW_CODE_CHECK]
        return VIEW_CODE_PREFIX + base64.urlsafe_b64encode(code).decode("ascii")

    def subkey(self, purpose: bytes, length: int = 32) -> bytes:
        """A key for one purpose only (HKDF-SHA256 expand of the root)."""
        return _expand(self.root, purpose, length)

    def epoch_key_id(self, epoch: int) -> bytes:
        """The key id on the wire during ``epoch`` (a UTC day): which session, which day."""
        return self.subkey(b"key id " + epoch_bytes(epoch), KEY_ID_SIZE)

    def sender_key(self, epoch: int, sender: bytes) -> bytes:
        """The encryption key of ``sender`` (its random run id) during ``epoch``."""
        return self.subkey(b"seal sender " + epoch_bytes(epoch) + sender)


def epoch_of(wall: float) -> int:
    """The epoch (UTC day) of the wall-clock time ``wall`` (seconds since 1970)."""
    return int(wall // EPOCH_S)


EPOCH_BYTES = 4  # an epoch as it is written into keys' labels and op proofs


def epoch_bytes(epoch: int) -> bytes:
    return (epoch % 2**32).to_bytes(EPOCH_BYTES, "big")


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


def _expand(secret: bytes, purpose: bytes, length: int) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose).derive(secret)


def drawing_signing_seed(drawing_secret: bytes) -> bytes:
    """The Ed25519 private key (RFC 8032 seed) that signs a session's ops."""
    return _expand(drawing_secret, b"op signing", 32)


def drawing_mac_key(drawing_secret: bytes) -> bytes:
    """The key of the MAC by which drawers check each other's ops cheaply (signing.py)."""
    return _expand(drawing_secret, b"op mac", 32)


def _session_key(
    root: bytes, public: bytes | None, drawing_secret: bytes | None
) -> SessionKey:
    key_id = _expand(root, b"key id", KEY_ID_SIZE)
    return SessionKey(root, key_id, public, drawing_secret)


@dataclass(frozen=True)
class SessionKeys:
    """Both sessions a passphrase opens on one group and name: with and without viewers."""

    without_viewers: SessionKey
    with_viewers: SessionKey

    def choose(self, viewers: bool) -> SessionKey:
        return self.with_viewers if viewers else self.without_viewers


def derive_session_keys(passphrase: str, group: str, session: str = "") -> SessionKeys:
    """The keys of the session ``session`` on multicast ``group`` ("239.255.1.2:5000") for
    ``passphrase``, a drawer's, for either choice of viewers: one scrypt, about 0.2 s. Derive
    once per session, not per datagram."""
    salt = _SALT_LABEL + group.encode("utf-8") + b"\x00" + session.encode("utf-8")
    master = Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(
        normalise_passphrase(passphrase)
    )
    drawing_secret = _expand(master, b"drawing secret", 32)
    seed = drawing_signing_seed(drawing_secret)
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    view_secret = _expand(master, b"view secret", VIEW_SECRET_SIZE)
    # A root of its own: a view code of the session with viewers opens nothing of this one.
    closed_root = _expand(master, b"session secret, no viewers", 32)
    return SessionKeys(
        without_viewers=_session_key(closed_root, None, drawing_secret),
        with_viewers=_session_key(view_secret, public, drawing_secret),
    )


def derive_session_key(
    passphrase: str, group: str, session: str = "", viewers: bool = False
) -> SessionKey:
    """A drawer's key of the session ``session`` on ``group`` for ``passphrase``, one that
    lets people watch with a view code if ``viewers``."""
    return derive_session_keys(passphrase, group, session).choose(viewers)


def is_view_code(secret: str) -> bool:
    return secret.strip().startswith(VIEW_CODE_PREFIX)


def session_key_from_view_code(code: str) -> SessionKey:
    """A viewer's key: it opens and seals the session's datagrams, and checks ops, but
    cannot make one. Raises PassphraseError with a message for a code that is not whole."""
    text = code.strip()
    if not text.startswith(VIEW_CODE_PREFIX):
        raise PassphraseError(f"a view code starts with {VIEW_CODE_PREFIX!r}")
    encoded = text[len(VIEW_CODE_PREFIX) :]
    mistyped = PassphraseError("this view code is incomplete or mistyped: copy it again")
    if len(encoded) != _VIEW_CODE_BYTES * 4 // 3:
        raise mistyped
    try:
        raw = base64.b64decode(encoded, altchars=b"-_", validate=True)
    except ValueError:
        raise PassphraseError("this view code has characters a view code never has") from None
    body = raw[: VIEW_SECRET_SIZE + PUBLIC_KEY_SIZE]
    if raw[len(body) :] != hashlib.sha256(body).digest()[:_VIEW_CODE_CHECK]:
        raise mistyped
    return _session_key(body[:VIEW_SECRET_SIZE], body[VIEW_SECRET_SIZE:], None)


def check_secret(secret: str) -> None:
    """PassphraseError, with a message for the person, if ``secret`` is neither a usable
    passphrase nor a whole view code (what :func:`open_session_key` takes)."""
    if is_view_code(secret):
        session_key_from_view_code(secret)
    else:
        normalise_passphrase(secret)


def open_session_key(
    secret: str, group: str, session: str = "", viewers: bool = False
) -> SessionKey:
    """The key for what a person typed: a view code (watch only; a view code's session always
    has viewers) or a passphrase (draw, in the session with or without ``viewers``)."""
    if is_view_code(secret):
        return session_key_from_view_code(secret)
    return derive_session_key(secret, group, session, viewers)
