"""Delivery to the application in timestamp order (RR-2100 §3)."""

from __future__ import annotations

from coreapi import OrderKey
from rmp.batch import split_batch
from rmp.context import Shared
from rmp.wire import NTP_UNIX_OFFSET, Batch, RmpPacket, seconds_from_middle32


class Delivery:
    """Hands data packets to the application with their order key; owns the last key given,
    so that one arriving behind it is flagged late (§3: a late arrival after a WI expiry)."""

    def __init__(self, shared: Shared) -> None:
        self._s = shared
        self.last_key: OrderKey = ()

    def deliver(self, origin: int, packet: RmpPacket, now: float) -> None:
        assert packet.data is not None
        seconds = seconds_from_middle32(packet.timestamp, now + self._s.clock_offset)
        # §3: ordered by timestamp, then by originator. The 16-bit sequence number breaks the
        # tie between two packets of one sender within 1/65536 s.
        key: OrderKey = (round((seconds + NTP_UNIX_OFFSET) * 65536), origin, packet.seq)
        final = packet.options[-1] if packet.options else None
        if not isinstance(final, Batch):
            self._hand_over(origin, key, seconds, packet.data)
            return
        # Our extension (rmp/batch.py): the payloads in their order, each under the packet's
        # key and its index, so that every replica files them alike.
        for index, payload in enumerate(split_batch(packet.data, final.count)):
            self._hand_over(origin, (*key, index), seconds, payload)

    def _hand_over(self, origin: int, key: OrderKey, seconds: float, payload: bytes) -> None:
        late = key < self.last_key
        if late:
            self._s.counters["late_delivered"] += 1
        else:
            self.last_key = key
        self._s.counters["delivered"] += 1
        self._s.upper.deliver(origin, key, seconds, payload, late)
