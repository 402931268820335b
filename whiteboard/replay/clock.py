"""The playback clock: where in the recording a replay is, as (real) time goes by.

Pure arithmetic on the times it is given: every method takes ``now`` (seconds, from any clock
that does not go back: ``time.monotonic`` in the app, plain numbers in tests), so that what
the clock says is a function of its calls alone.

* **Speed**: the recording advances ``speed`` seconds per second, from 0.25x to 16x.
* **Skipping idle time**: a gap in which the board does not change for longer than
  ``threshold_us`` plays in ``keep_us`` (1 s of recording time by default, so a 3-minute
  coffee break at 1x is a 1-second pause), at whatever speed is chosen. A *warp* maps
  recording time to play time and back; it is the identity while skipping is off.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

SPEEDS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
MIN_SPEED = SPEEDS[0]
MAX_SPEED = SPEEDS[-1]
IDLE_THRESHOLD_US = 5_000_000  # a gap longer than this is idle
IDLE_KEEP_US = 1_000_000  # what is left of an idle gap when skipping


@dataclass(frozen=True, slots=True)
class IdleGap:
    start_us: int
    end_us: int

    @property
    def length_us(self) -> int:
        return self.end_us - self.start_us


def idle_gaps(
    times: Sequence[int], start_us: int, end_us: int, threshold_us: int = IDLE_THRESHOLD_US
) -> tuple[IdleGap, ...]:
    """The stretches longer than ``threshold_us`` with no step in them, between the start, the
    steps' times (non-decreasing) and the end."""
    gaps: list[IdleGap] = []
    previous = start_us
    for t in (*times, end_us):
        if t - previous > threshold_us:
            gaps.append(IdleGap(previous, t))
        previous = max(previous, t)
    return tuple(gaps)


class TimeWarp:
    """Recording time <-> play time, with each gap squeezed into ``keep_us`` (linearly, so the
    clock still moves through it). Monotone both ways.

    Play time is counted from ``origin_us`` (in microseconds, as a float): recording times
    are ~1.7e15 us since 1970, where a float's resolution is a quarter of a microsecond, and
    squeezing a gap would magnify that error a hundredfold."""

    def __init__(
        self, gaps: Sequence[IdleGap], keep_us: int = IDLE_KEEP_US, origin_us: int = 0
    ) -> None:
        self.gaps = tuple(g for g in gaps if g.length_us > keep_us)
        self.keep_us = keep_us
        self.origin_us = origin_us
        # Play time saved by the gaps before each gap (prefix sums).
        saved = [0]
        for gap in self.gaps:
            saved.append(saved[-1] + gap.length_us - keep_us)
        self._saved = saved
        self._starts = [g.start_us for g in self.gaps]
        self._play_starts = [g.start_us - origin_us - saved[i] for i, g in enumerate(self.gaps)]

    def to_play(self, t_us: int) -> float:
        """The play time of recording time ``t_us``, from the origin."""
        index = bisect_right(self._starts, t_us) - 1
        if index < 0:
            return float(t_us - self.origin_us)
        gap = self.gaps[index]
        if t_us < gap.end_us:
            squeezed = (t_us - gap.start_us) * self.keep_us / gap.length_us
            return self._play_starts[index] + squeezed
        return float(t_us - self.origin_us - self._saved[index + 1])

    def to_recording(self, play_us: float) -> float:
        """The recording time at play time ``play_us`` (from the origin)."""
        index = bisect_right(self._play_starts, play_us) - 1
        if index < 0:
            return self.origin_us + play_us
        gap = self.gaps[index]
        offset = play_us - self._play_starts[index]
        if offset < self.keep_us:
            return gap.start_us + offset * gap.length_us / self.keep_us
        return self.origin_us + (play_us + self._saved[index + 1])


class PlaybackClock:
    """Where playback is in a recording from ``start_us`` to ``end_us``. Paused at the start
    until :meth:`play`. ``gaps``: the idle gaps to squeeze while skipping idle time."""

    def __init__(
        self,
        start_us: int,
        end_us: int,
        gaps: Sequence[IdleGap] = (),
        keep_us: int = IDLE_KEEP_US,
    ) -> None:
        if end_us < start_us:
            raise ValueError("a recording cannot end before it starts")
        self.start_us = start_us
        self.end_us = end_us
        self._warp = TimeWarp(gaps, keep_us, start_us)
        self._speed = 1.0
        self._skip_idle = False
        self._playing = False
        # While playing, the position is the anchor's plus the play time since anchor_now.
        self._anchor_us = start_us
        self._anchor_now = 0.0

    # -- reading ----------------------------------------------------------------------------

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def skip_idle(self) -> bool:
        return self._skip_idle

    @property
    def playing(self) -> bool:
        return self._playing

    def position(self, now: float) -> int:
        """The recording time (us) shown at ``now``."""
        if not self._playing:
            return self._anchor_us
        elapsed_us = max(0.0, now - self._anchor_now) * 1e6 * self._speed
        if not self._skip_idle:
            return min(self.end_us, round(self._anchor_us + elapsed_us))
        warp = self._warp
        play = min(warp.to_play(self.end_us), warp.to_play(self._anchor_us) + elapsed_us)
        return min(self.end_us, max(self._anchor_us, round(warp.to_recording(play))))

    def at_end(self, now: float) -> bool:
        return self.position(now) >= self.end_us

    # -- control ----------------------------------------------------------------------------

    def play(self, now: float) -> None:
        """Start (from the beginning if at the end)."""
        if self.at_end(now):
            self._anchor_us = self.start_us
        else:
            self._anchor_us = self.position(now)
        self._anchor_now = now
        self._playing = True

    def pause(self, now: float) -> None:
        self._anchor_us = self.position(now)
        self._anchor_now = now
        self._playing = False

    def toggle(self, now: float) -> None:
        if self._playing:
            self.pause(now)
        else:
            self.play(now)

    def seek(self, t_us: int, now: float) -> None:
        """Go to ``t_us`` (clamped to the recording), playing on if playing."""
        self._anchor_us = min(max(t_us, self.start_us), self.end_us)
        self._anchor_now = now

    def set_speed(self, speed: float, now: float) -> None:
        if not MIN_SPEED <= speed <= MAX_SPEED:
            raise ValueError(f"the speed must be from {MIN_SPEED}x to {MAX_SPEED:g}x")
        self.seek(self.position(now), now)  # what has played so far played at the old speed
        self._speed = float(speed)

    def set_skip_idle(self, skip: bool, now: float) -> None:
        self.seek(self.position(now), now)
        self._skip_idle = bool(skip)


def format_elapsed(us: int) -> str:
    """``us`` microseconds as ``m:ss.s`` or ``h:mm:ss``."""
    tenths = max(0, us) // 100_000
    if tenths >= 36_000:
        whole = tenths // 10
        return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    minutes, rest = divmod(tenths, 600)
    return f"{minutes}:{rest // 10:02d}.{rest % 10}"


__all__ = [
    "IDLE_KEEP_US",
    "IDLE_THRESHOLD_US",
    "MAX_SPEED",
    "MIN_SPEED",
    "SPEEDS",
    "IdleGap",
    "PlaybackClock",
    "TimeWarp",
    "format_elapsed",
    "idle_gaps",
]
