"""The reactor for the app: socket readiness through ``QSocketNotifier`` and timers through
``QTimer``, inside the Qt event loop that also paints the canvas."""

from __future__ import annotations

import math
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, Qt, QTimer

from whiteboard.net.reactor import EpochClock, TimerHandle


class _QtTimer:
    def __init__(self, timer: QTimer) -> None:
        self._timer: QTimer | None = timer

    def cancel(self) -> None:
        if self._timer is not None:  # None once fired: the QTimer is already being deleted
            self._timer.stop()
            self._timer.deleteLater()
            self._timer = None

    def fired(self) -> None:
        if self._timer is not None:
            self._timer.deleteLater()  # single-shot: else every timer lives on in the parent
            self._timer = None


class QtReactor:
    def __init__(self, parent: QObject | None = None) -> None:
        self.time: Callable[[], float] = EpochClock()
        self._parent = parent
        self._notifiers: dict[int, QSocketNotifier] = {}

    def add_reader(self, sock: socket.socket, callback: Callable[[], None]) -> None:
        notifier = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Read, self._parent)
        notifier.activated.connect(lambda *_: callback())
        self._notifiers[sock.fileno()] = notifier

    def remove_reader(self, sock: socket.socket) -> None:
        notifier = self._notifiers.pop(sock.fileno(), None)
        if notifier is not None:
            notifier.setEnabled(False)
            notifier.deleteLater()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = QTimer(self._parent)
        timer.setSingleShot(True)
        timer.setTimerType(Qt.TimerType.PreciseTimer)

        handle = _QtTimer(timer)

        def fire() -> None:
            handle.fired()
            callback()

        timer.timeout.connect(fire)
        # Round up: a timer that fires before its deadline finds nothing due and spins.
        timer.start(max(0, math.ceil((when - self.time()) * 1000)))
        return handle
