"""The RTP v1 timestamp: the middle 32 bits of an NTP time, unwrapped across its 18-hour wrap
with the receiver's clock as the reference (RR-2100 §4.1, §2.8)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmp.wire import MIDDLE32_WRAP_SECONDS, NTP_UNIX_OFFSET, ntp_middle32, seconds_from_middle32

# The first wrap after 1.7e9 s POSIX: (WRAP + NTP_UNIX_OFFSET) is a multiple of 65,536.
WRAP = 59_647 * 65_536 - NTP_UNIX_OFFSET
RESOLUTION = 2**-16


def test_the_posix_epoch_is_ntp_time_0x83aa7e80_seconds() -> None:
    assert NTP_UNIX_OFFSET == 0x83AA_7E80
    assert ntp_middle32(0.0) == 0x7E80_0000  # low 16 bits of the seconds, fraction 0
    assert ntp_middle32(0.5) == 0x7E80_8000
    assert ntp_middle32(1.0 + RESOLUTION) == 0x7E81_0001


def test_the_value_wraps_every_65536_seconds() -> None:
    assert WRAP == 1_700_036_992
    assert ntp_middle32(WRAP - 1) == 0xFFFF_0000
    assert ntp_middle32(WRAP - RESOLUTION) == 0xFFFF_FFFF
    assert ntp_middle32(WRAP) == 0
    assert ntp_middle32(WRAP + MIDDLE32_WRAP_SECONDS) == 0
    assert pytest.approx(18.2, abs=0.01) == MIDDLE32_WRAP_SECONDS / 3600  # "about 18 hours"


def test_unwrapping_across_the_boundary_in_both_directions() -> None:
    # Sent 10 s after the wrap, read by a clock 10 s before it: the value is small, the time later.
    assert seconds_from_middle32(ntp_middle32(WRAP + 10), near=WRAP - 10) == WRAP + 10
    # Sent 10 s before the wrap, read by a clock already past it.
    assert seconds_from_middle32(ntp_middle32(WRAP - 10), near=WRAP + 10) == WRAP - 10
    # A whole wrap away from the reference, the same value means the time nearest the clock.
    assert seconds_from_middle32(ntp_middle32(WRAP - 10), near=WRAP + 65_536) == WRAP + 65_526


def test_more_than_half_a_wrap_away_reads_as_the_other_side() -> None:
    """The documented limit: a clock offset of 9.1 h or more is misread by one wrap."""
    sent = WRAP + 10 * 3600
    assert seconds_from_middle32(ntp_middle32(sent), near=WRAP) == sent - MIDDLE32_WRAP_SECONDS
    half = WRAP + MIDDLE32_WRAP_SECONDS / 2
    assert seconds_from_middle32(ntp_middle32(half), near=WRAP) == half - MIDDLE32_WRAP_SECONDS


@settings(max_examples=500, deadline=None)
@given(
    st.floats(0, 4e9, allow_nan=False),
    st.floats(-(2**15) + 1, 2**15 - 1, allow_nan=False),
)
def test_unwrapping_recovers_any_time_within_half_a_wrap(near: float, offset: float) -> None:
    sent = near + offset
    recovered = seconds_from_middle32(ntp_middle32(sent), near=near)
    assert sent - RESOLUTION - 1e-6 <= recovered <= sent + 1e-6  # truncated to 1/65536 s


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(0, 0xFFFF_FFFF))
def test_any_value_unwraps_near_any_clock_even_the_simulators(near: float, value: int) -> None:
    recovered = seconds_from_middle32(value, near)
    assert near - 2**15 - 1e-3 <= recovered < near + 2**15 + 1e-3
    assert ntp_middle32(recovered + RESOLUTION / 2) == value


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_times_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="cannot timestamp"):
        ntp_middle32(bad)
    with pytest.raises(ValueError, match="cannot unwrap"):
        seconds_from_middle32(0, bad)


def test_values_beyond_32_bits_are_refused() -> None:
    with pytest.raises(ValueError, match="does not fit in 32 bits"):
        seconds_from_middle32(1 << 32, 0.0)
