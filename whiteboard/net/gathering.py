"""When a flood makes reading as each datagram arrives cost more than the datagrams themselves.

Read one at a time, each datagram costs a whole loop turn (the epoll wake-up, a read that finds
it, one that finds the socket empty, a pump): about 25 microseconds of Python, as much as a
member's own work on it. Under a flood of small datagrams (10,000 forged packets in 2 s, issue
17; a busy session, issue 18) that is most of a member's CPU. Above ``GATHER_RATE`` datagrams a
second, a socket that ran dry is left unread for ``GATHER_S``, so that the next turn finds
several and the turn's cost is shared: at most ``GATHER_S`` of added latency, and only under
such a rate (interrupt moderation, as network cards do it). The rate is measured over
``RATE_WINDOW_S``; below it, every datagram is read at once, as before."""

from __future__ import annotations

GATHER_RATE = 2_000.0  # datagrams a second, on one socket, above which reads are gathered
GATHER_S = 0.001  # how long a dry socket is then left unread
RATE_WINDOW_S = 0.05  # the rate is measured over this long


class ReadGathering:
    """Owns one socket's arrival rate, and says when to leave it unread a while."""

    def __init__(self) -> None:
        self._since: float | None = None
        self._count = 0
        self.gathering = False

    def read(self, now: float, count: int) -> bool:
        """``count`` datagrams were read at ``now`` and the socket ran dry: whether to leave
        it unread for ``GATHER_S`` (the rate of the last full window was above the bound)."""
        if self._since is None:
            self._since = now
        self._count += count
        elapsed = now - self._since
        if elapsed >= RATE_WINDOW_S:
            self.gathering = self._count / elapsed >= GATHER_RATE
            self._since, self._count = now, 0
        return self.gathering
