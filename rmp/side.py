"""The side channel in RMP (coreapi/ephemeral.py; our extension, docs/rmp-wire.md "The side
channel"): best effort beside the reliable stream, for what matters only while fresh.

A payload travels in a packet of RTP format ``FORMAT_EPHEMERAL`` (62), not ``FORMAT_RMP``
(63): another implementation of RR-2100 takes it for some other RTP payload and drops it
(§2.2 names the format field for this). Its layout is a data packet's, [Source, Data] and the
payload, but its sequence number counts side-channel packets, apart from S_n: it is never
stored, confirmed, NACKed, reminded of or ordered (§2.2-§2.7 do not apply), and it moves no
station in the depth queue (§2.5) and no liveness deadline. Taken only from a station we know.
"""

from __future__ import annotations

from coreapi import UpperLayer
from coreapi.ephemeral import (
    MAX_EPHEMERAL,
    EphemeralOut,
    EphemeralReceiver,
    EphemeralSender,
    ephemeral_counters,
)
from rmp.context import Shared
from rmp.wire import (
    FORMAT_EPHEMERAL,
    HEADER_SIZE,
    RTP_VERSION,
    SOURCE_SIZE,
    Data,
    OptionType,
    RmpPacket,
    encode,
)

FORMAT_MASK = 0x3F  # the format's 6 bits in the RTP header's second byte
# The one layout our side-channel packets have (docs/rmp-wire.md "The side channel"): P set,
# S clear, format 62; Source (F=0) and its three zero bytes; Data (F=1) and its three.
_P_FORMAT = 0x80 | FORMAT_EPHEMERAL
_SOURCE_LEAD = bytes((OptionType.SOURCE, 0, 0, 0))
_DATA_LEAD = bytes((0x80 | OptionType.DATA, 0, 0, 0))
_DATA_AT = HEADER_SIZE + SOURCE_SIZE
_PAYLOAD_AT = _DATA_AT + len(_DATA_LEAD)


def is_side_channel(data: bytes) -> bool:
    """Whether ``data`` is a side-channel packet, by its RTP format (nothing else checked)."""
    return len(data) >= 2 and data[1] & FORMAT_MASK == FORMAT_EPHEMERAL


class SideChannel:
    """One member's side channel: its pacing, its numbering and what it takes in."""

    def __init__(self, shared: Shared, upper: UpperLayer) -> None:
        self._s = shared
        self._upper = upper
        self._sender = EphemeralSender()
        self._receiver = EphemeralReceiver()

    def send(self, payload: bytes, now: float) -> None:
        """Sent now, or when the rate allows; dropped while we are not in the session yet."""
        EphemeralSender.check(payload)
        if self._s.serving():
            self._emit(self._sender.offer(payload, now), now)

    def timer(self, now: float) -> None:
        self._emit(self._sender.due(now), now)

    def deadline(self) -> float | None:
        return self._sender.deadline()

    def stop(self) -> None:
        self._sender.drop_held()

    def counters(self) -> dict[str, int]:
        return ephemeral_counters(self._sender, self._receiver)

    def receive_laid_out(self, data: bytes, source: int, now: float) -> bool:
        """Takes ``data`` (from ``source``, as its Source option says) if it is laid out
        exactly as our side-channel packets are, without the general decoder: ten members'
        pointers are 300 of these a second (issue 19's CPU goal). False for anything else,
        which the general decoder then takes or refuses, to the same effect."""
        if (
            len(data) < _PAYLOAD_AT
            or data[1] != _P_FORMAT
            or data[0] >> 6 != RTP_VERSION
            or data[HEADER_SIZE : HEADER_SIZE + 4] != _SOURCE_LEAD
            or data[_DATA_AT:_PAYLOAD_AT] != _DATA_LEAD
        ):
            return False
        self._take(source, (data[2] << 8) | data[3], data[_PAYLOAD_AT:], now)
        return True

    def receive(self, packet: RmpPacket, now: float) -> None:
        payload = packet.data
        if payload is None or len(packet.options) != 1 or type(packet.options[0]) is not Data:
            self._receiver.refuse()
            self._s.counters["malformed_dropped"] += 1
            return
        self._take(packet.source, packet.seq, payload, now)

    def _take(self, source: int, seq: int, payload: bytes, now: float) -> None:
        s = self._s
        if len(payload) > MAX_EPHEMERAL:
            self._receiver.refuse()
            s.counters["malformed_dropped"] += 1
        elif not s.serving() or s.stations.get(source) is None:
            self._receiver.refuse()  # joining, or from a station we do not know
        elif self._receiver.accept(source, seq, now):
            self._upper.ephemeral(source, payload)

    def forget(self, ident: int) -> None:
        self._receiver.forget(ident)

    def _emit(self, out: EphemeralOut | None, now: float) -> None:
        if out is None:
            return
        s = self._s
        packet = RmpPacket(
            seq=out.seq,
            timestamp=s.timestamp(now),
            options=(Data(),),
            data=out.payload,
            format=FORMAT_EPHEMERAL,
            source=s.member_id,
        )
        # Not Shared.transmit: a side-channel packet is no sign of life for the keepalive.
        s.outbox.append((encode(packet), None))
        s.counters["datagrams_sent"] += 1
