"""Help ▸ About: which version this is (the one ``whiteboard --version`` prints) and what it
runs on, for a person reporting a problem."""

from __future__ import annotations

import platform
from collections.abc import Callable
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtWidgets import QMainWindow, QMessageBox

from whiteboard import __version__
from whiteboard.app.identity import APP_NAME, app_icon
from whiteboard.desktop import assets


def about_text() -> str:
    return (
        f"<h3>{APP_NAME} {__version__}</h3>"
        "<p>A shared whiteboard for your local network, with no server: the computers talk "
        "over IP multicast, through RMP (INRIA RR-2100) or MTP (RFC 1301).</p>"
        f"<p>Python {platform.python_version()} · Qt (PySide6) {pyside_version} · "
        f"{platform.system()} {platform.machine()}</p>"
    )


def add_help_menu(window: QMainWindow, replay_sample: Callable[[], object]) -> None:
    """The window's Help menu: a sample session to replay, and the About box."""
    help_menu = window.menuBar().addMenu("&Help")
    sample = help_menu.addAction("&Replay a sample session")
    sample.setToolTip("A short recorded session of three people drawing, to try replay on")
    sample.triggered.connect(replay_sample)
    help_menu.addSeparator()
    about = help_menu.addAction(f"&About {APP_NAME}")
    about.triggered.connect(lambda: show_about(window))


def sample_recording() -> Path:
    """The shipped sample session's first member's log (a real file in a wheel's install, an
    editable one and the bundle alike)."""
    return Path(str(assets.samples()[0]))


def show_about(window: QMainWindow) -> QMessageBox:
    box = QMessageBox(window)
    box.setWindowTitle(f"About {APP_NAME}")
    box.setIconPixmap(app_icon().pixmap(96, 96))
    box.setText(about_text())
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.open()  # window-modal, not blocking: the session goes on behind it
    return box
