"""A file given to the app (``whiteboard FILE``, as the desktop does when one is
double-clicked, issue 22): a board (.wbd) to open into the session, or a recording (.wblog)
to replay. Known by its first bytes, so that a renamed file still opens, else by its name."""

from __future__ import annotations

import enum
from pathlib import Path

from whiteboard.board.files import FILE_EXTENSION, describe_os_error
from whiteboard.board.files import MAGIC as BOARD_MAGIC
from whiteboard.sessionlog.format import MAGIC as RECORDING_MAGIC
from whiteboard.sessionlog.paths import LOG_EXTENSION


class GivenFile(enum.Enum):
    BOARD = "board"
    RECORDING = "recording"


def kind_of(path: Path) -> GivenFile:
    """What ``path`` is; ValueError with a message for a person if it is neither, or cannot
    be read at all (the board's or log's own reader explains a damaged one)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(max(len(BOARD_MAGIC), len(RECORDING_MAGIC)))
    except OSError as exc:
        raise ValueError(f"cannot open {path}: {describe_os_error(exc)}") from None
    if head.startswith(BOARD_MAGIC):
        return GivenFile.BOARD
    if head.startswith(RECORDING_MAGIC):
        return GivenFile.RECORDING
    # A damaged or cut file of ours: its reader says what is wrong with it.
    if path.suffix.lower() == FILE_EXTENSION:
        return GivenFile.BOARD
    if path.suffix.lower() == LOG_EXTENSION:
        return GivenFile.RECORDING
    raise ValueError(
        f"{path.name} is neither a whiteboard board (.wbd) nor a session recording (.wblog)"
    )
