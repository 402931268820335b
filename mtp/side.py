"""The side channel in MTP (coreapi/ephemeral.py; our extension, docs/mtp-wire.md "The side
channel"): best effort beside the web's messages, for what matters only while fresh.

RFC 1301 has no packet for this, and every packet it defines takes part in the web: data
needs a transmit token (§3.2.1) and is accepted or rejected by the master (§2.2.6), empty
and control packets carry the acceptance vector. So a side-channel datagram is not an MTP
packet: its first byte, where an MTP packet has its version (§2.2.1: 0x01), is 0x81, and an
implementation of the RFC drops it as a packet of another version. After it:

    0      1      2            4                      8                     12
    +------+------+------------+----------------------+----------------------+----...
    | 0x81 |  0   | seq (16)   | source identity (32) | web id (32)          | payload
    +------+------+------------+----------------------+----------------------+----...

``seq`` counts the source's side-channel datagrams modulo 2**16; the source is named by its
identity, its first connection id (§2.2.4), which the layer above knows it by after a rejoin
too. It takes no token, holds no place in the acceptance vector, is never nakked, retained
or relayed, and hearing it proves nothing of its source's liveness to the master (§3.2.1's
isMember checks, §3.2.5). Taken only for the web we are in (its connection id, §2.3.1),
from any source: an idle producer or a consumer sends nothing a member would know it by (its
join[request] went before that member joined), and what unknown sources can make us hand up
is bounded by the channel's rates (coreapi/ephemeral.py).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from coreapi import UpperLayer
from coreapi.ephemeral import (
    MAX_EPHEMERAL,
    EphemeralOut,
    EphemeralReceiver,
    EphemeralSender,
    ephemeral_counters,
)
from mtp.link import Link

SIDE_VERSION = 0x81
HEADER = struct.Struct("!BBHII")


def is_side_channel(data: bytes) -> bool:
    """Whether ``data`` claims to be a side-channel datagram (its first byte), not MTP."""
    return bool(data) and data[0] == SIDE_VERSION


def encode_side(seq: int, source: int, web: int, payload: bytes) -> bytes:
    return HEADER.pack(SIDE_VERSION, 0, seq, source, web) + payload


class SideChannel:
    """One member's side channel: its pacing, its numbering and what it takes in. ``in_web``:
    whether the member is in the web with the board (ready, or leaving): only then does it
    send or take in anything."""

    def __init__(self, link: Link, upper: UpperLayer, in_web: Callable[[], bool]) -> None:
        self._link = link
        self._upper = upper
        self._open = in_web
        self._sender = EphemeralSender()
        self._receiver = EphemeralReceiver()

    def counters(self) -> dict[str, int]:
        return ephemeral_counters(self._sender, self._receiver)

    def send(self, payload: bytes, now: float) -> None:
        """Sent now, or when the rate allows; dropped while we are not in the web."""
        EphemeralSender.check(payload)
        if self._in_web():
            self._emit(self._sender.offer(payload, now))

    def timer(self, now: float) -> None:
        if self._in_web():
            self._emit(self._sender.due(now))

    def next_deadline(self) -> float | None:
        return self._sender.deadline()

    def stop(self) -> None:
        self._sender.drop_held()

    def receive(self, data: bytes, now: float) -> None:
        link = self._link
        if len(data) < HEADER.size or len(data) > HEADER.size + MAX_EPHEMERAL:
            link.counters["malformed_dropped"] += 1
            self._receiver.refuse()
            return
        _, reserved, seq, source, web_id = HEADER.unpack_from(data)
        if reserved:
            link.counters["malformed_dropped"] += 1
            self._receiver.refuse()
        elif not self._in_web() or web_id != link.web.id or source == link.identity:
            self._receiver.refuse()
        elif self._receiver.accept(source, seq, now):
            self._upper.ephemeral(source, data[HEADER.size :])

    def _in_web(self) -> bool:
        return self._open() and self._link.web.known

    def forget(self, ident: int) -> None:
        self._receiver.forget(ident)

    def _emit(self, out: EphemeralOut | None) -> None:
        if out is None:
            return
        link = self._link
        link.outbox.append((encode_side(out.seq, link.identity, link.web.id, out.payload), None))
        link.counters["datagrams_sent"] += 1
