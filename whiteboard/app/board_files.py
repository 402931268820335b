"""The File menu's work on the board: save it to a file, open a file into the session, export
a picture of it.

Opening reads and checks the file first (a damaged one is said so, nothing asked), then asks
before replacing everyone's board: the board is cleared and the file's picture drawn as our own
ops (whiteboard/app/importing.py), sent a batch at a time (whiteboard/app/import_sender.py), so
that undo brings the previous board back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.export import EXPORT_FILTER, ExportError, export_board
from whiteboard.app.history import History
from whiteboard.app.import_sender import ImportSender
from whiteboard.app.importing import copies_of
from whiteboard.board import Clear, Op, OpId
from whiteboard.board.files import (
    FILE_FILTER,
    BoardFileError,
    OpenedBoard,
    ensure_extension,
    open_board,
    save_board,
)
from whiteboard.replica import Replica
from whiteboard.transport.driver import CoreDriver

JOIN_POLL_MS = 200  # how often a board given at start looks whether the session is joined
MESSAGE_MS = 15000  # how long a file's outcome stays in the status bar
DONE_MS = 5000  # how long a "done" stays in the status bar


class FilesHost(Protocol):
    """The window's session as it is now (the replica, history and transport are replaced
    when it joins another session)."""

    replica: Replica
    canvas: BoardCanvas
    history: History
    transport: CoreDriver

    def next_op_id(self) -> OpId: ...


class BoardFiles:
    """``window`` shows the dialogs and the status bar messages; ``host`` (the same window)
    gives the session; ``send`` sends one op of an opened file (False: it could not, and said
    why)."""

    def __init__(self, window: QMainWindow, host: FilesHost, send: Callable[[Op], bool]) -> None:
        self._window = window
        self._host = host
        self.importer = ImportSender(window, send, self._import_done)

    def ask_save_board(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self._window, "Save board", "", FILE_FILTER)
        return bool(path) and self.save_board_to(ensure_extension(Path(path)))

    def save_board_to(self, path: Path) -> bool:
        try:
            save_board(path, self._host.replica.board, title=self._window.windowTitle())
        except BoardFileError as exc:
            QMessageBox.warning(self._window, "Save board", str(exc))
            return False
        self._window.statusBar().showMessage(f"Saved {path.name}", MESSAGE_MS)
        return True

    def ask_open_board(self) -> None:
        """Read and check the file first (a damaged one is said so, nothing asked), then ask
        before replacing everyone's board with it."""
        if self._host.canvas.is_read_only():
            self._window.statusBar().showMessage(
                "Join a session before opening a board", MESSAGE_MS
            )
            return
        path, _ = QFileDialog.getOpenFileName(self._window, "Open board", "", FILE_FILTER)
        if not path:
            return
        opened = self._read_board_file(Path(path))
        if opened is not None:
            self._confirm_and_import(opened, Path(path).name)

    def _confirm_and_import(self, opened: OpenedBoard, name: str) -> None:
        """Ask before replacing a board someone drew on; an empty one is simply filled."""
        if not self._host.replica.board.objects():
            self._import_board(opened, name)
            return
        answer = QMessageBox.question(
            self._window,
            "Open board",
            f"Replace the board for everyone in the session with {name}'s?\n\n"
            "It is cleared, then what the file shows is drawn as yours. Undo brings the "
            "board back.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._import_board(opened, name)
        else:
            self._window.statusBar().clearMessage()

    def open_when_joined(self, opened: OpenedBoard, name: str) -> None:
        """A board given to the app (double-clicked, or ``whiteboard FILE.wbd``): opened into
        the session once the window has joined it, as Open board would."""
        self._window.statusBar().showMessage(f"{name} opens once the session is joined…")
        timer = QTimer(self._window)
        timer.setInterval(JOIN_POLL_MS)
        session = self._host.transport  # the session it was given for, and no other

        def try_now() -> None:
            ended = self._host.transport is not session or session.finished
            if not ended and self._host.canvas.is_read_only():
                return  # joining still (or reconnecting): the timer asks again
            timer.stop()
            timer.deleteLater()
            if ended:
                self._window.statusBar().showMessage(
                    f"{name} was not opened: the session it was for ended", MESSAGE_MS
                )
            else:
                self._confirm_and_import(opened, name)

        timer.timeout.connect(try_now)
        timer.start()

    def open_board_from(self, path: Path) -> bool:
        """Replace the shared board with the file's picture (whiteboard/app/importing.py).
        A file that cannot be read changes nothing."""
        opened = self._read_board_file(path)
        if opened is None:
            return False
        self._import_board(opened, path.name)
        return True

    def _read_board_file(self, path: Path) -> OpenedBoard | None:
        try:
            return open_board(path)
        except BoardFileError as exc:
            QMessageBox.warning(self._window, "Open board", str(exc))
            return None

    def _import_board(self, opened: OpenedBoard, name: str) -> None:
        clear = Clear(self._host.next_op_id())
        canvas, next_id = self._host.canvas, self._host.next_op_id
        plan = copies_of(opened.board, next_id, canvas.max_payload, canvas.max_message)
        self._host.history.record([clear.id, *(op.id for op in plan.ops)])
        note = f" ({plan.skipped} objects too large to send were left out)" if plan.skipped else ""
        self._window.statusBar().showMessage(f"Opening {name}{note}…")
        self.importer.start([clear, *plan.ops], f"{name}{note}")

    def _import_done(self, label: str) -> None:
        # The "Opening…" goes with the work it announced.
        self._window.statusBar().showMessage(f"Opened {label}", DONE_MS)

    def ask_export_board(self, visible: bool = False) -> None:
        path, _ = QFileDialog.getSaveFileName(self._window, "Export board", "", EXPORT_FILTER)
        if path:
            self.export_board_to(Path(path), visible)

    def export_board_to(self, path: Path, visible: bool = False) -> bool:
        area = self._host.canvas.visible_board_rect() if visible else None
        try:
            done = export_board(path, self._host.replica.board, area=area)
        except ExportError as exc:
            QMessageBox.warning(self._window, "Export board", str(exc))
            return False
        self._window.statusBar().showMessage(
            f"Exported {path.name} ({done.width} x {done.height})", MESSAGE_MS
        )
        return True


__all__ = ["DONE_MS", "MESSAGE_MS", "BoardFiles", "FilesHost"]
