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
    yield
    gc.unfreeze()


def test_a_live_board_is_frozen_when_it_arrives_and_every_so_many_ops() -> None:
    schedule = FreezeSchedule(every=3)
    board = [[i] for i in range(1000)]  # long-lived containers, as a board's objects are
    schedule.board_loaded()
    frozen = gc.get_freeze_count()
    assert frozen >= len(board)
    counts = []
    for i in range(7):
        board.append([i])
        schedule.op_delivered()
        counts.append(gc.get_freeze_count())
    # Frozen again at the 3rd and 6th op only, each time with what came since.
    assert counts[0] == counts[1] == frozen
    assert counts[2] > frozen and counts[3] == counts[4] == counts[2]
    assert counts[5] > counts[2] and counts[6] == counts[5]


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
