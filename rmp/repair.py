"""The NACK and repair engine (RR-2100 §2.3-§2.7): asking for what we miss, answering what
others miss when our depth obliges us (§2.6), and answering reminders (§2.4, §2.5)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from coreapi import Address
from coreapi.seqnum import to_wire, unwrap
from rmp.context import Shared
from rmp.remind import Reminder
from rmp.sequencing import Sequencer
from rmp.stations import Missing, Station
from rmp.suppression import nack_delay, nack_window, retry_interval
from rmp.wire import Confirm, Nack, NackRange, Remind, Retransmit, RmpPacket

MAX_NACKS_PER_PACKET = 100
MAX_PENDING_REPAIRS = 4096
MAX_NACK_SPAN = 256  # packets of one NackRange acted on
MAX_NACK_WORK = 256  # packets acted on for all the NACK options of one received packet
# Repairs one requester may have us schedule per nack_retry (extension: a NACK costs its sender
# 8 bytes and us a retransmission each; a forged one must not make us flood the group).
MAX_REPAIRS_PER_REQUESTER = 1024
MAX_REPAIRS_PER_STRANGER = 64  # ... and per newcomer requester (a stranger, heard lately)
MAX_STRANGER_REPAIRS = 256  # ... and for all newcomer requesters together
# NACK packets for strangers' gaps we send per nack_retry, in all: a thousand phantom stations
# with a gap each must not make us multicast a thousand NACKs every retry. The rest wait.
MAX_STRANGER_NACKS = 16
STRANGER_BACKOFF_AFTER = 4  # a stranger's packets asked for this often: retries back off
STRANGER_BACKOFF_MAX = 64  # ... doubling up to this many nack_retry intervals
# From this many stations on, a first reminder of a packet we confirmed in a multicast data
# packet goes unanswered (on_remind): the group is large enough for its answers to implode.
QUIET_CONFIRM_STATIONS = 16
REMIND_REPAIR_SPAN = 32  # packets repaired behind one confirmation in a reminder (§2.5)

# The station named in someone else's packet: known, or added but not heard (the core's).
Known = Callable[[int, float], Station | None]


@dataclass
class Repair:
    """A retransmission we owe, held ``repair_hold`` to gather requesters (§2.7)."""

    due: float
    requesters: dict[int, Address | None] = field(default_factory=dict)
    # Asked for by a multicast NACK while NACK suppression is on: members that heard it may
    # have stood down and wait for this repair too, so it is multicast (as in SRM; ours).
    for_group: bool = False


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
        self._repairs_due = math.inf  # never later than the earliest repair's due time
        self._nack_work = 0  # packets acted on for the NACKs of the packet being received
        self._stranger_repairs = 0  # repairs scheduled for stranger requesters since ...
        self._stranger_repairs_since = -math.inf  # ... this moment (MAX_STRANGER_REPAIRS)
        self._stranger_nacks = 0  # NACK packets for strangers' gaps since ...
        self._stranger_nacks_since = -math.inf  # ... this moment (MAX_STRANGER_NACKS)
        self.recent: dict[RecentKey, float] = {}  # in the order made, so in time order

    def deadlines(self) -> Iterator[float]:
        for station in self._s.stations:
            due = self.nack_due(station)
            if due is not None:
                yield due
        due = self.repairs_due()
        if due is not None:
            yield due

    def nack_due(self, station: Station) -> float | None:
        """The station's next NACK, or the moment its oldest gap may be given up."""
        if not station.missing:
            return None
        due = min(m.next_nack_at for m in station.missing.values())
        for seq, entry in station.missing.items():  # in time order: the first that may go
            if _may_give_up(station, seq, entry):
                due = min(due, entry.detected_at + self._s.params.give_up_after)
                break
        return max(due, station.nacks_held_until)  # nothing is done while held

    def repairs_due(self) -> float | None:
        """The earliest repair due: a bound kept as repairs come and go, not a scan per call."""
        return self._repairs_due if self.repairs else None

    def clear(self) -> None:
        self.repairs.clear()
        self._repairs_due = math.inf

    # -- asking (§2.3, §2.6) -----------------------------------------------------------------

    def send_due_nacks(self, station: Station, now: float) -> None:
        if not station.missing or now < station.nacks_held_until:
            return
        p = self._s.params
        if station.stranger and not self._stranger_nacks_left(now):
            # Deferred, before any look at its gaps: the hold doubles each time in a row (up
            # to 64 retries' worth), so a crowd of strangers is not revisited every nack_retry
            # for nothing, and a visit costs no walk over what each of them misses.
            hold = min(STRANGER_BACKOFF_MAX, 2**station.nack_deferrals)
            station.nacks_held_until = now + p.nack_retry * hold
            station.nack_deferrals += 1
            self._s.counters["nacks_deferred"] += 1
            return
        self._give_up_stale(station, now)
        due = sorted(s for s, m in station.missing.items() if m.next_nack_at <= now)
        if not due:
            return
        if station.stranger:
            self._stranger_nacks += 1
        station.nack_deferrals = 0
        options = self._nack_options(station, due)
        backs_off = self._backs_off(station, now)
        # One jittered retry interval for all of them (extension, rmp/suppression.py): they
        # stay due together, so their next NACK is one packet of NackRanges again.
        tries = station.missing[due[0]].nack_number + 1
        retry = retry_interval(self._s, tries)
        for seq in due:
            entry = station.missing[seq]
            if entry.nack_number == 0:
                self._s.counters["nacked_packets"] += 1
            entry.nack_number += 1
            if backs_off:
                entry.next_nack_at = now + p.nack_retry * _backoff(entry.nack_number)
            else:
                entry.next_nack_at = now + retry
        for start in range(0, len(options), MAX_NACKS_PER_PACKET):
            chunk = tuple(options[start : start + MAX_NACKS_PER_PACKET])
            # §2.6: the NACK is multicast: any station whose depth allows may answer it.
            self._s.send_control(chunk, None, now)
            self._s.counters["nacks_sent"] += len(chunk)
            self._s.counters["nack_packets"] += 1
            self._s.upper.protocol_event(
                "nack_sent", {"source": station.ident, "options": len(chunk)}
            )

    def _give_up_stale(self, station: Station, now: float) -> None:
        """§2.3 waits for a missing packet; we give it up after give_up_after (reported), but
        not one the station itself said, since the gap was found, it had not sent yet: a
        packet claiming a number far ahead (a forger's) must not make us skip the station's
        real packets, which are still to come (extension, issue 17)."""
        limit = self._s.params.give_up_after
        stale = [
            seq
            for seq, m in station.missing.items()
            if now - m.detected_at >= limit and _may_give_up(station, seq, m)
        ]
        if stale:
            self._sequencer.give_up_on(station, stale, now)

    def _stranger_nacks_left(self, now: float) -> bool:
        """Whether a NACK packet for a stranger's gaps may go in this nack_retry interval."""
        if now >= self._stranger_nacks_since + self._s.params.nack_retry:
            self._stranger_nacks_since, self._stranger_nacks = now, 0
        return self._stranger_nacks < MAX_STRANGER_NACKS

    def _backs_off(self, station: Station, now: float) -> bool:
        """ "but not more often" than nack_retry (§2.3). A silent stranger's packets (none of
        its packets came in sequence, and it has said nothing for a while) are asked for ever
        less often after STRANGER_BACKOFF_AFTER tries: a phantom station answers nobody, and
        what one forged packet costs us over time must be bounded (extension, issue 17)."""
        p = self._s.params
        quiet_for = max(p.nack_retry * STRANGER_BACKOFF_AFTER, 2 * p.keepalive)
        return station.stranger and now - station.last_heard > quiet_for

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
        if not trusted and s.stations.get(source) is None:
            return
        first, last = self._relevant(option)
        # Bounded work per option and per packet, whatever range a peer names; a stranger's
        # packet no more than the repairs it may have of us in an interval (a phantom's NACKs
        # for a real member's packets cost us a walk over them each, issue 17).
        work = MAX_REPAIRS_PER_STRANGER if requester.stranger else MAX_NACK_WORK
        asked = last
        last = min(last, first + MAX_NACK_SPAN - 1, first + work - self._nack_work - 1)
        s.counters["repairs_refused"] += max(0, asked - max(last, first - 1))  # not acted on
        if last < first:
            return
        self._nack_work += last - first + 1
        if not self._newcomer(requester, now) or self._share_left(requester, now):
            # Not a newcomer's NACK (a phantom's?) once the newcomers' repairs are spent: its
            # repair will not come from us, and forged NACKs must not keep ours postponed.
            self._share_nacks(source, first, last, option.nack_number, now)
        # §2.6: "The station whose depth value is equal or less than this number must answer
        # the request" (the virtual queue that prevents NACK implosion).
        own = source == s.member_id
        by_depth = s.stations.depth <= option.nack_number
        if not trusted or not s.serving() or not (by_depth or own):
            return
        # Extension (issue 18): the packet's source answers too, whatever its depth. When the
        # loss was at its own link every member lacks the packet, and the depth queue would
        # take a retry per station to reach it. Held longer, it stands down if it hears the
        # repair of a station the depth rule obliged (on_retransmit).
        hold = self._s.params.repair_hold + (0.0 if by_depth else nack_window(s))
        store = s.own_store if own else s.store
        for seq in range(first, last + 1):
            if not self._share_left(requester, now):
                s.counters["repairs_refused"] += last + 1 - seq  # its share is spent: stop
                return
            if store.get(source, seq) is not None:
                self.schedule_repair(source, seq, requester, now, hold)
                repair = self.repairs.get((source, seq))
                if repair is not None and s.params.nack_delay:
                    repair.for_group = True
            elif own and store.was_evicted(source, seq):
                s.counters["repairs_unavailable"] += 1
                s.upper.protocol_event(
                    "repair_unavailable", {"requester": requester.ident, "seq": seq}
                )

    def _relevant(self, option: Nack | NackRange) -> tuple[int, int]:
        """The part of what ``option`` asks for that we could hold or lack (unbounded numbers):
        nothing above the highest of its numbers we hold or miss, nothing older than the
        store keeps (or remembers evicting). A forged range of 30,000 costs what it overlaps."""
        s = self._s
        source = option.source
        if isinstance(option, NackRange):
            wire, count = option.first, option.count
        else:
            wire, count = option.seq, 1
        if source == s.member_id:
            top = s.seq
        else:
            station = s.stations.get(source)
            if station is None:
                return 0, -1
            top = max(station.last_valid, station.seen_top, next(reversed(station.missing), 0))
        first = unwrap(wire, top)
        bottom = max(1, top - 2 * s.params.retention_count)
        return max(first, bottom), min(first + count - 1, top)

    def _share_nacks(self, source: int, first: int, last: int, number: int, now: float) -> None:
        """Another station asked for packets we lack too: ours can wait a retry interval
        (an extension, as in SRM: the answer, multicast if several ask, serves us both),
        jittered over the NACK window (rmp/suppression.py), so that the members one NACK
        suppressed do not all ask again at the same instant if no answer comes."""
        station = self._s.stations.get(source)
        if station is None or not station.missing:
            return
        later = now + self._s.params.nack_retry + nack_delay(self._s)
        missing = station.missing
        for seq in range(first, last + 1):
            entry = missing.get(seq)
            if entry is not None:
                entry.next_nack_at = max(entry.next_nack_at, later)
                entry.nack_number = max(entry.nack_number, number + 1)

    def new_packet(self) -> None:
        """A received packet begins: its NACK options share one work budget."""
        self._nack_work = 0

    def _newcomer(self, station: Station, now: float) -> bool:
        """A stranger (none of its data came in sequence) heard for less than suspect_after.
        A viewer heard for long is not one, though it never sends data."""
        return station.stranger and now - station.first_heard < self._s.params.suspect_after

    def _share_left(self, requester: Station, now: float) -> bool:
        """Whether ``requester`` may still be repaired in this nack_retry interval."""
        if now >= requester.served_since + self._s.params.nack_retry:
            requester.served_since, requester.repairs_served = now, 0
        # The newcomers' shared pool (phantoms draw on it) must not starve anyone else.
        if not self._newcomer(requester, now):
            return requester.repairs_served < MAX_REPAIRS_PER_REQUESTER
        if now >= self._stranger_repairs_since + self._s.params.nack_retry:
            self._stranger_repairs_since, self._stranger_repairs = now, 0
        return (
            requester.repairs_served < MAX_REPAIRS_PER_STRANGER
            and self._stranger_repairs < MAX_STRANGER_REPAIRS
        )

    def schedule_repair(
        self, source: int, seq: int, requester: Station, now: float, hold: float | None = None
    ) -> None:
        """A repair of (source, seq) for ``requester``, due ``hold`` from now (``repair_hold``
        if not said), or sooner if one is already due sooner."""
        if not self._share_left(requester, now):
            self._s.counters["repairs_refused"] += 1
            return
        due = now + (self._s.params.repair_hold if hold is None else hold)
        repair = self.repairs.get((source, seq))
        if repair is None:
            if len(self.repairs) >= MAX_PENDING_REPAIRS:
                self._s.counters["repairs_refused"] += 1
                return
            repair = self.repairs[(source, seq)] = Repair(due)
        repair.due = min(repair.due, due)
        self._repairs_due = min(self._repairs_due, repair.due)
        if requester.ident not in repair.requesters:
            requester.repairs_served += 1
            if self._newcomer(requester, now):
                self._stranger_repairs += 1
        repair.requesters[requester.ident] = requester.address

    # -- retransmitting (§2.7) ---------------------------------------------------------------

    def flush_repairs(self, now: float) -> None:
        # Forget repairs older than half a retry interval first: a NACK re-sent on schedule
        # (the repair was lost) must be answered again.
        horizon = now - self._s.params.nack_retry / 2
        recent = self.recent
        while recent:
            oldest = next(iter(recent))
            if recent[oldest] > horizon:
                break
            del recent[oldest]
        if now < self._repairs_due:
            return
        for key in [k for k, r in self.repairs.items() if r.due <= now]:
            repair = self.repairs.pop(key)
            packet = self._s.stored(*key)
            if packet is None:
                continue
            if repair.for_group or len(repair.requesters) >= self._s.params.multicast_threshold:
                self._retransmit(key, packet, 0, None, now)  # several asked: multicast (§2.7)
            else:
                for ident, address in repair.requesters.items():
                    self._retransmit(key, packet, ident, address, now)
        self._repairs_due = min((r.due for r in self.repairs.values()), default=math.inf)

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
        wrapper = RmpPacket(
            seq=to_wire(s.seq),
            timestamp=s.timestamp(now),
            options=(Retransmit(source, packet),),
            source=s.member_id,
        )
        if to and address is not None and not s.credit.spend(address, wrapper.wire_size):
            # Beyond 3x what this address sent us: to the group instead, never an amplifier
            # against another host (rmp/amplification.py).
            s.counters["repairs_to_group_unproven"] += 1
            to, address = 0, None
            if (source, seq, 0) in recent:
                return
        recent[(source, seq, to)] = now
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
            # Someone multicast a repair of our own packet (we never ask for our own, so it
            # was not to us alone): the repair we held as its source is not needed (issue 18).
            key = (inner.source, unwrap(inner.seq, self._s.seq))
            if self.repairs.pop(key, None) is not None:
                self._s.counters["repairs_suppressed"] += 1
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
        # §2.3: once our confirmation went out in a multicast data packet (the A flag), it
        # "will not have to be confirmed": that packet is stored and repaired like any other.
        # In a large group a first reminder is therefore answered only by those whose
        # confirmation has not gone out: most have, each member sending now and then, and
        # every answer is a datagram to the emitter (issue 18: 104,665 point-to-point
        # confirmations for 1,000 strokes at 100 members). A second reminder (remind number 2
        # and up: §4.2.4 counts the re-sendings) means ours did not get there: everyone who
        # has it answers. In a small group the answers cost little and, under heavy loss,
        # reopen the emitter's send window sooner (its piggybacked confirmations lost): there
        # everyone answers every reminder, as before. [extension, docs/rmp.md]
        piggybacked = (
            emitter.confirmed
            and remind.remind_number == 1
            and len(s.stations) >= QUIET_CONFIRM_STATIONS
        )
        if emitter.last_valid >= seq and not piggybacked:
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


def _may_give_up(station: Station, seq: int, entry: Missing) -> bool:
    """Not a packet the station itself said, after we found it missing, it had not sent."""
    return seq <= station.source_seq or station.source_seq_at <= entry.detected_at


def _backoff(tries: int) -> int:
    """Retry intervals for a silent stranger's packet: 1 up to STRANGER_BACKOFF_AFTER tries,
    then doubling, up to STRANGER_BACKOFF_MAX."""
    if tries < STRANGER_BACKOFF_AFTER:
        return 1
    return int(min(STRANGER_BACKOFF_MAX, 2 ** (tries - STRANGER_BACKOFF_AFTER + 1)))


def nack_option(source: int, first: int, last: int, number: int) -> Nack | NackRange:
    """§4.2.2: a Nack for one packet, a NackRange (our extension) for a run; the number wraps."""
    if first == last:
        return Nack(number % 256, to_wire(first), source)
    return NackRange(number % 256, to_wire(first), source, last - first + 1)
