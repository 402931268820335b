"""Which packets get the protocol's full attention (an extension: RR-2100 trusts every
station). A member keeps serving the stations it knows, whatever arrives; what newcomers
together may make it do, it spends at a bounded rate.

A *newcomer* is a station none of whose data we have taken in sequence, first heard less than
``suspect_after`` ago (rmp/repair.py's notion), or one we have never heard. Its packets are
taken at ``STRANGER_RATE`` a second for all newcomers together (a token bucket of
``STRANGER_BURST``); beyond that they are counted (``strangers_throttled``) and dropped
before they are even decoded. A real newcomer loses nothing by it: a joiner asks again
(§2.8), and a station's packets dropped here are NACKed once one of its packets comes through
(§2.3). Issue 17: 10,000 well-formed packets from 1,000 phantom station ids made a member do
the full work for each, about 200 microseconds apiece; a flood now costs it the read and this
look per packet. Stations we are sending an image to (§2.8) are exempt: a joiner confirms
every 16 parts, at the image's pace."""

from __future__ import annotations

import math
from collections.abc import Callable

from rmp.context import Shared

STRANGER_RATE = 200.0  # newcomers' packets a second, all together
STRANGER_BURST = 200.0  # ... and at once


class Admission:
    """Owns the newcomers' token bucket."""

    def __init__(self, shared: Shared, being_served: Callable[[int], bool]) -> None:
        self._s = shared
        self._being_served = being_served
        self._tokens = STRANGER_BURST
        self._updated = -math.inf

    def admits(self, source: int, now: float) -> bool:
        """Whether a packet from ``source`` gets the full work (a newcomer's takes a token)."""
        s = self._s
        if not s.serving():
            return True  # while joining, every station is new to us: the answer must come
        station = s.stations.get(source)
        if station is not None and (
            not station.stranger
            or now - station.first_heard >= s.params.suspect_after
            or self._being_served(source)
        ):
            return True
        if now > self._updated:
            elapsed = now - self._updated
            self._tokens = min(STRANGER_BURST, self._tokens + elapsed * STRANGER_RATE)
            self._updated = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        s.counters["strangers_throttled"] += 1
        return False
