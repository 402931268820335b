"""Master failover, our extension to RFC 1301 (docs/mtp.md, "Master failover").

RFC 1301 ends a web with its master: a member that hears nothing from the master for retention
heartbeats abandons the web (§3.2.5), and TR 90-1141 §5.2 names this as MTP's weakness. Here the
master names its successors in advance, in order, in the succession packets of its heartbeat
(``empty[succession]``, a TSAP list). When the master falls silent by the RFC's own rule, every
member already knows who comes next, so no second round of guessing is needed: successor k
(from 0) founds a new web on the same group ``k * takeover_gap`` seconds after it gave the master
up, unless an earlier successor's web answered its join requests first; everyone else asks to
join, and joins whichever web answers.

The new web continues the old web's unbounded message numbering past anything a survivor can
have delivered (``resume_from``), so order keys keep rising across the failover. Its board is
the new master's; a survivor that had delivered more of the old web (delivered sequences are
prefixes of one another, TR §3.2, AB-1) hands on what the new board lacks when it receives it
(the application's job: ``whiteboard/replica.py``).

This part is what outlives one membership: the last succession list heard and the plan made
when the master was lost. The core changes the phase and the role.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from mtp.link import Link, Phase
from mtp.master import Member
from mtp.messages import OutMessage
from mtp.wire import (
    STATUS_COUNT,
    EmptyModifier,
    MemberClass,
    MtpHeader,
    MtpPacket,
    PacketType,
    Tsap,
    TsapList,
)

MAX_SUCCESSORS = 8  # named in each succession packet: eight members would all have to die
SUCCESSION_EVERY = 10  # master heartbeats between succession packets (sooner on a change)
SUCCESSION_REPEATS = 3  # succession packets on the heartbeats right after a change
# A member the master never named (it joined just before the master died, or lost every
# succession packet) still takes its turn, after every named one: turn len(order) + 1 + its
# connection id modulo this. Two that pick the same turn found two webs, which then meet
# and merge (dissolve_into): slower, but the board never stays without a master.
UNNAMED_TURNS = 4
# A new web's first number lies this far past the highest the member heard of the old one:
# beyond any message a survivor can have delivered (tokens granted by unicast run up to 12
# ahead of what a member heard, and data up to 24, core.AHEAD).
RESUME_MARGIN = 3 * STATUS_COUNT


def successors(members: Mapping[int, Member], master: int) -> tuple[int, ...]:
    """The members that take over from ``master``, in order: producers before consumers (a
    viewer's application draws nothing, but can host), the oldest membership first (a member
    that stayed long is likeliest to stay), the connection id to break ties."""
    ranked = sorted(
        (m for m in members.values() if m.ident != master),
        key=lambda m: (m.member_class is MemberClass.CONSUMER, m.joined_at, m.ident),
    )
    return tuple(m.ident for m in ranked[:MAX_SUCCESSORS])


class FailoverHost(Protocol):
    """What failover needs of the member it is part of (the core, which alone changes the
    phase and the role)."""

    @property
    def phase(self) -> Phase: ...

    def rejoin(
        self, reason: str, now: float, web_ends: bool = False, master_gone: bool = False
    ) -> float | None: ...

    def become_master(self, now: float) -> None: ...

    def stand_down(self, now: float) -> None: ...

    def stop_being_master(self) -> None: ...


class Failover:
    def __init__(self, link: Link, host: FailoverHost) -> None:
        self._link = link
        self._host = host
        self.order: tuple[int, ...] = ()  # the successors the master named last, in order
        self.order_web = 0  # the web that list belongs to
        self.takeover_at: float | None = None  # when we found a web, if none answers first
        self.resume_from = 0  # the first message number of a web we found
        self.taking_over = False  # probing as a successor: an answering web is joined
        self.gone = 0  # the master we gave up: its answers are not a live web's

    @property
    def enabled(self) -> bool:
        return self._link.p.failover

    def from_master(self, packet: MtpPacket, now: float) -> bool:
        """An empty packet from our master: a succession list is kept; a dissolve makes us
        leave the web for the one it names (True)."""
        modifier = packet.header.modifier
        if modifier is EmptyModifier.SUCCESSION:
            assert isinstance(packet.body, TsapList)
            self.heard(self._link.web.id, packet.body)
        elif modifier is EmptyModifier.DISSOLVE:
            self.master_lost(
                "the mtp master met another web on this group (a partition healed?) and "
                "merged this board into it: joining that web",
                now,
                successor=False,
            )
            return True
        return False

    def heard(self, web: int, tsaps: TsapList) -> None:
        """The master's succession packet: who takes over, in order."""
        order: list[int] = []
        for tsap in tsaps.tsaps[:MAX_SUCCESSORS]:
            if tsap.connection_id and tsap.connection_id not in order:
                order.append(tsap.connection_id)
        self.order, self.order_web = tuple(order), web

    def rank(self) -> int | None:
        """Our place among the successors of the web we are in, or None."""
        if self.order_web != self._link.web.id or self._link.member_id not in self.order:
            return None
        return self.order.index(self._link.member_id)

    def plan(self, now: float, master_gone: bool) -> float | None:
        """We leave ``link.web``: when we take over if no web answers our join requests
        (None: failover is off). With the master gone, successor k's turn comes after k gaps;
        after an ordinary rejoin (the master alive, §3.2.5, §3.2.8) only once the master
        has also been silent for the silence limit, lest a successor rejoin alone."""
        if not self.enabled or self.takeover_at is not None:
            return self.takeover_at  # a plan made in an earlier web stands
        if not self._link.web.known:
            return None  # never in a web (or already left it): no one named us
        web = self._link.web
        self.gone = web.master_id if master_gone else 0
        self.resume_from = max(self.resume_from, web.next + RESUME_MARGIN)
        rank = self.rank()
        if rank is None:  # not named: after every named successor (UNNAMED_TURNS)
            rank = len(self.order) + 1 + self._link.member_id % UNNAMED_TURNS
        self.order, self.order_web = (), 0
        wait = 0.0 if master_gone else self._link.p.silence_limit
        self.takeover_at = now + wait + rank * self._link.p.takeover_gap
        return self.takeover_at

    def due(self, now: float) -> bool:
        return self.takeover_at is not None and now >= self.takeover_at

    # -- the turns ---------------------------------------------------------------------------

    def master_lost(self, reason: str, now: float, successor: bool = True) -> None:
        """The master is gone (silent beyond §3.2.5's limit, left, or merged its web into
        another, ``successor`` false): leave its web, and either take over (the first
        successor it named), plan to if no earlier successor answers, or join whichever web
        answers."""
        link = self._link
        master = link.web.master_id
        takeover = self._host.rejoin(reason, now, web_ends=True, master_gone=successor)
        link.report_left(link.identity_of(master))
        link.upper.protocol_event(
            "master_lost",
            {"master": master, "takeover_in_s": -1.0 if takeover is None else takeover - now},
        )
        if takeover is not None and takeover <= now:
            self.take_over(now)

    def take_over(self, now: float) -> None:
        """Our turn: become the master, probe (§3.1), then found a web that continues the
        old one's numbering (``MtpCore._found_web``)."""
        self.takeover_at = None
        self.taking_over = True
        self._link.upper.protocol_event("taking_over", {"first": self.resume_from})
        self._host.become_master(now)

    def web_answered(self, reason: str, now: float) -> bool:
        """While probing, a web answered: as a successor, join it (True); a master started
        as one must stop instead (False)."""
        if not self.taking_over:
            return False
        self.settled()
        self._link.upper.protocol_event("standing_down", {"reason": reason[:120]})
        self._host.stand_down(now)
        return True

    def meet_master(self, header: MtpHeader, now: float) -> None:
        """As master, another master runs on our group: we stay, or dissolve our web into
        its (``dissolve_into``) and join it."""
        if self._host.phase is not Phase.READY or not self.dissolve_into(header):
            return
        self._host.stop_being_master()
        self._host.rejoin(
            f"another mtp web ({header.destination:#x}) runs on {self._link.p.group}: this "
            "board joins it, and what was drawn on both sides is kept",
            now,
            web_ends=True,
        )

    def deliver_own(self, message: OutMessage) -> None:
        """One of our messages of a web we left, delivered here at its number: the cut of a
        failover takes it whatever its fate (``Sender.abandon``)."""
        link = self._link
        link.upper.protocol_event("own_message_kept", {"message": message.number})
        for index, (stamp, payload) in enumerate(message.records):
            link.counters["delivered"] += 1
            link.upper.deliver(link.identity, (message.number, index), stamp, payload, False)

    def is_other_master(self, header: MtpHeader) -> bool:
        """Only a master sends empty[succession] and empty[hibernate]: one naming another
        web is another master on our group (a partition healed, or two successors)."""
        return (
            self.enabled
            and self._link.web.known
            and header.packet_type is PacketType.EMPTY
            and header.modifier in (EmptyModifier.SUCCESSION, EmptyModifier.HIBERNATE)
            and header.destination not in (self._link.web.id, 0)
        )

    def dissolve_into(self, header: MtpHeader) -> bool:
        """As master, met the master of web ``header.destination``: the web with the lower id
        stays. If that is the other, tell our members to join it (empty[dissolve], three
        times: those that miss all three find the web by its silence) and return True."""
        link = self._link
        if header.destination > link.web.id:
            return False  # the other master yields to us
        other = Tsap(link.group_ip, link.group_port, header.destination)
        dissolve = link.control(PacketType.EMPTY, EmptyModifier.DISSOLVE, link.web.id, other)
        for _ in range(3):
            link.send(dissolve, None)
        return True

    def settled(self) -> None:
        """We are in a web again (joined one, or founded our own)."""
        self.takeover_at = None
        self.taking_over = False
        self.gone = 0
