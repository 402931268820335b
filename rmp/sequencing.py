"""Each station's receive sequence (RR-2100 §2.3): in-sequence acceptance, out-of-sequence
waiting for WI, gaps found and marked missing (the NACK engine asks for them), giving up."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from coreapi.seqnum import to_wire, unwrap
from rmp.context import Shared
from rmp.stations import (
    MAX_GAP,
    MAX_WAITING,
    NEW_STATION_HISTORY,
    STRANGER_GAP,
    Missing,
    Station,
    Waiting,
)
from rmp.suppression import nack_delay
from rmp.wire import Confirm, RmpPacket

# What to do with a packet that is next in a station's sequence (or delivered at WI expiry):
# deliver it, hold it while joining, or take it as an image part. The core decides (§2.8).
Consume = Callable[[Station, RmpPacket, float], None]
# A station's packet (its wire number) given up, never to be delivered: a run of pieces it
# belongs to is lost (rmp/reassembly.py, issue 20).
Skipped = Callable[[int, int], None]


def _nothing_skipped(source: int, seq: int) -> None:
    return None


class Sequencer:
    """Works on the per-station records (``last_valid``, ``waiting``, ``missing``,
    ``delivered_ahead``); it keeps no state of its own."""

    def __init__(
        self, shared: Shared, consume: Consume, skipped: Skipped = _nothing_skipped
    ) -> None:
        self._s = shared
        self._consume = consume
        self._skipped = skipped

    def deadlines(self) -> Iterator[float]:
        """When a packet waiting behind a gap is due for delivery anyway (§2.3's WI)."""
        for station in self._s.stations:
            due = self.due(station)
            if due is not None:
                yield due

    def due(self, station: Station) -> float | None:
        if self._s.serving() and station.waiting:
            return min(w.deliver_at for w in station.waiting.values())
        return None

    def on_data(self, station: Station, packet: RmpPacket, now: float, live: bool) -> None:
        s = self._s
        seq = unwrap(packet.seq, station.last_valid)
        if s.knows_sequence():
            self.take_in(station, seq, now)
        if live and self._reused(station, seq, packet, now):
            seq = unwrap(packet.seq, station.last_valid)
        if seq <= station.last_valid or seq in station.waiting or seq in station.delivered_ahead:
            s.counters["duplicates_dropped"] += 1
            return
        if self._previous_run(station, seq, packet, live):
            return
        if seq > station.last_valid + MAX_GAP and s.knows_sequence():
            # A known station's packet this far ahead of what we have is beyond what we track
            # (bounded memory): refused, counted; its packets in between are still taken.
            s.counters["far_jumps_refused"] += 1
            return
        s.store.put(station.ident, seq, packet, now)
        station.seen_top = max(station.seen_top, seq)
        if live and not (station.stranger and seq > station.last_valid + NEW_STATION_HISTORY):
            # §2.5: the emitter goes to the front. Not for a stranger's packet far beyond the
            # history we would ask of it: the queue is everyone's (O(stations) to move), and a
            # phantom station's forged number must not reorder it.
            s.stations.emitted(station.ident)
        station.missing.pop(seq, None)
        if seq == station.last_valid + 1 and s.knows_sequence():
            self.accept(station, seq, packet, now)
            self.drain(station, now)
            return
        # §2.3: out of sequence: wait, and ask for what is missing.
        if len(station.waiting) >= MAX_WAITING:
            s.counters["duplicates_dropped"] += 1  # bounded: it will be asked for again
            station.scanned_top = 0  # by the next scan (it may have left `missing` above)
            return
        if s.knows_sequence():
            self.mark_missing(station, station.last_valid + 1, seq - 1, now)
        # §2.3: WI runs from the NACK, i.e. from when the gap in front of this packet was
        # found; a packet arriving behind an old gap does not wait a whole WI again.
        deliver_at = max(now, self._gap_since(station, seq, now) + s.params.wait_interval)
        station.waiting[seq] = Waiting(packet, deliver_at)
        s.stations.note_due(station, deliver_at)

    @staticmethod
    def _gap_since(station: Station, seq: int, now: float) -> float:
        """When the oldest gap below ``seq`` was found. Entries go into ``missing`` as they are
        found, so in insertion order their times never decrease: the first one below ``seq``
        is the oldest, usually the very first (O(1), not a scan of every gap)."""
        for key, entry in station.missing.items():
            if key < seq:
                return entry.detected_at
        return now

    def take_in(self, station: Station, seq: int, now: float) -> None:
        """The first number heard from a station whose sequence start we do not know: no join
        answer listed it (§2.8), so it has a history we never saw (§5: a merged partition, a
        missed join; or a forger). §2.3 asks for what precedes a packet; we ask for the last
        NEW_STATION_HISTORY of it and give the rest up at once, counted and reported, so that
        a station with a long history is taken in rather than refused, at bounded cost."""
        s = self._s
        if station.history_known:
            return
        station.history_known = True
        first_asked = max(station.last_valid + 1, seq - NEW_STATION_HISTORY)
        skipped = first_asked - 1 - station.last_valid
        if skipped <= 0:
            return
        s.counters["history_given_up"] += skipped
        s.upper.protocol_event(
            "history_given_up",
            {"source": station.ident, "first": station.last_valid + 1, "last": first_asked - 1},
        )
        s.upper.failure(
            f"member {station.ident:08x} was first heard at its packet {seq}: its "
            f"{skipped} packet(s) before {first_asked} are not asked for"
        )
        station.last_valid = first_asked - 1

    def accept(
        self, station: Station, seq: int, packet: RmpPacket, now: float, proven: bool = True
    ) -> None:
        """The in-sequence packet ``seq`` (§2.3): advance, owe a confirmation, deliver.
        ``proven``: it came in sequence, not merely after a gap we gave up; only that makes
        the station more than a stranger (a phantom's packets behind a gap given up when it
        asked to join made it one, and its confirmations, none, then held our send window
        shut until it was suspected: issue 17)."""
        station.last_valid = seq
        station.accepted_any = station.accepted_any or proven
        station.confirmed = False  # A flag: to be confirmed in our next data packet
        if seq in station.delivered_ahead:
            station.delivered_ahead.discard(seq)  # delivered at WI expiry, or given up
            return
        self._consume(station, packet, now)

    def drain(self, station: Station, now: float, proven: bool = True) -> None:
        while True:
            following = station.last_valid + 1
            waiting = station.waiting.pop(following, None)
            if waiting is not None:
                self.accept(station, following, waiting.packet, now, proven)
            elif following in station.delivered_ahead:
                station.delivered_ahead.discard(following)
                station.last_valid = following
                station.confirmed = False  # A flag: the new last_valid is still to confirm
            else:
                return

    def expire_waiting(self, station: Station, now: float, budget: int = MAX_WAITING) -> int:
        """§2.3: "If a time period of WI seconds elapsed before the reception of the answer to
        the Nack, the corresponding packet is delivered to the application." The missing one,
        when it comes, is delivered as a late arrival (§3). At most ``budget`` packets (the
        rest stay due: the core comes back for them); returns how many were delivered."""
        if not station.waiting or not self._s.serving() or budget <= 0:
            return 0
        expired = sorted(s for s, w in station.waiting.items() if w.deliver_at <= now)
        for seq in expired[:budget]:
            waiting = station.waiting.pop(seq)
            station.delivered_ahead.add(seq)
            self._s.counters["wi_expiries"] += 1
            self._s.upper.protocol_event(
                "wait_interval_expired", {"source": station.ident, "seq": seq}
            )
            self._consume(station, waiting.packet, now)
        return min(len(expired), budget)

    def detect_gap(self, station: Station, seq: int, now: float) -> None:
        """``seq`` is known to exist (a header's S_n, a confirmation): ask for what is behind."""
        if not self._s.knows_sequence():
            return
        self.take_in(station, seq, now)
        if seq > station.last_valid:
            self.mark_missing(station, station.last_valid + 1, seq, now)

    def mark_missing(self, station: Station, first: int, last: int, now: float) -> None:
        # At most MAX_GAP packets are asked for at a time, and a gap never moves last_valid by
        # itself: a Confirm naming a far-off number (a broken or hostile peer) costs bounded
        # work and cannot make us skip a station's real packets. Only give_up_after does.
        # A stranger (none of its packets taken in sequence yet) may have us track far fewer:
        # what one forged packet from a phantom station costs is bounded by STRANGER_GAP.
        bound = STRANGER_GAP if station.stranger else MAX_GAP
        last = min(last, station.last_valid + bound)
        room = bound - len(station.missing)
        if room <= 0 or first > last:
            if first <= last:
                self._s.counters["gaps_refused"] += 1
            return
        # One random delay for the whole gap, so that its NACKs leave together (NackRange).
        delay = nack_delay(self._s)  # extension: scaled to the group (rmp/suppression.py)
        # What was scanned before is accounted for (Station.scanned_top): rescanning it on
        # every packet that arrives behind a gap cost O(k) per packet with k waiting, 17% of
        # a receiver at 5% loss (issue 18).
        scanned = True
        for seq in range(max(first, station.scanned_top + 1), last + 1):
            if seq in station.missing or seq in station.waiting or seq in station.delivered_ahead:
                continue
            if room <= 0:
                scanned = False  # the rest is asked for by a later scan, from the start
                break
            station.missing[seq] = Missing(now, now + delay)
            room -= 1
        station.scanned_top = max(station.scanned_top, last) if scanned else 0
        station.seen_top = max(station.seen_top, last)
        self._s.stations.note_due(station, now + delay)

    def settle(self, station: Station, top: int, now: float) -> None:
        """Everything of ``station``'s up to ``top`` in sequence now: what is still missing is
        given up (counted, reported), what waits behind it is delivered in order."""
        self.give_up_on(station, range(station.last_valid + 1, top + 1), now)

    def _reused(self, station: Station, seq: int, packet: RmpPacket, now: float) -> bool:
        """A packet from the station itself under a number we hold a different packet for: it
        restarted with no join answer (alone, or cut off by a partition, §2.8 and §5) and its
        new run reuses its old numbers. Its new run is taken from here on and what we hold of
        the old one above it given up, reported (Sequencer.resumed); its new packets before
        this one, which we took for old ones, are lost here: the report says so."""
        stored = self._s.store.get(station.ident, seq)
        if stored is None or (stored.timestamp, stored.data) == (packet.timestamp, packet.data):
            return False
        if station.resumed_after is not None and seq > station.resumed_after:
            return False  # the marker's run: a forged or broken copy, not a restart
        self._s.upper.failure(
            f"member {station.ident:08x} restarted and reuses the numbers of its previous "
            f"run: its new packets before {seq} may be lost here"
        )
        self.resumed(station, seq - 1, now)
        station.resumed_after = None  # this run carries no marker: take its packets as they come
        return True

    def _previous_run(self, station: Station, seq: int, packet: RmpPacket, live: bool) -> bool:
        """A packet above where ``station`` resumed (§2.8) without its resumption marker is of
        its previous run, repaired by a member that kept it: its number is the new run's now.
        Given up, counted and reported (once per restart), never taken for the new one."""
        after = station.resumed_after
        if after is None or seq <= after:
            return False
        marker = Confirm(to_wire(after), station.ident)
        if marker in packet.options:
            return False
        if live:
            # From the station itself, with no marker: its previous run is dead, so this is
            # the run we took for new, and the marker was forged (or the station never
            # restarted): forget it rather than refuse its packets for good (issue 17).
            station.resumed_after = None
            return False
        s = self._s
        s.counters["packets_given_up"] += 1
        if not station.previous_run_reported:
            station.previous_run_reported = True
            s.upper.failure(
                f"member {station.ident:08x} restarted at its packet {after + 1}: its previous "
                f"run's packet {seq} reached us after that and is given up"
            )
        return True

    def resumed(self, station: Station, resumes_after: int, now: float) -> None:
        """``station`` says (a Confirm of its own number, rmp/remind.py) that it restarted and
        its new run resumes above ``resumes_after`` (§2.8). Its previous run's numbers above
        that are reused by the new one: whatever we hold or miss of them is given up and
        reported, so that its new packets are taken in, and none of its old ones (nor of its
        new ones) is lost in silence. Once per restart."""
        if station.resumed_after == resumes_after:
            return
        station.resumed_after = resumes_after
        station.previous_run_reported = False
        s = self._s
        above = sorted(q for q in (*station.waiting, *station.missing) if q > resumes_after)
        delivered = max(station.last_valid, max(station.delivered_ahead, default=0))
        if above or delivered > resumes_after:
            s.counters["packets_given_up"] += len(above)
            s.upper.protocol_event(
                "restart_taken", {"source": station.ident, "resumes_after": resumes_after}
            )
            s.upper.failure(
                f"member {station.ident:08x} restarted at its packet {resumes_after + 1}: "
                f"{len(above)} packet(s) of its previous run were not recovered here, and "
                f"what was delivered here after its packet {resumes_after} (up to "
                f"{max(delivered, resumes_after)}) the others may lack"
            )
        for seq in above:
            station.waiting.pop(seq, None)
            station.missing.pop(seq, None)
        station.delivered_ahead = {q for q in station.delivered_ahead if q <= resumes_after}
        station.last_valid = min(station.last_valid, resumes_after)
        station.seen_top = min(station.seen_top, resumes_after)
        station.scanned_top = 0
        s.store.discard_above(station.ident, resumes_after)
        self.drain(station, now, proven=False)

    def give_up_on(self, station: Station, seqs: Iterable[int], now: float) -> None:
        """Stop waiting for ``seqs`` from ``station``: counted, reported, skipped."""
        lost = [s for s in seqs if s not in station.waiting]
        for seq in lost:
            station.missing.pop(seq, None)
            station.delivered_ahead.add(seq)
            self._skipped(station.ident, to_wire(seq))
        if lost:
            self._s.counters["packets_given_up"] += len(lost)
            self._s.upper.failure(
                f"{len(lost)} drawing packet(s) from member {station.ident:08x} could not be "
                "recovered"
            )
        self.drain(station, now, proven=bool(not lost))
