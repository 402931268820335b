"""What the client bytes of one MTP message hold (ours; RFC 1301 §3.2.2 leaves them to the
client): on subchannel 0 a batch of whiteboard payloads, on subchannel 1 a board snapshot
for joiners (TR 90-1141 §3.4), on subchannel 2 a batch named with its producer's identity.
docs/mtp.md draws them.

A message's bytes are cut into data packets of ``max_data_unit`` bytes, all full but the last
(§3.2.2: "the only packets containing less than maximum capacity will be data[eom]")."""

from __future__ import annotations

import struct
from collections.abc import Sequence

PAYLOAD_SUBCHANNEL = 0
STATE_SUBCHANNEL = 1
# A batch from a member whose connection id is not its identity (it rejoined under a new
# one, RFC 1301 §3.1.1): the batch follows 32 bits naming the identity.
NAMED_SUBCHANNEL = 2
PAYLOAD_SUBCHANNELS = (PAYLOAD_SUBCHANNEL, NAMED_SUBCHANNEL)

_RECORD = struct.Struct("!Id")  # payload length, sender's timestamp (seconds)
# The message's unbounded number, the snapshot's length, and how many of the master's
# verdicts on the messages before it follow (one bit each: accepted or not).
_STATE = struct.Struct("!QIH")
MAX_VERDICTS = 4096
_IDENTITY = struct.Struct("!I")  # a named batch's producer
RECORD_OVERHEAD = _RECORD.size
STATE_OVERHEAD = _STATE.size


class FramingError(ValueError):
    """A message's bytes are not a well-formed batch or snapshot."""


def encode_batch(records: list[tuple[float, bytes]]) -> bytes:
    return b"".join(_RECORD.pack(len(payload), stamp) + payload for stamp, payload in records)


def decode_batch(data: bytes) -> list[tuple[float, bytes]]:
    records: list[tuple[float, bytes]] = []
    offset = 0
    while offset < len(data):
        if len(data) - offset < RECORD_OVERHEAD:
            raise FramingError(f"a payload record is cut short at byte {offset}")
        length, stamp = _RECORD.unpack_from(data, offset)
        offset += RECORD_OVERHEAD
        if length > len(data) - offset:
            raise FramingError(f"a payload record of {length} bytes overruns its message")
        records.append((stamp, data[offset : offset + length]))
        offset += length
    if not records:
        raise FramingError("a payload message holds no payload")
    return records


def encode_named_batch(identity: int, records: list[tuple[float, bytes]]) -> bytes:
    return _IDENTITY.pack(identity) + encode_batch(records)


def decode_named_batch(data: bytes) -> tuple[int, list[tuple[float, bytes]]]:
    if len(data) < _IDENTITY.size:
        raise FramingError("a named payload message is shorter than its identity")
    (identity,) = _IDENTITY.unpack_from(data)
    if identity == 0:
        raise FramingError("a named payload message names member 0")
    return identity, decode_batch(data[_IDENTITY.size :])


def encode_state(number: int, state: bytes, accepted: Sequence[bool] = ()) -> bytes:
    """The board for joiners at message ``number``, with ``accepted[i]``: whether message
    ``number - 1 - i`` was accepted (a rejoiner settles a message of its own with it)."""
    flags = list(accepted)[:MAX_VERDICTS]
    bitmap = bytearray((len(flags) + 7) // 8)
    for i, flag in enumerate(flags):
        if flag:
            bitmap[i // 8] |= 0x80 >> (i % 8)
    return _STATE.pack(number, len(state), len(flags)) + bytes(bitmap) + state


def _state_header(data: bytes) -> tuple[int, int, int, int]:
    """(number, board length, verdict count, offset of the board) of a board message."""
    if len(data) < STATE_OVERHEAD:
        raise FramingError("a board-state message is shorter than its header")
    number, length, verdicts = _STATE.unpack_from(data)
    return number, length, verdicts, STATE_OVERHEAD + (verdicts + 7) // 8


def decode_state(data: bytes) -> tuple[int, bytes]:
    number, length, _, start = _state_header(data)
    if length != len(data) - start:
        raise FramingError(
            f"a board-state message says {length} bytes but holds {len(data) - start}"
        )
    return number, data[start:]


def decode_verdicts(data: bytes) -> tuple[bool, ...]:
    """The master's verdicts a board message carries: accepted or not, from s - 1 back."""
    _, _, count, start = _state_header(data)
    bitmap = data[STATE_OVERHEAD:start]
    return tuple(bool(bitmap[i // 8] & (0x80 >> (i % 8))) for i in range(count))


def state_packets(first_packet: bytes, unit: int) -> int | None:
    """How many packets the snapshot whose first packet is ``first_packet`` spans."""
    if len(first_packet) < STATE_OVERHEAD:
        return None
    _, length, _, start = _state_header(first_packet)
    return max(1, -(-(length + start) // unit))


def split(data: bytes, unit: int) -> list[bytes]:
    """``data`` in packets of ``unit`` bytes, the last one shorter; at least one packet."""
    return [data[i : i + unit] for i in range(0, len(data), unit)] or [b""]
