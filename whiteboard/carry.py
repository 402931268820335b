"""Carried ops: what a member hands on when it is given a board that lacks ops it has.

A member that joins (or rejoins) a session is given a board by another member (MTP's master,
TR 90-1141 §3.4; RMP's image, RR-2100 §2.7). Usually that board holds everything the joiner
had. After an MTP master failover it may not: the new master's board is what it had delivered,
and a survivor that had delivered more of the old web (delivered sequences are prefixes of one
another, TR §3.2) holds ops the new board lacks; after two webs merge, each side lacks the
other's. The joiner then sends each such op again, *carried*: wrapped with the order key it had
when it was first delivered, so every replica files it in the same place and boards converge
by hash. A carried op is not the carrier's own, so the author check of plain deliveries does
not apply to it; a replica that already has it ignores it (counted as ``carried_known``, not
as a duplicate delivery of the transport).

Wire format, one msgpack array (``"wb-carry"`` tells it from ops and presences, as
whiteboard/presence.py does)::

    ["wb-carry", 1, order_key, op]

``order_key`` is an array of ints (the key the op was first delivered with), ``op`` the op's
own encoding (bin), or in a private session the op signed (whiteboard/board/signed.py), its
proof kept so that whoever is given it can check that a drawer made it.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgpack

from whiteboard.board import Op, OpDecodeError, OrderKey, decode_op, encode_op
from whiteboard.board.signed import (
    SignedDecodeError,
    decode_signed,
    encode_signed,
    is_signed,
    unpack_tagged,
)
from whiteboard.presence import is_tagged

MAGIC = "wb-carry"
VERSION = 1
MAX_KEY_INTS = 16
_I64 = 2**63


class CarryDecodeError(ValueError):
    """A payload that claims to be a carried op but is not a valid one."""


@dataclass(frozen=True, slots=True)
class Carried:
    order_key: OrderKey
    op: Op
    op_bytes: bytes  # the op's encoding, as its proof covers it
    proof: bytes | None = None  # a private session's (whiteboard/board/signed.py)


def is_carried(payload: bytes) -> bool:
    return is_tagged(payload, MAGIC)


def encode_carried(order_key: OrderKey, op: Op, proof: bytes | None = None) -> bytes:
    op_bytes = encode_op(op)
    inner = op_bytes if proof is None else encode_signed(op_bytes, proof)
    data: bytes = msgpack.packb([MAGIC, VERSION, list(order_key), inner], use_bin_type=True)
    return data


def decode_carried(payload: bytes) -> Carried:
    """The carried op in ``payload``; :class:`CarryDecodeError` and nothing else otherwise."""
    key, op_bytes = unpack_tagged(payload, MAGIC, VERSION, 2, CarryDecodeError, "carried op")
    if not (
        isinstance(key, list)
        and 0 < len(key) <= MAX_KEY_INTS
        and all(isinstance(k, int) and not isinstance(k, bool) and -_I64 <= k < _I64 for k in key)
    ):
        raise CarryDecodeError(f"a carried op's order key must be 1..{MAX_KEY_INTS} ints")
    if not isinstance(op_bytes, bytes):
        raise CarryDecodeError("a carried op's op must be bytes")
    proof = None
    try:
        if is_signed(op_bytes):
            op_bytes, proof = decode_signed(op_bytes)
        op = decode_op(op_bytes)
    except (OpDecodeError, SignedDecodeError) as exc:
        raise CarryDecodeError(f"a carried op is unusable: {exc}") from None
    return Carried(tuple(key), op, op_bytes, proof)


__all__ = ["Carried", "CarryDecodeError", "decode_carried", "encode_carried", "is_carried"]
