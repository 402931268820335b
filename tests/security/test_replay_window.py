"""The replay window against its definition: a set of every counter accepted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whiteboard.security import ReplayWindow


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=200), st.integers(1, 64))
def test_the_window_accepts_each_counter_once_while_within_reach(
    counters: list[int], size: int
) -> None:
    window, accepted, highest = ReplayWindow(size), set[int](), -1
    for counter in counters:
        expected = counter not in accepted and (counter > highest or highest - counter < size)
        assert window.check(counter) == expected
        if expected:
            window.accept(counter)
            accepted.add(counter)
            highest = max(highest, counter)


def test_a_huge_jump_costs_nothing_and_forgets_the_past() -> None:
    window = ReplayWindow(1024)
    window.accept(3)
    window.accept(2**63)
    assert window.highest == 2**63 and not window.check(2**63) and not window.check(3)
    assert window.check(2**63 - 5)
    with pytest.raises(ValueError, match="at least one slot"):
        ReplayWindow(0)
