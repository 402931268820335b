"""The board image a joiner receives (RR-2100 §2.8), cut into parts that each fit one data
packet, and put back together.

Each part's data is a 12-byte frame header, then its slice of the state:

    0               4               8               12
    +---------------+---------------+---------------+------------...
    | image id (32) | index (32)    | parts (32)    | slice of the state
    +---------------+---------------+---------------+------------...

``image id`` is the joiner's identifier: two joiners answered by one station tell their images
apart (the parts of both share the answerer's sequence). ``parts`` lets the joiner show
progress. The last part also has the Image option's Last bit and the RTP
S bit set (§2.8, §4.2.5).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

FRAME = struct.Struct("!III")
MAX_IMAGE_BYTES = 256 * 1024 * 1024  # bounds what a joiner will assemble
MAX_PARTS = MAX_IMAGE_BYTES // 64


class ImageError(ValueError):
    """An image part that does not fit the image being assembled."""


def split_image(image_id: int, state: bytes, part_size: int) -> list[bytes]:
    if len(state) > MAX_IMAGE_BYTES:
        raise ValueError(f"board state of {len(state)} bytes exceeds {MAX_IMAGE_BYTES}")
    slices = [state[i : i + part_size] for i in range(0, len(state), part_size)] or [b""]
    return [FRAME.pack(image_id, index, len(slices)) + piece for index, piece in enumerate(slices)]


@dataclass
class ImageAssembly:
    """The parts of one image from one answerer, arriving in sequence order."""

    image_id: int
    parts: int
    received: list[bytes] = field(default_factory=list)
    size: int = 0

    @classmethod
    def start(cls, data: bytes) -> ImageAssembly:
        image_id, index, parts = _frame(data)
        if index != 0:
            raise ImageError(f"image {image_id} starts with part {index}, not 0")
        if not 1 <= parts <= MAX_PARTS:
            raise ImageError(f"image {image_id} claims {parts} parts")
        assembly = cls(image_id, parts)
        assembly._take(data)
        return assembly

    def add(self, data: bytes) -> None:
        image_id, index, parts = _frame(data)
        if image_id != self.image_id or parts != self.parts:
            raise ImageError(f"part of image {image_id}/{parts} inside image {self.image_id}")
        if index != len(self.received):
            raise ImageError(f"image part {index} where {len(self.received)} was expected")
        self._take(data)

    @property
    def complete(self) -> bool:
        return len(self.received) == self.parts

    def state(self) -> bytes:
        return b"".join(self.received)

    def _take(self, data: bytes) -> None:
        piece = data[FRAME.size :]
        self.size += len(piece)
        if self.size > MAX_IMAGE_BYTES:
            raise ImageError(f"image {self.image_id} exceeds {MAX_IMAGE_BYTES} bytes")
        self.received.append(piece)


def image_owner(data: bytes) -> int | None:
    """The joiner an image part is for, or None if it has no frame header."""
    return FRAME.unpack_from(data)[0] if len(data) >= FRAME.size else None


def _frame(data: bytes) -> tuple[int, int, int]:
    if len(data) < FRAME.size:
        raise ImageError(f"image part of {len(data)} bytes has no frame header")
    return FRAME.unpack_from(data)
