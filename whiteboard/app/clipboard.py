"""Copy, cut, paste and duplicate (issue 20, point 5): the Edit menu's clipboard actions.

A copy puts the selection on the system clipboard three ways: our own objects
(``CLIP_MIME``, whiteboard/board/clip.py), for a paste into this board or another one; a PNG
and an SVG of just those objects, for other applications; and the text of any text
objects. A paste makes new drawings of our objects, or a text object of plain text, centred
under the pointer (the view's centre if the pointer is elsewhere), sent as one action and
selected. Duplicate (Ctrl+D) copies the selection beside itself without the clipboard.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QMimeData, QObject, QRectF
from PySide6.QtGui import QAction, QCursor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QWidget

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.export import render_image, svg_bytes
from whiteboard.app.image_insert import ImageInsert
from whiteboard.app.render import text_box
from whiteboard.board import Board, BoardObject, Text
from whiteboard.board.clip import (
    CLIP_MIME,
    ClipError,
    ClipOp,
    bounds_of,
    decode_clip,
    encode_clip,
    placed,
    shown,
    text_that_fits,
)

DUPLICATE_OFFSET = 20.0  # board units right and down of the original
SVG_MIME = "image/svg+xml"


class BoardClipboard(QObject):
    """The clipboard actions of one window: its ``canvas``, the ``board`` it shows, and how
    it ``tell``s the person something went wrong."""

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
        self.copy_action = self._action("&Copy", QKeySequence.StandardKey.Copy, self.copy)
        self.cut_action = self._action("Cu&t", QKeySequence.StandardKey.Cut, self.cut)
        self.paste_action = self._action("&Paste", QKeySequence.StandardKey.Paste, self.paste)
        self.duplicate_action = self._action("&Duplicate", "Ctrl+D", self.duplicate)
        # Pictures from files, drops and the clipboard (File > Insert image...).
        self.images = ImageInsert(window, canvas, board, tell)

    def _action(self, text: str, keys: QKeySequence.StandardKey | str, slot: object) -> QAction:
        action = QAction(text, self._window)
        action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _=False: slot())  # type: ignore[operator]
        self._window.addAction(action)  # shortcuts work with the menu bar hidden too
        return action

    @property
    def actions(self) -> list[QAction]:
        return [self.cut_action, self.copy_action, self.paste_action, self.duplicate_action]

    # -- what is selected ---------------------------------------------------------------------

    def _selected(self) -> list[BoardObject]:
        """The selected objects as the board has them, in board order (pending drawings,
        not delivered yet, are not copied: they have no place in the order yet)."""
        board = self._board()
        chosen = set(self._canvas.selection)
        return [obj for obj in board.objects() if obj.id in chosen]

    # -- the actions --------------------------------------------------------------------------

    def copy(self) -> bool:
        objects = self._selected()
        if not objects:
            return False
        try:
            ops = shown(objects, self._board().blob)
            clip = encode_clip(ops)
        except ClipError as exc:
            self._tell(f"Could not copy: {exc}")
            return False
        mime = QMimeData()
        mime.setData(CLIP_MIME, clip)
        picture, area = _picture_of(ops)
        mime.setImageData(render_image(picture, area))
        mime.setData(SVG_MIME, svg_bytes(picture, area)[0])
        texts = [op.text for op in ops if isinstance(op, Text)]
        if texts:
            mime.setText("\n".join(texts))
        clipboard = QGuiApplication.clipboard()
        clipboard.setMimeData(mime)
        return True

    def cut(self) -> None:
        if self._may_edit() and self.copy():
            self._canvas.delete_selection()

    def paste(self) -> None:
        if not self._may_edit():
            return
        mime = QGuiApplication.clipboard().mimeData()
        if mime is None:
            return
        canvas = self._canvas
        try:
            if mime.hasFormat(CLIP_MIME):
                ops = decode_clip(bytes(mime.data(CLIP_MIME).data()))
                self.images.send(placed(ops, self._where(), canvas.next_op_id, text_box))
            elif self.images.paste(mime, self._where()):
                pass  # a picture (a copied file, a screenshot): before the text it may carry
            elif mime.hasText() and mime.text().strip():
                self._paste_text(mime.text())
        except ClipError as exc:
            self._tell(f"Could not paste: {exc}")

    def duplicate(self) -> None:
        if not self._may_edit():
            return
        objects = self._selected()
        if not objects:
            return
        try:
            ops = shown(objects)
            x0, y0, x1, y1 = bounds_of(ops, text_box)
            centre = ((x0 + x1) / 2 + DUPLICATE_OFFSET, (y0 + y1) / 2 + DUPLICATE_OFFSET)
            self.images.send(placed(ops, centre, self._canvas.next_op_id, text_box))
        except ClipError as exc:
            self._tell(f"Could not duplicate: {exc}")

    # -- helpers ------------------------------------------------------------------------------

    def _may_edit(self) -> bool:
        return not self._canvas.is_read_only()

    def _where(self) -> tuple[float, float]:
        """Under the pointer if it is over the board, else the middle of what is shown."""
        canvas = self._canvas
        at = canvas.mapFromGlobal(QCursor.pos())
        if not canvas.rect().contains(at):
            at = canvas.rect().center()
        return canvas.view.to_board(at.x(), at.y())

    def _paste_text(self, text: str) -> None:
        canvas = self._canvas
        x, y = self._where()
        op_id = canvas.next_op_id()

        def text_object(words: str) -> Text:
            return Text(op_id, x, y, words or " ", canvas.colour, canvas.font_size)

        cut = text_that_fits(text, text_object, canvas.max_payload)
        if not cut.strip():
            raise ClipError("not even one character of the text fits in a drawing")
        self.images.send([text_object(cut)])
        if len(cut) < len(text):
            self._tell(
                f"Pasted the first {len(cut):,} characters of {len(text):,}: one text object "
                "holds no more."
            )


def _picture_of(ops: Sequence[ClipOp]) -> tuple[Board, QRectF]:
    """The drawings alone on a board of their own, and the area around them: what a picture
    of the selection shows (not what else lies under it)."""
    picture = Board()
    for index, op in enumerate(ops, start=1):
        picture.apply((index,), op)
    x0, y0, x1, y1 = bounds_of(ops, text_box)
    margin = 4.0
    return picture, QRectF(x0 - margin, y0 - margin, x1 - x0 + 2 * margin, y1 - y0 + 2 * margin)
