"""NACK timing for losses the whole group shares (our extension, issue 18; docs/rmp.md, "NACK
suppression"). RR-2100 multicasts every NACK (§2.6), so every member hears the others': as in
SRM and NORM (RFC 5740), a member that finds a packet missing waits a random time before it
asks, and stands down when it hears another member ask for the same packet first. The wait is
drawn uniformly over a window that grows with the logarithm of the group's size, so that the
expected number of NACKs for a loss every member shares stays near one or two, whatever the
size; retries are jittered the same way and back off, so that the members a NACK suppressed do
not all ask again at the same instant (§2.3's "not more often" than ``nack_retry`` holds: a
retry never comes sooner). ``nack_delay`` 0 turns it all off (the report's timing)."""

from __future__ import annotations

import math

from rmp.context import Shared
from rmp.stations import STRANGER_CROWD

# Retries after the first come nack_retry apart for this many tries, then the interval doubles
# up to NACK_BACKOFF_MAX times nack_retry: a packet that nobody can repair (its source and
# every holder gone) is asked for less and less often until give_up_after.
NACK_BACKOFF_AFTER = 3
NACK_BACKOFF_MAX = 4


def group_size(shared: Shared) -> int:
    """The members we count for the window: ourselves, every station one of whose packets came
    in sequence, and at most STRANGER_CROWD others (viewers, newcomers): a crowd of phantom
    stations must not stretch our NACKs' delays (issue 17)."""
    stations = shared.stations
    proven = sum(1 for _ in stations.proven())
    return 1 + proven + min(len(stations) - proven, STRANGER_CROWD)


def nack_window(shared: Shared) -> float:
    """The random NACK delay's range, [0, window): ``nack_delay`` per doubling of the group
    (log2 of its size, at least one ``nack_delay``)."""
    delay = shared.params.nack_delay
    if not delay:
        return 0.0
    return delay * max(1.0, math.log2(group_size(shared)))


def nack_delay(shared: Shared) -> float:
    """A first NACK's random wait, uniform over the window (a fresh draw each call)."""
    window = nack_window(shared)
    return shared.rng.random() * window if window else 0.0


def retry_interval(shared: Shared, tries: int) -> float:
    """The wait before the next NACK for a packet asked for ``tries`` times: ``nack_retry``,
    doubling after NACK_BACKOFF_AFTER tries up to NACK_BACKOFF_MAX times it, plus a random
    jitter over the NACK window so that retries are not in lock step. With ``nack_delay`` 0
    the extension is off: every ``nack_retry`` exactly, as §2.3 says."""
    p = shared.params
    if not p.nack_delay:
        return p.nack_retry
    backoff = 1 if tries < NACK_BACKOFF_AFTER else 2 ** (tries - NACK_BACKOFF_AFTER + 1)
    return p.nack_retry * min(NACK_BACKOFF_MAX, backoff) + nack_delay(shared)
