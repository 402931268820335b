"""Several payloads in one data packet (our extension, issue 18; docs/rmp-wire.md "Batch").

A data packet whose final option is Batch(count) carries ``count`` payloads, each as a 16-bit
length and its bytes. The sender batches only what is already queued when a packet leaves
(RR-2100 §5 leaves the rate to us; a backlog means the link, not the person, sets the pace),
so a lone stroke still travels in a Data packet, as before. The packet is sequenced, stored,
NACKed and repaired as one (§2.2-§2.7); its payloads are delivered in their order, under the
packet's order key with their index appended (§3)."""

from __future__ import annotations

import struct

# Bytes of payloads and framing in one batch: the largest stroke's (rmp/core.py's max
# payload), so that a batch leaves the same room for confirmations as a single stroke.
MAX_BATCH_BYTES = 1200
MAX_BATCH_COUNT = 255  # payloads in one batch (an empty payload costs 2 bytes of framing)
_LENGTH = struct.Struct("!H")


def framed_size(payload: bytes) -> int:
    """What ``payload`` adds to a batch's data part."""
    return _LENGTH.size + len(payload)


def pack_batch(payloads: list[bytes]) -> bytes:
    out = bytearray()
    for payload in payloads:
        out += _LENGTH.pack(len(payload))
        out += payload
    return bytes(out)


def batch_problem(data: bytes, count: int) -> str | None:
    """What is wrong with ``data`` as the data part of Batch(count), or None."""
    if not 2 <= count <= MAX_BATCH_COUNT:
        return f"a Batch of {count} payloads, not 2..{MAX_BATCH_COUNT} (our extension)"
    offset, end = 0, len(data)
    for index in range(count):
        if offset + _LENGTH.size > end:
            return f"a Batch of {count} payloads ends after {index} (its data part is short)"
        (length,) = _LENGTH.unpack_from(data, offset)
        offset += _LENGTH.size + length
        if offset > end:
            return f"payload {index} of a Batch runs {offset - end} bytes past its data part"
    if offset != end:
        return f"{end - offset} bytes follow the {count} payloads of a Batch"
    return None


def split_batch(data: bytes, count: int) -> list[bytes]:
    """The payloads of a Batch(count) data part that ``batch_problem`` found well formed."""
    payloads: list[bytes] = []
    offset = 0
    for _ in range(count):
        (length,) = _LENGTH.unpack_from(data, offset)
        offset += _LENGTH.size
        payloads.append(data[offset : offset + length])
        offset += length
    return payloads
