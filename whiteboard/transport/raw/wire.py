"""The raw transport's datagram: a 22-byte header, then the payload (DATA), or the member's
introduction (HELLO, at most ``MAX_INTRODUCTION`` bytes; empty if it has none).

    0      1      2             6                 10            14                    22
    +------+------+-------------+-----------------+-------------+---------------------+----...
    | ver  | type | origin (32) | incarnation (32)| seq (32)    | timestamp (64, us)  | payload
    +------+------+-------------+-----------------+-------------+---------------------+----...

All fields in network byte order. ``seq`` counts DATA packets from ``origin`` from 1; HELLO and
BYE carry the origin's latest DATA seq (0 before the first). An EPHEMERAL packet carries a
payload of the side channel (coreapi/ephemeral.py, at most ``MAX_EPHEMERAL`` bytes) and in
``seq`` its own count of them modulo 2**16, apart from DATA's. ``incarnation`` is drawn at random
each time a member starts: a member that crashed and came back with the same id counts its
``seq`` from 1 again, and receivers must not take its new strokes for duplicates.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from coreapi import MAX_INTRODUCTION
from coreapi.ephemeral import MAX_EPHEMERAL
from coreapi.memo import DecodeMemo

VERSION = 1
HEADER = struct.Struct("!BBIIIQ")
MAX_DATAGRAM = 1200  # stays under any LAN MTU without IP fragmentation


class RawType(IntEnum):
    DATA = 1
    HELLO = 2  # "I am here": announces a member (with its introduction), keeps it unsuspected
    BYE = 3  # "I leave"
    EPHEMERAL = 4  # the side channel: not numbered among DATA, never delivered reliably


class RawDecodeError(ValueError):
    """A datagram that is not a valid raw-transport packet."""


@dataclass(frozen=True, slots=True)
class RawPacket:
    type: RawType
    origin: int
    incarnation: int
    seq: int
    timestamp_us: int
    payload: bytes = b""

    def encode(self) -> bytes:
        header = HEADER.pack(
            VERSION, self.type, self.origin, self.incarnation, self.seq, self.timestamp_us
        )
        return header + self.payload


def decode(data: bytes) -> RawPacket:
    if len(data) < HEADER.size:
        raise RawDecodeError(f"datagram of {len(data)} bytes is shorter than the header")
    if len(data) > MAX_DATAGRAM:
        raise RawDecodeError(f"datagram of {len(data)} bytes exceeds {MAX_DATAGRAM}")
    version, type_, origin, incarnation, seq, timestamp_us = HEADER.unpack_from(data)
    if version != VERSION:
        raise RawDecodeError(f"unsupported version {version}")
    try:
        kind = RawType(type_)
    except ValueError:
        raise RawDecodeError(f"unknown packet type {type_}") from None
    if origin == 0:
        raise RawDecodeError("origin 0 is reserved")
    payload = bytes(data[HEADER.size :])
    if kind is RawType.DATA:
        if seq == 0:
            raise RawDecodeError("DATA with sequence number 0")
    elif kind is RawType.HELLO:
        if len(payload) > MAX_INTRODUCTION:
            raise RawDecodeError(
                f"HELLO carries an introduction of {len(payload)} bytes, more than "
                f"{MAX_INTRODUCTION}"
            )
    elif kind is RawType.EPHEMERAL:
        if len(payload) > MAX_EPHEMERAL or seq >= 1 << 16:
            raise RawDecodeError(
                f"EPHEMERAL of {len(payload)} bytes numbered {seq}: at most {MAX_EPHEMERAL}, "
                "numbered below 2**16"
            )
    elif payload:
        raise RawDecodeError(f"{kind.name} packet carries {len(payload)} unexpected bytes")
    return RawPacket(kind, origin, incarnation, seq, timestamp_us, payload)


def is_ephemeral(data: bytes) -> bool:
    """Whether ``data`` is an EPHEMERAL packet, by its first two bytes (nothing checked)."""
    return len(data) >= 2 and data[0] == VERSION and data[1] == RawType.EPHEMERAL


# The cores decode through this: in the simulator one multicast datagram object reaches every
# member, and it is decoded once (coreapi/memo.py).
decode_once = DecodeMemo(decode)
