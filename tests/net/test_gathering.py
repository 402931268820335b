"""Reads are gathered only under a flood (whiteboard/net/gathering.py): below GATHER_RATE every
datagram is read as it comes; above it, a dry socket is left unread for GATHER_S."""

from __future__ import annotations

from whiteboard.net.gathering import GATHER_RATE, RATE_WINDOW_S, ReadGathering


def test_below_the_rate_every_datagram_is_read_at_once() -> None:
    gathering = ReadGathering()
    step = 1.0 / (GATHER_RATE / 2)  # half the rate, one datagram a wake-up
    assert not any(gathering.read(index * step, 1) for index in range(2_000))


def test_above_the_rate_reads_are_gathered_from_the_next_window_on() -> None:
    gathering = ReadGathering()
    step = 1.0 / (GATHER_RATE * 2)
    decisions = [gathering.read(index * step, 1) for index in range(2_000)]
    first = decisions.index(True)
    assert first * step >= RATE_WINDOW_S * 0.99  # a whole window measured first
    assert all(decisions[first:])


def test_gathering_stops_when_the_flood_does() -> None:
    gathering = ReadGathering()
    now = 0.0
    for _ in range(1_000):  # a flood: 4 datagrams per millisecond wake-up
        now += 0.001
        gathering.read(now, 4)
    assert gathering.gathering
    for _ in range(100):  # then 10 a second
        now += 0.1
        gathering.read(now, 1)
    assert not gathering.gathering
