"""The NACK and repair engine (RR-2100 §2.3-§2.7): asking for what we miss, answering what
others miss when our depth obliges us (§2.6), and answering reminders (§2.4, §2.5)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from coreapi import Address
from coreapi.seqnum import to_wire, unwrap
from rmp.context import Shared
from rmp.remind import Reminder
from rmp.sequencing import Sequencer
from rmp.stations import Station
from rmp.wire import Confirm, Nack, NackRange, Remind, Retransmit, RmpPacket

MAX_NACKS_PER_PACKET = 100
MAX_PENDING_REPAIRS = 4096
MAX_NACK_SPAN = 256  # packets of one NackRange acted on
REMIND_REPAIR_SPAN = 32  # packets repaired behind one confirmation in a reminder (§2.5)

# The station named in someone else's packet: known, or added but not heard (the core's).
Known = Callable[[int, float], Station | None]


@dataclass
class Repair:
    """A retransmission we owe, held ``repair_hold`` to gather requesters (§2.7)."""

    due: float
    requesters: dict[int, Address | None] = field(default_factory=dict)


RepairKey = tuple[int, int]  # (source, seq)
RecentKey = tuple[int, int, int]  # (source, seq, destination; 0 for the group)


class RepairEngine:
    """Owns the repairs we owe (``repairs``) and those recently made (``recent``)."""

    def __init__(
        self, shared: Shared, sequencer: Sequencer, reminder: Reminder, known: Known
    ) -> None:
        self._s = shared
        self._sequencer = sequencer
        self._reminder = reminder
        self._known = known
        self.repairs: dict[RepairKey, Repair] = {}
        self.recent: dict[RecentKey, float] = {}

    def deadlines(self) -> Iterator[float]:
        for station in self._s.stations:
            if station.missing:
                yield min(m.next_nack_at for m in station.missing.values())
        if self.repairs:
            yield min(r.due for r in self.repairs.values())

    def clear(self) -> None:
        self.repairs.clear()

    # -- asking (§2.3, §2.6) -----------------------------------------------------------------

    def send_due_nacks(self, station: Station, now: float) -> None:
        if not station.missing:
            return
        p = self._s.params
        stale = [s for s, m in station.missing.items() if now - m.detected_at > p.give_up_after]
        if stale:
            self._sequencer.give_up_on(station, stale, now)
        due = sorted(s for s, m in station.missing.items() if m.next_nack_at <= now)
        if not due:
            return
        options = self._nack_options(station, due)
        for seq in due:
            entry = station.missing[seq]
            if entry.nack_number == 0:
                self._s.counters["nacked_packets"] += 1
            entry.nack_number += 1
            entry.next_nack_at = now + p.nack_retry  # "but not more often" (§2.3)
        for start in range(0, len(options), MAX_NACKS_PER_PACKET):
            chunk = tuple(options[start : start + MAX_NACKS_PER_PACKET])
            # §2.6: the NACK is multicast: any station whose depth allows may answer it.
            self._s.send_control(chunk, None, now)
            self._s.counters["nacks_sent"] += len(chunk)
            self._s.upper.protocol_event(
                "nack_sent", {"source": station.ident, "options": len(chunk)}
            )

    def _nack_options(self, station: Station, due: list[int]) -> list[Nack | NackRange]:
        """One option per run of consecutive packets asked for the same number of times."""
        options: list[Nack | NackRange] = []
        run_start = previous = due[0]
        number = station.missing[due[0]].nack_number
        for seq in [*due[1:], None]:
            entry = station.missing.get(seq) if seq is not None else None
            if seq == previous + 1 and entry is not None and entry.nack_number == number:
                previous = seq
                continue
            options.append(nack_option(station.ident, run_start, previous, number))
            if seq is not None and entry is not None:
                run_start = previous = seq
                number = entry.nack_number
        return options

    # -- answering NACKs (§2.6) --------------------------------------------------------------

    def on_nack(
        self, requester: Station, option: Nack | NackRange, trusted: bool, now: float
    ) -> None:
        s = self._s
        source = option.source
        if isinstance(option, Nack):
            wires: Iterable[int] = (option.seq,)
        else:
            wires = option.missing()
        reference = s.seq if source == s.member_id else self._reference(source)
        if not trusted and s.stations.get(source) is None:
            return
        for index, wire in enumerate(wires):
            if index >= MAX_NACK_SPAN:
                break  # bounded work per option, whatever range a peer names
            seq = unwrap(wire, reference)
            self._share_nack(source, seq, option.nack_number, now)
            if not trusted or not s.serving():
                continue
            # §2.6: "The station whose depth value is equal or less than this number must
            # answer the request" (the virtual queue that prevents NACK implosion).
            if s.stations.depth > option.nack_number:
                continue
            if s.stored(source, seq) is not None:
                self.schedule_repair(source, seq, requester, now)
            elif source == s.member_id and s.own_store.was_evicted(source, seq):
                s.counters["repairs_unavailable"] += 1
                s.upper.protocol_event(
                    "repair_unavailable", {"requester": requester.ident, "seq": seq}
                )

    def _reference(self, source: int) -> int:
        station = self._s.stations.get(source)
        return station.last_valid if station is not None else 0

    def _share_nack(self, source: int, seq: int, number: int, now: float) -> None:
        """Another station asked for a packet we lack too: ours can wait a retry interval
        (an extension, as in SRM: the answer, multicast if several ask, serves us both)."""
        station = self._s.stations.get(source)
        if station is None:
            return
        entry = station.missing.get(seq)
        if entry is not None:
            entry.next_nack_at = max(entry.next_nack_at, now + self._s.params.nack_retry)
            entry.nack_number = max(entry.nack_number, number + 1)

    def schedule_repair(self, source: int, seq: int, requester: Station, now: float) -> None:
        repair = self.repairs.get((source, seq))
        if repair is None:
            if len(self.repairs) >= MAX_PENDING_REPAIRS:
                return
            repair = self.repairs[(source, seq)] = Repair(now + self._s.params.repair_hold)
        repair.requesters[requester.ident] = requester.address

    # -- retransmitting (§2.7) ---------------------------------------------------------------

    def flush_repairs(self, now: float) -> None:
        # Forget repairs older than half a retry interval first: a NACK re-sent on schedule
        # (the repair was lost) must be answered again.
        horizon = now - self._s.params.nack_retry / 2
        for recent in [k for k, t in self.recent.items() if t <= horizon]:
            del self.recent[recent]
        for key in [k for k, r in self.repairs.items() if r.due <= now]:
            repair = self.repairs.pop(key)
            packet = self._s.stored(*key)
            if packet is None:
                continue
            if len(repair.requesters) >= self._s.params.multicast_threshold:
                self._retransmit(key, packet, 0, None, now)  # several asked: multicast (§2.7)
            else:
                for ident, address in repair.requesters.items():
                    self._retransmit(key, packet, ident, address, now)

    def _retransmit(
        self, key: RepairKey, packet: RmpPacket, to: int, address: Address | None, now: float
    ) -> None:
        s = self._s
        source, seq = key
        # Once per half retry interval per destination (0: the group): NACKs from several
        # stations, or one re-sent before the repair arrived, must not double it, and a
        # multicast repair serves everyone.
        recent = self.recent
        if (source, seq, to) in recent or (source, seq, 0) in recent:
            return
        recent[(source, seq, to)] = now
        wrapper = RmpPacket(
            seq=to_wire(s.seq),
            timestamp=s.timestamp(now),
            options=(Retransmit(source, packet),),
            source=s.member_id,
        )
        s.transmit(wrapper, address if to else None, now)
        s.counters["retransmissions"] += 1
        s.upper.protocol_event(
            "retransmission", {"source": source, "seq": seq, "to": to, "multicast": int(not to)}
        )

    def on_retransmit(self, option: Retransmit, now: float) -> None:
        inner = option.packet
        if inner.source != option.source or inner.source == 0:
            self._s.counters["malformed_dropped"] += 1
            return
        if inner.source == self._s.member_id:
            return
        station = self._known(inner.source, now)
        if station is None:
            return
        # §2.7: "the receiver simulates a late reception, checking all the contained
        # confirmations": those may reveal more we lack; its NACKs and reminder are stale.
        for confirm in inner.options:
            if isinstance(confirm, Confirm):
                self._reminder.on_confirm(station, confirm, now)
        self._sequencer.on_data(station, inner, now, live=False)

    # -- answering reminders (§2.4, §2.5) ----------------------------------------------------

    def on_remind(
        self, emitter: Station, packet: RmpPacket, remind: Remind, trusted: bool, now: float
    ) -> None:
        s = self._s
        if not s.knows_sequence():
            return
        seq = unwrap(packet.seq, emitter.last_valid)
        if emitter.last_valid >= seq:
            # We have it: say so, point to point, so that the emitter can stop (§2.4).
            confirm = (Confirm(to_wire(emitter.last_valid), emitter.ident),)
            s.send_control(confirm, emitter.address, now)
            s.counters["confirms_sent"] += 1
        if not trusted:
            return
        # §2.5: the emitter's confirmations show what it missed; repair it, point to point.
        for option in packet.options:
            if not isinstance(option, Confirm) or option.source == emitter.ident:
                continue
            if option.source == s.member_id:
                confirmed, have = unwrap(option.seq, s.seq), s.seq
            else:
                station = s.stations.get(option.source)
                if station is None:
                    continue
                confirmed = unwrap(option.seq, station.last_valid)
                have = station.last_valid
            for missed in range(confirmed + 1, min(have, confirmed + REMIND_REPAIR_SPAN) + 1):
                if s.stored(option.source, missed) is not None:
                    self.schedule_repair(option.source, missed, emitter, now)


def nack_option(source: int, first: int, last: int, number: int) -> Nack | NackRange:
    """§4.2.2: a Nack for one packet, a NackRange (our extension) for a run; the number wraps."""
    if first == last:
        return Nack(number % 256, to_wire(first), source)
    return NackRange(number % 256, to_wire(first), source, last - first + 1)
