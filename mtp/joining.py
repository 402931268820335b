"""Joining a web (RFC 1301 §3.1, §3.1.1, §3.1.2; TR 90-1141 §3.4): the join[request]s a
member sends until a master answers (and a new master's probes for a web already there), the
reading of a join[deny], and taking up a join[confirm]: a new ``Web`` at the message s it
names. The phase it then enters is the core's to change (``JoiningHost.joined``)."""

from __future__ import annotations

from typing import Protocol

from coreapi import Address
from mtp.link import TRANSPORT_TYPES, Link, Phase
from mtp.messages import InMessage
from mtp.params import MtpParams
from mtp.web import Web
from mtp.wire import (
    JoinData,
    JoinModifier,
    MemberClass,
    MtpHeader,
    MtpPacket,
    PacketType,
    QuitModifier,
    TransportClass,
    TransportType,
)

_TYPE_NAMES = {TransportType.N_X_N: "NxN", TransportType.ONE_X_N: "1xN"}


def join_request(
    p: MtpParams, member_class: MemberClass, member_id: int, introduction: bytes = b""
) -> MtpPacket:
    """§3.1.1: join[request] to the web's NSAP (destination unknown, 0), with the class, the
    transport we need, and our own parameters (the values we would run); then, our extension,
    the joiner's introduction (docs/mtp-wire.md)."""
    body = JoinData(
        member_class,
        TransportClass.RELIABLE,
        TRANSPORT_TYPES[p.transport_type],
        p.min_throughput,
        p.max_data_unit,
        introduction=introduction,
    )
    header = MtpHeader(
        PacketType.JOIN,
        JoinModifier.REQUEST,
        member_id,
        0,
        round(p.heartbeat * 1000),
        p.window,
        p.retention,
    )
    return MtpPacket(header, body)


def deny_reason(p: MtpParams, member_class: MemberClass, web: JoinData) -> str:
    """Why a join[deny] (whose data part carries the web's values, docs/mtp.md) refused
    what we asked for (§3.1.2)."""
    if member_class is MemberClass.MASTER:
        return "the web already has a master"
    if web.transport_type is not TRANSPORT_TYPES[p.transport_type]:
        return (
            f"the web is {_TYPE_NAMES[web.transport_type]}, this member asked for "
            f"{_TYPE_NAMES[TRANSPORT_TYPES[p.transport_type]]}"
        )
    if web.transport_type is TransportType.ONE_X_N and member_class is MemberClass.PRODUCER:
        return "the web is 1xN: its master is its only producer; join as a consumer"
    if web.max_data_unit > p.max_data_unit:
        return (
            f"the web's data unit is {web.max_data_unit} bytes, above this member's "
            f"maximum of {p.max_data_unit}"
        )
    if web.min_throughput < p.min_throughput:
        return (
            f"the web carries at most {web.min_throughput} kB/s, this member needs "
            f"{p.min_throughput} kB/s"
        )
    return "the master admits no one now (its web is full, or it is closing it)"


class JoiningHost(Protocol):
    """What joining needs of the member it is part of (the core)."""

    @property
    def phase(self) -> Phase: ...

    def abort(self, reason: str) -> None: ...

    def web_answers(self, reason: str, now: float) -> None:
        """While probing, a web answered: stand down (or, as a successor, join it)."""
        ...

    def finish(self) -> None: ...

    def joined(self, now: float) -> None:
        """The web is ours (``link.web``): sync to its board, or be ready (TR §3.4)."""
        ...

    def report_active(self, member: int) -> None: ...

    def incoming(self, number: int) -> InMessage | None:
        """What has arrived of message ``number`` (None: not a packet of it)."""
        ...


