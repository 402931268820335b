"""What the client bytes of one MTP message hold (ours; RFC 1301 §3.2.2 leaves them to the
client): on subchannel 0 a batch of whiteboard payloads, on subchannel 1 a board snapshot
for joiners (TR 90-1141 §3.4), on subchannel 2 a batch named with its producer's identity.
docs/mtp.md draws them.

A message's bytes are cut into data packets of ``max_data_unit`` bytes, all full but the last
(§3.2.2: "the only packets containing less than maximum capacity will be data[eom]")."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from coreapi.boardstate import StateFormat, StateFormatError, pack_state, unpack_state

PAYLOAD_SUBCHANNEL = 0
STATE_SUBCHANNEL = 1
# A batch from a member whose connection id is not its identity (it rejoined under a new
# one, RFC 1301 §3.1.1): the batch follows 32 bits naming the identity.
NAMED_SUBCHANNEL = 2
PAYLOAD_SUBCHANNELS = (PAYLOAD_SUBCHANNEL, NAMED_SUBCHANNEL)

_RECORD = struct.Struct("!Id")  # payload length, sender's timestamp (seconds)
# The message's unbounded number, the snapshot's length, and how many of the master's
# verdicts on the messages before it follow (one bit each: accepted or not). The count's top
# 3 bits (ours, issue 18) are the board's format (coreapi/boardstate.py): 1, packed with zlib,
# as we send it; 0, as is, as members sent it before (their counts never reach 2^13) and
# still taken. Such a member cannot read ours: the count it reads says the board is short.
_STATE = struct.Struct("!QIH")
MAX_VERDICTS = 4096
_VERDICT_BITS = 13
_VERDICT_MASK = (1 << _VERDICT_BITS) - 1
# The most a board may inflate to (the board's own snapshot limit, whiteboard/board).
MAX_STATE_BYTES = 256 << 20
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


def encode_state(
    number: int,
    state: bytes,
    accepted: Sequence[bool] = (),
    form: StateFormat = StateFormat.ZLIB,
) -> bytes:
    """The board for joiners at message ``number``, packed in ``form``, with ``accepted[i]``:
    whether message ``number - 1 - i`` was accepted (a rejoiner settles a message of its own
    with it)."""
    flags = list(accepted)[:MAX_VERDICTS]
    bitmap = bytearray((len(flags) + 7) // 8)
    for i, flag in enumerate(flags):
        if flag:
            bitmap[i // 8] |= 0x80 >> (i % 8)
    packed = pack_state(state) if form is StateFormat.ZLIB else state
    header = _STATE.pack(number, len(packed), len(flags) | form << _VERDICT_BITS)
    return header + bytes(bitmap) + packed


def _state_header(data: bytes) -> tuple[int, int, int, int, int]:
    """(number, packed board length, verdict count, offset of the board, format) of a board
    message."""
    if len(data) < STATE_OVERHEAD:
        raise FramingError("a board-state message is shorter than its header")
    number, length, field = _STATE.unpack_from(data)
    verdicts = field & _VERDICT_MASK
    return number, length, verdicts, STATE_OVERHEAD + (verdicts + 7) // 8, field >> _VERDICT_BITS


def state_format(data: bytes) -> int:
    """The format (coreapi/boardstate.py) a board message's board is packed in."""
    return _state_header(data)[4]


def decode_state(data: bytes) -> tuple[int, bytes]:
    """(number, board) of a board message, the board unpacked: at most MAX_STATE_BYTES, and
    never more than it claims (a decompression bomb is a FramingError, as any bad board)."""
    number, length, _, start, form = _state_header(data)
    if length != len(data) - start:
        raise FramingError(
            f"a board-state message says {length} bytes but holds {len(data) - start}"
        )
    try:
        return number, unpack_state(form, data[start:], MAX_STATE_BYTES)
    except StateFormatError as exc:
        raise FramingError(str(exc)) from None


def decode_verdicts(data: bytes) -> tuple[bool, ...]:
    """The master's verdicts a board message carries: accepted or not, from s - 1 back."""
    _, _, count, start, _ = _state_header(data)
    bitmap = data[STATE_OVERHEAD:start]
    return tuple(bool(bitmap[i // 8] & (0x80 >> (i % 8))) for i in range(count))


def state_packets(first_packet: bytes, unit: int) -> int | None:
    """How many packets the snapshot whose first packet is ``first_packet`` spans."""
    if len(first_packet) < STATE_OVERHEAD:
        return None
    _, length, _, start, _ = _state_header(first_packet)
    return max(1, -(-(length + start) // unit))


def split(data: bytes, unit: int) -> list[bytes]:
    """``data`` in packets of ``unit`` bytes, the last one shorter; at least one packet."""
    return [data[i : i + unit] for i in range(0, len(data), unit)] or [b""]
