"""What the window shows of the session state (whiteboard/app/session_state.py): a label that
fits the status bar, and a banner over the canvas that says why the canvas does not take
drawing, or what is happening, and offers what to do when the session has ended."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from whiteboard.app.session_state import SessionLink, SessionState

BANNER_MARGIN = 12  # pixels between the banner and the canvas's edges
BANNER_MAX_WIDTH = 640
# Colours of the state's word in the status bar: ok, in progress, over.
LINK_COLOURS = {
    SessionLink.JOINING: "#8a6d00",
    SessionLink.CONNECTED: "#2e7d32",
    SessionLink.RECONNECTING: "#b35c00",
    SessionLink.LEAVING: "#8a6d00",
    SessionLink.ENDED: "#c62828",
}


class ElidedLabel(QLabel):
    """A one-line label that never asks for more room than it gets: a text too long for its
    width ends in "…", and the whole text is in its tooltip. A drop-in for a QLabel:
    ``setText`` takes and ``text`` gives the whole text; ``shown_text`` is what is painted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setMinimumWidth(40)

    def setText(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()
        self.updateGeometry()  # its size hint follows the whole text

    def text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        return super().text()

    def minimumSizeHint(self) -> QSize:
        return QSize(40, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        width = QFontMetrics(self.font()).horizontalAdvance(self._full) + 8
        return QSize(width, super().sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        metrics = QFontMetrics(self.font())
        shown = metrics.elidedText(self._full, Qt.TextElideMode.ElideRight, max(0, self.width()))
        super().setText(shown)


class SessionBanner(QFrame):
    """A panel at the top of the canvas: the session state in full words, and, once the
    session has ended, what can be done with the board. Hidden while connected."""

    def __init__(
        self,
        canvas: QWidget,
        host_new: Callable[[], None],
        save: Callable[[], object],  # its result (saved or not) is not needed here
        join_again: Callable[[], None],
    ) -> None:
        super().__init__(canvas)
        self.setObjectName("session-banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setStyleSheet(
            "#session-banner { background: rgba(255, 248, 225, 235);"
            " border: 1px solid #c9a227; border-radius: 6px; }"
        )
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold;")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.host_button = QPushButton("Host a new board with this board")
        self.host_button.setToolTip(
            "Start a new session on this group, hosted by you, from this board"
        )
        self.save_button = QPushButton("Save board…")
        self.join_button = QPushButton("Join again")
        self.join_button.setToolTip(
            "Join the same session again and take the board it has (save yours first to keep it)"
        )
        self._host_available = True
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 4, 0, 0)
        for button in (self.host_button, self.save_button, self.join_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.action_row = QWidget()
        self.action_row.setLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.message)
        layout.addWidget(self.action_row)
        self.host_button.clicked.connect(lambda _=False: host_new())
        self.save_button.clicked.connect(lambda _=False: save())
        self.join_button.clicked.connect(lambda _=False: join_again())
        canvas.installEventFilter(self)  # follow the canvas's size
        self.hide()

    def set_host_available(self, available: bool) -> None:
        """Whether "host a new board" means anything (the transport has a hosting role)."""
        self._host_available = available
        self.host_button.setVisible(available)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize:
            self.place()
        return False

    def show_state(self, state: SessionState, viewer_note: str = "") -> None:
        """Show ``state`` (hidden when connected, unless ``viewer_note`` says why this member
        cannot draw)."""
        if state.link is SessionLink.CONNECTED and not viewer_note:
            self.hide()
            return
        if state.link is SessionLink.CONNECTED:
            self.title.setText("Viewing")
            self.message.setText(viewer_note)
        else:
            self.title.setText(state.headline)
            message = state.detail
            if state.link is SessionLink.JOINING:
                message += " You can draw once you are in."
            elif state.link is SessionLink.ENDED:
                message += (
                    " Your board stays here: save it, host a new board with it, or join again"
                    " (and take the board the session has then)."
                    if self._host_available
                    else " Your board stays here: save it, or join again (and take the board"
                    " the session has then)."
                )
            self.message.setText(message.strip())
        self.action_row.setVisible(state.link is SessionLink.ENDED)
        self.place()
        self.show()
        self.raise_()

    def place(self) -> None:
        """Across the top of the canvas, as wide as it allows."""
        canvas = self.parentWidget()
        if canvas is None:
            return
        width = min(BANNER_MAX_WIDTH, max(120, canvas.width() - 2 * BANNER_MARGIN))
        self.setFixedWidth(width)
        # Summed by hand: the word-wrapped message's height is the one at this width (the
        # layout's own answer comes before the message has its width).
        layout = self.layout()
        margins = layout.contentsMargins() if layout is not None else None
        inner = width - (margins.left() + margins.right() if margins else 0)
        parts = [self.title.sizeHint().height(), self.message.heightForWidth(inner)]
        if not self.action_row.isHidden():
            parts.append(self.action_row.sizeHint().height())
        spacing = layout.spacing() if layout is not None else 0
        frame = (margins.top() + margins.bottom() if margins else 0) + 2 * self.frameWidth()
        self.setFixedHeight(sum(parts) + spacing * (len(parts) - 1) + frame)
        self.move((canvas.width() - width) // 2, BANNER_MARGIN)


class SessionStateView:
    """Everything that shows the session state: a coloured word in the status bar (the whole
    sentence in its tooltip), the sentence atop the members panel, the banner over the canvas
    unless connected; and notices (failures) beside the word, fitted to their room, gone after
    ``notice_ms`` or when the state changes."""

    def __init__(
        self,
        status_bar: QStatusBar,
        banner: SessionBanner,
        show_in_panel: Callable[[str], None],
        notice_ms: int,
    ) -> None:
        self.label = QLabel()
        self.notice = ElidedLabel()
        self.banner = banner
        self._show_in_panel = show_in_panel
        self._notice_ms = notice_ms
        self._timer = QTimer(self.notice)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self.notice.setText(""))
        status_bar.addWidget(self.notice, 1)
        self.shown: SessionState | None = None

    def show(self, state: SessionState, viewer: bool) -> bool:
        """Show ``state``; True if where the member stands changed (its link)."""
        before, self.shown = self.shown, state
        colour = LINK_COLOURS[state.link]
        self.label.setText(f"<span style='color:{colour}'>●</span> {state.headline}")
        self.label.setToolTip(state.text())
        self._show_in_panel(state.text())
        viewing = viewer and state.link is SessionLink.CONNECTED
        note = "You joined as a viewer: you see the board but cannot draw." if viewing else ""
        self.banner.show_state(state, note)
        links = (before.link if before is not None else state.link, state.link)
        changed = links[0] is not links[1]
        if changed and (SessionLink.RECONNECTING in links or SessionLink.ENDED in links):
            # The state's own sentence says why now, or the trouble is over: a notice about
            # it would repeat it or be stale. (One said while joining, "starting with an
            # empty board", stays on after joining.)
            self.notice.setText("")
        return changed

    def tell(self, text: str) -> None:
        self.notice.setText(text)
        self._timer.start(self._notice_ms)


__all__ = ["LINK_COLOURS", "ElidedLabel", "SessionBanner", "SessionStateView"]
