"""Pictures put on the board (issue 20, point 6): pasted, dropped, or inserted from a file.

A picture is decoded by Qt (never trusted: a file or the clipboard may hold anything) and
brought within the limits a person can set: at most ``max_side`` pixels on its long side and
``max_bytes`` encoded (2,048 px and 2 MiB by default). A PNG or JPEG already within them is
sent as it is, byte for byte, so that the same picture pasted twice is the same blob and
travels once; anything else is scaled down and encoded again (PNG, or JPEG for a picture
without transparency that PNG cannot fit). It goes as a BLOB (unless the board has those
bytes already) and an IMAGE showing it under the pointer, as large as it is in pixels but
never larger than most of the view: one action, selected afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import (
    QAction,
    QDragEnterEvent,
    QDropEvent,
    QImage,
)
from PySide6.QtWidgets import QFileDialog, QWidget

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.pictures import (
    decode_picture,
    encode_picture,
    picture_size,
    smoothly_scaled,
)
from whiteboard.app.tools import ToolKind
from whiteboard.board import Blob, Board, Image, Op, encode_op
from whiteboard.board.ops import MAX_BLOB_BYTES, image_format

DEFAULT_MAX_SIDE = 2048
DEFAULT_MAX_BYTES = 2 << 20
MAX_FILE_BYTES = 64 << 20  # a file larger than this is not read at all
VIEW_SHARE = 0.8  # a large picture is shown at most this share of the view
FILE_FILTER = "Pictures (*.png *.jpg *.jpeg *.gif *.bmp *.webp);;All files (*)"
_JPEG_QUALITIES = (90, 80, 70)
_SHRINK = 0.75  # each try that does not fit scales the picture by this


class ImageProblem(ValueError):
    """A picture that cannot be put on the board; the message says why, for a person."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A picture's bytes as they will travel, and its size in pixels."""

    data: bytes
    width: int
    height: int


def prepare_image(
    data: bytes, max_side: int = DEFAULT_MAX_SIDE, max_bytes: int = DEFAULT_MAX_BYTES
) -> Prepared:
    """``data`` (any picture Qt reads) within ``max_side`` px and ``max_bytes``; the bytes
    themselves if they already are a PNG or JPEG within both. ImageProblem otherwise."""
    max_bytes = min(max_bytes, MAX_BLOB_BYTES)
    size = picture_size(data)
    if size is None:
        raise ImageProblem("it is not a picture this app can read (PNG, JPEG, GIF, BMP, WebP)")
    width, height = size
    fits = max(width, height) <= max_side and len(data) <= max_bytes
    if fits and image_format(data) is not None:
        return Prepared(bytes(data), width, height)
    image = decode_picture(data, max_side)
    if image is None:
        raise ImageProblem("the picture is damaged or too large to decode")
    return fit_image(image, max_side, max_bytes)


def fit_image(image: QImage, max_side: int, max_bytes: int) -> Prepared:
    """``image`` encoded within ``max_side`` px and ``max_bytes``, scaled down as needed."""
    longest = max(image.width(), image.height())
    if longest > max_side:
        image = _scaled(image, max_side / longest)
    for _ in range(12):
        for encoded in _encodings(image):
            if len(encoded) <= max_bytes:
                return Prepared(encoded, image.width(), image.height())
        if min(image.width(), image.height()) < 16:
            break
        image = _scaled(image, _SHRINK)
    raise ImageProblem(f"it cannot be made to fit in {max_bytes // 1024:,} KiB")


def _scaled(image: QImage, factor: float) -> QImage:
    return smoothly_scaled(
        image, max(1, round(image.width() * factor)), max(1, round(image.height() * factor))
    )


def _encodings(image: QImage) -> Iterable[bytes]:
    """PNG first (exact: screenshots, drawings), then JPEG for a picture without
    transparency (photos), best quality first."""
    yield encode_picture(image)
    if not image.hasAlphaChannel():
        for quality in _JPEG_QUALITIES:
            yield encode_picture(image, "JPEG", quality)


def picture_bytes(mime: QMimeData) -> bytes | None:
    """The picture on the clipboard or in a drop: a file's or the encoded bytes if it has
    them (kept as they are), else Qt's image of it as PNG; None if it holds none."""
    for url in mime.urls() if mime.hasUrls() else ():
        if url.isLocalFile():
            return read_picture_file(Path(url.toLocalFile()))
    for form in ("image/png", "image/jpeg"):
        if mime.hasFormat(form):
            return bytes(mime.data(form).data())
    if mime.hasImage():
        image = QImage(mime.imageData())
        if not image.isNull():
            return encode_picture(image)
    return None


