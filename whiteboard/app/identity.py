"""Who the app is to the desktop (issue 22): its name, its icon on every window and dialog,
and the launcher it belongs to (so that a Wayland compositor or a dock shows the launcher's
icon and groups its windows)."""

from __future__ import annotations

import sys

from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QApplication

from whiteboard.desktop import assets

APP_NAME = "Whiteboard"


def app_icon() -> QIcon:
    """The app's icon at every shipped size: Qt picks the one nearest what it draws."""
    icon = QIcon()
    for size in assets.ICON_SIZES:
        pixmap = QPixmap()
        if pixmap.loadFromData(assets.icon_png(size).read_bytes(), "PNG"):
            icon.addPixmap(pixmap)
    return icon


def application() -> QApplication:
    """The process's QApplication (made if there is none), named and with the app's icon,
    which every window and dialog then shows unless it sets its own."""
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setApplicationName(APP_NAME)
    app.setOrganizationName(APP_NAME)
    app.setDesktopFileName(assets.APP_ID)
    app.setWindowIcon(app_icon())
    return app
