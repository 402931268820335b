"""The retention store (RR-2100 §2.7): data packets kept for retransmission, bounded by age and
by count, whoever sent them (every station answers NACKs, not only the source)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from rmp.wire import RmpPacket


@dataclass(frozen=True, slots=True)
class Stored:
    packet: RmpPacket
    stored_at: float


class RetentionStore:
    """(source, unbounded seq) -> the packet as first received, oldest first. Remembers which
    keys it evicted (boundedly) so that a request for one is reported, not ignored."""

    def __init__(self, max_age: float, max_count: int) -> None:
        self.max_age = max_age
        self.max_count = max_count
        self._packets: OrderedDict[tuple[int, int], Stored] = OrderedDict()
        self._evicted: OrderedDict[tuple[int, int], None] = OrderedDict()
        self.evictions = 0
        # next_expiry(), kept until the oldest packet changes: asked after every datagram.
        self._expiry: float | None = None
        self._expiry_known = True

    def __len__(self) -> int:
        return len(self._packets)

    def put(self, source: int, seq: int, packet: RmpPacket, now: float) -> None:
        key = (source, seq)
        if key in self._packets:
            return
        if not self._packets:
            self._expiry_known = False  # the oldest is this one
        self._packets[key] = Stored(packet, now)
        while len(self._packets) > self.max_count:
            self._evict_oldest()

    def get(self, source: int, seq: int) -> RmpPacket | None:
        stored = self._packets.get((source, seq))
        return stored.packet if stored is not None else None

    def discard_above(self, source: int, seq: int) -> None:
        """Forget ``source``'s packets numbered above ``seq``: a restarted station reuses those
        numbers (RR-2100 §2.8), so what we hold under them is no longer its packet. Rare (a
        restart), so a scan of the bounded store is fine."""
        for key in [k for k in self._packets if k[0] == source and k[1] > seq]:
            del self._packets[key]
        self._expiry_known = False

    def was_evicted(self, source: int, seq: int) -> bool:
        return (source, seq) in self._evicted

    def expire(self, now: float) -> None:
        while self._packets:
            stored = next(iter(self._packets.values()))
            if now < stored.stored_at + self.max_age:  # the very sum next_expiry() reports
                break
            self._evict_oldest()

    def next_expiry(self) -> float | None:
        if not self._expiry_known:
            packets = self._packets
            self._expiry = (
                next(iter(packets.values())).stored_at + self.max_age if packets else None
            )
            self._expiry_known = True
        return self._expiry

    def _evict_oldest(self) -> None:
        key, _ = self._packets.popitem(last=False)
        self._expiry_known = False
        self.evictions += 1
        self._evicted[key] = None
        while len(self._evicted) > self.max_count:
            self._evicted.popitem(last=False)
