"""Helpers for the tests that drive one part of an MTP member alone (mtp/web.py,
mtp/receiver.py, mtp/sender.py, mtp/master_role.py), with no MtpCore: a real ``Link`` whose
upper layer records what it is told, and a fake host standing in for the rest of the member."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mtp.link import Link, Phase
from mtp.messages import InMessage, OutMessage
from mtp.params import params_from_mapping
from mtp.wire import MessageStatus, MtpPacket, decode
from tests.mtp.core_harness import MASTER, WEB, addr_of
from whiteboard.transport.events import Delivered, Event, EventQueue, Failure, ProtocolEvent


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def make_link(member_id: int, role: str = "producer", **params: object) -> Link:
    """A Link in the seed profile (heartbeat 200 ms, window 20, retention 3)."""
    # The RFC's values, our random nak wait off (exact times), as tests/mtp/core_harness.py.
    settings: dict[str, object] = {"profile": "seed", "role": role, "nak_spread": 0.0, **params}
    return Link(
        member_id, EventQueue(clock=Clock()), random.Random(7), params_from_mapping(settings)
    )


def in_web(link: Link, master: int = MASTER, next_number: int = 0) -> Link:
    """``link`` as a member of web WEB whose master is ``master``."""
    link.web.id = WEB
    link.web.master_id = master
    link.web.master_addr = addr_of(master)
    link.web.next = next_number
    return link


def sent(link: Link) -> list[tuple[MtpPacket, object]]:
    """The datagrams ``link`` queued since last asked, decoded, with their destination."""
    out, link.outbox[:] = list(link.outbox), []
    return [(decode(data), to) for data, to in out]


def events(link: Link) -> list[Event]:
    upper = link.upper
    assert isinstance(upper, EventQueue)
    return list(upper.drain())


def delivered(all_events: list[Event]) -> list[tuple[int, tuple[int, ...], bytes]]:
    return [(e.origin, e.order_key, e.payload) for e in all_events if isinstance(e, Delivered)]


def protocol(all_events: list[Event], name: str) -> list[ProtocolEvent]:
    return [e for e in all_events if isinstance(e, ProtocolEvent) and e.name == name]


def failures(all_events: list[Event]) -> list[str]:
    return [e.reason for e in all_events if isinstance(e, Failure)]


@dataclass
class FakeHost:
    """The rest of the member, as each part sees it; it records what the part asks of it."""

    phase: Phase = Phase.READY
    own_messages: dict[int, OutMessage] = field(default_factory=dict)
    incoming_messages: dict[int, InMessage] = field(default_factory=dict)
    is_busy: bool = False
    calls: list[tuple[object, ...]] = field(default_factory=list)
    sync_result: bool = True

    def own(self, number: int) -> OutMessage | None:
        return self.own_messages.get(number)

    def incoming(self, number: int) -> InMessage | None:
        return self.incoming_messages.get(number)

    def busy(self) -> bool:
        return self.is_busy

    def rejoin(self, reason: str, now: float) -> None:
        self.calls.append(("rejoin", reason))

    def finish_sync(self, subchannel: int | None, body: bytes | None, now: float) -> bool:
        self.calls.append(("finish_sync", subchannel, body))
        self.phase = Phase.READY
        return self.sync_result

    def deliver(self, now: float) -> None:
        self.calls.append(("deliver",))

    def on_decided(self, number: int, status: MessageStatus, now: float) -> None:
        self.calls.append(("on_decided", number, status))

    def take_own_token(self, number: int, now: float) -> None:
        self.calls.append(("take_own_token", number))

    def check_leave(self, now: float) -> None:
        self.calls.append(("check_leave",))

    def restart_tick(self, at: float) -> None:
        self.calls.append(("restart_tick", at))

    def send_own_state(self, message: OutMessage, now: float) -> None:
        self.calls.append(("send_own_state", message.number))

    def finish(self) -> None:
        self.calls.append(("finish",))

    def named(self, name: str) -> list[tuple[object, ...]]:
        return [c for c in self.calls if c[0] == name]
