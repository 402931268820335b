"""The sending part of an MTP member (RFC 1301 §3.2.1-§3.2.3, §3.2.6): the transmit token it
asks for and uses, the payloads it packs into messages, the window of data packets per
heartbeat, the empty[dally]s after a short message, and the retention of its packets to
answer naks.

The payloads queued (and the window's accounting) outlive a membership; what one membership
has in flight, its messages and their retransmissions, is a ``Flight``, which a rejoin
replaces whole (its undecided payloads go back to the queue first, ``abandon``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from coreapi.seqnum import to_wire
from mtp.bounds import PayloadQueue, batch_limit
from mtp.framing import (
    NAMED_SUBCHANNEL,
    PAYLOAD_SUBCHANNEL,
    PAYLOAD_SUBCHANNELS,
    RECORD_OVERHEAD,
    STATE_SUBCHANNEL,
    decode_verdicts,
    encode_batch,
    encode_named_batch,
    split,
)
from mtp.link import Link, Phase
from mtp.master_role import MasterRole
from mtp.messages import MAX_NAK_ENTRIES_OUT, InMessage, OutMessage
from mtp.wire import (
    AcceptanceRecord,
    DataModifier,
    EmptyModifier,
    MessageStatus,
    MtpHeader,
    MtpPacket,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    TokenModifier,
)

MAX_RETX = 8192


class SenderHost(Protocol):
    """What the sending part needs of the member it is part of (the core)."""

    @property
    def phase(self) -> Phase: ...


@dataclass
class Flight:
    """What one membership has in flight: our messages (granted, being sent, then kept for
    retention heartbeats, §3.2.2), the packets asked for again, and the token we wait for."""

    own: dict[int, OutMessage] = field(default_factory=dict)
    sending: deque[OutMessage] = field(default_factory=deque)
    retx: deque[tuple[int, int]] = field(default_factory=deque)
    retx_set: set[tuple[int, int]] = field(default_factory=set)
    dally_due: list[OutMessage] = field(default_factory=list)
    last_own: int = -1  # the highest message number we sent payloads in
    token_wanted_at: float | None = None  # token[request] out, no confirm yet

    def rebase(self, delta: int) -> None:
        """Renumber by ``delta`` (a joiner adopting the master's numbering, TR §3.4)."""
        self.own = {n + delta: m for n, m in self.own.items()}
        for out in self.own.values():
            out.number += delta
        self.retx = deque((m + delta, p) for m, p in self.retx)
        self.retx_set = set(self.retx)

    def undecided(self) -> bool:
        return any(m.decided_at is None for m in self.own.values())


class Sender:
    def __init__(self, link: Link, host: SenderHost, master: MasterRole | None) -> None:
        self._link = link
        self._host = host
        self._master = master
        self.queue = PayloadQueue()
        self.suggestion: tuple[float, int, int] | None = None  # §3.4.1, for the next request
        # The window (§3.2.2): when this heartbeat's window opened, and data packets sent in it.
        self._period_start = -1e18
        self._period_sent = 0
        self._next_dally_at = 0.0
        self.flight = Flight()
        # (message number, payloads) of ours sent whole before a rejoin, verdict unknown.
        self.in_doubt: tuple[int, list[tuple[float, bytes]]] | None = None

    # -- the member's calls -----------------------------------------------------------------

    def add(self, stamp: float, payload: bytes) -> None:
        self.queue.append((stamp, payload))

    def unsent(self) -> int:
        """Payloads not yet sent in full: queued, or in a message still going out."""
        return len(self.queue) + sum(len(m.records) for m in self.flight.sending)

    def busy(self) -> bool:
        """Payloads to send, a message going out, or a token asked for."""
        flight = self.flight
        return bool(self.queue or flight.sending or flight.token_wanted_at is not None)

    def next_deadline(self) -> float | None:
        """The earlier of when the window reopens for what waits and when the next
        empty[dally] is due, if either is (asked after every event: no list)."""
        flight = self.flight
        soonest = None
        if flight.retx or flight.sending:
            soonest = self._period_start + self._link.heartbeat
        if flight.dally_due and (soonest is None or self._next_dally_at < soonest):
            soonest = self._next_dally_at
        return soonest

    @property
    def master(self) -> MasterRole | None:
        return self._master

    @master.setter
    def master(self, master: MasterRole | None) -> None:
        """A member taking over as master, or a master yielding (failover, docs/mtp.md)."""
        self._master = master

    def abandon(self, web_ends: bool = False, keep_accepted: bool = False) -> list[OutMessage]:
        """The web is abandoned (§3.2.5): payloads not yet accepted go back to the queue, in
        order, to be sent once we are back; the rest of the flight is dropped whole.

        A message we sent whole may have been accepted without our knowing: it is kept
        aside (``in_doubt``) until we are back and may know its verdict (``settle_doubt``).
        Sending it again blindly delivered its payloads twice everywhere (issue 17).

        Returned, to be delivered here at their numbers, are messages of ours we have not
        delivered yet: with ``web_ends`` (the web is over: its master died, left or merged it,
        mtp/failover.py) every numbered one, whatever its fate; with ``keep_accepted`` (with
        failover the master we leave may be dead) the accepted ones. No other message can
        hold those numbers: if the master accepted one, members that delivered it hold it
        under the same key, and the new web's board or our hand-on brings it to the rest
        (whiteboard/carry.py); if not, it stands as ours. Sending them again under new
        numbers could file the same op under two keys on two boards."""
        flight = self.flight
        next_deliver = self._link.web.next_deliver
        ended: list[OutMessage] = []
        for message in reversed(flight.sending):
            if web_ends and message.number >= next_deliver:
                ended.append(message)
            else:
                self.queue.extendleft(reversed(message.records))
        for number in sorted(flight.own, reverse=True):
            message = flight.own[number]
            if message in flight.sending or not message.records or number < next_deliver:
                continue
            accepted = message.decided_at is not None  # (a rejected one left ``own``)
            if web_ends or (keep_accepted and accepted):
                ended.append(message)
            elif not accepted:
                # One message of ours is undecided at a time (``want_token``).
                self.in_doubt = (message.number, message.records)
        self.flight = Flight()
        return sorted(ended, key=lambda m: m.number)

    def board_verdicts(self, number: int, body: bytes) -> None:
        """The board (message ``number``, TR §3.4) carries the master's verdicts on the
        messages before it, as far back as its repair cache tells (ours, docs/mtp.md): a
        message of ours in doubt among them is settled now (accepted: in the board)."""
        if self.in_doubt is None:
            return
        doubt, records = self.in_doubt
        accepted = decode_verdicts(body)
        age = number - 1 - doubt
        if 0 <= age < len(accepted):
            self.in_doubt = None
            if not accepted[age]:
                self.queue.extendleft(reversed(records))

    def settle_doubt(self) -> None:
        """Back in the web (TR §3.4: the board holds every message accepted before s, and the
        join[confirm] and the board carry the verdicts on the 12 before s): a message of
        ours in doubt that was accepted is in the board; otherwise (rejected, or too old to
        know) its payloads go out again, first, and the board ignores an op it has."""
        if self.in_doubt is None:
            return
        number, records = self.in_doubt
        self.in_doubt = None
        if self._link.web.book.status(number) is not MessageStatus.ACCEPTED:
            self.queue.extendleft(reversed(records))

    def stop(self) -> None:
        """The member is finished: nothing more goes out."""
        self.flight.retx.clear()
        self.flight.sending.clear()

    def take_token(self, number: int, now: float) -> None:
        """The master granted itself the token for ``number`` (§3.2.1)."""
        self.flight.token_wanted_at = None
        self.begin_message(number, now)

    def send_state(self, message: OutMessage, now: float) -> None:
        """The master sends a joiner the board as message s (TR §3.4)."""
        self.flight.own[message.number] = message
        self.flight.sending.append(message)
        self.pump(now)

    def on_token_confirm(self, number: int, now: float) -> None:
        """token[confirm] for ``number`` from the master (§3.2.1)."""
        flight = self.flight
        if number in flight.own:
            # §3.2.1: a duplicate token[confirm] is a nak for the whole message.
            self._link.counters["duplicate_confirms"] += 1
            own = flight.own[number]
            for index in range(own.next_packet):
                self.queue_retx(number, index)
            self.pump(now)
            return
        if (
            flight.token_wanted_at is None
            or not self.queue
            or number <= flight.last_own
            or self._host.phase not in (Phase.READY, Phase.LEAVING)
        ):
            # Unneeded, or older than a message we already sent: using it would put our
            # payloads out of order.
            self.send_cancel(number)
            return
        flight.token_wanted_at = None
        self.suggestion = None
        self.begin_message(number, now)

    def want_token(self, now: float) -> None:
        """Ask for a transmit token if we have payloads and no message of ours is undecided
        (§3.2.1). One at a time keeps our payloads in the order they were sent even when a
        message is rejected and its payloads go out again."""
        if (
            not self.queue
            or self.flight.token_wanted_at is not None
            or any(
                m.subchannel in PAYLOAD_SUBCHANNELS and m.decided_at is None
                for m in self.flight.own.values()
            )
            or self._host.phase not in (Phase.READY, Phase.LEAVING)
        ):
            return
        self.flight.token_wanted_at = now
        self._link.counters["tokens_requested"] += 1
        if self._master is not None:
            self._master.wake(now)  # our own strokes end the web's idleness too (§3.2.3)
            self._master.tokens.add(self._link.member_id)
            self._master.grant_tokens(now)
        else:
            self.send_token_request(now)

    def send_token_request(self, now: float) -> None:
        if self._link.web.master_addr is None:
            return
        self._link.send(
            self._link.control(
                PacketType.TOKEN, TokenModifier.REQUEST, self._link.web.master_id, None
            ),
            self._link.web.master_addr,
            parameters=self.suggestion,
        )

    def send_cancel(self, number: int) -> None:
        """§3.2.3: an unneeded token goes back at once, as empty[cancel]."""
        self._link.send(
            self._link.control(
                PacketType.EMPTY, EmptyModifier.CANCEL, self._link.web.id, None, number
            ),
            None,
        )
        self._link.counters["cancels_sent"] += 1

    def begin_message(self, number: int, now: float) -> None:
        """We hold the token for ``number``: pack queued payloads into it and start."""
        if not self.queue:
            # Nothing left to send (a rejected message's payloads went out already).
            if self._master is not None:
                self._master.decide(number, MessageStatus.REJECTED, now)
            else:
                self.send_cancel(number)
            return
        limit = batch_limit(self._link.window, self._link.unit)
        records: list[tuple[float, bytes]] = []
        size = 0
        while self.queue and (
            not records or size + RECORD_OVERHEAD + len(self.queue[0][1]) <= limit
        ):
            stamp, payload = self.queue.popleft()
            records.append((stamp, payload))
            size += RECORD_OVERHEAD + len(payload)
        link = self._link
        if link.member_id == link.identity:
            subchannel, data = PAYLOAD_SUBCHANNEL, encode_batch(records)
        else:  # a new instantiation (§3.1.1): the batch names who we are to the others
            subchannel, data = NAMED_SUBCHANNEL, encode_named_batch(link.identity, records)
        packets = split(data, link.unit)
        message = OutMessage(number, subchannel, packets, records)
        self.flight.last_own = max(self.flight.last_own, number)
        self.flight.own[number] = message
        self.flight.sending.append(message)
        self._link.counters["messages_sent"] += 1
        self.pump(now)
        if message.next_packet == 0 and self._master is None:
            # This heartbeat's window is spent: an empty[dally] tells the master we hold the
            # token (§3.2.3), so that it does not send the confirm again.
            self._link.counters["dallies_sent"] += 1
            self._link.send(
                self._link.control(
                    PacketType.EMPTY, EmptyModifier.DALLY, self._link.web.id, None, number
                ),
                None,
            )

    def pump(self, now: float) -> None:
        """Send what is due within this heartbeat's window: retransmissions first, then new
        packets (§3.2.6), at most ``window`` data packets per heartbeat (§3.2.2)."""
        if self._host.phase in (Phase.FINISHED, Phase.NEW):
            return
        if now >= self._period_start + self._link.heartbeat:
            # A heartbeat's window opens with the first data packet sent in it, so that no
            # heartbeat-long stretch ever carries more than ``window`` of them.
            self._period_start = -1e18
            self._period_sent = 0
        if self.flight.dally_due and now >= self._next_dally_at:
            self._next_dally_at = now + self._link.heartbeat
            for message in self.flight.dally_due:
                self._send_dally(message, now)
            self.flight.dally_due = [m for m in self.flight.dally_due if self._needs_dally(m)]
        budget = self._link.window - self._period_sent
        if budget > 0 and self._period_sent == 0 and (self.flight.retx or self.flight.sending):
            self._period_start = now
        while budget > 0 and self.flight.retx:
            key = self.flight.retx.popleft()
            self.flight.retx_set.discard(key)
            if self._retransmit(*key):
                budget -= 1
                self._period_sent += 1
        while budget > 0 and self.flight.sending:
            message = self.flight.sending[0]
            index = message.next_packet
            last = index == message.last
            window_ends = budget == 1 and not last
            modifier = (
                DataModifier.EOM
                if last
                else (DataModifier.EOW if window_ends else DataModifier.DATA)
            )
            self._send_data(message, index, modifier, source=self._link.member_id)
            message.next_packet += 1
            budget -= 1
            self._period_sent += 1
            if last:
                self.flight.sending.popleft()
                message.finished_at = now
                self._message_sent(message, now)

    def _message_sent(self, message: OutMessage, now: float) -> None:
        """data[eom] is out: the token is surrendered (§3.2.2)."""
        if self._master is not None:
            # The master has every packet of its own message: it accepts it at once.
            if message.number in self._master.grants:
                self._master.decide(message.number, MessageStatus.ACCEPTED, now)
        elif self._needs_dally(message):
            # §3.2.3 appends the padding but does not time it; §2.2.7 asks a packet a
            # heartbeat. The first goes half a heartbeat after the data, as it did on average
            # when lan padded to retention (a producer's padding clock was always running),
            # so that a lost data[eom] shows (§3.2.4) half a heartbeat sooner; then one a
            # heartbeat (docs/mtp.md, "Data"). A clock already running for another message
            # of ours is brought forward to it, never put back.
            first = now + self._link.heartbeat / 2
            if not self.flight.dally_due or first < self._next_dally_at:
                self._next_dally_at = first
            self.flight.dally_due.append(message)
        self.want_token(now)

    def _needs_dally(self, message: OutMessage) -> bool:
        """§3.2.3: "a message must consist of at least retention packets. If the client data
        does not require that many packets, empty[dally] packets must be appended", so that
        consumers who lost it all can still name its producer (and see a lost data[eom]),
        whether or not the master has decided it. ``padding`` (not 0) sets that number apart
        from retention (3 in the lan profile: docs/mtp.md). With ``message_packets`` set (not
        0), our cheapest padding: that many packets, and none once the message is decided.
        Not the master's own messages (docs/mtp.md, departure 8): members who cannot name a
        producer ask the master, which is that producer."""
        if self._master is not None:
            return False
        p = self._link.p
        economical = p.message_packets
        length = economical or p.padding or self._link.retention
        if len(message.packets) + message.dallies >= length:
            return False
        return not economical or message.decided_at is None

    def _send_dally(self, message: OutMessage, now: float) -> None:
        if not self._needs_dally(message) or message.finished_at == now:
            return
        message.dallies += 1
        self._link.counters["dallies_sent"] += 1
        # (m, k): k one past our last packet of m, so a lost data[eom] shows (§2.2.6).
        self._link.send(
            self._link.control(
                PacketType.EMPTY,
                EmptyModifier.DALLY,
                self._link.web.id,
                None,
                message.number,
                packet_seq=len(message.packets),
            ),
            None,
        )

    def _send_data(
        self, message: OutMessage | InMessage, index: int, modifier: DataModifier, source: int
    ) -> None:
        number = message.number
        body = message.packets[index]
        subchannel = message.subchannel or 0
        sync = 1 if subchannel == STATE_SUBCHANNEL and index == 0 else 0
        header = MtpHeader(
            PacketType.DATA,
            modifier,
            source,
            self._link.web.id,
            *self._link.wire_parameters(),
            acceptance=AcceptanceRecord(
                sync, self._link.web.book.vector(number), to_wire(number), index
            ),
            subchannel=subchannel,
        )
        self._link.send(MtpPacket(header, body), None)

    def _retransmit(self, number: int, index: int) -> bool:
        own = self.flight.own.get(number)
        if own is not None:
            if index >= own.next_packet:
                return False
            modifier = DataModifier.EOM if index == own.last else DataModifier.DATA
            self._send_data(own, index, modifier, source=self._link.member_id)
        else:
            cached = self._master.repair_cache.get(number) if self._master is not None else None
            if cached is None or index not in cached.packets or cached.source is None:
                return False
            modifier = DataModifier.EOM if index == cached.last else DataModifier.DATA
            # The packet as its producer sent it, its source included (§3.2.6: "the original
            # client information"), with our current parameters.
            self._send_data(cached, index, modifier, source=cached.source)
            self._link.counters["relays"] += 1
        self._link.counters["retransmissions"] += 1
        return True

    def expire_own(self, now: float) -> None:
        """Keep our packets for retention heartbeats after a message is decided (§3.2.2)."""
        keep = self._link.retention * self._link.heartbeat
        for number in [
            n
            for n, m in self.flight.own.items()
            if m.decided_at is not None
            and now - m.decided_at > keep
            and n < self._link.web.next_deliver
        ]:
            del self.flight.own[number]

    def on_decided(self, number: int, status: MessageStatus, now: float) -> None:
        """A message of ours was decided: if rejected, its payloads go out again."""
        own = self.flight.own.get(number)
        if own is None or own.decided_at is not None:
            return
        own.decided_at = now
        if status is MessageStatus.REJECTED:
            if own in self.flight.sending:
                self.flight.sending.remove(own)
            del self.flight.own[number]
            if own.records:
                self.queue.extendleft(reversed(own.records))
                self._link.counters["payloads_requeued"] += len(own.records)
            self._link.upper.protocol_event("own_message_rejected", {"message": number})
        self.want_token(now)

    def serve_nak(self, requester: int, entries: Iterable[PacketId], now: float) -> None:
        denied: list[PacketId] = []
        for entry in entries:
            number = self._link.web.number(entry.message)
            own = self.flight.own.get(number)
            if own is not None:
                if entry.packet < own.next_packet:
                    self.queue_retx(number, entry.packet)
                elif entry.packet > own.last:
                    continue  # a tail guess past the end of the message
                continue
            cached = self._master.repair_cache.get(number) if self._master is not None else None
            if cached is not None:
                if entry.packet in cached.packets:
                    self.queue_retx(number, entry.packet)
                continue
            if self._master is not None and number in self._master.grants:
                continue  # pending: the master itself is still collecting it
            denied.append(entry)
        if denied:
            addr = self._link.addresses.get(requester)
            if addr is not None:
                body = NakList(tuple(sorted(set(denied)))[:MAX_NAK_ENTRIES_OUT])
                self._link.send(
                    self._link.control(PacketType.NAK, NakModifier.DENY, requester, body), addr
                )
                self._link.counters["nak_denies_sent"] += 1
        self.pump(now)

    def queue_retx(self, number: int, packet: int) -> None:
        key = (number, packet)
        if key in self.flight.retx_set or len(self.flight.retx) >= MAX_RETX:
            return
        self.flight.retx.append(key)
        self.flight.retx_set.add(key)
