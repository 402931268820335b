"""The RMP protocol engine (Dabbous & Kiss, INRIA RR-2100, 1993), sans-I/O.

It never touches a socket or a clock: the driver feeds it datagrams and ``now`` and takes its
datagrams and its next deadline (see ``whiteboard/transport/interface.py`` for the shape, which
this class meets structurally without importing the whiteboard).

Section references are to the report. What the report leaves open, and our extensions, are
said where they happen and summed up in docs/rmp.md.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from coreapi import Address, MemberState, OrderKey, Outgoing, UpperLayer
from coreapi.seqnum import to_wire, unwrap
from rmp.image import ImageAssembly, ImageError, image_owner, split_image
from rmp.params import RmpParams, params_from_mapping
from rmp.stations import MAX_GAP, MAX_WAITING, Missing, Station, StationList, Waiting
from rmp.store import RetentionStore
from rmp.wire import (
    FORMAT_RMP,
    NTP_UNIX_OFFSET,
    Confirm,
    Data,
    Image,
    Join,
    Nack,
    NackRange,
    Remind,
    Retransmit,
    RmpDecodeError,
    RmpPacket,
    decode,
    encode,
    ntp_middle32,
    seconds_from_middle32,
)

# Sizes. A data packet must still fit, wrapped in a Retransmit (8 + 8 + 8 bytes more), in one
# Ethernet-sized UDP payload (1472 bytes), so it is kept to 1448 bytes.
MAX_PACKET = 1448
MAX_DATAGRAM_OUT = 1472
MAX_PAYLOAD = 1200
MAX_ANSWER_STATIONS = 180  # a join answer's list must fit one datagram (8 bytes a station)
MAX_NACKS_PER_PACKET = 100
MAX_PENDING_SENDS = 100_000
MAX_PENDING_REPAIRS = 4096
MAX_NACK_SPAN = 256  # packets of one NackRange acted on

COUNTERS = (
    "sent",
    "delivered",
    "datagrams_sent",
    "datagrams_received",
    "nacks_sent",
    "nacks_received",
    "nacked_packets",  # distinct packets this station asked for
    "retransmissions",
    "duplicates_dropped",
    "malformed_dropped",
    "late_delivered",
    "wi_expiries",
    "reminders_sent",
    "confirms_sent",
    "joins_sent",
    "join_answers_sent",
    "images_sent",
    "image_parts_sent",
    "repairs_unavailable",
    "packets_given_up",
    "members_refused",
)


class Phase(Enum):
    NEW = "new"
    LISTENING = "listening"  # passive join (§5): waiting to hear an active station
    JOINING = "joining"  # §2.8: join requests out, no answer yet
    IMAGE = "image"  # answered: receiving the board image
    READY = "ready"
    LEAVING = "leaving"
    FINISHED = "finished"


@dataclass
class _Answer:
    """A join answer we owe once the application gives us the board (§2.8)."""

    joiner: int
    stations: dict[int, int]  # station -> its last valid sequence number, ours included
    join_number: int  # the request's, echoed in the answer


@dataclass
class _ImageJob:
    """An image we are sending (§2.8), paced and windowed on the joiner's confirmations."""

    joiner: int
    parts: deque[bytes]
    total: int
    started_at: float
    progress_at: float
    first_seq: int | None = None  # our S_n of its first part, once sent


@dataclass
class _Repair:
    due: float
    requesters: dict[int, Address | None] = field(default_factory=dict)


@dataclass
class _Held:
    """A delivery held back while joining: the image comes first (§2.8)."""

    origin: int
    packet: RmpPacket
    seq: int  # unbounded: a later answer's list says whether its image holds it already


