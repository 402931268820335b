"""Proofs that an op was made by one who holds the drawing passphrase (issue 21 point 2).

Every member of a private session holds the view secret, so the envelope (envelope.py) cannot
tell a drawer from a viewer: both seal and open datagrams. What only drawers can do is prove an
op, and members apply only proven ops (whiteboard/replica.py). A proof is two things
(docs/security.md, "Viewers"):

- a 16-byte HMAC-SHA256 under a key only drawers derive: how drawers check each other's ops,
  at ~4 µs an op;
- a 64-byte Ed25519 signature (RFC 8032) under the drawing key: how viewers, who hold only its
  public half, check ops (~140 µs with this machine's OpenSSL, which is why drawers use the MAC).

A viewer can make neither, so no op of a viewer's is applied by a drawer or by another viewer.
"""

from __future__ import annotations

import hmac

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from whiteboard.board.signed import PROOF_SIZE
from whiteboard.security.keys import SessionKey, drawing_mac_key, drawing_signing_seed

MAC_SIZE = 16
SIGNATURE_SIZE = PROOF_SIZE - MAC_SIZE  # 64, an Ed25519 signature
# Signed with the op so that a signature made for anything else is not an op's.
SIGNATURE_DOMAIN = b"whiteboard op v1\x00"


class OpAuthority:
    """Checks the proofs of a session's ops; makes them too if it holds the drawing secret."""

    def __init__(self, drawing_public: bytes, drawing_secret: bytes | None = None) -> None:
        self.drawing_public = drawing_public
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
    def of(cls, key: SessionKey) -> OpAuthority:
        return cls(key.drawing_public, key.drawing_secret)

    @property
    def can_sign(self) -> bool:
        return self._signing is not None

    def prove(self, op_bytes: bytes) -> bytes:
        """The proof of ``op_bytes`` (its MAC, then its signature). Only for drawers."""
        if self._signing is None or self._mac_key is None:
            raise PermissionError("a viewer cannot make ops: the view code cannot sign")
        mac = hmac.digest(self._mac_key, op_bytes, "sha256")[:MAC_SIZE]
        return mac + self._signing.sign(SIGNATURE_DOMAIN + op_bytes)

    def check(self, op_bytes: bytes, proof: bytes) -> bool:
        """Whether ``proof`` shows that a drawer made ``op_bytes``: by the MAC for a drawer,
        by the signature for a viewer (or a tool holding only the public key)."""
        if len(proof) != PROOF_SIZE:
            return False
        if self._mac_key is not None:
            mac = hmac.digest(self._mac_key, op_bytes, "sha256")[:MAC_SIZE]
            return hmac.compare_digest(mac, proof[:MAC_SIZE])
        try:
            self._public.verify(proof[MAC_SIZE:], SIGNATURE_DOMAIN + op_bytes)
        except InvalidSignature:
            return False
        return True
