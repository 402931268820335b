"""The app's shipped files, wherever the app is installed: the top-level ``assets/`` folder of
the source tree is the package ``whiteboard_assets`` in a wheel and in the editable install
(setup.py), read here through importlib.resources, never by a path into the source tree."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

APP_ID = "io.github.multicastboard.Whiteboard"  # reverse DNS: the launcher's and metainfo's id
BOARD_MIME = "application/x-whiteboard-board"  # .wbd (whiteboard/board/files.py)
RECORDING_MIME = "application/x-whiteboard-recording"  # .wblog (whiteboard/sessionlog)
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)  # PNGs rendered by packaging/render_icons.py
# The icon a desktop shows for each file type: its name is the type's, '/' made '-'.
MIME_ICONS = {BOARD_MIME: "board.svg", RECORDING_MIME: "recording.svg"}
_PACKAGE = "whiteboard_assets"


class AssetsMissing(RuntimeError):
    """This installation of the app lacks its shipped files: a person is told to reinstall."""


def root() -> Traversable:
    try:
        return resources.files(_PACKAGE)
    except ModuleNotFoundError:
        raise AssetsMissing(
            "this installation of whiteboard lacks its assets (icons, launcher): reinstall it "
            "(docs/install.md)"
        ) from None


def asset(*parts: str) -> Traversable:
    """One shipped file, e.g. ``asset("icons", "whiteboard.svg")``; AssetsMissing if absent."""
    found = root()
    for part in parts:  # one at a time: a frozen app's MultiplexedPath takes one (3.11)
        found = found.joinpath(part)
    if not found.is_file():
        raise AssetsMissing(f"this installation of whiteboard lacks {'/'.join(parts)}: reinstall")
    return found


def icon_png(size: int) -> Traversable:
    return asset("icons", f"whiteboard-{size}.png")


def app_icon_svg() -> Traversable:
    return asset("icons", "whiteboard.svg")


def desktop_entry() -> Traversable:
    return asset(f"{APP_ID}.desktop")


def metainfo() -> Traversable:
    return asset(f"{APP_ID}.metainfo.xml")


def mime_types() -> Traversable:
    return asset(f"{APP_ID}-mime.xml")


def samples() -> list[Traversable]:
    """The sample recordings (one session, each member's log), sorted by name."""
    folder = root().joinpath("samples")
    found = [item for item in folder.iterdir() if item.name.endswith(".wblog")]
    return sorted(found, key=lambda item: item.name)
