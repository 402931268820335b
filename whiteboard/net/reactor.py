"""The event loop a runtime runs in. Two implementations with one interface: a selector loop for
headless members (CLI, tests) and :mod:`whiteboard.app.qt_reactor` for the app, so the runtime
code is the same in both."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import selectors
import signal
import socket
import time
from collections.abc import Callable
from typing import Protocol


class EpochClock:
    """Seconds since the Unix epoch that never go backwards: the wall clock read once, advanced
    by the monotonic clock. Protocol timestamps need wall time; timers need monotony."""

    def __init__(self) -> None:
        self._offset = time.time() - time.monotonic()

    def __call__(self) -> float:
        return time.monotonic() + self._offset


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Reactor(Protocol):
    def time(self) -> float: ...

    def add_reader(self, sock: socket.socket, callback: Callable[[], None]) -> None: ...

    def remove_reader(self, sock: socket.socket) -> None: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle: ...


class _SelectorTimer:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class SelectorReactor:
    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.time: Callable[[], float] = clock or EpochClock()
        self._selector = selectors.DefaultSelector()
        self._timers: list[tuple[float, int, _SelectorTimer]] = []
        self._order = itertools.count()
        self._wakeup: tuple[socket.socket, socket.socket] | None = None

    def add_reader(self, sock: socket.socket, callback: Callable[[], None]) -> None:
        self._selector.register(sock, selectors.EVENT_READ, callback)

    def remove_reader(self, sock: socket.socket) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _SelectorTimer(callback)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return self.call_at(self.time() + delay, callback)

    def install_signal_wakeup(self) -> int:
        """Make a signal wake :meth:`run` at once (the handler runs, then ``stop`` is checked);
        returns the previous wake-up fd for ``signal.set_wakeup_fd`` to restore."""
        if self._wakeup is None:
            reader, writer = socket.socketpair()
            reader.setblocking(False)
            writer.setblocking(False)
            self._wakeup = (reader, writer)
            self.add_reader(reader, lambda: _drain(reader))
        return signal.set_wakeup_fd(self._wakeup[1].fileno(), warn_on_full_buffer=False)

    def run(self, stop: Callable[[], bool], timeout: float) -> bool:
        """Run until ``stop()`` is true (returns True) or ``timeout`` seconds pass (False)."""
        deadline = self.time() + timeout
        while not stop():
            now = self.time()
            if now >= deadline:
                return False
            while self._timers and self._timers[0][2].cancelled:
                heapq.heappop(self._timers)
            wait = deadline - now
            if self._timers:
                wait = min(wait, max(0.0, self._timers[0][0] - now))
            if self._selector.get_map():
                for key, _ in self._selector.select(wait):
                    key.data()
            else:
                time.sleep(wait)
            now = self.time()
            while self._timers and self._timers[0][0] <= now:
                _, _, timer = heapq.heappop(self._timers)
                if not timer.cancelled:
                    timer.callback()
        return True

    def close(self) -> None:
        if self._wakeup is not None:
            for sock in self._wakeup:
                sock.close()
            self._wakeup = None
        self._selector.close()


def _drain(sock: socket.socket) -> None:
    with contextlib.suppress(BlockingIOError, InterruptedError):
        while sock.recv(512):
            pass
