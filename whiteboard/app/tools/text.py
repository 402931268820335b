"""Text labels: a click opens an editor on the board where the label's top-left corner will
be; Enter, a click elsewhere, or choosing another tool commits it as one Text op; Escape
drops it. The editor is a frameless QLineEdit over the canvas, in the label's font and
colour at the current zoom, so what one types looks like what will be drawn.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import QApplication, QLineEdit, QToolTip, QWidget

from whiteboard.app.render import colour, text_font
from whiteboard.app.strokes import clamp_point
from whiteboard.app.tools.base import BaseTool, Pointer, ToolHost, ToolKind
from whiteboard.board import OpId, Text, encode_op
from whiteboard.board.ops import MAX_TEXT_CHARS

# The largest id an op of ours may have: a text that fits with it fits with any.
_WIDEST_ID = OpId(2**32 - 1, 2**63 - 1)


class TextEditor(QLineEdit):
    """The in-canvas editor: Enter commits (QLineEdit's returnPressed), Escape cancels."""

    cancelled = Signal()

    def __init__(self, parent: QWidget, fits: Callable[[str], bool] | None = None) -> None:
        super().__init__(parent)
        # Whether a text still fits in one drawing (one datagram): typing or pasting past
        # that is refused here, where the person sees it, not when the drawing is sent.
        self._fits = fits
        self._kept = ("", 0)  # the last text that fitted, and where the cursor was
        self.setFrame(False)
        self.setMaxLength(MAX_TEXT_CHARS)
        self.setTextMargins(0, 0, 0, 0)
        self.setContentsMargins(0, 0, 0, 0)
        # Transparent: the board shows through around the letters, as it will once drawn.
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setStyleSheet("QLineEdit { background: transparent; padding: 0px; }")
        self.textChanged.connect(self._check)
        self.textChanged.connect(self.fit)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            event.accept()
            self.cancelled.emit()
            return
        super().keyPressEvent(event)

    def _check(self, text: str) -> None:
        if self._fits is None or self._fits(text):
            self._kept = (text, self.cursorPosition())
            return
        kept, cursor = self._kept
        self.blockSignals(True)
        self.setText(kept)
        self.setCursorPosition(cursor)
        self.blockSignals(False)
        QApplication.beep()
        QToolTip.showText(
            self.mapToGlobal(QPoint(0, self.height())),
            f"A text holds no more here ({len(kept):,} characters): start another one",
            self,
        )

    def fit(self) -> None:
        """As wide as the text and a little more, so it never scrolls."""
        metrics = self.fontMetrics()
        width = metrics.horizontalAdvance(self.text() or " ") + metrics.averageCharWidth() * 2
        self.resize(max(width, 20), metrics.height() + 4)


class TextTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind = ToolKind.TEXT) -> None:
        super().__init__(host, kind)
        self.editor: TextEditor | None = None
        self._at = (0.0, 0.0)
        self._colour = 0
        self._font_size = 1.0

    @property
    def active(self) -> bool:
        return self.editor is not None

    def press(self, pointer: Pointer) -> None:
        if self.editor is not None:
            # A click elsewhere commits; the next click places a new label.
            self.commit()
            return
        self.open_editor(pointer.x, pointer.y)

    def open_editor(self, x: float, y: float) -> TextEditor:
        self._at = clamp_point(x, y)
        self._colour = self.host.colour
        self._font_size = self.host.font_size
        x, y, colour_, size, limit = *self._at, self._colour, self._font_size, self.host.max_payload

        def fits(text: str) -> bool:
            op = Text(_WIDEST_ID, x, y, text or " ", colour_, size)
            return len(encode_op(op)) <= limit

        editor = TextEditor(self.host.widget(), fits)
        editor.returnPressed.connect(self.commit)
        editor.cancelled.connect(self.cancel)
        self.editor = editor
        self._place()
        editor.show()
        editor.setFocus(Qt.FocusReason.MouseFocusReason)
        return editor

    def _place(self) -> None:
        editor = self.editor
        if editor is None:
            return
        view = self.host.view
        font = text_font(self._font_size * view.scale)
        editor.setFont(font)
        palette = editor.palette()
        palette.setColor(QPalette.ColorRole.Text, colour(self._colour))
        editor.setPalette(palette)
        wx, wy = view.to_widget(*self._at)
        editor.move(round(wx), round(wy))
        editor.fit()

    def view_changed(self) -> None:
        self._place()

    def commit(self) -> None:
        """Send what was typed (nothing if it is empty) and close the editor."""
        editor = self.editor
        if editor is None:
            return
        text = editor.text()
        self._close()
        if text.strip():
            x, y = self._at
            op = Text(self.host.next_op_id(), x, y, text, self._colour, self._font_size)
            self.host.send(op)
            self.host.end_gesture([op.id])

    def cancel(self) -> None:
        self._close()

    def deactivate(self) -> None:
        self.commit()

    def _close(self) -> None:
        editor, self.editor = self.editor, None
        if editor is None:
            return
        editor.hide()
        # Not deleted at once: this may run inside the editor's own signal.
        editor.deleteLater()
        self.host.widget().setFocus(Qt.FocusReason.OtherFocusReason)
