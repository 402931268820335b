"""A sliding replay window over one sender's counters (RFC 4303 §3.4.3's anti-replay window,
the one IPsec and DTLS use): a counter is accepted once, in any order, while it is within
``size`` of the highest seen; older ones are refused, since we can no longer tell."""

from __future__ import annotations

DEFAULT_WINDOW = 1024  # datagrams a sender may be reordered by and still be accepted


class ReplayWindow:
    def __init__(self, size: int = DEFAULT_WINDOW) -> None:
        if size < 1:
            raise ValueError(f"a replay window needs at least one slot, not {size}")
        self.size = size
        self._mask = (1 << size) - 1
        self.highest = -1
        self._seen = 0  # bit i: highest - i was accepted

    def check(self, counter: int) -> bool:
        """Whether ``counter`` may be accepted (never seen, not too old); changes nothing, so
        that a datagram is marked only once it proved authentic (``accept``)."""
        if counter > self.highest:
            return True
        offset = self.highest - counter
        return offset < self.size and not (self._seen >> offset) & 1

    def accept(self, counter: int) -> None:
        if counter > self.highest:
            shift = counter - self.highest
            if shift >= self.size:  # all of the window is older: no shift of a huge int
                self._seen = 1
            else:
                self._seen = ((self._seen << shift) | 1) & self._mask
            self.highest = counter
        else:
            self._seen |= 1 << (self.highest - counter)
