"""The receiving part of an MTP member (RFC 1301 §3.2.4-§3.2.6; TR 90-1141 §3.2, §3.4): the
messages being reassembled, the gaps in them, the naks that ask for what is missing, and
delivery, in message order, of every accepted message held whole.

A ``Receiver`` lives as long as one membership: a rejoin replaces it whole with the ``Web``.
Which packets reach it (range checks, statuses learned, the master's grants) is the core's
business; what it needs of the rest of the member is the ``ReceiverHost`` the core provides.
"""

from __future__ import annotations

import math
from typing import Protocol

from coreapi.seqnum import to_wire
from mtp.bounds import (
    MAX_BOARD_MESSAGE,
    MAX_MESSAGE_BYTES,
    MAX_PACKETS_PER_MESSAGE,
    Holdings,
)
from mtp.bounds import MAX_INCOMING_BYTES as MAX_INCOMING_BYTES  # re-exported
from mtp.framing import (
    NAMED_SUBCHANNEL,
    STATE_SUBCHANNEL,
    FramingError,
    decode_batch,
    decode_named_batch,
    state_packets,
)
from mtp.link import Link, Phase
from mtp.messages import MAX_NAK_ENTRIES_OUT, InMessage, OutMessage
from mtp.wire import DataModifier, MessageStatus, NakList, NakModifier, PacketId, PacketType

MAX_INCOMING = 256  # messages being reassembled at once
LAST_RESORT_TRIES = 10  # naks to the master (our extension) before a member gives up
_RECEIVING = (Phase.READY, Phase.SYNCING, Phase.LEAVING, Phase.QUITTING)


class ReceiverHost(Protocol):
    """What the receiving part needs of the member it is part of (the core)."""

    @property
    def phase(self) -> Phase: ...

    def own(self, number: int) -> OutMessage | None: ...

    def rejoin(self, reason: str, now: float) -> float | None: ...

    def finish_sync(self, subchannel: int | None, body: bytes | None, now: float) -> bool:
        """Message s (the board, TR §3.4) is here: True if delivery goes on after it."""
        ...


