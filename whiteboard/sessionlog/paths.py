"""Where session logs go and what they are called.

The app and ``whiteboard peer`` must write to the same folder, so that ``whiteboard log`` finds
every session in one place: the app's data folder as Qt names it for the app's organisation
and application names (worked out here without Qt, which the headless tools need not have),
then ``sessions``. ``WHITEBOARD_LOG_DIR`` overrides it (tests, measurements, a shared disk).
"""

from __future__ import annotations

import os
import secrets
import sys
from datetime import UTC, datetime
from pathlib import Path

ENV_LOG_DIR = "WHITEBOARD_LOG_DIR"
LOG_EXTENSION = ".wblog"
# The names whiteboard/app/main.py gives the QApplication: Qt derives the data folder from them.
ORGANIZATION_NAME = "Whiteboard"
APPLICATION_NAME = "Whiteboard"
SESSIONS_FOLDER = "sessions"


def default_log_dir() -> Path:
    """``$WHITEBOARD_LOG_DIR`` if set, else the app's data folder's ``sessions``: on Linux
    ``~/.local/share/Whiteboard/Whiteboard/sessions``, on macOS ``~/Library/Application
    Support/Whiteboard/Whiteboard/sessions``, on Windows ``%APPDATA%/Whiteboard/Whiteboard/
    sessions``."""
    override = os.environ.get(ENV_LOG_DIR, "").strip()
    if override:
        return Path(override).expanduser()
    return _app_data_dir() / SESSIONS_FOLDER


def _app_data_dir() -> Path:
    """Where Qt's ``QStandardPaths.AppDataLocation`` is for the app's names, worked out
    without Qt: the session logs sit below the app, and the headless tools need no Qt. A test
    checks that it is Qt's answer."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        appdata = os.environ.get("APPDATA", "").strip()
        base = Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
    else:
        base = _xdg_data_home()
    return base / ORGANIZATION_NAME / APPLICATION_NAME


def _xdg_data_home() -> Path:
    # The XDG base directory rule, as Qt applies it: a relative XDG_DATA_HOME is ignored.
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"


def new_session_id() -> str:
    """64 random bits as 16 hex digits: unique enough for every session anyone will record."""
    return secrets.token_hex(8)


def log_file_name(started_us: int, session_id: str) -> str:
    """``YYYYMMDD-HHMMSS-<session id>.wblog``, the start in UTC, so that names sort by time."""
    started = datetime.fromtimestamp(started_us / 1_000_000, UTC)
    return f"{started:%Y%m%d-%H%M%S}-{session_id}{LOG_EXTENSION}"


__all__ = [
    "ENV_LOG_DIR",
    "LOG_EXTENSION",
    "default_log_dir",
    "log_file_name",
    "new_session_id",
]