class RmpCore:
    max_payload = MAX_PAYLOAD

    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: RmpParams
    ) -> None:
        if not 0 < member_id < 2**32:
            raise ValueError(f"member id must be a non-zero 32-bit number, got {member_id}")
        self.member_id = member_id
        self._upper = upper
        self._rng = rng
        self._p = params
        self._phase = Phase.NEW
        self._stations = StationList(member_id)
        # §2.7's store, split: our own packets apart from others', so that a burst from others
        # cannot evict a packet of ours that a station may still ask for. The send window
        # (below the count) keeps every unconfirmed packet of ours in it.
        self._own_store = RetentionStore(params.retention_age, params.retention_count)
        self._store = RetentionStore(params.retention_age, params.retention_count)
        self._outbox: list[Outgoing] = []
        self._counters = dict.fromkeys(COUNTERS, 0)
        self._seq = 0  # S_n (§2.1), unbounded; on the wire modulo 2**16
        self._clock_offset = 0.0  # §2.8: added to our clock for timestamps
        self._last_key: OrderKey = ()
        self._last_sent_at = 0.0
        # joining (§2.8)
        self._join_tries = 0
        self._next_join_at: float | None = None
        self._heard_active = False
        self._heard_from = 0
        self._answerer: int | None = None
        self._image_after = 0
        self._image: ImageAssembly | None = None
        self._image_progress_at = 0.0
        self._image_parts_since_confirm = 0
        self._held: list[_Held] = []
        # answering joins
        self._requests: dict[int, _Answer] = {}
        self._next_request = 1
        self._image_jobs: dict[int, _ImageJob] = {}
        self._answer_heard_for: dict[int, float] = {}  # joiner -> when we heard it answered
        self._answered: dict[int, tuple[_Answer, float]] = {}  # joiner -> our answer, when
        self._answer_due: dict[int, tuple[float, int]] = {}  # joiner -> (when, join number)
        # sending, paced (§5)
        self._sends: deque[bytes] = deque()
        self._image_turn = False
        self._next_send_at = 0.0
        # reminders (§2.4)
        self._last_data: RmpPacket | None = None
        self._remind_count = 0
        self._next_remind_at: float | None = None
        # repairs (§2.7)
        self._repairs: dict[tuple[int, int], _Repair] = {}
        self._recent_repairs: dict[tuple[int, int, int], float] = {}
        self._leave_deadline: float | None = None
        self._confirm_cursor = 0

    # -- the TransportCore interface ---------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self._phase is Phase.FINISHED

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def depth(self) -> int:
        return self._stations.depth

    @property
    def answerer(self) -> int | None:
        """While joining: the station whose image we are receiving (§2.8)."""
        return self._answerer if self._phase is Phase.IMAGE else None

    @property
    def image_parts_received(self) -> int:
        return len(self._image.received) if self._image is not None else 0

    @property
    def stations(self) -> StationList:
        return self._stations

    def counters(self) -> dict[str, int]:
        counters = dict(self._counters)
        counters["retained"] = len(self._store) + len(self._own_store)
        counters["retention_evictions"] = self._store.evictions + self._own_store.evictions
        return counters

    def start(self, now: float) -> None:
        if self._phase is not Phase.NEW:
            return
        self._last_sent_at = now
        self._upper.member_changed(self.member_id, MemberState.JOINING)
        if self._p.passive_join:
            self._phase = Phase.LISTENING
            self._next_join_at = now + self._p.join_interval * self._p.join_tries
        else:
            self._phase = Phase.JOINING
            self._send_join(now, None)

    def send(self, payload: bytes, now: float) -> None:
        if self._phase in (Phase.NEW, Phase.LEAVING, Phase.FINISHED):
            raise RuntimeError("the rmp transport is not in a session")
        if len(payload) > MAX_PAYLOAD:
            raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
        if len(self._sends) >= MAX_PENDING_SENDS:
            raise RuntimeError("the rmp transport's send queue is full")
        # Queued: sent when joined (§4.2.1: no data before the join is complete), at the pace.
        self._sends.append(bytes(payload))
        self._counters["sent"] += 1
        self._pace(now)

    def leave(self, now: float) -> None:
        if self._phase in (Phase.LEAVING, Phase.FINISHED):
            return
        if self._phase in (Phase.NEW, Phase.LISTENING, Phase.JOINING, Phase.IMAGE):
            self._finish()
            return
        # RMP has no leave message; we stop drawing, but keep answering NACKs and reminding
        # until every station confirmed our last packet (§2.4), or leave_linger has passed.
        self._phase = Phase.LEAVING
        self._leave_deadline = now + self._p.leave_linger
        self._image_jobs.clear()

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        answer = self._requests.pop(request, None)
        if answer is None or self._phase is not Phase.READY:
            return
        self._send_answer(answer, now)
        # The image is tagged with its joiner's identifier: two joiners answered by one
        # station each take their own (parts of both share our sequence).
        parts = split_image(answer.joiner, state, self._p.image_part)
        self._image_jobs[answer.joiner] = _ImageJob(
            answer.joiner, deque(parts), len(parts), now, now
        )
        self._counters["images_sent"] += 1
        self._upper.protocol_event(
            "image_started", {"joiner": answer.joiner, "bytes": len(state), "parts": len(parts)}
        )
        self._pace(now)

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        out, self._outbox = self._outbox, []
        return out

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        if self._phase in (Phase.NEW, Phase.FINISHED):
            return
        self._counters["datagrams_received"] += 1
        try:
            packet = decode(data)
        except RmpDecodeError:
            self._counters["malformed_dropped"] += 1
            return
        if packet.format != FORMAT_RMP or packet.source == 0:
            self._counters["malformed_dropped"] += 1  # another RTP payload, or no identity
            return
        if packet.source == self.member_id:
            return  # our own multicast, looped back
        inner = (
            packet.options[-1].packet
            if packet.options and isinstance(packet.options[-1], Retransmit)
            else None
        )
        if (packet.data is not None and packet.wire_size > MAX_PACKET) or (
            inner is not None and inner.wire_size > MAX_PACKET
        ):
            # No member of ours makes a data packet this large; stored, it could not even be
            # retransmitted (it would not fit a datagram).
            self._counters["malformed_dropped"] += 1
            return
        self._on_packet(packet, addr, now)

    def handle_timer(self, now: float) -> None:
        if self._phase is Phase.FINISHED:
            return
        self._join_timers(now)
        self._answer_joins(now)
        self._forget_answers(now)
        self._store.expire(now)
        self._own_store.expire(now)
        for station in self._stations:
            self._expire_waiting(station, now)
            self._send_due_nacks(station, now)
        self._flush_repairs(now)
        self._pace(now)
        self._remind(now)
        self._keepalive(now)
        self._watch_members(now)
        self._watch_image_jobs(now)
        self._check_leave(now)

    def get_timer(self) -> float | None:
        if self._phase is Phase.FINISHED:
            return None
        deadlines: list[float] = []
        add = deadlines.append
        if self._next_join_at is not None and self._phase in (Phase.LISTENING, Phase.JOINING):
            add(self._next_join_at)
        if self._phase is Phase.IMAGE:
            add(self._image_progress_at + self._p.image_stall)
        if self._next_remind_at is not None:
            add(self._next_remind_at)
        if self._phase in (Phase.READY, Phase.LEAVING):
            add(self._last_sent_at + self._p.keepalive)
        if self._leave_deadline is not None:
            add(self._leave_deadline)
        for station in self._stations:
            if station.missing:
                add(min(m.next_nack_at for m in station.missing.values()))
            if station.waiting and self._phase in (Phase.READY, Phase.LEAVING):
                add(min(w.deliver_at for w in station.waiting.values()))
            active = station.state is MemberState.ACTIVE
            silence = self._p.suspect_after if active else self._p.forget_after
            add(station.last_heard + silence)
        if self._repairs:
            add(min(r.due for r in self._repairs.values()))
        if self._answer_due:
            add(min(due for due, _ in self._answer_due.values()))
        if self._answered:
            add(min(at for _, at in self._answered.values()) + self._p.image_stall)
        if self._sendable():
            add(self._next_send_at)
        if self._image_jobs:
            add(min(job.progress_at for job in self._image_jobs.values()) + self._p.image_stall)
        for store in (self._store, self._own_store):
            expiry = store.next_expiry()
            if expiry is not None:
                add(expiry)
        return min(deadlines, default=None)

    # -- receiving ---------------------------------------------------------------------------

    def _on_packet(self, packet: RmpPacket, addr: Address, now: float) -> None:
        options = packet.options
        join = next((o for o in options if isinstance(o, Join)), None)
        station = self._station(packet.source, now, addr, joining=join is not None)
        if station is None:
            return
        if join is not None:
            if join.answer:
                self._on_join_answer(station, packet, now)
            else:
                self._on_join_request(station, join, now)
            return
        if self._phase is Phase.LISTENING:
            # §5, passive join: the first active station we hear is asked for the image.
            self._send_join(now, station)
            self._phase = Phase.JOINING
        if self._phase is Phase.JOINING:
            self._heard_active = True
            self._heard_from = station.ident
        remind = options[0] if options and isinstance(options[0], Remind) else None
        # §2.4: when the remind number is below our depth, the NACKs in the packet are not ours
        # to answer, and no retransmission is made on its confirmations.
        trusted = remind is None or self._stations.depth <= remind.remind_number
        for option in options:
            if isinstance(option, Nack | NackRange):
                self._counters["nacks_received"] += 1
                self._on_nack(station, option, trusted, now)
            elif isinstance(option, Confirm):
                self._on_confirm(station, option, now)
            elif isinstance(option, Retransmit):
                self._on_retransmit(option, now)
        if packet.data is not None:
            self._on_data(station, packet, now, live=True)
        else:
            # A control packet carries our peer's current S_n (§4.1): a higher one than we
            # have reveals data packets we missed (a confirmation by the source itself).
            self._detect_gap(station, unwrap(packet.seq, station.last_valid), now)
        if remind is not None:
            self._on_remind(station, packet, remind, trusted, now)
        if self._image_jobs or self._sends:
            self._pace(now)  # confirmations may have opened the window

    def _station(
        self, ident: int, now: float, addr: Address | None, joining: bool = False
    ) -> Station | None:
        station = self._stations.get(ident)
        if station is None:
            station = self._stations.add(ident, 0, now)
            if station is None:
                self._counters["members_refused"] += 1
                return None
            station.state = MemberState.JOINING if joining else MemberState.ACTIVE
            self._upper.member_changed(ident, station.state)
        else:
            station.last_heard = now
            if station.state is not MemberState.ACTIVE and not joining:
                station.state = MemberState.ACTIVE
                self._upper.member_changed(ident, MemberState.ACTIVE)
        if addr is not None:
            station.address = addr
        return station

    def _stored(self, source: int, seq: int) -> RmpPacket | None:
        store = self._own_store if source == self.member_id else self._store
        return store.get(source, seq)

    def _known(self, ident: int, now: float) -> Station | None:
        """The station named in someone else's packet: known, or added, but not heard."""
        station = self._stations.get(ident)
        return station if station is not None else self._station(ident, now, None)

    def _on_data(self, station: Station, packet: RmpPacket, now: float, live: bool) -> None:
        seq = unwrap(packet.seq, station.last_valid)
        if seq <= station.last_valid or seq in station.waiting or seq in station.delivered_ahead:
            self._counters["duplicates_dropped"] += 1
            return
        if seq > station.last_valid + MAX_GAP and self._knows_sequence():
            self._counters["malformed_dropped"] += 1  # beyond what we track: bounded memory
            return
        self._store.put(station.ident, seq, packet, now)
        if live:
            self._stations.emitted(station.ident)  # §2.5: the emitter goes to the front
        station.missing.pop(seq, None)
        if seq == station.last_valid + 1 and self._knows_sequence():
            self._accept(station, seq, packet, now)
            self._drain(station, now)
            return
        # §2.3: out of sequence: wait, and ask for what is missing.
        if len(station.waiting) >= MAX_WAITING:
            self._counters["duplicates_dropped"] += 1  # bounded: it will be asked for again
            return
        if self._knows_sequence():
            self._mark_missing(station, station.last_valid + 1, seq - 1, now)
        # §2.3: WI runs from the NACK, i.e. from when the gap in front of this packet was
        # found; a packet arriving behind an old gap does not wait a whole WI again.
        gap_since = min((m.detected_at for s, m in station.missing.items() if s < seq), default=now)
        station.waiting[seq] = Waiting(packet, max(now, gap_since + self._p.wait_interval))

    def _knows_sequence(self) -> bool:
        """Before a join answer we cannot tell a gap from history the image will bring."""
        return self._phase not in (Phase.LISTENING, Phase.JOINING)

    def _accept(self, station: Station, seq: int, packet: RmpPacket, now: float) -> None:
        """The in-sequence packet ``seq`` (§2.3): advance, owe a confirmation, deliver."""
        station.last_valid = seq
        station.confirmed = False  # A flag: to be confirmed in our next data packet
        if seq in station.delivered_ahead:
            station.delivered_ahead.discard(seq)  # delivered at WI expiry, or given up
            return
        self._consume(station, packet, now)

    def _drain(self, station: Station, now: float) -> None:
        while True:
            following = station.last_valid + 1
            waiting = station.waiting.pop(following, None)
            if waiting is not None:
                self._accept(station, following, waiting.packet, now)
            elif following in station.delivered_ahead:
                station.delivered_ahead.discard(following)
                station.last_valid = following
                station.confirmed = False  # A flag: the new last_valid is still to confirm
            else:
                return

    def _consume(self, station: Station, packet: RmpPacket, now: float) -> None:
        if isinstance(packet.options[-1], Image):
            self._on_image_part(station, packet, now)
        elif self._phase in (Phase.JOINING, Phase.IMAGE, Phase.LISTENING):
            # After the image (§2.8)
            self._held.append(_Held(station.ident, packet, station.last_valid))
        else:
            self._deliver(station.ident, packet, now)

    def _deliver(self, origin: int, packet: RmpPacket, now: float) -> None:
        assert packet.data is not None
        seconds = seconds_from_middle32(packet.timestamp, now + self._clock_offset)
        # §3: ordered by timestamp, then by originator. The 16-bit sequence number breaks the
        # tie between two packets of one sender within 1/65536 s.
        key: OrderKey = (round((seconds + NTP_UNIX_OFFSET) * 65536), origin, packet.seq)
        late = key < self._last_key
        if late:
            self._counters["late_delivered"] += 1
        else:
            self._last_key = key
        self._counters["delivered"] += 1
        self._upper.deliver(origin, key, seconds, packet.data, late)

    def _expire_waiting(self, station: Station, now: float) -> None:
        """§2.3: "If a time period of WI seconds elapsed before the reception of the answer to
        the Nack, the corresponding packet is delivered to the application." The missing one,
        when it comes, is delivered as a late arrival (§3)."""
        if not station.waiting or self._phase not in (Phase.READY, Phase.LEAVING):
            return
        for seq in sorted(s for s, w in station.waiting.items() if w.deliver_at <= now):
            waiting = station.waiting.pop(seq)
            station.delivered_ahead.add(seq)
            self._counters["wi_expiries"] += 1
            self._upper.protocol_event(
                "wait_interval_expired", {"source": station.ident, "seq": seq}
            )
            self._consume(station, waiting.packet, now)

    def _detect_gap(self, station: Station, seq: int, now: float) -> None:
        if self._knows_sequence() and seq > station.last_valid:
            self._mark_missing(station, station.last_valid + 1, seq, now)

    def _mark_missing(self, station: Station, first: int, last: int, now: float) -> None:
        # At most MAX_GAP packets are asked for at a time, and a gap never moves last_valid by
        # itself: a Confirm naming a far-off number (a broken or hostile peer) costs bounded
        # work and cannot make us skip a station's real packets. Only give_up_after does.
        last = min(last, station.last_valid + MAX_GAP)
        if len(station.missing) >= MAX_GAP:
            return
        # One random delay for the whole gap, so that its NACKs leave together (NackRange).
        delay = self._rng.random() * self._p.nack_delay if self._p.nack_delay else 0.0
        for seq in range(first, last + 1):
            if seq in station.missing or seq in station.waiting or seq in station.delivered_ahead:
                continue
            station.missing[seq] = Missing(now, now + delay)

    def _give_up(self, station: Station, first: int, stop: int, now: float) -> None:
        """Stop waiting for ``first`` .. ``stop - 1`` from ``station``: counted, reported."""
        self._give_up_on(station, range(first, stop), now)

    def _give_up_on(self, station: Station, seqs: Iterable[int], now: float) -> None:
        lost = [s for s in seqs if s not in station.waiting]
        for seq in lost:
            station.missing.pop(seq, None)
            station.delivered_ahead.add(seq)
        if lost:
            self._counters["packets_given_up"] += len(lost)
            self._upper.failure(
                f"{len(lost)} drawing packet(s) from member {station.ident:08x} could not be "
                "recovered"
            )
        self._drain(station, now)

    # -- NACKs (§2.6) and retransmissions (§2.7) ---------------------------------------------

    def _send_due_nacks(self, station: Station, now: float) -> None:
        if not station.missing:
            return
        stale = [
            s for s, m in station.missing.items() if now - m.detected_at > self._p.give_up_after
        ]
        if stale:
            self._give_up_on(station, stale, now)
        due = sorted(s for s, m in station.missing.items() if m.next_nack_at <= now)
        if not due:
            return
        options: list[Nack | NackRange] = []
        run_start = previous = due[0]
        number = station.missing[due[0]].nack_number
        for seq in [*due[1:], None]:
            entry = station.missing.get(seq) if seq is not None else None
            if seq == previous + 1 and entry is not None and entry.nack_number == number:
                previous = seq
                continue
            options.append(self._nack_option(station.ident, run_start, previous, number))
            if seq is not None and entry is not None:
                run_start = previous = seq
                number = entry.nack_number
        for seq in due:
            entry = station.missing[seq]
            if entry.nack_number == 0:
                self._counters["nacked_packets"] += 1
            entry.nack_number += 1
            entry.next_nack_at = now + self._p.nack_retry  # "but not more often" (§2.3)
        for start in range(0, len(options), MAX_NACKS_PER_PACKET):
            chunk = tuple(options[start : start + MAX_NACKS_PER_PACKET])
            # §2.6: the NACK is multicast: any station whose depth allows may answer it.
            self._send_control(chunk, None, now)
            self._counters["nacks_sent"] += len(chunk)
            self._upper.protocol_event(
                "nack_sent", {"source": station.ident, "options": len(chunk)}
            )

    @staticmethod
    def _nack_option(source: int, first: int, last: int, number: int) -> Nack | NackRange:
        if first == last:
            return Nack(number % 256, to_wire(first), source)
        return NackRange(number % 256, to_wire(first), source, last - first + 1)

    def _on_nack(
        self, requester: Station, option: Nack | NackRange, trusted: bool, now: float
    ) -> None:
        source = option.source
        if isinstance(option, Nack):
            wires: Iterable[int] = (option.seq,)
        else:
            wires = option.missing()
        reference = self._seq if source == self.member_id else self._reference(source)
        if not trusted and self._stations.get(source) is None:
            return
        for index, wire in enumerate(wires):
            if index >= MAX_NACK_SPAN:
                break  # bounded work per option, whatever range a peer names
            seq = unwrap(wire, reference)
            self._share_nack(source, seq, option.nack_number, now)
            if not trusted or self._phase not in (Phase.READY, Phase.LEAVING):
                continue
            # §2.6: "The station whose depth value is equal or less than this number must
            # answer the request" (the virtual queue that prevents NACK implosion).
            if self._stations.depth > option.nack_number:
                continue
            if self._stored(source, seq) is not None:
                self._schedule_repair(source, seq, requester, now)
            elif source == self.member_id and self._own_store.was_evicted(source, seq):
                self._counters["repairs_unavailable"] += 1
                self._upper.protocol_event(
                    "repair_unavailable", {"requester": requester.ident, "seq": seq}
                )

    def _reference(self, source: int) -> int:
        station = self._stations.get(source)
        return station.last_valid if station is not None else 0

    def _share_nack(self, source: int, seq: int, number: int, now: float) -> None:
        """Another station asked for a packet we lack too: ours can wait a retry interval
        (an extension, as in SRM: the answer, multicast if several ask, serves us both)."""
        station = self._stations.get(source)
        if station is None:
            return
        entry = station.missing.get(seq)
        if entry is not None:
            entry.next_nack_at = max(entry.next_nack_at, now + self._p.nack_retry)
            entry.nack_number = max(entry.nack_number, number + 1)

    def _schedule_repair(self, source: int, seq: int, requester: Station, now: float) -> None:
        repair = self._repairs.get((source, seq))
        if repair is None:
            if len(self._repairs) >= MAX_PENDING_REPAIRS:
                return
            repair = self._repairs[(source, seq)] = _Repair(now + self._p.repair_hold)
        repair.requesters[requester.ident] = requester.address

    def _flush_repairs(self, now: float) -> None:
        # Forget repairs older than half a retry interval first: a NACK re-sent on schedule
        # (the repair was lost) must be answered again.
        horizon = now - self._p.nack_retry / 2
        for recent in [k for k, t in self._recent_repairs.items() if t <= horizon]:
            del self._recent_repairs[recent]
        for key in [k for k, r in self._repairs.items() if r.due <= now]:
            repair = self._repairs.pop(key)
            packet = self._stored(*key)
            if packet is None:
                continue
            if len(repair.requesters) >= self._p.multicast_threshold:
                self._retransmit(key, packet, 0, None, now)  # several asked: multicast (§2.7)
            else:
                for ident, address in repair.requesters.items():
                    self._retransmit(key, packet, ident, address, now)

    def _retransmit(
        self,
        key: tuple[int, int],
        packet: RmpPacket,
        to: int,
        address: Address | None,
        now: float,
    ) -> None:
        source, seq = key
        # Once per half retry interval per destination (0: the group): NACKs from several
        # stations, or one re-sent before the repair arrived, must not double it, and a
        # multicast repair serves everyone.
        recent = self._recent_repairs
        if (source, seq, to) in recent or (source, seq, 0) in recent:
            return
        recent[(source, seq, to)] = now
        wrapper = RmpPacket(
            seq=to_wire(self._seq),
            timestamp=self._timestamp(now),
            options=(Retransmit(source, packet),),
            source=self.member_id,
        )
        self._transmit(wrapper, address if to else None, now)
        self._counters["retransmissions"] += 1
        self._upper.protocol_event(
            "retransmission", {"source": source, "seq": seq, "to": to, "multicast": int(not to)}
        )

    def _on_retransmit(self, option: Retransmit, now: float) -> None:
        inner = option.packet
        if inner.source != option.source or inner.source == 0:
            self._counters["malformed_dropped"] += 1
            return
        if inner.source == self.member_id:
            return
        station = self._known(inner.source, now)
        if station is None:
            return
        # §2.7: "the receiver simulates a late reception, checking all the contained
        # confirmations": those may reveal more we lack; its NACKs and reminder are stale.
        for confirm in inner.options:
            if isinstance(confirm, Confirm):
                self._on_confirm(station, confirm, now)
        self._on_data(station, inner, now, live=False)

    # -- confirmations (§2.3) and reminders (§2.4) -------------------------------------------

    def _on_confirm(self, confirmer: Station, option: Confirm, now: float) -> None:
        source = option.source
        if source == self.member_id:
            seq = unwrap(option.seq, self._seq)
            confirmer.confirmed_mine = max(confirmer.confirmed_mine, seq)
            return
        if source == confirmer.ident:
            return
        station = self._stations.get(source)
        if station is None:
            return  # never heard from it ourselves: no phantom stations from hearsay
        # §2.6: a third station confirms a packet we never got.
        self._detect_gap(station, unwrap(option.seq, station.last_valid), now)

    def _confirm_options(self, budget: int) -> tuple[list[Confirm], list[Station]]:
        """Confirm options for the stations whose last packet we have not confirmed yet in a
        multicast data packet (A flag 0, §2.3), as many as ``budget`` bytes allow, fairly."""
        owed = [s for s in self._stations if not s.confirmed and s.last_valid > 0]
        if not owed:
            return [], []
        limit = max(0, budget // 8)
        start = self._confirm_cursor % len(owed)
        chosen = (owed[start:] + owed[:start])[:limit]
        self._confirm_cursor += len(chosen)
        return [Confirm(to_wire(s.last_valid), s.ident) for s in chosen], chosen

    def _remind(self, now: float) -> None:
        if self._next_remind_at is None or now < self._next_remind_at:
            return
        last = self._last_data
        if last is None or self._all_confirmed():
            self._next_remind_at = None
            return
        if self._remind_count >= self._p.remind_limit:
            self._next_remind_at = None
            self._upper.protocol_event("remind_gave_up", {"seq": self._seq})
            return
        self._remind_count += 1
        assert last.data is not None
        budget = MAX_PACKET - last.wire_size - 4
        confirms, _ = self._confirm_options(budget)
        # §2.4: "the emitter must retransmit its last message periodically", the remind
        # option first. Its confirmations do not set the A flags: only new data does.
        reminder = RmpPacket(
            seq=last.seq,
            timestamp=last.timestamp,
            options=(Remind(self._remind_count % 256), *confirms, *last.options[-1:]),
            data=last.data,
            s_bit=last.s_bit,
            source=self.member_id,
        )
        self._transmit(reminder, None, now)
        self._counters["reminders_sent"] += 1
        self._next_remind_at = now + self._rng.uniform(self._p.remind_min, self._p.remind_max)

    def _all_confirmed(self) -> bool:
        return all(
            s.confirmed_mine >= self._seq for s in self._stations if s.state is not MemberState.LEFT
        )

    def _on_remind(
        self, emitter: Station, packet: RmpPacket, remind: Remind, trusted: bool, now: float
    ) -> None:
        if not self._knows_sequence():
            return
        seq = unwrap(packet.seq, emitter.last_valid)
        if emitter.last_valid >= seq:
            # We have it: say so, point to point, so that the emitter can stop (§2.4).
            confirm = (Confirm(to_wire(emitter.last_valid), emitter.ident),)
            self._send_control(confirm, emitter.address, now)
            self._counters["confirms_sent"] += 1
        if not trusted:
            return
        # §2.5: the emitter's confirmations show what it missed; repair it, point to point.
        for option in packet.options:
            if not isinstance(option, Confirm) or option.source == emitter.ident:
                continue
            if option.source == self.member_id:
                confirmed, have = unwrap(option.seq, self._seq), self._seq
            else:
                station = self._stations.get(option.source)
                if station is None:
                    continue
                confirmed = unwrap(option.seq, station.last_valid)
                have = station.last_valid
            for missed in range(confirmed + 1, min(have, confirmed + 32) + 1):
                if self._stored(option.source, missed) is not None:
                    self._schedule_repair(option.source, missed, emitter, now)

    # -- joining (§2.8) ----------------------------------------------------------------------

    def _send_join(self, now: float, to: Station | None) -> None:
        if to is not None:
            # Passive join (§5): ask one station directly; 255 obliges it whatever its depth.
            number, address = 255, to.address
        else:
            number, address = min(self._join_tries, 255), None
        self._join_tries += 1
        packet = RmpPacket(
            seq=to_wire(self._seq),
            timestamp=self._timestamp(now),
            options=(Join(number),),
            source=self.member_id,
        )
        self._transmit(packet, address, now)
        self._counters["joins_sent"] += 1
        self._next_join_at = now + self._p.join_interval

    def _join_timers(self, now: float) -> None:
        if self._phase is Phase.LISTENING and self._next_join_at is not None:
            if now >= self._next_join_at:
                self._become_ready(now, alone=True)
            return
        if self._phase is Phase.IMAGE and now >= self._image_progress_at + self._p.image_stall:
            # The answering station went quiet mid-image (left, crashed, partitioned): ask
            # again; another station will answer (§2.8, §2.6: "if the first station on the
            # virtual queue left the group").
            self._upper.protocol_event("image_stalled", {"answerer": self._answerer or 0})
            self._phase = Phase.JOINING
            self._answerer = None
            self._image = None
            self._send_join(now, None)
            return
        if self._phase is not Phase.JOINING or self._next_join_at is None:
            return
        if now < self._next_join_at:
            return
        limit = self._p.join_tries_when_heard if self._heard_active else self._p.join_tries
        if self._join_tries < limit:
            heard = self._stations.get(self._heard_from) if self._heard_from else None
            if self._join_tries >= self._p.join_tries and heard is not None:
                # Everyone's depth may exceed our join numbers (an idle group deeper than our
                # tries, §2.5): ask a station we heard, directly, as a passive join does (§5).
                self._send_join(now, heard)
            else:
                self._send_join(now, None)
            return
        if self._heard_active:
            self._upper.failure(
                "no member answered our join requests; starting with an empty board"
            )
        self._become_ready(now, alone=True)

    def _on_join_request(self, joiner: Station, join: Join, now: float) -> None:
        if self._phase is not Phase.READY:
            return
        ours = self._answered.get(joiner.ident)
        if ours is not None:
            # It asks again: our answer was lost. The same list (which the image parts already
            # sent follow) serves, freshly timestamped for the joiner's clock offset (§2.8).
            self._send_answer(ours[0], now)
            return
        if joiner.ident in self._image_jobs or joiner.ident in self._answer_due:
            return  # its image will be on its way (the sequence repairs any loss)
        if any(a.joiner == joiner.ident for a in self._requests.values()):
            return
        # §2.8: "the station with the depth value equal or less than this number must answer".
        if self._stations.depth > join.join_number:
            return
        # Depth is each station's own estimate, so two may answer at once. Extension (as SRM
        # does for repairs): wait a random moment and stand down if another answer is heard.
        delay = self._rng.random() * self._p.answer_spread
        self._answer_due[joiner.ident] = (now + delay, join.join_number)
        if not delay:
            self._answer_joins(now)

    def _answer_joins(self, now: float) -> None:
        for joiner, (due, number) in list(self._answer_due.items()):
            if due > now:
                continue
            del self._answer_due[joiner]
            heard = self._answer_heard_for.get(joiner)
            if heard is not None and heard >= due - self._p.answer_spread:
                continue  # another station answered it meanwhile
            listed = {
                s.ident: s.last_valid for s in self._stations if s.state is not MemberState.LEFT
            }
            listed[self.member_id] = self._seq
            request = self._next_request
            self._next_request += 1
            self._requests[request] = _Answer(joiner, listed, number)
            # The application answers with provide_board_state once every delivery before
            # this request is on its board: the image then matches the list exactly.
            self._upper.board_state_requested(request)

    def _send_answer(self, answer: _Answer, now: float) -> None:
        # Our own entry first: the joiner needs it most (the image follows it).
        entries = sorted(answer.stations.items(), key=lambda e: e[0] != self.member_id)
        confirms = tuple(Confirm(to_wire(seq), ident) for ident, seq in entries)
        packet = RmpPacket(
            seq=to_wire(self._seq),
            timestamp=self._timestamp(now),
            options=(Join(answer.join_number, answer=True), *confirms[:MAX_ANSWER_STATIONS]),
            source=self.member_id,
        )
        # Multicast: the joiner gets it, and other stations hear that the join is answered.
        self._transmit(packet, None, now)
        self._counters["join_answers_sent"] += 1
        first = self._answered.get(answer.joiner)
        self._answered[answer.joiner] = (answer, first[1] if first else now)

    def _on_join_answer(self, answerer: Station, packet: RmpPacket, now: float) -> None:
        for option in packet.options:
            # The list names the joiner too (its request put it in the answerer's list):
            # that join is answered, and our own pending answer for it can stand down.
            if isinstance(option, Confirm) and option.source in self._answer_due:
                self._answer_heard_for[option.source] = now
        if self._phase is not Phase.JOINING:
            return
        if answerer.state is not MemberState.ACTIVE:
            answerer.state = MemberState.ACTIVE
            self._upper.member_changed(answerer.ident, MemberState.ACTIVE)
        listed: dict[int, int] = {}
        for option in packet.options:
            if isinstance(option, Confirm):
                listed[option.source] = option.seq
        # §2.8: a station that sees itself in the list had a previous session: resume S_n.
        if self.member_id in listed:
            self._seq = listed.pop(self.member_id)
        for ident, wire in listed.items():
            station = self._known(ident, now)
            if station is None:
                continue
            station.last_valid = unwrap(wire, station.last_valid) if station.last_valid else wire
            station.confirmed = True
            for seq in [s for s in station.waiting if s <= station.last_valid]:
                del station.waiting[seq]
            station.missing = {s: m for s, m in station.missing.items() if s > station.last_valid}
        # §2.8: the clock offset, from the answer's timestamp; under 0.5 s it is taken as null.
        offset = seconds_from_middle32(packet.timestamp, now) - now
        self._clock_offset = offset if abs(offset) >= 0.5 else 0.0
        self._upper.protocol_event(
            "join_answered",
            {"answerer": answerer.ident, "stations": len(listed), "clock_offset": offset},
        )
        # Held strokes the new list already counts are in the new image: delivering them too
        # would double them (an earlier answerer may have stalled after we held them).
        self._held = [
            h
            for h in self._held
            if (st := self._stations.get(h.origin)) is None or h.seq > st.last_valid
        ]
        self._answerer = answerer.ident
        self._image_after = answerer.last_valid
        self._image = None
        self._image_progress_at = now
        self._phase = Phase.IMAGE
        for station in self._stations:
            first_waiting = min(station.waiting, default=None)
            if first_waiting is not None:
                self._mark_missing(station, station.last_valid + 1, first_waiting - 1, now)
            self._drain(station, now)

    def _forget_answers(self, now: float) -> None:
        """An answer is kept for image_stall: a joiner still asking after that has given up on
        our image and deserves a fresh one."""
        for joiner, (_, at) in list(self._answered.items()):
            if now >= at + self._p.image_stall:
                del self._answered[joiner]
                self._answer_heard_for.pop(joiner, None)

    def _on_image_part(self, station: Station, packet: RmpPacket, now: float) -> None:
        if self._phase is not Phase.IMAGE or station.ident != self._answerer:
            return  # another joiner's image: in the sequence, but not for us
        assert packet.data is not None
        if image_owner(packet.data) != self.member_id:
            return  # the image of another joiner answered by the same station
        try:
            if self._image is None:
                self._image = ImageAssembly.start(packet.data)
            else:
                self._image.add(packet.data)
        except ImageError as exc:
            self._upper.protocol_event("image_part_refused", {"reason": str(exc)})
            self._image = None
            return
        self._image_progress_at = now
        self._upper.join_progress(len(self._image.received), self._image.parts)
        self._image_parts_since_confirm += 1
        done = self._image.complete and packet.s_bit
        if done or self._image_parts_since_confirm >= 16:
            # Our progress, point to point: the answerer paces the image on it (§5).
            self._image_parts_since_confirm = 0
            confirm = (Confirm(to_wire(station.last_valid), station.ident),)
            self._send_control(confirm, station.address, now)
            self._counters["confirms_sent"] += 1
        if done:
            self._upper.board_state_received(self._image.state())
            self._image = None
            self._become_ready(now, alone=False)

    def _become_ready(self, now: float, alone: bool) -> None:
        if alone:
            # Whatever we heard while waiting is the start of each station's sequence for us.
            for station in self._stations:
                if station.waiting:
                    station.last_valid = min(station.waiting) - 1
                self._drain(station, now)
        self._phase = Phase.READY
        self._next_join_at = None
        self._stations.joined()  # §2.5: depth = active stations + 1
        self._upper.member_changed(self.member_id, MemberState.ACTIVE)
        self._upper.ready()
        held, self._held = self._held, []
        for item in held:
            self._deliver(item.origin, item.packet, now)
        self._pace(now)

    def _watch_image_jobs(self, now: float) -> None:
        for joiner, job in list(self._image_jobs.items()):
            station = self._stations.get(joiner)
            if station is None or now >= job.progress_at + self._p.image_stall:
                del self._image_jobs[joiner]  # it left, or stopped confirming: it will ask again
                self._upper.protocol_event("image_abandoned", {"joiner": joiner})

    # -- sending, paced (§5) -----------------------------------------------------------------

    def _sendable(self) -> bool:
        if self._phase is not Phase.READY and not (self._phase is Phase.LEAVING and self._sends):
            return False
        if not self._send_window_open():
            return False
        return bool(self._sends) or any(self._window_open(j) for j in self._image_jobs.values())

    def _send_window_open(self) -> bool:
        """§5's flow control, our way: at most ``window`` of our packets not yet confirmed by
        every active station, so none of them can leave the store before it is repaired."""
        confirmed = [s.confirmed_mine for s in self._stations if s.state is MemberState.ACTIVE]
        return self._seq - min(confirmed, default=self._seq) < self._p.window

    def _window_open(self, job: _ImageJob) -> bool:
        station = self._stations.get(job.joiner)
        if station is None or not job.parts:
            return False
        if job.first_seq is None:
            return True
        # Our packets since the image began that the joiner has not confirmed: they must stay
        # in the retention store until it has them, so there may be no more than `window`.
        unconfirmed = self._seq - max(station.confirmed_mine, job.first_seq - 1)
        return unconfirmed < self._p.window

    def _pace(self, now: float) -> None:
        """Emit queued data at ``rate`` packets a second: drawing first, then image parts
        while the joiner's window is open."""
        if self._phase not in (Phase.READY, Phase.LEAVING):
            return
        while now >= self._next_send_at:
            if not self._send_window_open():
                # Ask for confirmations now rather than at the next reminder: a reminder is
                # answered by every station that has our last packet (§2.4).
                if self._next_remind_at is None or self._next_remind_at > now + self._p.remind_min:
                    self._next_remind_at = now + self._p.remind_min
                return
            job = next((j for j in self._image_jobs.values() if self._window_open(j)), None)
            # Strokes and image parts take turns: a backlog of strokes must not starve an
            # image until its joiner gives up (and asks, and is sent, another).
            if self._sends and (job is None or not self._image_turn):
                self._image_turn = True
                self._emit(self._sends.popleft(), None, now)
            else:
                if job is None:
                    return
                self._image_turn = False
                part = job.parts.popleft()
                job.progress_at = now
                if job.first_seq is None:
                    job.first_seq = self._seq + 1
                self._emit(part, job, now)
                if not job.parts:
                    del self._image_jobs[job.joiner]
            self._next_send_at = max(self._next_send_at, now) + 1.0 / self._p.rate

    def _emit(self, data: bytes, job: _ImageJob | None, now: float) -> None:
        """A new data packet (§2.2): the next S_n, our confirmations, multicast and stored."""
        self._seq += 1
        last = job is not None and not job.parts
        final: Data | Image = Image(last=last) if job is not None else Data()
        confirms, confirmed = self._confirm_options(MAX_PACKET - 24 - len(data))
        packet = RmpPacket(
            seq=to_wire(self._seq),
            timestamp=self._timestamp(now),
            options=(*confirms, final),
            data=data,
            s_bit=last,
            source=self.member_id,
        )
        self._transmit(packet, None, now)
        for station in confirmed:
            station.confirmed = True  # §2.3: confirmed in a multicast data packet
        self._own_store.put(self.member_id, self._seq, packet, now)
        self._stations.emitted(self.member_id)  # §2.5: depth 0
        self._last_data = packet
        self._remind_count = 0
        self._next_remind_at = now + self._rng.uniform(self._p.remind_min, self._p.remind_max)
        if job is not None:
            self._counters["image_parts_sent"] += 1
        else:
            self._deliver(self.member_id, packet, now)

    # -- control packets, keepalive, members, leaving ----------------------------------------

    def _send_control(
        self, options: tuple[Nack | NackRange | Confirm, ...], to: Address | None, now: float
    ) -> None:
        packet = RmpPacket(
            seq=to_wire(self._seq),
            timestamp=self._timestamp(now),
            options=options,
            source=self.member_id,
        )
        self._transmit(packet, to, now)

    def _keepalive(self, now: float) -> None:
        if self._phase not in (Phase.READY, Phase.LEAVING):
            return
        if now < self._last_sent_at + self._p.keepalive:
            return
        # Extension: RMP is silent when idle, so a periodic control packet (our confirmations,
        # and our S_n in its header) keeps us known alive and lets others see a lost last packet.
        confirms, _ = self._confirm_options(MAX_PACKET - 16)
        self._send_control(tuple(confirms), None, now)

    def _watch_members(self, now: float) -> None:
        for station in self._stations:
            if now >= station.last_heard + self._p.forget_after:
                self._stations.remove(station.ident)
                self._image_jobs.pop(station.ident, None)
                self._upper.member_changed(station.ident, MemberState.LEFT)
            elif (
                now >= station.last_heard + self._p.suspect_after
                and station.state is MemberState.ACTIVE
            ):
                station.state = MemberState.SUSPECTED
                self._upper.member_changed(station.ident, MemberState.SUSPECTED)

    def _check_leave(self, now: float) -> None:
        if self._phase is not Phase.LEAVING:
            return
        assert self._leave_deadline is not None
        if now >= self._leave_deadline:
            if self._sends:
                self._upper.failure(f"left with {len(self._sends)} drawing(s) still unsent")
            self._finish()
        elif not self._sends and self._all_confirmed():
            self._finish()

    def _finish(self) -> None:
        self._phase = Phase.FINISHED
        self._next_remind_at = None
        self._repairs.clear()
        self._upper.member_changed(self.member_id, MemberState.LEFT)

    def _timestamp(self, now: float) -> int:
        return ntp_middle32(now + self._clock_offset)

    def _transmit(self, packet: RmpPacket, to: Address | None, now: float) -> None:
        data = encode(packet)
        assert len(data) <= MAX_DATAGRAM_OUT, len(data)
        self._outbox.append((data, to))
        self._counters["datagrams_sent"] += 1
        if to is None:
            self._last_sent_at = now


def make_core(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> RmpCore:
    """The factory the whiteboard's transport registry calls."""
    return RmpCore(member_id, upper, rng, params_from_mapping(params))