class Receiver:
    def __init__(self, link: Link, host: ReceiverHost) -> None:
        self._link = link
        self._host = host
        self.incoming: dict[int, InMessage] = {}
        # What we hold of messages not yet delivered, per producer and in total (mtp/bounds.py).
        self.holdings = Holdings()

    @property
    def incoming_bytes(self) -> int:
        return self.holdings.total

    # -- reassembly (§3.2.4) ----------------------------------------------------------------

    def message(self, number: int, now: float) -> InMessage | None:
        """The message ``number`` being received, a new one if need be (None: too many)."""
        message = self.incoming.get(number)
        if message is None:
            if len(self.incoming) >= MAX_INCOMING:
                self._link.counters["out_of_range_dropped"] += 1
                return None
            message = InMessage(number, now)
            self.incoming[number] = message
        return message

    @staticmethod
    def claim(message: InMessage, source: int, owner: int | None) -> bool:
        """Whether ``source`` may produce ``message``: ``owner``, the holder of its token as
        the master granted it (§3.2.1), or else the first producer heard for it."""
        if message.source is None:
            message.source = owner if owner is not None else source
        return message.source == source

    @staticmethod
    def take_subchannel(message: InMessage, subchannel: int) -> bool:
        """Every packet of a message is on one subchannel (§2.2.1)."""
        if message.subchannel is None:
            message.subchannel = subchannel
        return message.subchannel == subchannel

    def store(
        self, message: InMessage, modifier: DataModifier, index: int, body: bytes, now: float
    ) -> bool:
        """Keep data packet ``index`` of ``message``; False (and counted) if it is dropped. A
        gap before it, or a window's or message's end with holes, is asked for (§3.2.4)."""
        counters = self._link.counters
        if index >= MAX_PACKETS_PER_MESSAGE or (message.last is not None and index > message.last):
            counters["malformed_dropped"] += 1
            return False
        if index in message.packets:
            counters["duplicates_dropped"] += 1
            return False
        if not self._admits(message, len(body)):
            counters["oversize_dropped"] += 1
            return False
        if modifier is DataModifier.EOM:
            if message.packets and max(message.packets) > index:
                counters["malformed_dropped"] += 1
                return False
            message.last = index
        message.packets[index] = body
        message.size += len(body)
        self.holdings.add(message.source, len(body))
        message.heard_at = now
        gap = index > message.advertised + 1
        message.advertised = max(message.advertised, index)
        if modifier is not DataModifier.DATA:
            message.window_end = max(message.window_end, index)
        if message.complete:
            message.nak_at = None
            message.nak_tries = 0
        elif gap or (modifier is not DataModifier.DATA and message.missing(tail=False)):
            self.schedule_nak(message, now, gap=True)
        return True

    def _admits(self, message: InMessage, size: int) -> bool:
        """Whether ``size`` more bytes of ``message`` may be kept (ours, issue 20;
        mtp/bounds.py). A message holds at most MAX_MESSAGE_BYTES (a payload message) or
        MAX_BOARD_MESSAGE (a board, TR §3.4). The
        message delivery waits for is always kept within that bound; the others, only while
        their producer's and everyone's bytes stay within MAX_SOURCE_BYTES and
        MAX_INCOMING_BYTES. What is refused is asked for again once delivery moves on."""
        board = message.subchannel == STATE_SUBCHANNEL
        if message.size + size > (MAX_BOARD_MESSAGE if board else MAX_MESSAGE_BYTES):
            return False
        if message.number == self._link.web.next_deliver or self._syncing_on(message.number):
            return True
        return self.holdings.admits(message.source, size)

    def on_dally(self, message: InMessage, packet_seq: int, now: float) -> None:
        """empty[dally] (m, k): the producer sent packets 0 .. k - 1 of m (§2.2.6, §3.2.3)."""
        message.heard_at = now
        top = packet_seq - 1
        if 0 <= top < MAX_PACKETS_PER_MESSAGE and top > message.advertised:
            message.advertised = top
        if not message.complete and message.missing(tail=False):
            self.schedule_nak(message, now, gap=True)

    def report_state_progress(self, message: InMessage) -> None:
        """How much of the board (TR §3.4) has come, for the joiner's progress bar."""
        first = message.packets.get(0)
        if first is None or message.subchannel != STATE_SUBCHANNEL:
            return
        total = state_packets(first, self._link.unit) or 1
        self._link.upper.join_progress(min(len(message.packets), total), total)

    def drop(self, number: int) -> None:
        message = self.incoming.pop(number, None)
        if message is not None:
            self.holdings.remove(message.source, message.size)

    def rebase(self, delta: int) -> None:
        """Renumber by ``delta`` (a joiner adopting the master's numbering, TR §3.4)."""
        self.incoming = {n + delta: m for n, m in self.incoming.items()}
        for message in self.incoming.values():
            message.number += delta

    def incomplete(self) -> bool:
        return any(not m.complete for m in self.incoming.values())

    def next_deadline(self) -> float | None:
        """The earliest nak due (asked after every event: no list)."""
        soonest = None
        for message in self.incoming.values():
            at = message.nak_at
            if at is not None and (soonest is None or at < soonest):
                soonest = at
        return soonest

    # -- naks (§3.2.4-§3.2.6, §3.4.2) -------------------------------------------------------

    def schedule_nak(self, message: InMessage, now: float, gap: bool = False) -> None:
        """Ask for what ``message`` lacks: at once (§3.2.4), or for a ``gap`` in what is
        arriving, after ``reorder_wait`` (extension: a reordered packet needs no repair)."""
        if message.nak_at is not None:
            return  # already due (its dally is drawn once, §3.4.2)
        link = self._link
        delay = link.p.reorder_wait if gap else 0.0
        if link.p.nak_dally and message.nak_tries == 0:
            # §3.4.2: a random number of heartbeats from 0 to retention - 2, so that a
            # retransmission asked for by another consumer can come first.
            delay += link.rng.randint(0, max(0, link.retention - 2)) * link.heartbeat
        elif link.p.nak_spread and message.nak_tries == 0 and not link.is_master:
            # Not the master's: it naks at once, as §3.2.4 says (docs/mtp.md, "Naks for a
            # loss everyone shares"): every member's delivery waits for its verdict, which
            # waits for its copy (§2.2.6); a producer serves it without an isMember round
            # trip (§3.4.3); and its repair, multicast (§3.2.6), spares the others theirs.
            delay += link.rng.random() * self.nak_window()
        message.nak_at = now + delay

    def nak_window(self) -> float:
        """Extension (issue 18; docs/mtp.md, "Naks for a loss everyone shares"): the range of a
        first nak's random wait, ``nak_spread`` heartbeats per doubling of the web (log2 of
        the members we know, at least one), within §3.4.2's dally of retention - 2
        heartbeats (at least one). Naks go to the producer alone, but its retransmission is
        multicast (§3.2.6): a member whose wait has not run out when it comes never naks."""
        link = self._link
        members = len(link.addresses) + 1
        spread = link.p.nak_spread * max(1.0, math.log2(members))
        return link.heartbeat * min(spread, max(1, link.retention - 2))

    def denied(self, message: InMessage, source: int, now: float) -> None:
        """nak[deny] from its producer: it cannot repair ``message``; ask elsewhere."""
        message.denied = True
        message.nak_at = now
        self._link.upper.protocol_event("nak_denied", {"message": message.number, "by": source})

    def nak_rounds(self, now: float) -> None:
        """Send the naks that are due."""
        if self._host.phase not in _RECEIVING:
            return
        web = self._link.web
        for message in list(self.incoming.values()):
            if message.number not in self.incoming:
                continue
            status = web.book.status(message.number)
            if (
                message.complete
                or status is MessageStatus.REJECTED
                or message.number < web.next_deliver
                or (message.subchannel == STATE_SUBCHANNEL and not self._syncing_on(message.number))
            ):
                message.nak_at = None  # nothing to ask for
                continue
            if message.nak_at is None:
                # §3.2.4: a fragment followed by silence for more than a heartbeat.
                if now - message.heard_at > self._link.heartbeat * 1.5:
                    self.schedule_nak(message, now)
                else:
                    continue
            if message.nak_at is None or message.nak_at > now:
                continue
            self._send_nak(message, status, now)
            if self._link.web is not web:
                return  # it made us abandon the web (§3.2.6): nothing of this one is kept

    def _syncing_on(self, number: int) -> bool:
        """Whether ``number`` is s, the board we are waiting for (TR §3.4)."""
        return self._host.phase is Phase.SYNCING and number == self._link.web.join_number

    def _nak_target(self, message: InMessage, accepted: bool, now: float) -> int | None:
        """Whom to ask for ``message``: its producer, else (accepted) the master; None when
        no one is to be asked now (its nak is then put off, or the web abandoned)."""
        link = self._link
        source = message.source
        if (
            source is not None
            and source != link.member_id
            and not message.denied
            and (message.nak_tries < link.retention or not accepted)
            and (source in link.addresses or source == link.web.master_id)
        ):
            # A pending message is asked of its producer until the master decides it (it
            # rejects the message of a producer that fails, §3.2.1).
            if source != link.web.master_id or self._master_answered_since(message):
                message.nak_tries += 1
            message.master_asked_at = now if source == link.web.master_id else None
            return source
        if accepted and not link.is_master:
            # Extension: the master holds every accepted message and repairs it when its
            # producer cannot (gone, denied, or unknown to us).
            if message.master_tries >= max(LAST_RESORT_TRIES, link.retention):
                self._host.rejoin(
                    f"mtp message {message.number} was accepted but neither its producer nor "
                    "the master could repair it (RFC 1301 §3.2.6): rejoining the web",
                    now,
                )
                return None
            if self._master_answered_since(message):
                message.master_tries += 1
            message.master_asked_at = now
            return link.web.master_id
        message.nak_at = now + link.heartbeat  # pending: the master will decide
        return None

    def _master_answered_since(self, message: InMessage) -> bool:
        """Whether the master was heard after our last nak to it: only then does an unanswered
        nak count towards giving the message up. A master silent meanwhile has refused
        nothing: its host stalled (the lan profile allows a second or two), or it died, which
        its silence limit tells (§3.2.5). Ours: a joiner gave up its board after 1 s of naks
        to a master that was busy for 1.5 s, and rejoined (issue 21's benchmark runs)."""
        asked = message.master_asked_at
        return asked is None or self._link.web.heard_master_at >= asked

    def _send_nak(self, message: InMessage, status: MessageStatus | None, now: float) -> None:
        link = self._link
        accepted = status is MessageStatus.ACCEPTED
        silent = now - message.heard_at > link.heartbeat
        wanted = message.missing(tail=message.last is None and (accepted or silent))
        if not wanted:
            message.nak_at = None
            return
        web = link.web
        target = self._nak_target(message, accepted, now)
        if target is None:
            return
        addr = web.master_addr if target == web.master_id else link.addresses.get(target)
        if addr is None:
            message.nak_at = now + link.heartbeat
            return
        wire = to_wire(message.number)
        # As many packets as the producer may send in a heartbeat (§3.2.2: window), in naks
        # of MAX_NAK_ENTRIES_OUT each (ours, issue 20: a large message may lack thousands).
        asked = wanted[: max(MAX_NAK_ENTRIES_OUT, link.window)]
        entries = tuple(PacketId(wire, p) for p in asked)
        for start in range(0, len(entries), MAX_NAK_ENTRIES_OUT):
            body = NakList(entries[start : start + MAX_NAK_ENTRIES_OUT])
            link.send(link.control(PacketType.NAK, NakModifier.REQUEST, target, body), addr)
            link.counters["nacks_sent"] += 1
            link.counters["nack_packets"] += 1
        # Distinct packets known to exist (a tail asked for past the last one heard may not).
        known = [e.packet for e in entries if e.packet <= message.advertised]
        link.counters["nacked_packets"] += sum(1 for p in known if p > message.asked_high)
        message.asked_high = max(message.asked_high, *known, -1)
        link.upper.protocol_event(
            "nak_sent", {"message": message.number, "packets": len(entries), "to": target}
        )
        message.nak_at = now + link.heartbeat  # §3.2.5: retried every heartbeat

    # -- delivery (§2.2.6, TR §3.2) ---------------------------------------------------------

    def deliver(self, now: float) -> None:
        """Deliver, in message order, every accepted message we hold whole; skip rejected
        ones; stop at the first pending or incomplete one."""
        web = self._link.web
        # Statuses far behind both the delivery point and the newest message are never read
        # again (a member further than 12 behind rejoins, §2.2.6): memory stays bounded.
        web.book.forget_below(min(web.next_deliver, web.next))
        while self._host.phase in _RECEIVING and self._deliver_next(now):
            pass

    def _deliver_next(self, now: float) -> bool:
        """Deliver (or skip) message next_deliver; False when delivery must stop there."""
        web = self._link.web
        number = web.next_deliver
        status = web.book.status(number)
        if status is None:
            return False
        own = self._host.own(number)
        message = self.incoming.get(number)
        syncing = self._syncing_on(number)
        if status is MessageStatus.REJECTED:
            if syncing:
                self._host.rejoin(
                    "the mtp master gave up sending this member the board: rejoining", now
                )
                return False
            self._skip(number)
            return True
        subchannel: int | None
        if own is not None:
            subchannel, body = own.subchannel, None
        elif message is not None and message.complete:
            subchannel, body = message.subchannel, message.body()
        else:
            return self._await(number, message, syncing, now)
        if syncing:
            return self._host.finish_sync(subchannel, body, now)
        if subchannel == STATE_SUBCHANNEL:
            self._skip(number)
            return True
        if self._host.phase is Phase.SYNCING:
            return False  # nothing newer before the board (TR §3.4)
        self._hand_up(number, own, message, body)
        return True

    def _skip(self, number: int) -> None:
        self.drop(number)
        self._link.web.next_deliver += 1

    def _await(self, number: int, message: InMessage | None, syncing: bool, now: float) -> bool:
        """Message ``number`` is accepted but not here whole: ask for it, unless it is another
        joiner's board (not for us: skipped)."""
        if message is None:
            if len(self.incoming) >= MAX_INCOMING:
                return False
            # Accepted, yet we saw nothing of it: ask (the producer is unknown).
            message = InMessage(number, now)
            self.incoming[number] = message
        if message.subchannel == STATE_SUBCHANNEL and not syncing:
            self._skip(number)  # another joiner's board: not for us
            return True
        if message.nak_at is None:
            # Its verdict may merely have overtaken its packets: a reorder too.
            self.schedule_nak(message, now, gap=True)
        return False

    def _hand_up(
        self, number: int, own: OutMessage | None, message: InMessage | None, body: bytes | None
    ) -> None:
        link = self._link
        origin = link.identity
        if own is not None:
            records = own.records
        else:
            assert message is not None and message.source is not None and body is not None
            origin = link.identity_of(message.source)
            try:
                if message.subchannel == NAMED_SUBCHANNEL:
                    origin, records = decode_named_batch(body)
                    link.learn_identity(message.source, origin)
                else:
                    records = decode_batch(body)
                link.report_active(origin)  # others learn of a member from its messages
            except FramingError as exc:
                # Every member parses the same accepted bytes the same way, so every
                # member skips this message: the boards still agree.
                link.counters["malformed_dropped"] += 1
                link.upper.failure(f"mtp message {number} from {origin:#x} is unusable: {exc}")
                records = []
        self._skip(number)
        for index, (stamp, payload) in enumerate(records):
            link.counters["delivered"] += 1
            link.upper.deliver(origin, (number, index), stamp, payload, False)
