"""The raw core: each payload goes out once, to the group, and is delivered on arrival.

No repair, no ordering wait: a lost datagram is lost. It still keeps the interface's promises
that cost nothing: the sender delivers its own payloads at once, duplicates are dropped, the
order key ``(timestamp_us, origin, seq)`` lets replicas that got the same payloads agree, and
members are tracked from HELLO/DATA/BYE with the same suspicion rules the app shows for RMP/MTP.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from coreapi import (
    COUNTER_NAMES,
    Address,
    MemberState,
    OrderKey,
    Outgoing,
    UpperLayer,
)
from coreapi.ephemeral import (
    EphemeralOut,
    EphemeralReceiver,
    EphemeralSender,
    ephemeral_counters,
)
from whiteboard.transport.raw.liveness import Liveness
from whiteboard.transport.raw.wire import (
    HEADER,
    MAX_DATAGRAM,
    RawDecodeError,
    RawPacket,
    RawType,
    decode_once,
)

# Seconds after one of our HELLOs in which newcomers are answered together, by one HELLO.
ANSWER_HOLDOFF = 0.05
DEDUP_WINDOW = 1024  # seqs remembered per origin; older ones are taken as duplicates
MAX_MEMBERS = 1024  # bound on per-member state whatever the network sends


@dataclass(frozen=True, slots=True)
class RawParams:
    hello_interval: float = 1.0  # seconds between HELLOs
    suspect_after: float = 5.0  # silence before a member is shown as suspected
    forget_after: float = 30.0  # silence before a member is taken as gone

    @classmethod
    def from_mapping(cls, params: Mapping[str, object]) -> RawParams:
        known = {f.name for f in fields(cls)}
        values: dict[str, float] = {}
        for key, value in params.items():
            if key == "profile":
                if value not in ("lan", "seed"):
                    raise ValueError(f"unknown profile {value!r}; choose lan or seed")
                continue
            if key not in known:
                raise ValueError(f"unknown raw transport parameter {key!r}")
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"raw parameter {key} must be a positive number, got {value!r}")
            values[key] = float(value)
        result = cls(**values)
        if not result.hello_interval < result.suspect_after < result.forget_after:
            raise ValueError("raw parameters need hello_interval < suspect_after < forget_after")
        return result


@dataclass(slots=True)
class _Member:
    incarnation: int
    introduction: bytes = b""  # the last its HELLOs carried (reported when it changes)
    highest_seq: int = 0
    # the seqs received in (highest - DEDUP_WINDOW, highest], and some older ones until pruned
    seen: set[int] = field(default_factory=set)


class RawCore:
    max_payload = MAX_DATAGRAM - HEADER.size
    max_message = max_payload  # raw does not fragment: one payload, one datagram

    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: RawParams
    ) -> None:
        if not 0 < member_id < 2**32:
            raise ValueError(f"member id must be a non-zero 32-bit number, got {member_id}")
        self.member_id = member_id
        self._upper = upper
        self._rng = rng
        self._params = params
        self._members: dict[int, _Member] = {}
        self._liveness = Liveness(params.suspect_after, params.forget_after)
        # origin -> (incarnation, when) of the members that said BYE, oldest first: what they
        # sent before it is not to bring them back (kept forget_after, at most MAX_MEMBERS).
        self._departed: dict[int, tuple[int, float]] = {}
        self._outbox: list[Outgoing] = []
        self._seq = 0
        self._started = False
        self._finished = False
        self._next_hello: float | None = None
        self._hello_sent_at = -math.inf
        self._last_key: OrderKey = ()
        self._incarnation = rng.getrandbits(32)
        self._counters = dict.fromkeys((*COUNTER_NAMES, "stale_dropped", "members_refused"), 0)
        self._introduction = b""
        self._side_sender = EphemeralSender()
        self._side_receiver = EphemeralReceiver()

    # -- TransportCore -----------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self._finished

    def counters(self) -> dict[str, int]:
        return {**self._counters, **ephemeral_counters(self._side_sender, self._side_receiver)}

    def introduce(self, introduction: bytes) -> None:
        self._introduction = bytes(introduction)  # every HELLO carries it, to newcomers too

    def start(self, now: float) -> None:
        if self._started:
            return
        self._started = True
        self._emit(RawType.HELLO, now, self._introduction)
        self._next_hello = now + self._params.hello_interval
        self._upper.member_changed(self.member_id, MemberState.ACTIVE)
        self._upper.ready()

    def send(self, payload: bytes, now: float) -> None:
        if not self._started or self._finished:
            raise RuntimeError("the raw transport is not in a session")
        if len(payload) > self.max_payload:
            raise ValueError(f"payload of {len(payload)} bytes exceeds {self.max_payload}")
        self._seq += 1
        packet = self._emit(RawType.DATA, now, payload)
        self._counters["sent"] += 1
        self._deliver(packet)

    def send_ephemeral(self, payload: bytes, now: float) -> None:
        if not self._started or self._finished:
            raise RuntimeError("the raw transport is not in a session")
        self._emit_ephemeral(self._side_sender.offer(payload, now), now)

    def leave(self, now: float) -> None:
        if self._finished:
            return
        self._side_sender.drop_held()
        if self._started:
            self._emit(RawType.BYE, now)
            self._upper.member_changed(self.member_id, MemberState.LEFT)
        self._finished = True
        self._next_hello = None

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        """Raw gives joiners no board state, so it never asks for one."""

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        if self._finished:
            return
        self._counters["datagrams_received"] += 1
        try:
            packet = decode_once(data)
        except RawDecodeError:
            self._counters["malformed_dropped"] += 1
            return
        if packet.origin == self.member_id:
            return  # our own datagram looped back by IP_MULTICAST_LOOP
        if packet.type is RawType.EPHEMERAL:
            self._on_ephemeral(packet, now)
            return
        if packet.type is RawType.BYE:
            self._note_departure(packet.origin, packet.incarnation, now)
            self._side_receiver.forget(packet.origin)
            if self._members.pop(packet.origin, None) is not None:
                self._liveness.forget(packet.origin)
                self._upper.member_changed(packet.origin, MemberState.LEFT)
            return
        if self._departed.get(packet.origin, (None, 0.0))[0] == packet.incarnation:
            # Sent before its BYE, read after it (reordered on the way, or sent to our unicast
            # socket, which is read apart from the group's). Taken in, it would show the
            # member that left as present for forget_after seconds.
            self._counters["stale_dropped"] += 1
            return
        known = packet.origin in self._members
        member = self._member(packet, now)
        if member is None:
            return
        if packet.type is RawType.HELLO and packet.payload != member.introduction:
            member.introduction = packet.payload
            self._upper.member_introduced(packet.origin, packet.payload)
        if packet.type is RawType.HELLO and not known:
            # A newcomer: answer so it learns of us without waiting a whole interval. Only
            # the first HELLO is answered, or members would echo each other forever.
            self._answer_newcomer(now)
        if packet.type is RawType.DATA:
            self._accept_data(member, packet)

    def handle_timer(self, now: float) -> None:
        if self._finished:
            return
        if self._next_hello is not None and now >= self._next_hello:
            self._emit(RawType.HELLO, now, self._introduction)
            self._next_hello = now + self._params.hello_interval
        self._emit_ephemeral(self._side_sender.due(now), now)
        for origin, state in self._liveness.expire(now):
            if state is MemberState.LEFT:
                del self._members[origin]
                self._side_receiver.forget(origin)
            self._upper.member_changed(origin, state)

    def get_timer(self) -> float | None:
        if self._finished:
            return None
        deadlines = [self._next_hello] if self._next_hello is not None else []
        for deadline in (self._liveness.next_deadline(), self._side_sender.deadline()):
            if deadline is not None:
                deadlines.append(deadline)
        return min(deadlines, default=None)

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        out, self._outbox = self._outbox, []
        return out

    # -- internals ---------------------------------------------------------------------------

    def _emit(self, kind: RawType, now: float, payload: bytes = b"") -> RawPacket:
        packet = RawPacket(
            kind, self.member_id, self._incarnation, self._seq, round(now * 1_000_000), payload
        )
        self._outbox.append((packet.encode(), None))
        if kind is RawType.HELLO:
            self._hello_sent_at = now
        self._counters["datagrams_sent"] += 1
        return packet

    def _emit_ephemeral(self, out: EphemeralOut | None, now: float) -> None:
        if out is None:
            return
        packet = RawPacket(
            RawType.EPHEMERAL,
            self.member_id,
            self._incarnation,
            out.seq,
            round(now * 1_000_000),
            out.payload,
        )
        self._outbox.append((packet.encode(), None))
        self._counters["datagrams_sent"] += 1

    def _on_ephemeral(self, packet: RawPacket, now: float) -> None:
        """Only from a member we know, in the run we know (its HELLO or DATA came first):
        the side channel neither announces a member nor keeps it unsuspected."""
        member = self._members.get(packet.origin)
        if member is None or member.incarnation != packet.incarnation:
            self._side_receiver.refuse()
        elif self._side_receiver.accept(packet.origin, packet.seq, now):
            self._upper.ephemeral(packet.origin, packet.payload)

    def _answer_newcomer(self, now: float) -> None:
        """At once, unless a HELLO of ours went out less than ANSWER_HOLDOFF ago: then our
        next HELLO comes when the hold-off ends, one answer for every newcomer heard in it.
        An answer to each, from every member, made a group that starts together cost N^3
        deliveries (issue 18: 1.2 million in the simulator at 100 members). Multicast, as
        the HELLO that greets everyone: our data and our HELLO then reach the newcomer in the
        order we sent them (a unicast answer, on another socket, could come after them)."""
        due = self._hello_sent_at + ANSWER_HOLDOFF
        if now >= due:
            self._emit(RawType.HELLO, now, self._introduction)
        elif self._next_hello is not None and self._next_hello > due:
            self._next_hello = due

    def _note_departure(self, origin: int, incarnation: int, now: float) -> None:
        departed = self._departed
        departed.pop(origin, None)
        departed[origin] = (incarnation, now)
        for oldest, (_, at) in list(departed.items()):
            if len(departed) <= MAX_MEMBERS and now < at + self._params.forget_after:
                break
            del departed[oldest]

    def _member(self, packet: RawPacket, now: float) -> _Member | None:
        origin = packet.origin
        member = self._members.get(origin)
        if member is None:
            if len(self._members) >= MAX_MEMBERS:
                self._counters["members_refused"] += 1
                return None
            member = self._members[origin] = _Member(packet.incarnation)
            self._liveness.heard(origin, now)
            self._upper.member_changed(origin, MemberState.ACTIVE)
        else:
            was_suspected = self._liveness.heard(origin, now)
            if packet.incarnation != member.incarnation:
                # The member restarted with the same id: its sequence numbers start afresh.
                member.incarnation = packet.incarnation
                member.highest_seq = 0
                member.seen = set()
            if was_suspected:
                self._upper.member_changed(origin, MemberState.ACTIVE)
        return member

    def _accept_data(self, member: _Member, packet: RawPacket) -> None:
        seq = packet.seq
        if seq <= member.highest_seq - DEDUP_WINDOW:
            self._counters["stale_dropped"] += 1
            return
        if seq in member.seen:
            self._counters["duplicates_dropped"] += 1
            return
        member.seen.add(seq)
        if seq > member.highest_seq:
            member.highest_seq = seq
            # Seqs at or below the floor are stale by the check above whether or not they are
            # still in the set, so it is pruned once it holds twice the window: O(1) a packet
            # amortised. Pruning whenever it passed the window rebuilt it on every packet once
            # a sender passed 1,024 (20-28% of a raw receiver's time, issue 18).
            if len(member.seen) > 2 * DEDUP_WINDOW:
                floor = seq - DEDUP_WINDOW
                member.seen = {s for s in member.seen if s > floor}
        self._deliver(packet)

    def _deliver(self, packet: RawPacket) -> None:
        key: OrderKey = (packet.timestamp_us, packet.origin, packet.seq)
        late = key < self._last_key
        if late:
            self._counters["late_delivered"] += 1
        else:
            self._last_key = key
        self._counters["delivered"] += 1
        self._upper.deliver(
            packet.origin, key, packet.timestamp_us / 1_000_000, packet.payload, late
        )


def make_core(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> RawCore:
    return RawCore(member_id, upper, rng, RawParams.from_mapping(params))
