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

from typing import Any

import msgpack

MAGIC = "wb-signed"
VERSION = 1
# The UTC day it was made in (4), a MAC for drawers (16), an Ed25519 signature (64): signing.py.
PROOF_SIZE = 84
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


def unpack_tagged(
    payload: bytes, magic: str, version: int, fields: int, error: type[ValueError], shape: str
) -> list[Any]:
    """The ``fields`` items after the tag of a payload ``[magic, version, *items]`` (as a
    signed op, a carried op), unchecked; ``error`` with a message naming ``shape`` for
    anything else."""
    try:
        item = msgpack.unpackb(payload, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise error(f"a {shape} does not decode: {exc}") from None
    if not (isinstance(item, list) and len(item) == fields + 2 and item[0] == magic):
        raise error(f'a {shape} must be ["{magic}", version, ...] with {fields} items after')
    if item[1] != version:
        raise error(f"{shape} version {item[1]!r} is not {version}")
    return item[2:]


def decode_signed(payload: bytes) -> tuple[bytes, bytes]:
    """(the op's bytes, the proof) of a signed payload; :class:`SignedDecodeError` otherwise.
    The op is not decoded here, nor the proof checked."""
    op_bytes, proof = unpack_tagged(payload, MAGIC, VERSION, 2, SignedDecodeError, "signed op")
    if not isinstance(op_bytes, bytes):
        raise SignedDecodeError("a signed op's op must be bytes")
    if not (isinstance(proof, bytes) and len(proof) == PROOF_SIZE):
        raise SignedDecodeError(f"a signed op's proof must be {PROOF_SIZE} bytes")
    return op_bytes, proof
