"""Images' pixels for painting (issue 20): a board's blobs decoded by Qt, once, kept within a
budget of memory.

The bytes come from any member, so they are decoded as untrusted input: the header's size is
read first and a picture larger than ``MAX_DECODED_SIDE`` on a side is decoded scaled down
(Qt's reader does that while decoding, without the full-size buffer); bytes Qt cannot decode
paint as a broken frame, never raise. The decoded pictures are kept most recently used first
within ``budget`` bytes (a 2,048 px square is 16 MiB): a board of 50 of them stays painted
without holding them all.

Decoding a picture takes milliseconds (a 400x300 PNG ~2 ms, a 2,048 px one ~40 ms), and a
board shown afresh holds them all: :meth:`Pictures.prefetch` decodes them on worker threads
(Qt's decoders release the GIL) while the canvas paints the strokes, and :meth:`get` takes a
decode under way when painting reaches its picture. Painting stays synchronous: a tile is
never painted twice for a picture that came late.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QImage, QImageIOHandler, QImageReader

# The app downscales what it inserts to 2,048 px; a member's own build may allow more. Beyond
# this a picture is shown scaled down, which a board at any sensible zoom cannot tell.
MAX_DECODED_SIDE = 4096
DEFAULT_BUDGET = 512 << 20
# One worker thread: the UI thread keeps the other core (two vCPUs here, likely siblings of
# one physical core: two decoders slowed the tiles' painting more than they saved).
DECODERS = 1
# A picture shown at less than this share of its pixels is painted from a copy scaled to the
# size it covers: smooth resampling of all its pixels at every tile it meets cost a board of
# 50 pictures ~250 ms of its first paint, fitted in view (benchmarks/bench_canvas.py).
SCALE_BELOW = 0.75

BlobSource = Callable[[bytes], bytes | None]


def _reader(data: bytes) -> tuple[QImageReader, QBuffer]:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    reader.setAutoTransform(True)  # a phone's JPEG shows as taken (EXIF orientation)
    return reader, buffer  # the buffer must live as long as the reader


def picture_size(data: bytes) -> tuple[int, int] | None:
    """A picture's size in pixels as shown, from its header (nothing decoded); None if it
    is not a picture Qt reads."""
    reader, _buffer = _reader(data)
    size = reader.size()
    if not size.isValid() or size.width() <= 0 or size.height() <= 0:
        return None
    turned = QImageIOHandler.Transformation.TransformationRotate90
    if reader.transformation() & turned:  # a phone's portrait JPEG: shown turned upright
        return size.height(), size.width()
    return size.width(), size.height()


def decode_picture(data: bytes, max_side: int = MAX_DECODED_SIDE) -> QImage | None:
    """The picture in ``data`` (PNG, JPEG), at most ``max_side`` px on a side; None if Qt
    cannot decode it. Safe on any thread (QImage and its readers are reentrant)."""
    reader, _buffer = _reader(data)
    size = reader.size()
    if not size.isValid() or size.width() <= 0 or size.height() <= 0:
        return None
    longest = max(size.width(), size.height())
    if longest > max_side:
        scale = max_side / longest
        reader.setScaledSize(
            QSize(max(1, round(size.width() * scale)), max(1, round(size.height() * scale)))
        )
    image = reader.read()
    if image.isNull():
        return None
    return image


def smoothly_scaled(image: QImage, width: int, height: int) -> QImage:
    """``image`` resampled to ``width`` x ``height`` pixels, smoothly."""
    return image.scaled(
        width,
        height,
        Qt.AspectRatioMode.IgnoreAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )


def encode_picture(image: QImage, form: str = "PNG", quality: int = -1) -> bytes:
    """``image`` encoded as ``form`` ("PNG", "JPEG"; ``quality`` 0-100 or -1 for Qt's
    default); ValueError if Qt cannot."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # The binding takes the format as str; its stub says bytes, which it refuses at run time.
    if not image.save(buffer, form, quality):  # type: ignore[call-overload]
        raise ValueError(f"Qt could not encode the picture as {form}")
    buffer.close()
    return bytes(data.data())


