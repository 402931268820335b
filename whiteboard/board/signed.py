"""Signed ops: how an op travels in a private session, with the proof that a drawer made it.

In a private session with viewers (docs/security.md), an op is accepted only with a proof that
one who holds the drawing passphrase made it (whiteboard/security/signing.py makes and checks
proofs). The proof travels with the op wherever the op goes: its delivery, a board given to a
joiner (Board.snapshot), an op handed on (whiteboard/carry.py), so that a member who relays it
(a viewer among them) cannot change it. This module is the format alone, without keys.

Wire format, one msgpack array (``"wb-signed"`` tells it from plain ops, as whiteboard/presence.py
does for presences)::

    ["wb-signed", 1, op, proof]

``op`` is the op's own encoding (bin, :func:`~whiteboard.board.codec.encode_op`), ``proof``
bin of :data:`PROOF_SIZE` bytes.
"""

from __future__ import annotations

import msgpack

MAGIC = "wb-signed"
VERSION = 1
PROOF_SIZE = 80  # a 16-byte MAC for drawers and a 64-byte Ed25519 signature (signing.py)
# The most signing adds to an op's bytes: the array, its tag and version, the op's bin header
# (up to 5 bytes), the proof's (2) and the proof.
SIGNED_OVERHEAD = 1 + 1 + len(MAGIC) + 1 + 5 + 2 + PROOF_SIZE
_TAG = bytes([0x94, 0xA0 | len(MAGIC)]) + MAGIC.encode()


class SignedDecodeError(ValueError):
    """A payload that claims to be a signed op but is not one."""


def is_signed(payload: bytes) -> bool:
    return payload[: len(_TAG)] == _TAG


def encode_signed(op_bytes: bytes, proof: bytes) -> bytes:
    data: bytes = msgpack.packb([MAGIC, VERSION, op_bytes, proof], use_bin_type=True)
    return data


def decode_signed(payload: bytes) -> tuple[bytes, bytes]:
    """(the op's bytes, the proof) of a signed payload; :class:`SignedDecodeError` otherwise.
    The op is not decoded here, nor the proof checked."""
    try:
        item = msgpack.unpackb(payload, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise SignedDecodeError(f"a signed op does not decode: {exc}") from None
    if not (isinstance(item, list) and len(item) == 4 and item[0] == MAGIC):
        raise SignedDecodeError('a signed op must be ["wb-signed", version, op, proof]')
    _, version, op_bytes, proof = item
    if version != VERSION:
        raise SignedDecodeError(f"signed op version {version!r} is not {VERSION}")
    if not isinstance(op_bytes, bytes):
        raise SignedDecodeError("a signed op's op must be bytes")
    if not (isinstance(proof, bytes) and len(proof) == PROOF_SIZE):
        raise SignedDecodeError(f"a signed op's proof must be {PROOF_SIZE} bytes")
    return op_bytes, proof
