"""The playback clock, driven with explicit times: speed, pausing, seeking, skipping idle
stretches."""

from __future__ import annotations

import random

import pytest

from whiteboard.replay import SPEEDS, IdleGap, PlaybackClock, TimeWarp, format_elapsed, idle_gaps

S = 1_000_000  # a second in microseconds
START = 1_700_000_000 * S
END = START + 600 * S


def test_at_1x_the_recording_advances_a_second_a_second() -> None:
    clock = PlaybackClock(START, END)
    assert clock.position(5.0) == START and not clock.playing  # paused at the start
    clock.play(10.0)
    assert clock.position(10.0) == START
    assert clock.position(12.5) == START + 2_500_000


@pytest.mark.parametrize("speed", SPEEDS)
def test_the_speed_is_how_many_seconds_of_recording_play_in_a_second(speed: float) -> None:
    clock = PlaybackClock(START, END)
    clock.set_speed(speed, 0.0)
    clock.play(100.0)
    assert clock.position(104.0) == START + round(4 * S * speed)


def test_changing_speed_while_playing_keeps_what_has_played() -> None:
    clock = PlaybackClock(START, END)
    clock.play(0.0)
    clock.set_speed(4.0, 10.0)  # 10 s at 1x
    assert clock.position(10.0) == START + 10 * S
    assert clock.position(12.0) == START + 18 * S  # then 2 s at 4x
    clock.set_speed(0.25, 12.0)
    assert clock.position(16.0) == START + 19 * S


def test_pausing_holds_the_position_and_playing_resumes_from_it() -> None:
    clock = PlaybackClock(START, END)
    clock.play(0.0)
    clock.pause(3.0)
    assert clock.position(50.0) == START + 3 * S
    clock.play(50.0)
    assert clock.position(51.0) == START + 4 * S
    clock.toggle(51.0)
    assert not clock.playing and clock.position(99.0) == START + 4 * S


def test_seeking_moves_and_playing_goes_on_from_there() -> None:
    clock = PlaybackClock(START, END)
    clock.play(0.0)
    clock.seek(START + 100 * S, 1.0)
    assert clock.position(3.0) == START + 102 * S
    clock.seek(END + 50 * S, 3.0)  # clamped
    assert clock.position(4.0) == END
    clock.seek(START - S, 4.0)
    assert clock.position(4.0) == START


def test_playback_stops_at_the_end_and_play_starts_again_from_the_start() -> None:
    clock = PlaybackClock(START, END)
    clock.set_speed(16.0, 0.0)
    clock.play(0.0)
    assert clock.position(1000.0) == END and clock.at_end(1000.0)
    clock.pause(1000.0)
    clock.play(1001.0)
    assert clock.position(1001.0) == START


@pytest.mark.parametrize("speed", [0.0, 0.2, 16.5, -1.0, float("nan")])
def test_a_speed_out_of_range_is_refused(speed: float) -> None:
    with pytest.raises(ValueError, match=r"from 0\.25x to 16x"):
        PlaybackClock(START, END).set_speed(speed, 0.0)


def test_skipping_idle_time_plays_a_long_gap_in_a_second() -> None:
    times = [START + S, START + 2 * S, START + 302 * S, START + 303 * S]  # 300 s of nothing
    gaps = idle_gaps(times, START, START + 304 * S)
    assert gaps == (IdleGap(START + 2 * S, START + 302 * S),)
    skipping = PlaybackClock(START, START + 304 * S, gaps)
    skipping.set_skip_idle(True, 0.0)
    skipping.play(0.0)
    assert skipping.position(2.0) == START + 2 * S  # before the gap: as at 1x
    assert skipping.position(2.5) == START + 152 * S  # half way through it in half a second
    assert skipping.position(3.0) == START + 302 * S  # through it in 1 s
    assert skipping.position(4.0) == START + 303 * S  # after it: 1x again
    plain = PlaybackClock(START, START + 304 * S, gaps)
    plain.play(0.0)
    assert plain.position(3.0) == START + 3 * S


def test_skipping_idle_time_combines_with_speed_and_can_be_turned_off_mid_gap() -> None:
    gaps = (IdleGap(START + 10 * S, START + 110 * S),)
    clock = PlaybackClock(START, END, gaps)
    clock.set_skip_idle(True, 0.0)
    clock.set_speed(2.0, 0.0)
    clock.play(0.0)
    assert clock.position(5.0) == START + 10 * S  # 10 s at 2x
    assert clock.position(5.25) == START + 60 * S  # the gap's 1 s at 2x: half in 0.25 s
    clock.set_skip_idle(False, 5.25)
    assert clock.position(6.25) == START + 62 * S  # 2x through the rest of it


def test_the_warp_is_monotone_and_goes_both_ways() -> None:
    rng = random.Random(2)
    gaps = idle_gaps(
        sorted(START + rng.randrange(600 * S) for _ in range(40)), START, END, threshold_us=8 * S
    )
    assert gaps
    warp = TimeWarp(gaps, origin_us=START)
    points = sorted(rng.randrange(START, END) for _ in range(500))
    played = [warp.to_play(t) for t in points]
    assert played == sorted(played)
    for t, p in zip(points, played, strict=True):
        assert warp.to_recording(p) == pytest.approx(t, abs=1)
    saved = sum(g.length_us - warp.keep_us for g in gaps)
    assert warp.to_play(END) == END - START - saved


def test_elapsed_times_read_as_minutes_and_hours() -> None:
    assert format_elapsed(0) == "0:00.0"
    assert format_elapsed(59_960_000) == "0:59.9"
    assert format_elapsed(61_500_000) == "1:01.5"
    assert format_elapsed(3_725 * S) == "1:02:05"
    assert format_elapsed(-5) == "0:00.0"