class Pictures:
    """The decoded picture of each blob a board holds, by digest, decoded on first use."""

    def __init__(self, blob: BlobSource, budget: int = DEFAULT_BUDGET) -> None:
        self._blob = blob
        self._budget = budget
        self._decoded: OrderedDict[bytes, QImage | None] = OrderedDict()
        # Copies scaled to the device pixels they cover, by (digest, width, height).
        self._scaled: OrderedDict[tuple[bytes, int, int], QImage] = OrderedDict()
        self._bytes = 0
        # Decodes under way, with what each will hold (by its header), counted against the
        # budget until painting takes it: so that prefetches for one board after another (a
        # replay's jumps) cannot pile up decodes nobody painted.
        self._decoding: dict[bytes, tuple[Future[QImage | None], int]] = {}
        self._workers: ThreadPoolExecutor | None = None
        self.decodes = 0  # for tests and benchmarks: how often bytes were decoded

    def prefetch(self, digests: Iterable[bytes]) -> None:
        """Start decoding these pictures on worker threads, as many as half the budget
        holds by their headers' sizes (the rest is decoded when painted)."""
        room = self._budget // 2 - self._bytes - sum(cost for _, cost in self._decoding.values())
        for digest in digests:
            if digest in self._decoded or digest in self._decoding:
                continue
            data = self._blob(digest)
            size = None if data is None else picture_size(data)
            if data is None or size is None:
                continue
            cost = 4 * min(size[0], MAX_DECODED_SIDE) * min(size[1], MAX_DECODED_SIDE)
            room -= cost
            if room < 0:
                break
            if self._workers is None:
                self._workers = ThreadPoolExecutor(DECODERS, thread_name_prefix="pictures")
            self._decoding[digest] = (self._workers.submit(decode_picture, data), cost)

    def get(self, digest: bytes, covers: tuple[float, float] | None = None) -> QImage | None:
        """The picture of blob ``digest``; None while its bytes have not arrived or if they
        are not a picture Qt can decode (painted as a frame). ``covers``: the device pixels
        it will be painted over (width, height); a picture much larger is given scaled down
        to that, smoothly, once per size."""
        full = self._full(digest)
        if full is None or covers is None:
            return full
        factor = max(covers[0] / full.width(), covers[1] / full.height())
        if factor >= SCALE_BELOW:
            return full
        width = max(1, math.ceil(full.width() * factor))
        height = max(1, math.ceil(full.height() * factor))
        key = (digest, width, height)
        scaled = self._scaled.get(key)
        if scaled is not None:
            self._scaled.move_to_end(key)
            return scaled
        scaled = smoothly_scaled(full, width, height)
        self._scaled[key] = scaled
        self._kept(scaled)
        return scaled

    def _full(self, digest: bytes) -> QImage | None:
        if self._blob(digest) is None:
            # Not on the board shown (a replay moved back to before its bytes arrived):
            # painted as a frame, as it was then, though its decoded picture is kept.
            return None
        if digest in self._decoded:
            self._decoded.move_to_end(digest)
            return self._decoded[digest]
        decoding = self._decoding.pop(digest, None)
        if decoding is not None:
            image = decoding[0].result()  # mostly done: the strokes under it took longer
        else:
            data = self._blob(digest)
            assert data is not None  # checked above
            image = decode_picture(data)
        self.decodes += 1
        self._decoded[digest] = image
        self._kept(image)
        return image

    def _kept(self, image: QImage | None) -> None:
        """Count ``image`` in; let the least recently used go, scaled copies first, while
        over the budget (never the picture just kept)."""
        self._bytes += _cost(image)
        while self._bytes > self._budget and len(self._scaled) > 1:
            _, dropped = self._scaled.popitem(last=False)
            self._bytes -= _cost(dropped)
        while self._bytes > self._budget and len(self._decoded) > 1:
            _, full = self._decoded.popitem(last=False)
            self._bytes -= _cost(full)



def _cost(image: QImage | None) -> int:
    return 0 if image is None else image.sizeInBytes()
