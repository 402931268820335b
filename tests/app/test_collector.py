"""What the app does with Python's cyclic garbage collector (whiteboard/app/collector.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from whiteboard.app.collector import FreezeSchedule, collector_paused, thaw_when_gone


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    gc.unfreeze()
    gc.collect()  # earlier tests' garbage: a window going would thaw in mid-test
    yield
    gc.unfreeze()


def frozen(obj: object) -> bool:
    """Whether ``obj`` is out of the collector's generations (frozen). Tested by identity,
    not by gc.get_freeze_count(): frozen objects other threads free (Spark's, in a test run)
    change the count at any moment."""
    return all(other is not obj for other in gc.get_objects())


def test_a_live_board_is_frozen_when_it_arrives_and_every_so_many_ops() -> None:
    schedule = FreezeSchedule(every=3)
    board = [[i] for i in range(1000)]  # long-lived containers, as a board's objects are
    schedule.board_loaded()
    assert frozen(board) and frozen(board[0]) and frozen(board[-1])
    made_frozen = []
    for i in range(7):
        board.append([i])
        schedule.op_delivered()
        made_frozen.append(frozen(board[-1]))
    # Frozen again at the 3rd and 6th op only, each time with what came since.
    assert made_frozen == [False, False, True, False, False, True, False]
    assert all(frozen(op) for op in board[-7:-1])


def test_a_session_left_for_another_is_collected_even_if_it_was_frozen() -> None:
    class Transport:
        def __init__(self) -> None:
            self.callback = self.on_event  # a bound method: a reference cycle

        def on_event(self) -> None:
            pass

    schedule = FreezeSchedule()
    old = Transport()
    gone = weakref.ref(old)
    schedule.board_loaded()  # the old session's objects frozen with the rest
    del old
    gc.collect()
    assert gone() is not None  # frozen: out of the collector's sight
    schedule.session_ended()
    assert gone() is None
    assert gc.get_freeze_count() > 0  # what is alive is frozen again


def test_no_collection_runs_in_a_paused_block_and_what_it_made_is_frozen() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        made = [[i] for i in range(500)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_everything_is_given_back_when_the_window_goes(qtbot: QtBot) -> None:
    window = QObject()
    thaw_when_gone(window)
    gc.freeze()
    assert gc.get_freeze_count() > 0
    with qtbot.waitSignal(window.destroyed, timeout=5000):
        window.deleteLater()
    assert gc.get_freeze_count() == 0
