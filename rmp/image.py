"""The board image a joiner receives (RR-2100 §2.8), cut into parts that each fit one data
packet, and put back together.

Each part's data is a 12-byte frame header, then its slice of the packed state:

    0               4               8       9               12
    +---------------+---------------+-------+---------------+------------...
    | image id (32) | index (32)    | fmt(8)| parts (24)    | slice of the packed state
    +---------------+---------------+-------+---------------+------------...

``image id`` is the joiner's identifier: two joiners answered by one station tell their images
apart (the parts of both share the answerer's sequence). ``parts`` lets the joiner show
progress. The last part also has the Image option's Last bit and the RTP
S bit set (§2.8, §4.2.5).

``fmt`` (ours, issue 18) says how the state is packed (coreapi/boardstate.py): 1, a zlib
stream, is what we send; 0, the state as is, is what members sent before it, when this byte
was the top of a 32-bit ``parts`` (always 0 there: parts never reach 2^24), and is still
taken. A member before it refuses our images (it reads ``parts`` as over 16 million).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from coreapi.boardstate import StateFormat, StateFormatError, unpack_state

FRAME = struct.Struct("!III")
PARTS_MASK = 0xFFFFFF  # the parts field's low 24 bits; the top 8 are the format
MAX_IMAGE_BYTES = 256 * 1024 * 1024  # bounds what a joiner will assemble, and inflate to
MAX_PARTS = MAX_IMAGE_BYTES // 64


class ImageError(ValueError):
    """An image part that does not fit the image being assembled."""


def split_image(
    image_id: int, packed: bytes, part_size: int, form: StateFormat = StateFormat.RAW
) -> list[bytes]:
    """The parts of an image of the state ``packed`` in format ``form``."""
    if len(packed) > MAX_IMAGE_BYTES:
        raise ValueError(f"board state of {len(packed)} bytes exceeds {MAX_IMAGE_BYTES}")
    slices = [packed[i : i + part_size] for i in range(0, len(packed), part_size)] or [b""]
    count = len(slices) | form << 24
    return [FRAME.pack(image_id, index, count) + piece for index, piece in enumerate(slices)]


@dataclass
class ImageAssembly:
    """The parts of one image from one answerer, arriving in sequence order."""

    image_id: int
    parts: int
    form: int = StateFormat.RAW
    received: list[bytes] = field(default_factory=list)
    size: int = 0

    @classmethod
    def start(cls, data: bytes) -> ImageAssembly:
        image_id, index, parts, form = _frame(data)
        if index != 0:
            raise ImageError(f"image {image_id} starts with part {index}, not 0")
        if not 1 <= parts <= MAX_PARTS:
            raise ImageError(f"image {image_id} claims {parts} parts")
        if form not in {f.value for f in StateFormat}:
            raise ImageError(f"image {image_id} is in format {form}, which we do not know")
        assembly = cls(image_id, parts, form)
        assembly._take(data)
        return assembly

    def add(self, data: bytes) -> None:
        image_id, index, parts, form = _frame(data)
        if image_id != self.image_id or parts != self.parts or form != self.form:
            raise ImageError(f"part of image {image_id}/{parts} inside image {self.image_id}")
        if index != len(self.received):
            raise ImageError(f"image part {index} where {len(self.received)} was expected")
        self._take(data)

    @property
    def complete(self) -> bool:
        return len(self.received) == self.parts

    def state(self) -> bytes:
        """The board state the complete image holds, unpacked (at most MAX_IMAGE_BYTES).
        Raises :class:`StateFormatError` if it cannot be (corrupt, cut short, a bomb)."""
        packed = b"".join(self.received)
        self.received = []  # not kept twice
        return unpack_state(self.form, packed, MAX_IMAGE_BYTES)

    def _take(self, data: bytes) -> None:
        piece = data[FRAME.size :]
        self.size += len(piece)
        if self.size > MAX_IMAGE_BYTES:
            raise ImageError(f"image {self.image_id} exceeds {MAX_IMAGE_BYTES} bytes")
        self.received.append(piece)


def image_owner(data: bytes) -> int | None:
    """The joiner an image part is for, or None if it has no frame header."""
    return FRAME.unpack_from(data)[0] if len(data) >= FRAME.size else None


def _frame(data: bytes) -> tuple[int, int, int, int]:
    """(image id, index, parts, format) of an image part."""
    if len(data) < FRAME.size:
        raise ImageError(f"image part of {len(data)} bytes has no frame header")
    image_id, index, count = FRAME.unpack_from(data)
    return image_id, index, count & PARTS_MASK, count >> 24


__all__ = [
    "FRAME",
    "MAX_IMAGE_BYTES",
    "ImageAssembly",
    "ImageError",
    "StateFormatError",
    "image_owner",
    "split_image",
]
