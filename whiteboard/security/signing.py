"""Proofs that an op was made by one who holds the drawing passphrase (issue 21 point 2).

Every member of a private session holds the view secret, so the envelope (envelope.py) cannot
tell a drawer from a viewer: both seal and open datagrams. What only drawers can do is prove an
op, and members apply only proven ops (whiteboard/replica.py). A proof is two things
(docs/security.md, "Viewers"):

- a 16-byte HMAC-SHA256 under a key only drawers derive: how drawers check each other's ops,
  at ~4 µs an op;
- a 64-byte Ed25519 signature (RFC 8032) under the drawing key: how viewers, who hold only its
  public half, check ops (~140 µs with this machine's OpenSSL, which is why drawers use the MAC).

The MAC covers the signature too, so a viewer relaying a drawer's op (an RMP repair, an op
handed on) cannot swap the signature for one that viewers would then refuse. Both cover the UTC
day (the epoch, as the envelope's keys do) the proof was made in, in clear in the proof: an op
delivered or handed on must have been proven yesterday, today or tomorrow, so a viewer cannot
bring back an op from another day's session of the same passphrase (a board given to a joiner
is history, and its ops may be of any day).

A viewer can make neither, so no op of a viewer's is applied by a drawer or by another viewer.

    proof = epoch (u32) || HMAC-SHA256(mac key, epoch || data || signature)[:16] || signature
    signature = Ed25519(signing key, "whiteboard op v1\0" || epoch || data)
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from whiteboard.board.signed import PROOF_SIZE
from whiteboard.security.keys import (
    EPOCH_BYTES,
    SessionKey,
    drawing_mac_key,
    drawing_signing_seed,
    epoch_bytes,
    epoch_of,
)

MAC_SIZE = 16
SIGNATURE_SIZE = PROOF_SIZE - EPOCH_BYTES - MAC_SIZE  # 64, an Ed25519 signature
# Signed with the op so that a signature made for anything else is not an op's.
SIGNATURE_DOMAIN = b"whiteboard op v1\x00"


class OpAuthority:
    """Checks the proofs of a session's ops; makes them too if it holds the drawing secret."""

    def __init__(
        self,
        drawing_public: bytes,
        drawing_secret: bytes | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.drawing_public = drawing_public
        self._wall = wall  # the day a proof is made in, and what "fresh" is judged by
        self._public = Ed25519PublicKey.from_public_bytes(drawing_public)
        self._mac_key: bytes | None = None
        self._signing: Ed25519PrivateKey | None = None
        if drawing_secret is not None:
            self._mac_key = drawing_mac_key(drawing_secret)
            self._signing = Ed25519PrivateKey.from_private_bytes(
                drawing_signing_seed(drawing_secret)
            )
            if self._signing.public_key().public_bytes_raw() != drawing_public:
                raise ValueError("the drawing secret does not match the drawing public key")

    @classmethod
    def of(cls, key: SessionKey, wall: Callable[[], float] = time.time) -> OpAuthority:
        """The authority of a session with viewers (``key.viewers``)."""
        if key.drawing_public is None:
            raise ValueError("a session without viewers has no drawing key: its ops need none")
        return cls(key.drawing_public, key.drawing_secret, wall)

    @classmethod
    def for_session(
        cls, key: SessionKey | None, wall: Callable[[], float] = time.time
    ) -> OpAuthority | None:
        """The authority of a private session with viewers; None for a session in clear or
        one without viewers, where whoever can send an op may draw (keys.py)."""
        return None if key is None or not key.viewers else cls.of(key, wall)

    @property
    def can_sign(self) -> bool:
        return self._signing is not None

    def prove(self, data: bytes) -> bytes:
        """The proof of ``data`` (an op's bytes, or an op handed on), made today. Only for
        drawers."""
        if self._signing is None or self._mac_key is None:
            raise PermissionError("a viewer cannot make ops: the view code cannot sign")
        epoch = epoch_bytes(epoch_of(self._wall()))
        signature = self._signing.sign(SIGNATURE_DOMAIN + epoch + data)
        return epoch + self._mac(epoch, data, signature) + signature

    def check(
        self, data: bytes, proof: bytes, fresh: bool = False, at: float | None = None
    ) -> bool:
        """Whether ``proof`` shows that a drawer made ``data``: by the MAC for a drawer, by
        the signature for a viewer (or a tool holding only the public key). ``fresh``: made
        yesterday, today or tomorrow, judged at ``at`` (default: now), as an op delivered or
        handed on must be."""
        if len(proof) != PROOF_SIZE:
            return False
        epoch = proof[:EPOCH_BYTES]
        signature = proof[EPOCH_BYTES + MAC_SIZE :]
        if fresh:
            today = epoch_of(self._wall() if at is None else at)
            if (int.from_bytes(epoch, "big") - today + 1) % 2**32 > 2:
                return False
        if self._mac_key is not None:
            mac = proof[EPOCH_BYTES : EPOCH_BYTES + MAC_SIZE]
            return hmac.compare_digest(self._mac(epoch, data, signature), mac)
        try:
            self._public.verify(signature, SIGNATURE_DOMAIN + epoch + data)
        except InvalidSignature:
            return False
        return True

    def _mac(self, epoch: bytes, data: bytes, signature: bytes) -> bytes:
        assert self._mac_key is not None
        return hmac.digest(self._mac_key, epoch + data + signature, "sha256")[:MAC_SIZE]