def read_picture_file(path: Path) -> bytes:
    """The bytes of a picture file, ImageProblem (saying which) if it cannot be read."""
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            raise ImageProblem(f"{path.name} is {size / (1 << 20):.0f} MiB, too large a file")
        return path.read_bytes()
    except OSError as exc:
        raise ImageProblem(f"{path.name} could not be read ({exc.strerror})") from None


class ImageInsert(QObject):
    """Insert image… (File menu), pasting a picture and dropping one on the board, for one
    window's ``canvas`` showing ``board``; problems are ``tell``-ed to the person."""

    def __init__(
        self,
        window: QWidget,
        canvas: BoardCanvas,
        board: Callable[[], Board],
        tell: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._canvas = canvas
        self._board = board
        self._tell = tell
        # (pixels on the long side, bytes): the person's settings, asked at each insert.
        self.limits: Callable[[], tuple[int, int]] = lambda: (DEFAULT_MAX_SIDE, DEFAULT_MAX_BYTES)
        self.insert_action = QAction("Insert &image…", window)
        self.insert_action.setShortcut("Ctrl+Shift+I")
        self.insert_action.triggered.connect(lambda _=False: self.ask_insert())
        window.addAction(self.insert_action)
        canvas.setAcceptDrops(True)
        canvas.installEventFilter(self)

    # -- the ways in ----------------------------------------------------------------------------

    def ask_insert(self) -> None:
        if self._canvas.is_read_only():
            return
        name, _ = QFileDialog.getOpenFileName(self._window, "Insert image", "", FILE_FILTER)
        if name:
            self.insert_file(Path(name))

    def insert_file(self, path: Path, at: tuple[float, float] | None = None) -> bool:
        try:
            return self.insert_bytes(read_picture_file(path), at)
        except ImageProblem as exc:
            self._tell(f"Could not insert {path.name}: {exc}")
            return False

    def paste(self, mime: QMimeData, at: tuple[float, float]) -> bool:
        """Put the picture ``mime`` holds at board point ``at``; False if it holds none."""
        try:
            data = picture_bytes(mime)
            if data is None:
                return False
            self.insert_bytes(data, at)
        except ImageProblem as exc:
            self._tell(f"Could not paste the picture: {exc}")
        return True

    def insert_bytes(self, data: bytes, at: tuple[float, float] | None = None) -> bool:
        """Put a picture on the board centred on ``at`` (None: the middle of the view), as
        one action. ImageProblem if it cannot be read or made to fit."""
        canvas = self._canvas
        if canvas.is_read_only():
            return False
        prepared = prepare_image(data, *self.limits())
        blob = Blob(canvas.next_op_id(), prepared.data)
        if len(encode_op(blob)) > canvas.max_message:
            raise ImageProblem(
                f"this session's transport carries at most {canvas.max_message // 1024:,} KiB "
                f"at once, and the picture is {len(prepared.data) // 1024:,} KiB (RMP and MTP "
                "carry pictures of up to a few MiB)"
            )
        view = canvas.view
        if at is None:
            at = view.to_board(canvas.width() / 2, canvas.height() / 2)
        room_w = VIEW_SHARE * canvas.width() / view.scale
        room_h = VIEW_SHARE * canvas.height() / view.scale
        scale = min(1.0, room_w / prepared.width, room_h / prepared.height)
        width, height = prepared.width * scale, prepared.height * scale
        image = Image(
            canvas.next_op_id(), blob.digest, at[0] - width / 2, at[1] - height / 2, width, height
        )
        self.send([blob, image])
        return True

    def send(self, ops: Iterable[Op]) -> None:
        """``ops`` as one action, leaving out the BLOBs whose bytes the board has (or that
        are on their way), and the drawings selected afterwards."""
        canvas = self._canvas
        board = self._board()
        sent: list[Op] = []
        for op in ops:
            if isinstance(op, Blob) and (
                board.blob(op.digest) is not None or canvas.pending_blob(op.digest) is not None
            ):
                continue
            canvas.send(op)
            sent.append(op)
        drawn = [op.id for op in sent if not isinstance(op, Blob)]
        canvas.end_gesture(drawn)  # undone as one, the bytes left: they show nothing
        canvas.set_tool(ToolKind.SELECT)
        canvas.set_selection(drawn)

    # -- dropping -------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            assert isinstance(event, QDragEnterEvent | QDropEvent)
            mime = event.mimeData()
            if not self._canvas.is_read_only() and (mime.hasImage() or mime.hasUrls()):
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            point = event.position()
            at = self._canvas.view.to_board(point.x(), point.y())
            if self.paste(event.mimeData(), at):
                event.acceptProposedAction()
            return True
        return super().eventFilter(watched, event)
