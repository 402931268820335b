"""Handing out a view code (issue 21 point 2, docs/security.md "Viewers"): whoever has it can
watch a private session's board, and nothing they draw is shown to anyone. A drawer copies it
from the Session menu or the members panel and passes it on as they would a passphrase."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QMainWindow

from whiteboard.security import SessionKey

# Short enough for the status bar of a window of the default size (its tooltip says more).
COPIED = "View code copied: whoever has it can watch this board, not draw on it"
NOT_PRIVATE = "Only a private session has a view code: join with a passphrase to make one"
# The keys' NO_VIEWERS, short enough for the status bar.
NO_VIEWERS_SHORT = "No view code: this session was started without 'Let people watch'"
VIEW_CODE_TIP = (
    "Copy a code for people who may watch this board but not draw on it: they type it "
    "where the passphrase goes"
)


def copy_view_code(window: QMainWindow, key: SessionKey | None, message_ms: int) -> str | None:
    """Put the session's view code on the clipboard and say so; None (and why) if this
    session has none to give."""
    if key is None:
        window.statusBar().showMessage(NOT_PRIVATE, message_ms)
        return None
    if not key.viewers:
        window.statusBar().showMessage(NO_VIEWERS_SHORT, message_ms)
        return None
    code = key.view_code()
    QApplication.clipboard().setText(code)
    window.statusBar().showMessage(COPIED, message_ms)
    return code