class Joining:
    def __init__(self, link: Link, host: JoiningHost) -> None:
        self._link = link
        self._host = host
        self.tries = 0  # join[request]s since we last (re)started joining
        self.confirmed_at = 0.0  # when the last join[confirm] was taken up
        self.introduction = b""  # what our join[request]s carry after Figure 3 (extension)
        self._reported = False
        self._probes = 0

    def restart(self, old: Web) -> None:
        """A rejoin (§3.2.5) asks again, counting from one, as a new instantiation.

        The old one quits (§3.3.1, once, unanswered), so that the master drops it and
        decides its token at once. The new one gets a new connection id (§3.1.1: a joining
        process "should have already assigned a unique connection identifier to its transport
        instantiation"): under the old id, a master that confirmed us within retention
        heartbeats would take our request for a retry and answer with the old join[confirm],
        whose message s and board are long past (issue 17)."""
        link = self._link
        self.tries = 0
        if old.master_addr is not None and not link.is_master:
            quit_request = link.control(
                PacketType.QUIT, QuitModifier.REQUEST, old.master_id, link.own_tsap()
            )
            link.send(quit_request, old.master_addr)
        link.new_connection_id(avoid=old.id)

    def restart_probes(self) -> None:
        """A successor taking over probes as a new master does (§3.1)."""
        self._probes = 0

    def probe(self) -> bool:
        """§3.1: before founding a web, a master asks whether one already answers on this
        NSAP; True once it has asked probe_count times (it then founds one)."""
        if self._probes >= self._link.p.probe_count:
            return True
        self._probes += 1
        self.send_request()
        return False

    def send_request(self) -> None:
        p = self._link.p
        self.tries += 1
        if (
            self._host.phase is Phase.JOINING
            and not self._reported
            and self.tries > p.join_report_after
        ):
            self._reported = True
            # Said to a person, maybe in an app: what is true, not a command line to type
            # (docs/mtp.md's failure table gives the CLI advice).
            self._link.upper.failure(
                f"no one hosts an mtp board on {p.group} yet ({self.tries - 1} "
                "join requests unanswered); still asking"
            )
        request = join_request(p, self._link.member_class, self._link.member_id, self.introduction)
        self._link.send(request, None)

    def on_answer(self, header: MtpHeader, body: JoinData, addr: Address, now: float) -> None:
        """join[confirm] or join[deny] addressed to us (§3.1.2)."""
        link, phase = self._link, self._host.phase
        if phase is Phase.PROBING:
            reason = (
                deny_reason(link.p, link.member_class, body)
                if header.modifier is JoinModifier.DENY
                else "it admitted this master as a member"
            )
            self._host.web_answers(
                f"an mtp web already answers on {link.p.group} (master {header.source:#x}): "
                f"{reason}. Not founding a second web there.",
                now,
            )
            return
        if phase is not Phase.JOINING:
            return  # a retransmitted confirm, or one we no longer wait for
        if header.modifier is JoinModifier.DENY:
            reason = deny_reason(link.p, link.member_class, body)
            link.upper.failure(f"the mtp master {header.source:#x} refused this member: {reason}")
            self._host.finish()
            return
        self._take_confirm(header, body, addr, now)

    def check_board(self, now: float) -> None:
        """TR §3.4: a joiner gets the board as message s. A master that never sends it (one
        that does not implement the TR's join with state) left the joiner waiting for ever,
        saying nothing. Our master rejects s if its application gives no board within its
        state_timeout, which makes the joiner rejoin; so once state_timeout and retention
        heartbeats have passed with nothing heard of s, no board is coming: the member says
        so and stops, rather than show a board that would differ from everyone's."""
        link, host = self._link, self._host
        if host.phase is not Phase.SYNCING:
            return
        web = link.web
        waited = now - self.confirmed_at
        if waited <= link.p.state_timeout + link.retention * link.heartbeat:
            return
        if web.book.decided(web.join_number) or host.incoming(web.join_number) is not None:
            return  # it is coming (or was rejected: the receiver rejoins)
        host.abort(
            f"the mtp master {web.master_id:#x} admitted this member but sent no board in "
            f"{waited:.0f} s (TR 90-1141 §3.4); this member stops rather than show a board "
            "that differs from the others'"
        )

    def _take_confirm(self, header: MtpHeader, body: JoinData, addr: Address, now: float) -> None:
        link = self._link
        self.confirmed_at = now
        number = header.acceptance.message_seq  # provisional numbering until the board
        link.web = Web(
            body.multicast_id,
            header.source,
            addr,
            heard_master_at=now,
            next=number,
            next_deliver=number,
            join_number=number,
        )
        link.remember(header.source, addr)
        link.unit = body.max_data_unit or link.unit
        link.adopt_parameters(header)
        link.web.book.learn(number, header.acceptance.statuses)
        link.upper.protocol_event(
            "joined", {"master": header.source, "message": number, "connection": link.member_id}
        )
        self._host.report_active(header.source)
        self._host.joined(now)
