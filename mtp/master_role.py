"""The master's part of an MTP member (RFC 1301 §3.1, §3.2.1, §3.3; TR 90-1141 §3.4, §5.1):
it grants transmit tokens, admits joiners, alone decides whether a message is accepted or
rejected, and closes the web. Only the master's core has one; it lives as long as the core.

The master's roster is the web's (``Web.members``); its books (tokens out, requests queued,
joiners waiting) are here. What it needs of the rest of the member, delivery, its own
messages and their fate, the phase, is the ``MasterHost`` the core provides.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Protocol

from coreapi import Address
from mtp.bounds import MAX_BOARD_MESSAGE, MAX_PACKETS_PER_MESSAGE, MAX_REPAIR_BYTES
from mtp.failover import SUCCESSION_EVERY, SUCCESSION_REPEATS, successors
from mtp.framing import STATE_SUBCHANNEL, encode_state, split
from mtp.link import TRANSPORT_TYPES, Link, Phase
from mtp.master import MAX_MEMBERS, Grant, Member, TokenQueue
from mtp.messages import InMessage, OutMessage
from mtp.wire import (
    STATUS_COUNT,
    EmptyModifier,
    IsMemberModifier,
    JoinData,
    JoinModifier,
    MemberClass,
    MemberConfirm,
    MessageStatus,
    MtpHeader,
    PacketType,
    QuitModifier,
    TokenModifier,
    TransportClass,
    TransportType,
    Tsap,
    TsapList,
)


class MasterHost(Protocol):
    """What the master's part needs of the member it is part of (the core)."""

    @property
    def phase(self) -> Phase: ...

    def busy(self) -> bool:
        """Payloads queued, being sent or retransmitted, or a message half received."""
        ...

    def own(self, number: int) -> OutMessage | None: ...

    def incoming(self, number: int) -> InMessage | None: ...

    def deliver(self, now: float) -> None: ...

    def on_decided(self, number: int, status: MessageStatus, now: float) -> None: ...

    def take_own_token(self, number: int, now: float) -> None: ...

    def check_leave(self, now: float) -> None: ...

    def restart_tick(self, at: float) -> None: ...

    def send_own_state(self, message: OutMessage, now: float) -> None: ...

    def finish(self) -> None: ...


