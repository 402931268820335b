"""Who is a member of the web, as a member (not the master) learns it (RFC 1301 §3.2.8,
§3.4.3): naks are served only to members the master vouched for, and a stranger is asked to
leave. The master knows its roster and needs none of this.

The answers believed (``isMember[confirm]``, for ``member_cache_age``) and the strangers asked
to leave outlive a membership: they are about other members, not about our place in the web.
The naks held while the master is asked, and the questions out, are the web's (``Web``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from coreapi import Address
from mtp.link import Link
from mtp.master_role import MasterRole
from mtp.messages import MAX_NAK_ENTRIES_OUT
from mtp.wire import (
    IsMemberModifier,
    MemberConfirm,
    MtpPacket,
    PacketId,
    PacketType,
    QuitModifier,
    Tsap,
)

MAX_HELD_NAKS = 64
MAX_CACHE = 4096
MAX_HELD_ENTRIES = 4 * MAX_NAK_ENTRIES_OUT  # a few nak lists' worth per requester


class Vouching:
    def __init__(self, link: Link, serve: Callable[[int, Iterable[PacketId], float], None]):
        self._link = link
        self._serve = serve  # the sender's: answer a requester's nak entries
        self.members_cache: dict[int, float] = {}  # member -> believed until
        self.banished: dict[int, float] = {}  # member -> when we last asked it to quit

    def on_is_member(
        self, packet: MtpPacket, addr: Address, now: float, master: MasterRole | None
    ) -> None:
        """§3.4.3: an isMember packet; the master answers from its roster, a member for
        itself, and a member takes the master's answers about nak sources."""
        header, body, source = packet.header, packet.body, packet.header.source
        if header.modifier is IsMemberModifier.REQUEST:
            assert isinstance(body, Tsap)
            if master is not None and body.connection_id != self._link.member_id:
                master.answer_is_member(source, body, addr, now)
            else:
                self.answer(source, body, addr)
        elif header.modifier is IsMemberModifier.CONFIRM:
            assert isinstance(body, MemberConfirm)
            if master is not None:
                master.on_is_member_confirm(source, body.target.connection_id, now)
            else:
                self.on_confirm(source, body, now)
        else:
            # isMember[deny]: the master does not know it; it is asked to leave (§3.2.8).
            assert isinstance(body, Tsap)
            self.on_deny(source, body.connection_id, now)

    def answer(self, source: int, body: Tsap, addr: Address) -> None:
        """isMember[request] to a member: it confirms itself (alive and in the web); of any
        other it cannot confirm the membership, so it denies it (§2.2.2)."""
        link = self._link
        if body.connection_id == link.member_id:
            confirm = MemberConfirm(link.own_tsap(), 0)
            reply = link.control(PacketType.IS_MEMBER, IsMemberModifier.CONFIRM, source, confirm)
        else:
            reply = link.control(PacketType.IS_MEMBER, IsMemberModifier.DENY, source, body)
        link.send(reply, addr)

    def vouched(self, requester: int, now: float) -> bool:
        """§3.4.3: a producer serves naks from members it knows; the master knows them all."""
        web = self._link.web
        if self._link.is_master:
            return requester in web.members
        if requester == web.master_id:
            return True
        until = self.members_cache.get(requester)
        return until is not None and until > now

    def hold(self, requester: int, entries: Iterable[PacketId], now: float) -> None:
        """A nak from a member we cannot vouch for: kept until the master says (§3.4.3).
        Bounded: at most MAX_HELD_NAKS unvouched requesters, each a few lists' worth."""
        held_naks = self._link.web.held_naks
        if requester in held_naks or len(held_naks) < MAX_HELD_NAKS:
            held = held_naks.setdefault(requester, [])
            if len(held) < MAX_HELD_ENTRIES:
                held.extend(entries)
        self.ask_master_about(requester, now)

    def ask_master_about(self, target: int, now: float) -> None:
        web = self._link.web
        tries, next_at = web.asked.get(target, (0, now))
        if next_at > now or web.master_addr is None:
            return
        if tries >= self._link.retention:
            web.asked.pop(target, None)
            web.held_naks.pop(target, None)
            return
        web.asked[target] = (tries + 1, now + self._link.heartbeat)
        self._link.send_is_member_request(web.master_id, web.master_addr, target)

    def ask_again(self, now: float) -> None:
        """Every heartbeat: the questions not yet answered are asked again."""
        for target in list(self._link.web.asked):
            self.ask_master_about(target, now)

    def on_confirm(self, source: int, body: MemberConfirm, now: float) -> None:
        """isMember[confirm] from the master: believed for member_cache_age less its age;
        the naks held from that member are served."""
        web = self._link.web
        if source != web.master_id:
            return
        target = body.target.connection_id
        believed = self._link.p.member_cache_age - body.credibility_ms / 1000.0
        if believed > 0:
            if len(self.members_cache) >= MAX_CACHE:
                self.members_cache.clear()
            self.members_cache[target] = now + believed
        web.asked.pop(target, None)
        held = web.held_naks.pop(target, [])
        if held:
            self._serve(target, held, now)

    def on_deny(self, source: int, target: int, now: float) -> None:
        """isMember[deny] from the master: it does not know ``target``, which is asked to
        leave (§3.2.8)."""
        web = self._link.web
        if source != web.master_id:
            return
        web.asked.pop(target, None)
        web.held_naks.pop(target, None)
        addr = self._link.addresses.get(target)
        if addr is not None:
            self.banish(target, addr, now)

    def banish(self, offender: int, addr: Address, now: float) -> None:
        """quit[request] to a member the web does not know (§3.2.8, §3.3.3), at most once a
        heartbeat each."""
        link = self._link
        last = self.banished.get(offender)
        if last is not None and now - last < link.heartbeat:
            return
        if len(self.banished) >= MAX_CACHE:
            self.banished.clear()
        self.banished[offender] = now
        link.counters["banishments_sent"] += 1
        link.send(
            link.control(
                PacketType.QUIT, QuitModifier.REQUEST, offender, link.tsap(offender, addr)
            ),
            addr,
        )
