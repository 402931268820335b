"""Which side-channel payloads a session log keeps (issue 19; docs/session-log.md "The side
channel"): pointers come 30 times a second from each member, and a recording needs far fewer
to show where people pointed. At most :data:`SIDE_RECORDS_HZ` a second from each origin, this
member included (a token bucket each, :data:`SIDE_RECORDS_BURST` at once), for at most
:data:`MAX_ORIGINS` origins: a log's growth from them is bounded by the members' number and
the session's length, whatever they send."""

from __future__ import annotations

SIDE_RECORDS_HZ = 10.0
SIDE_RECORDS_BURST = 10.0
MAX_ORIGINS = 1024


class SideSampler:
    def __init__(self) -> None:
        self._buckets: dict[int, tuple[float, float]] = {}  # origin -> (tokens, updated)
        self.kept = 0
        self.skipped = 0

    def keep(self, origin: int, now: float) -> bool:
        tokens, updated = self._buckets.pop(origin, (SIDE_RECORDS_BURST, now))
        if len(self._buckets) >= MAX_ORIGINS:
            del self._buckets[next(iter(self._buckets))]  # the least recently heard
        tokens = min(SIDE_RECORDS_BURST, tokens + max(0.0, now - updated) * SIDE_RECORDS_HZ)
        kept = tokens >= 1.0
        self._buckets[origin] = (tokens - 1.0 if kept else tokens, now)
        if kept:
            self.kept += 1
        else:
            self.skipped += 1
        return kept
