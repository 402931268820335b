"""What the client bytes of one MTP message hold (ours; RFC 1301 §3.2.2 leaves them to the
client): on subchannel 0 a batch of whiteboard payloads, on subchannel 1 a board snapshot
for joiners (TR 90-1141 §3.4), on subchannel 2 a batch named with its producer's identity.
docs/mtp.md draws them.

A message's bytes are cut into data packets of ``max_data_unit`` bytes, all full but the last
(§3.2.2: "the only packets containing less than maximum capacity will be data[eom]")."""

from __future__ import annotations

import struct

PAYLOAD_SUBCHANNEL = 0
STATE_SUBCHANNEL = 1
# A batch from a member whose connection id is not its identity (it rejoined under a new
# one, RFC 1301 §3.1.1): the batch follows 32 bits naming the identity.
NAMED_SUBCHANNEL = 2
PAYLOAD_SUBCHANNELS = (PAYLOAD_SUBCHANNEL, NAMED_SUBCHANNEL)

_RECORD = struct.Struct("!Id")  # payload length, sender's timestamp (seconds)
_STATE = struct.Struct("!QI")  # the message's unbounded number, snapshot length
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


def encode_state(number: int, state: bytes) -> bytes:
    return _STATE.pack(number, len(state)) + state


def decode_state(data: bytes) -> tuple[int, bytes]:
    if len(data) < STATE_OVERHEAD:
        raise FramingError("a board-state message is shorter than its header")
    number, length = _STATE.unpack_from(data)
    if length != len(data) - STATE_OVERHEAD:
        raise FramingError(
            f"a board-state message says {length} bytes but holds {len(data) - STATE_OVERHEAD}"
        )
    return number, data[STATE_OVERHEAD:]


def state_packets(first_packet: bytes, unit: int) -> int | None:
    """How many packets the snapshot whose first packet is ``first_packet`` spans."""
    if len(first_packet) < STATE_OVERHEAD:
        return None
    length: int = _STATE.unpack_from(first_packet)[1]
    return max(1, -(-(length + STATE_OVERHEAD) // unit))


def split(data: bytes, unit: int) -> list[bytes]:
    """``data`` in packets of ``unit`` bytes, the last one shorter; at least one packet."""
    return [data[i : i + unit] for i in range(0, len(data), unit)] or [b""]
