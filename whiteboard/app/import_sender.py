"""Sending an opened file's ops (whiteboard/app/importing.py) a batch at a time, so that a big
board neither fills the transport's send queue nor freezes the window."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from whiteboard.board import Op

IMPORT_BATCH = 200  # ops sent at a time, every IMPORT_BATCH_MS
IMPORT_BATCH_MS = 20


class ImportSender(QObject):
    """``send`` sends one op (False: it could not, and said why: the rest is dropped);
    ``done`` is called with the label given to :meth:`start` once every op is sent."""

    def __init__(
        self, parent: QObject, send: Callable[[Op], bool], done: Callable[[str], None]
    ) -> None:
        super().__init__(parent)
        self._send = send
        self._done = done
        self._queue: list[Op] = []
        self._label = ""
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._send_batch)

    def start(self, ops: list[Op], label: str) -> None:
        self._queue, self._label = list(ops), label
        self._send_batch()
        if self._queue:
            self._timer.start(IMPORT_BATCH_MS)

    def unsent(self) -> int:
        """Ops still waiting their turn (never handed to the transport yet)."""
        return len(self._queue)

    def _send_batch(self) -> None:
        batch, self._queue = self._queue[:IMPORT_BATCH], self._queue[IMPORT_BATCH:]
        for op in batch:
            if not self._send(op):
                self._queue, self._label = [], ""
                break
        if not self._queue:
            self._timer.stop()
            if self._label:
                self._done(self._label)
                self._label = ""


__all__ = ["IMPORT_BATCH", "IMPORT_BATCH_MS", "ImportSender"]
