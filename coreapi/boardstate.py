"""The board state as the cores carry it to a joiner: compressed (an extension of ours; neither
RR-2100 §2.8 nor TR 90-1141 §3.4 says how the image is coded).

The application's board state is opaque bytes to a core. A core sends it packed: with
``StateFormat.ZLIB``, a 32-bit length of the state, then a zlib stream (RFC 1950) of it. Each
core tells the format in its own header (RMP: the top byte of an image part's ``parts`` field,
docs/rmp-wire.md; MTP: the top bits of a board message's verdict count, docs/mtp-wire.md), so
that an image from a member that sent it uncompressed (``StateFormat.RAW``, format 0: every
older member) is told apart and still taken.

Unpacking is a trust boundary: the bytes come from any host on the group. It never allocates
more than the state's claimed length, which must be within the caller's limit and within
what deflate can make of the bytes given (at most :data:`DEFLATE_MAX_RATIO` to 1: a claim
beyond that is a lie). A stream that inflates past its claim (a decompression bomb), stops
short of it, has bytes after its end or is not zlib at all raises :class:`StateFormatError`.

    0               4                                 length of the packed state
    +---------------+---------------------------------+
    | state length  | zlib stream of the state        |
    +---------------+---------------------------------+
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum


class StateFormat(IntEnum):
    """How a board state travels (ours): the value each core's header carries."""

    RAW = 0  # the state's own bytes, as every member before compression sent them
    ZLIB = 1  # a 32-bit length, then a zlib stream


# Level 1: for a 10,000-stroke board (4.6 MB of snapshot) it makes 1.81 MB in ~0.1 s, level 6
# 1.67 MB in ~0.37 s: the 0.14 MB saved (~115 parts) take less time to send than the CPU the
# higher level costs (figures in docs/rmp.md).
LEVEL = 1
# Deflate codes at most 258 bytes of output in 2 bits of a stream: ~1,032 to 1. Claimed sizes
# beyond that for the bytes given cannot be true and are refused before anything is inflated.
DEFLATE_MAX_RATIO = 1032
_LENGTH = struct.Struct("!I")
HEADER_BYTES = _LENGTH.size


class StateFormatError(ValueError):
    """Packed board state that cannot be unpacked. The message says why, for a person."""


def pack_state(state: bytes) -> bytes:
    """``state`` packed as ``StateFormat.ZLIB``."""
    if len(state) > 0xFFFFFFFF:
        raise ValueError(f"a board state of {len(state)} bytes cannot be packed")
    return _LENGTH.pack(len(state)) + zlib.compress(state, LEVEL)


def unpack_state(form: int, packed: bytes, limit: int) -> bytes:
    """The board state ``packed`` holds in format ``form``, at most ``limit`` bytes."""
    if form == StateFormat.RAW:
        if len(packed) > limit:
            raise StateFormatError(f"the board state is {len(packed)} bytes, over {limit}")
        return bytes(packed)
    if form != StateFormat.ZLIB:
        raise StateFormatError(f"the board state is in format {form}, which we do not know")
    if len(packed) < HEADER_BYTES:
        raise StateFormatError("the compressed board state is shorter than its header")
    (claimed,) = _LENGTH.unpack_from(packed)
    stream = memoryview(packed)[HEADER_BYTES:]
    if claimed > limit:
        raise StateFormatError(f"the board state claims {claimed} bytes, over {limit}")
    if claimed > DEFLATE_MAX_RATIO * len(stream):
        raise StateFormatError(
            f"the board state claims {claimed} bytes from {len(stream)} compressed: "
            "more than deflate can make"
        )
    inflater = zlib.decompressobj()
    try:
        # Never more than the claimed length (+1 to see that it would be more).
        state = inflater.decompress(stream, claimed + 1)
    except zlib.error as exc:
        raise StateFormatError(f"the compressed board state is corrupt ({exc})") from None
    if len(state) > claimed or inflater.unconsumed_tail:
        raise StateFormatError(f"the board state inflates past its claimed {claimed} bytes")
    if not inflater.eof:
        raise StateFormatError(
            f"the compressed board state is cut short ({len(state)} of {claimed} bytes)"
        )
    if inflater.unused_data:
        raise StateFormatError("the compressed board state has bytes after its end")
    if len(state) != claimed:
        raise StateFormatError(f"the board state is {len(state)} bytes, not the {claimed} claimed")
    return state