class MasterRole:
    def __init__(self, link: Link, host: MasterHost) -> None:
        self._link = link
        self._host = host
        self.tokens = TokenQueue()
        self.grants: dict[int, Grant] = {}
        self.join_waiting: dict[int, tuple[Address, JoinData]] = {}
        self._state_requests: dict[int, tuple[int, float]] = {}  # request -> (message, asked at)
        self._next_request = 1
        # Extension: accepted messages kept to repair members whose producer cannot.
        self.repair_cache: OrderedDict[int, InMessage] = OrderedDict()
        self.repair_bytes = 0  # at most MAX_REPAIR_BYTES (ours, issue 20: large messages)
        self._idle_beats = 0
        self.hibernating = False
        self.announce = False  # a decision not yet carried by one of our packets
        self.quit_confirmed: set[int] = set()
        self.new_quit_confirms = False
        self.quit_tries = 0
        self._quiet_rounds = 0
        self._decided_at: dict[int, float] = {}
        self._succession_sent: tuple[int, ...] = ()
        self._beats_since_succession = 0
        self._succession_repeats = 0

    def tick_period(self) -> float:
        return self._link.p.hibernate_heartbeat if self.hibernating else self._link.heartbeat

    def tick(self, now: float) -> None:
        self._check_grants(now)
        self.grant_tokens(now)  # those held back by _may_shift_out
        self._check_state_requests(now)
        idle = not (self.grants or self.tokens or self.join_waiting or self._host.busy())
        self._idle_beats = self._idle_beats + 1 if idle else 0
        if self._host.phase is Phase.QUITTING:
            self.quit_round(now)
            return
        if not self.hibernating and self._idle_beats >= self._link.p.hibernate_after:
            self.hibernating = True
            self._link.counters["hibernations"] += 1
            self._link.upper.protocol_event("hibernate", {"heartbeat_ms": self._hibernate_ms()})
        # §2.2.7: at least one packet from the master every heartbeat.
        if self.hibernating:
            self.send_empty(EmptyModifier.HIBERNATE, now)
        elif not self._send_succession():
            self.send_empty(EmptyModifier.DALLY, now)

    def _send_succession(self) -> bool:
        """Extension (mtp/failover.py): the heartbeat names the members that take over if we
        die: on each of the SUCCESSION_REPEATS heartbeats after the list changes (one lost
        packet must not leave a member without it), then every SUCCESSION_EVERY. False if
        it is not due (or there is no one to name)."""
        link = self._link
        self._beats_since_succession += 1
        if not link.p.failover or link.web.id == 0:
            return False
        order = successors(link.web.members, link.member_id)
        if order != self._succession_sent:
            self._succession_sent = order
            self._succession_repeats = SUCCESSION_REPEATS
        if not order or (
            self._succession_repeats == 0 and self._beats_since_succession < SUCCESSION_EVERY
        ):
            return False
        self._succession_repeats = max(0, self._succession_repeats - 1)
        self._beats_since_succession = 0
        self.announce = False
        tsaps = TsapList(tuple(link.tsap(ident, None) for ident in order))
        link.send(
            link.control(PacketType.EMPTY, EmptyModifier.SUCCESSION, link.web.id, tsaps), None
        )
        return True

    def _hibernate_ms(self) -> int:
        return round(self._link.p.hibernate_heartbeat * 1000)

    def wake(self, now: float) -> None:
        self._idle_beats = 0
        if self.hibernating:
            self.hibernating = False
            self._link.upper.protocol_event("wake", {})
            self._host.restart_tick(now + self._link.heartbeat)
            self.send_empty(EmptyModifier.DALLY, now)

    def send_empty(self, modifier: EmptyModifier, now: float) -> None:
        if self._link.web.id == 0:
            return
        self.announce = False
        packet = self._link.control(PacketType.EMPTY, modifier, self._link.web.id, None)
        if modifier is EmptyModifier.HIBERNATE:
            header = replace(packet.header, heartbeat=self._hibernate_ms())
            packet = replace(packet, header=header)
        self._link.send(packet, None)

    def _admission(self, joiner: int, wish: JoinData) -> str | None:
        """Why the master must refuse ``wish`` (§3.1.2), or None."""
        if wish.member_class is MemberClass.MASTER:
            return "master"
        if wish.transport_class is not TransportClass.RELIABLE:
            return "class"
        web_type = TRANSPORT_TYPES[self._link.p.transport_type]
        if wish.transport_type is not web_type:
            return "type"
        if web_type is TransportType.ONE_X_N and wish.member_class is MemberClass.PRODUCER:
            return "producer"
        if wish.max_data_unit and wish.max_data_unit < self._link.unit:
            return "unit"
        if wish.min_throughput > self._throughput():
            return "throughput"
        if joiner not in self._link.web.members and len(self._link.web.members) >= MAX_MEMBERS:
            return "full"
        return None

    def _throughput(self) -> int:
        return min(0xFFFF, int(self._link.window * self._link.unit / self._link.heartbeat / 1000))

    def _web_data(self, member_class: MemberClass, multicast_id: int) -> JoinData:
        return JoinData(
            member_class,
            TransportClass.RELIABLE,
            TRANSPORT_TYPES[self._link.p.transport_type],
            self._throughput(),
            self._link.unit,
            multicast_id,
        )

    def on_join_request(self, joiner: int, wish: JoinData, addr: Address, now: float) -> None:
        self.wake(now)
        refusal = self._admission(joiner, wish)
        if refusal is not None or self._host.phase is not Phase.READY:
            body = self._web_data(wish.member_class, 0)
            self._link.send(
                self._link.control(PacketType.JOIN, JoinModifier.DENY, joiner, body), addr
            )
            self._link.counters["joins_denied"] += 1
            self._link.upper.protocol_event(
                "join_denied", {"joiner": joiner, "reason": refusal or "leaving"}
            )
            return
        member = self._link.web.members.get(joiner)
        if (
            member is not None
            and now - member.joined_at <= self._link.retention * self._link.heartbeat
            and member.last_heard <= member.joined_at
        ):
            # A retransmitted request: our confirm was lost. The same answer again. Not once
            # we heard from it since: then it is a new instantiation under the same id (a
            # restarted process), which the old confirm would send back to a past board.
            self._send_join_confirm(member, now)
            return
        if member is not None:
            # It rejoins (it abandoned the web): what it held is void.
            self.remove_member(joiner, now, "rejoined", report=False)
        if joiner not in self.join_waiting and len(self.join_waiting) < MAX_MEMBERS:
            self.join_waiting[joiner] = (addr, wish)
        self._admit_joiners(now)

    def _admit_joiners(self, now: float) -> None:
        """TR §3.4: joiners are confirmed while the master holds every token, that is once
        every message before them is decided; they then get the board as message s."""
        if not self.join_waiting or self.grants or self._host.phase is not Phase.READY:
            return
        if not self.may_shift_out(self._link.web.next - STATUS_COUNT, now):
            return
        number = self._link.web.next
        with_state = self._link.p.join_with_state
        if with_state:
            # Message s is the board; we grant it to ourselves.
            self.grants[number] = Grant(number, self._link.member_id, now, now, busy=True)
            self._link.web.next += 1
        for joiner, (addr, wish) in self.join_waiting.items():
            member = Member(joiner, addr, wish.member_class, now, number, now)
            self._link.web.members[joiner] = member
            self._link.remember(joiner, addr)
            self._send_join_confirm(member, now)
            self._link.counters["joins_confirmed"] += 1
            self._link.report_active(joiner)
            self._link.upper.protocol_event("join_confirmed", {"joiner": joiner, "message": number})
        self.join_waiting.clear()
        if with_state:
            self._host.deliver(now)  # everything before s, so that the board matches it
            request = self._next_request
            self._next_request += 1
            self._state_requests[request] = (number, now)
            self._link.upper.board_state_requested(request)
        self.grant_tokens(now)

    def _send_join_confirm(self, member: Member, now: float) -> None:
        body = self._web_data(member.member_class, self._link.web.id)
        self._link.send(
            self._link.control(
                PacketType.JOIN, JoinModifier.CONFIRM, member.ident, body, member.join_number
            ),
            member.address,
        )

    def _check_state_requests(self, now: float) -> None:
        for request, (number, asked_at) in list(self._state_requests.items()):
            if now - asked_at > self._link.p.state_timeout:
                del self._state_requests[request]
                self._link.upper.failure(
                    f"the application gave no board for mtp joiners within "
                    f"{self._link.p.state_timeout:.0f} s; they will ask again"
                )
                self.decide(number, MessageStatus.REJECTED, now)

    def on_token_request(self, header: MtpHeader, now: float) -> None:
        requester = header.source
        if self._host.phase is not Phase.READY:
            return  # §3.3.2: a quitting master grants nothing
        member = self._link.web.members.get(requester)
        if member is None or member.member_class is MemberClass.CONSUMER:
            return
        self.wake(now)
        self._consider_suggestion(header, now)
        seen = self._link.web.number(header.acceptance.message_seq)
        grant = self.grants.get(member.last_grant)
        if grant is not None and grant.owner == requester and not grant.busy:
            # It has not used the token we gave it: never a second one. §3.2.1: "the master
            # will respond to any process that has a token in pending state with a
            # reassignment of that token", unless the request crossed our confirm ("passed
            # the token[confirm] in the night"): one sent a heartbeat after the grant, or
            # one whose highest message number observed (§2.2.6) is past the grant's, so
            # that the requester heard the web after our confirm went, did not cross it.
            if now - grant.granted_at >= self._link.heartbeat or seen > grant.number:
                # §3.2.1: its confirm was lost; the pending token is assigned to it again.
                self._send_token_confirm(grant, now)
                self._link.counters["token_confirms_resent"] += 1
            return
        if member.last_grant >= seen:
            # A retry sent before our last confirm reached it: a request made after it would
            # carry a later message number (§2.2.6: "the highest ... observed").
            return
        self.tokens.add(requester)
        self.grant_tokens(now)

    def grant_tokens(self, now: float) -> None:
        """§3.2.1, §2.2.6, TR §5.1: grant in request order while fewer than ``tokens`` are
        out, no joiner waits, and granting would not shift a pending status out of the
        vector."""
        if self.announce:
            self.send_empty(EmptyModifier.DALLY, now)  # before a grant shifts it out
        while (
            self.tokens
            and len(self.grants) < self._link.p.tokens
            and not self.join_waiting
            and self.may_shift_out(self._link.web.next - STATUS_COUNT, now)
            and self._host.phase in (Phase.READY, Phase.LEAVING)
        ):
            owner = self.tokens.pop()
            number = self._link.web.next
            self._link.web.next += 1
            grant = Grant(number, owner, now, now)
            self.grants[number] = grant
            self._link.counters["tokens_granted"] += 1
            self._link.upper.protocol_event("token_granted", {"message": number, "owner": owner})
            if owner == self._link.member_id:
                grant.busy = True
                self._host.take_own_token(number, now)
            else:
                self._link.web.members[owner].last_grant = number
                self._send_token_confirm(grant, now)
        self._admit_joiners(now)

    def may_shift_out(self, number: int, now: float) -> bool:
        """§2.2.6: a pending status is never shifted out of the vector. Ours too: a decided
        status stays in it for a heartbeat at least, so that one of our heartbeat empties
        carries it to members that lost the packets that did (else they must rejoin)."""
        if not self._link.web.book.decided(number):
            return False
        decided_at = self._decided_at.get(number)
        return decided_at is None or now - decided_at >= self._link.heartbeat

    def _send_token_confirm(self, grant: Grant, now: float) -> None:
        member = self._link.web.members.get(grant.owner)
        if member is None:
            return
        tsaps = TsapList((Tsap(self._link.group_ip, self._link.group_port, self._link.web.id),))
        self._link.send(
            self._link.control(
                PacketType.TOKEN, TokenModifier.CONFIRM, grant.owner, tsaps, grant.number
            ),
            member.address,
        )

    def heard_holder(self, number: int, source: int, now: float) -> None:
        grant = self.grants.get(number)
        if grant is not None and grant.owner == source:
            grant.heard_at = now
            grant.busy = True
            grant.checks = 0

    def _check_grants(self, now: float) -> None:
        """§3.2.1: re-send lost confirms; check a silent holder with isMember; remove it and
        reject its message when it does not answer."""
        for grant in list(self.grants.values()):
            if grant.owner == self._link.member_id:
                continue
            silent = now - grant.heard_at
            if (
                not grant.busy
                and grant.confirms < self._link.retention
                and silent >= self._link.heartbeat
            ):
                grant.confirms += 1
                self._send_token_confirm(grant, now)
                self._link.counters["token_confirms_resent"] += 1
            if silent <= self._link.p.holder_silence:
                continue
            if grant.revivals > (1 if grant.busy else 0):
                # Alive (it answered isMember) yet silent on its token again, or it never
                # took the token up: the message cannot complete; reject it.
                self.decide(grant.number, MessageStatus.REJECTED, now)
                continue
            if grant.checks < self._link.retention:
                grant.checks += 1
                member = self._link.web.members.get(grant.owner)
                if member is not None:
                    self._link.send_is_member_request(grant.owner, member.address, grant.owner)
                continue
            self.remove_member(grant.owner, now, "silent while holding a transmit token")

    def remove_member(self, ident: int, now: float, why: str, report: bool = True) -> None:
        member = self._link.web.members.pop(ident, None)
        self.tokens.discard(ident)
        for grant in [g for g in self.grants.values() if g.owner == ident]:
            message = self._host.incoming(grant.number)
            if message is not None and message.complete:
                self.decide(grant.number, MessageStatus.ACCEPTED, now)
            else:
                self.decide(grant.number, MessageStatus.REJECTED, now)
        if member is not None and report:
            self._link.counters["members_removed"] += 1
            self._link.report_left(self._link.identity_of(ident))
            self._link.upper.protocol_event("member_removed", {"member": ident, "why": why})

    def decide(self, number: int, status: MessageStatus, now: float) -> None:
        """The master's verdict on message ``number`` (§2.2.6: it alone sets it)."""
        if not self._link.web.book.decide(number, status):
            return
        if number not in self._decided_at:
            self._decided_at[number] = now
            if len(self._decided_at) > 4 * STATUS_COUNT:
                for old in sorted(self._decided_at)[: -2 * STATUS_COUNT]:
                    del self._decided_at[old]
        grant = self.grants.pop(number, None)
        if grant is None and self._host.own(number) is None:
            return
        accepted = status is MessageStatus.ACCEPTED
        self._link.counters["messages_accepted" if accepted else "messages_rejected"] += 1
        self._link.upper.protocol_event(
            "message_accepted" if accepted else "message_rejected",
            {"message": number, "owner": grant.owner if grant else self._link.member_id},
        )
        if accepted:
            self._cache_for_repair(number)
        self.announce = True
        self._host.on_decided(number, status, now)
        self._host.deliver(now)
        self.grant_tokens(now)
        if self._host.phase in (Phase.LEAVING, Phase.QUITTING):
            self._host.check_leave(now)

    def _cache_for_repair(self, number: int) -> None:
        """Extension: the master keeps accepted messages to repair members whose producer
        cannot (it left, or it was never identified)."""
        own = self._host.own(number)
        if own is not None:
            cached = InMessage(number, 0.0, self._link.member_id, own.subchannel)
            cached.packets = dict(enumerate(own.packets))
            cached.last = own.last
        else:
            message = self._host.incoming(number)
            if message is None or not message.complete:
                return
            cached = InMessage(number, 0.0, message.source, message.subchannel)
            cached.packets = dict(message.packets)
            cached.last = message.last
        cached.size = sum(len(packet) for packet in cached.packets.values())
        old = self.repair_cache.pop(number, None)
        self.repair_bytes += cached.size - (old.size if old is not None else 0)
        self.repair_cache[number] = cached
        # The newest one stays whatever its size (a message is at most MAX_MESSAGE_BYTES).
        while len(self.repair_cache) > 1 and (
            len(self.repair_cache) > self._link.p.repair_cache
            or self.repair_bytes > MAX_REPAIR_BYTES
        ):
            self.repair_bytes -= self.repair_cache.popitem(last=False)[1].size

    def _consider_suggestion(self, header: MtpHeader, now: float) -> None:
        """§3.4.1: members may suggest new values; the master takes those within bounds.
        Every packet carries its sender's values, so values the web ran before are a member
        that has not heard of a change yet, not a suggestion: they are ignored."""
        heartbeat = header.heartbeat / 1000.0
        new = (heartbeat, header.window, header.retention)
        if (header.heartbeat, header.window, header.retention) in self._link.values_run:
            return
        try:
            self._link.check_bounds(*new)
        except ValueError:
            return
        self._link.set_parameters(*new)

    def start_quitting(self, now: float) -> None:
        """§3.3.2: the first round of quit[request]s, counted afresh."""
        self.quit_tries = 0
        self.quit_round(now)

    def quit_round(self, now: float) -> None:
        """§3.3.2: quit[request] to the whole web until retention rounds bring no confirm."""
        if self.quit_tries and not self.new_quit_confirms:
            self._quiet_rounds += 1
        else:
            self._quiet_rounds = 0
        self.new_quit_confirms = False
        everyone = set(self._link.web.members) <= self.quit_confirmed
        if self._quiet_rounds >= self._link.retention or (self.quit_tries and everyone):
            self._host.finish()
            return
        self.quit_tries += 1
        target = Tsap(self._link.group_ip, self._link.group_port, self._link.web.id)
        self._link.send(
            self._link.control(PacketType.QUIT, QuitModifier.REQUEST, self._link.web.id, target),
            None,
        )

    # -- the interface's calls, as the master answers them ---------------------------------

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        """The application's board for the joiners confirmed at message s (TR §3.4)."""
        asked = self._state_requests.pop(request, None)
        if asked is None or self._host.phase is Phase.FINISHED:
            return
        number, _ = asked
        if number not in self.grants:
            return  # given up on (state_timeout): the joiners will ask again
        # The verdicts on the messages before s that the repair cache can tell (it holds the
        # latest accepted ones): a rejoiner settles with them a message of its own it sent
        # whole and never heard decided (issue 17; the join[confirm] carries only 12).
        oldest = min(self.repair_cache, default=number)
        # The board goes packed (ours, issue 18: coreapi/boardstate.py): ~2.5 times fewer
        # packets for a board of strokes, within the window of each heartbeat (§3.2.2).
        body = encode_state(
            number, state, [n in self.repair_cache for n in range(number - 1, oldest - 1, -1)]
        )
        packets = split(body, self._link.unit)
        if len(packets) > MAX_PACKETS_PER_MESSAGE or len(body) > MAX_BOARD_MESSAGE:
            # Ours (issue 20): one message carries at most 65,536 packets (§2.2.6) and a
            # joiner keeps at most MAX_BOARD_MESSAGE bytes of it (mtp/bounds.py).
            self._link.upper.failure(
                f"the board ({len(state)} bytes, {len(body)} packed) is too large to give a "
                f"joiner in one mtp message of at most {MAX_PACKETS_PER_MESSAGE} packets of "
                f"{self._link.unit} bytes and {MAX_BOARD_MESSAGE} bytes"
            )
            self.decide(number, MessageStatus.REJECTED, now)
            self.flush(now)
            return
        message = OutMessage(number, STATE_SUBCHANNEL, packets, [])
        counters = self._link.counters
        counters["state_bytes"] += len(state)
        counters["state_bytes_sent"] += len(body)
        counters["state_packets_sent"] += len(packets)
        self._link.upper.protocol_event(
            "state_sending",
            {"message": number, "bytes": len(state), "sent": len(body), "packets": len(packets)},
        )
        self._host.send_own_state(message, now)

    def leave(self) -> None:
        """§3.3.2: the master keeps every token it gets back and grants no more (but its own
        queued payloads still go out under tokens it gives itself)."""
        for member in list(self.tokens):
            if member != self._link.member_id:
                self.tokens.discard(member)
        self.join_waiting.clear()

    def flush(self, now: float) -> None:
        """Status changes go out at once in one empty, not at the next beat (§2.2.6)."""
        if self.announce and self._host.phase is not Phase.FINISHED:
            self.send_empty(EmptyModifier.DALLY, now)

    def heard_from(self, source: int, kind: PacketType, modifier: object, now: float) -> bool:
        """A packet from ``source``: a member's is noted; a stranger's is refused (True
        unless so) but for data (relayed, or before its join) or a quit[request] (§3.3.3)."""
        member = self._link.web.members.get(source)
        if member is not None:
            member.last_heard = now
            return True
        return kind is PacketType.DATA or (
            kind is PacketType.QUIT and modifier is QuitModifier.REQUEST
        )

    # -- quit and isMember (§3.3, §3.4.3) ---------------------------------------------------

    def on_quit_confirm(self, source: int, now: float) -> None:
        self.quit_confirmed.add(source)
        self.new_quit_confirms = True
        self.remove_member(source, now, "quit", report=source in self._link.web.members)

    def on_quit_request(self, source: int, target: Tsap, addr: Address, now: float) -> None:
        if target.connection_id != source:
            return
        # §3.3.1: a member leaves; confirm (also to one we no longer know, §3.3.3).
        link = self._link
        link.send(
            link.control(PacketType.QUIT, QuitModifier.CONFIRM, source, link.tsap(source, addr)),
            addr,
        )
        if source in link.web.members:
            self.remove_member(source, now, "quit")

    def answer_is_member(self, source: int, body: Tsap, addr: Address, now: float) -> None:
        """§3.4.3: the master knows every member, and how long ago it last heard each."""
        link = self._link
        target = body.connection_id
        member = link.web.members.get(target)
        if member is None:
            reply = link.control(PacketType.IS_MEMBER, IsMemberModifier.DENY, source, body)
        else:
            age = min(2**32 - 1, max(0, round((now - member.last_heard) * 1000)))
            reply = link.control(
                PacketType.IS_MEMBER,
                IsMemberModifier.CONFIRM,
                source,
                MemberConfirm(link.tsap(target, member.address), age),
            )
        link.send(reply, addr)

    def on_is_member_confirm(self, source: int, target: int, now: float) -> None:
        """A token holder we checked (§3.2.1) answered: it is alive."""
        for grant in self.grants.values():
            if grant.owner == source == target:
                grant.heard_at = now
                grant.checks = 0
                grant.revivals += 1
