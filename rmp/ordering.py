"""Delivery to the application in timestamp order (RR-2100 §3)."""

from __future__ import annotations

from coreapi import OrderKey
from rmp.batch import split_batch
from rmp.context import Shared
from rmp.reassembly import Reassembler
from rmp.wire import NTP_UNIX_OFFSET, Batch, Piece, RmpPacket, seconds_from_middle32


class Delivery:
    """Hands data packets to the application with their order key; owns the last key given,
    so that one arriving behind it is flagged late (§3: a late arrival after a WI expiry), and
    each source's run of pieces until it is whole (rmp/reassembly.py, issue 20)."""

    def __init__(self, shared: Shared) -> None:
        self._s = shared
        self.last_key: OrderKey = ()
        self.pieces = Reassembler(self._message_lost)

    def deliver(
        self, origin: int, packet: RmpPacket, now: float, whole: bytes | None = None
    ) -> None:
        """``packet``, next in ``origin``'s order. ``whole``: the payload our own last piece
        ends (the sender has it: our own runs are not put together again)."""
        assert packet.data is not None
        seconds = seconds_from_middle32(packet.timestamp, now + self._s.clock_offset)
        # §3: ordered by timestamp, then by originator. The 16-bit sequence number breaks the
        # tie between two packets of one sender within 1/65536 s.
        key: OrderKey = (round((seconds + NTP_UNIX_OFFSET) * 65536), origin, packet.seq)
        final = packet.options[-1] if packet.options else None
        if isinstance(final, Piece):
            # Our extension (issue 20): a payload in pieces is delivered once, whole, under
            # its last piece's key: the key of the packet that completed it, which every
            # replica computes alike (§3), and which comes after the keys of the payloads
            # delivered while its run was coming in (a run takes a while: under its first
            # piece's key the message would be late everywhere but at its sender).
            if whole is None and origin != self._s.member_id:
                whole = self.pieces.add(origin, packet.seq, final.index, final.count, packet.data)
            if whole is not None:
                self._hand_over(origin, key, seconds, whole)
            return
        if self.pieces.watching:
            self.pieces.cut(origin, packet.seq)  # a packet after an open run ends it
        if not isinstance(final, Batch):
            self._hand_over(origin, key, seconds, packet.data)
            return
        # Our extension (rmp/batch.py): the payloads in their order, each under the packet's
        # key and its index, so that every replica files them alike.
        for index, payload in enumerate(split_batch(packet.data, final.count)):
            self._hand_over(origin, (*key, index), seconds, payload)

    def _message_lost(self, reason: str) -> None:
        self._s.upper.failure(reason)

    def _hand_over(self, origin: int, key: OrderKey, seconds: float, payload: bytes) -> None:
        late = key < self.last_key
        if late:
            self._s.counters["late_delivered"] += 1
        else:
            self.last_key = key
        self._s.counters["delivered"] += 1
        self._s.upper.deliver(origin, key, seconds, payload, late)
