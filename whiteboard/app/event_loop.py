"""Running Qt's event loop for one window, the live board's or a replay's."""

from __future__ import annotations

import signal

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget


def run_until_closed(app: QApplication, window: QWidget) -> int:
    """Run Qt until ``window`` is closed. Ctrl+C in the terminal closes the window (which
    leaves the session properly). The handler may run between any two bytecodes (inside the
    transport's core, say), so it only raises a flag; a ticker, which also gives Python control
    a few times a second so that the handler runs at all, closes the window from the event
    loop."""
    interrupted: list[bool] = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    ticker = QTimer()
    ticker.timeout.connect(lambda: window.close() if interrupted else None)
    ticker.start(250)
    try:
        return app.exec()
    finally:
        ticker.stop()
        signal.signal(signal.SIGINT, previous)
