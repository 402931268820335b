"""Text labels: a click opens an editor on the board where the label's top-left corner will
be; Enter, a click elsewhere, or choosing another tool commits it as one Text op; Shift+Enter
starts a new line; Escape drops it. The editor is a frameless text box over the canvas, in
the label's font and colour at the current zoom, so what one types looks like what will be
drawn.

A click on a text already on the board with this tool, or a double-click on it with the
select tool (whiteboard/app/canvas.py ``edit_text``), edits it in place (issue 20, point 3):
the editor opens on its words, where it is shown, and the label itself is hidden meanwhile.
What is committed is one TextEdit op (its words and font size); emptied, it is erased.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication, QFrame, QPlainTextEdit, QToolTip, QWidget

from whiteboard.app.render import colour, text_font
from whiteboard.app.scene_index import Item
from whiteboard.app.strokes import clamp_point
from whiteboard.app.tools.base import HIT_TOLERANCE, BaseTool, Pointer, ToolHost, ToolKind
from whiteboard.board import Erase, Op, OpId, Text, TextEdit, encode_op
from whiteboard.board.geometry import linear_scale, placed_point
from whiteboard.board.ops import MAX_TEXT_CHARS

# The largest id an op of ours may have: a text that fits with it fits with any.
_WIDEST_ID = OpId(2**32 - 1, 2**63 - 1)


class TextEditor(QPlainTextEdit):
    """The in-canvas editor: Enter commits (``returnPressed``), Shift+Enter starts a new
    line, Escape cancels."""

    returnPressed = Signal()
    cancelled = Signal()

    def __init__(self, parent: QWidget, fits: Callable[[str], bool] | None = None) -> None:
        super().__init__(parent)
        # Whether a text still fits in one drawing (one datagram): typing or pasting past
        # that is refused here, where the person sees it, not when the drawing is sent.
        self._fits = fits
        self._kept = ("", 0)  # the last text that fitted, and where the cursor was
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setContentsMargins(0, 0, 0, 0)
        self.setViewportMargins(0, 0, 0, 0)
        self.document().setDocumentMargin(0)
        # Transparent: the board shows through around the letters, as it will once drawn.
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QPlainTextEdit { background: transparent; padding: 0px; }")
        self.textChanged.connect(self._check)
        self.textChanged.connect(self.fit)

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:
        self.setPlainText(text)
        self.moveCursor(QTextCursor.MoveOperation.End)

    def insert(self, text: str) -> None:
        """As a paste does: at the cursor, all of it or (if it does not fit) none."""
        self.insertPlainText(text)

    def cursorPosition(self) -> int:
        return self.textCursor().position()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_Escape:
            event.accept()
            self.cancelled.emit()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.returnPressed.emit()
            return
        super().keyPressEvent(event)

    def _check(self) -> None:
        text = self.text()
        if len(text) <= MAX_TEXT_CHARS and (self._fits is None or self._fits(text)):
            self._kept = (text, self.cursorPosition())
            return
        kept, cursor = self._kept
        self.blockSignals(True)
        self.setPlainText(kept)
        place = self.textCursor()
        place.setPosition(min(cursor, len(kept)))
        self.setTextCursor(place)
        self.blockSignals(False)
        QApplication.beep()
        QToolTip.showText(
            self.mapToGlobal(QPoint(0, self.height())),
            f"A text holds no more here ({len(kept):,} characters): start another one",
            self,
        )

    def fit(self) -> None:
        """As large as the text and a little more, so it never scrolls."""
        metrics = self.fontMetrics()
        lines = self.text().split("\n")
        width = max(metrics.horizontalAdvance(line or " ") for line in lines)
        height = metrics.lineSpacing() * len(lines)
        self.resize(max(width + metrics.averageCharWidth() * 2, 20), height + 4)
        self.verticalScrollBar().setValue(0)


class TextTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind = ToolKind.TEXT) -> None:
        super().__init__(host, kind)
        self.editor: TextEditor | None = None
        self._at = (0.0, 0.0)
        self._colour = 0
        self._font_size = 1.0
        self._editing: Text | None = None  # the text on the board being edited, as shown
        self._shown_scale = 1.0  # how much larger than its font size it is shown
        # Whether a commit goes back to the select tool (an edit begun by a double-click).
        self._back_to_select = False

    @property
    def active(self) -> bool:
        return self.editor is not None

    def press(self, pointer: Pointer) -> None:
        if self.editor is not None:
            # A click elsewhere commits; the next click places a new label.
            self.finish()
            return
        host = self.host
        item = host.scene.topmost_at(pointer.x, pointer.y, HIT_TOLERANCE / host.view.scale)
        if item is not None and isinstance(item.op, Text):
            self.edit(item)
            return
        self.open_editor(pointer.x, pointer.y)

    def edit(self, item: Item, back_to_select: bool = False) -> TextEditor:
        """Edit the text ``item`` in place (hidden meanwhile)."""
        if self.editor is not None:
            self.commit()
        assert isinstance(item.op, Text)
        shown = item.op
        self._editing = shown
        self._back_to_select = back_to_select
        self.host.set_lifted({item.id: 0.0})
        # A turned or resized text is edited upright, where its first letter is, at the size
        # it is shown; the edit keeps how it is placed.
        x, y = placed_point(shown.x, shown.y, item.dx, item.dy, item.linear)
        self._shown_scale = linear_scale(item.linear)
        editor = self.open_editor(x, y, shown.colour, shown.font_size)
        editor.setText(shown.text)
        return editor

    def open_editor(
        self, x: float, y: float, colour_: int | None = None, size: float | None = None
    ) -> TextEditor:
        self._at = clamp_point(x, y)
        self._colour = self.host.colour if colour_ is None else colour_
        self._font_size = self.host.font_size if size is None else size
        x, y, colour_, limit = *self._at, self._colour, self.host.max_payload

        def fits(text: str) -> bool:
            # A text edit of the same words is smaller: what fits as a Text fits as either.
            op = Text(_WIDEST_ID, x, y, text or " ", colour_, self._font_size)
            return len(encode_op(op)) <= limit

        editor = TextEditor(self.host.widget(), fits)
        editor.returnPressed.connect(self.finish)
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
        font = text_font(self._font_size * self._shown_scale * view.scale)
        editor.setFont(font)
        palette = editor.palette()
        palette.setColor(QPalette.ColorRole.Text, colour(self._colour))
        editor.setPalette(palette)
        wx, wy = view.to_widget(*self._at)
        editor.move(round(wx), round(wy))
        editor.fit()

    def view_changed(self) -> None:
        self._place()

    def set_font_size(self, size: float) -> None:
        """The text being typed takes this size (the tool bar's text size)."""
        self._font_size = size
        self._place()

    def commit(self) -> None:
        """Send what was typed (nothing if it is empty, or an edit that changed nothing)
        and close the editor."""
        editor = self.editor
        if editor is None:
            return
        text = editor.text()
        editing, self._editing = self._editing, None
        self._close()
        host = self.host
        op: Op
        if editing is not None:
            host.set_lifted({})
            if not text.strip():
                op = Erase(host.next_op_id(), (editing.id,))  # emptied: erased
            elif (text, self._font_size) == (editing.text, editing.font_size):
                return
            else:
                op = TextEdit(host.next_op_id(), editing.id, text, self._font_size)
        elif text.strip():
            x, y = self._at
            op = Text(host.next_op_id(), x, y, text, self._colour, self._font_size)
        else:
            return
        host.send(op)
        host.end_gesture([op.id])

    def finish(self) -> None:
        """Enter, or a click elsewhere: commit, and go back to the select tool if the edit
        began there, with the text selected."""
        editing, back = self._editing, self._back_to_select
        self.commit()
        self._back_to_select = False
        if back and editing is not None:
            self.host.set_tool(ToolKind.SELECT)
            self.host.set_selection([editing.id])

    def cancel(self) -> None:
        if self._editing is not None:
            self._editing = None
            self.host.set_lifted({})
        self._close()

    def deactivate(self) -> None:
        self.commit()

    def _close(self) -> None:
        self._shown_scale = 1.0
        editor, self.editor = self.editor, None
        if editor is None:
            return
        editor.hide()
        # Not deleted at once: this may run inside the editor's own signal.
        editor.deleteLater()
        self.host.widget().setFocus(Qt.FocusReason.OtherFocusReason)
