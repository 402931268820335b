"""Keeping Python's cyclic garbage collector off what a big board keeps alive.

A board of thousands of strokes, with what the canvas keeps for each (its item, path and
chunks), is hundreds of thousands of long-lived objects with no reference cycles among them;
a replay's recording and keyframes are millions. Python's cyclic collector walks every one of
them at each *full* collection, which the objects a busy board makes set off now and then:
25-80 ms on a board of 10,000 strokes (benchmarks/bench_canvas.py), a hitch in the middle of
someone's stroke; ~250 ms during a seek in a 100,000-op recording (benchmarks/bench_replay.py).

``gc.freeze()`` moves everything alive now into a generation the collector never walks, in
constant time. Those objects are still freed by reference counting as usual once nothing
refers to them; only cyclic garbage among them waits until the window that froze them goes
(:func:`thaw_when_gone`), when the collector gets everything back. The frozen generation is
the process's: a replay window closing gives back the live window's board too, until that
window's next freeze (at most :data:`FREEZE_EVERY` ops later).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject

# Ops delivered to a live board between two freezes: a full collection walks at most the
# objects that these (and what the canvas made for them) added since the last one.
FREEZE_EVERY = 1000


class FreezeSchedule:
    """When a live window freezes what is alive: once a whole board arrived (joining, a
    resync, a file opened) and every ``every`` ops delivered after it."""

    def __init__(self, every: int = FREEZE_EVERY) -> None:
        self.every = every
        self._since = 0

    def board_loaded(self) -> None:
        # The young generations first (~1 ms): what a freeze keeps is kept until the window
        # goes, and cyclic garbage, when there is any, is mostly young.
        gc.collect(1)
        gc.freeze()
        self._since = 0

    def op_delivered(self) -> None:
        self._since += 1
        if self._since >= self.every:
            self.board_loaded()

    def session_ended(self) -> None:
        """The window left a session to join another: what the old one kept alive (its
        transport, in cycles with its callbacks) is garbage now, frozen maybe. Everything is
        given back to the collector, collected (one full collection, while the new session
        starts), and what is still alive frozen again."""
        gc.unfreeze()
        collect_and_freeze()
        self._since = 0


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection while the block runs, and what it made frozen after it.

    A replay's jump on a big board makes tens of thousands of objects (the canvas's index
    entries for what changed), and the collections they set off walked all of them again:
    ~90 ms of a ~300 ms seek on 87,000 objects. They are no cyclic garbage, and freed as usual
    when the canvas drops them; freezing them keeps the collector off them until the window
    goes. ``gc.freeze`` is a constant-time move of the collector's lists: it costs nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def collect_and_freeze() -> None:
    """Collect what is garbage now, then freeze the rest (before a window exists, so that
    the window, in cycles with its widgets, stays collectable)."""
    gc.collect()
    gc.freeze()


def thaw_when_gone(window: QObject) -> None:
    """Give the collector everything frozen back once ``window`` is deleted."""
    # A lambda holding no reference to the window: it runs after the window is deleted.
    window.destroyed.connect(lambda _=None: gc.unfreeze())


__all__ = [
    "FREEZE_EVERY",
    "FreezeSchedule",
    "collect_and_freeze",
    "collector_paused",
    "thaw_when_gone",
]
