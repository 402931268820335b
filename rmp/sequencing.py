"""Each station's receive sequence (RR-2100 §2.3): in-sequence acceptance, out-of-sequence
waiting for WI, gaps found and marked missing (the NACK engine asks for them), giving up."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from coreapi.seqnum import unwrap
from rmp.context import Shared
from rmp.stations import MAX_GAP, MAX_WAITING, Missing, Station, Waiting
from rmp.wire import RmpPacket

# What to do with a packet that is next in a station's sequence (or delivered at WI expiry):
# deliver it, hold it while joining, or take it as an image part. The core decides (§2.8).
Consume = Callable[[Station, RmpPacket, float], None]


class Sequencer:
    """Works on the per-station records (``last_valid``, ``waiting``, ``missing``,
    ``delivered_ahead``); it keeps no state of its own."""

    def __init__(self, shared: Shared, consume: Consume) -> None:
        self._s = shared
        self._consume = consume

    def deadlines(self) -> Iterator[float]:
        """When a packet waiting behind a gap is due for delivery anyway (§2.3's WI)."""
        if self._s.serving():
            for station in self._s.stations:
                if station.waiting:
                    yield min(w.deliver_at for w in station.waiting.values())

    def on_data(self, station: Station, packet: RmpPacket, now: float, live: bool) -> None:
        s = self._s
        seq = unwrap(packet.seq, station.last_valid)
        if seq <= station.last_valid or seq in station.waiting or seq in station.delivered_ahead:
            s.counters["duplicates_dropped"] += 1
            return
        if seq > station.last_valid + MAX_GAP and s.knows_sequence():
            s.counters["malformed_dropped"] += 1  # beyond what we track: bounded memory
            return
        s.store.put(station.ident, seq, packet, now)
        if live:
            s.stations.emitted(station.ident)  # §2.5: the emitter goes to the front
        station.missing.pop(seq, None)
        if seq == station.last_valid + 1 and s.knows_sequence():
            self.accept(station, seq, packet, now)
            self.drain(station, now)
            return
        # §2.3: out of sequence: wait, and ask for what is missing.
        if len(station.waiting) >= MAX_WAITING:
            s.counters["duplicates_dropped"] += 1  # bounded: it will be asked for again
            return
        if s.knows_sequence():
            self.mark_missing(station, station.last_valid + 1, seq - 1, now)
        # §2.3: WI runs from the NACK, i.e. from when the gap in front of this packet was
        # found; a packet arriving behind an old gap does not wait a whole WI again.
        gap_since = min((m.detected_at for k, m in station.missing.items() if k < seq), default=now)
        station.waiting[seq] = Waiting(packet, max(now, gap_since + s.params.wait_interval))

    def accept(self, station: Station, seq: int, packet: RmpPacket, now: float) -> None:
        """The in-sequence packet ``seq`` (§2.3): advance, owe a confirmation, deliver."""
        station.last_valid = seq
        station.confirmed = False  # A flag: to be confirmed in our next data packet
        if seq in station.delivered_ahead:
            station.delivered_ahead.discard(seq)  # delivered at WI expiry, or given up
            return
        self._consume(station, packet, now)

    def drain(self, station: Station, now: float) -> None:
        while True:
            following = station.last_valid + 1
            waiting = station.waiting.pop(following, None)
            if waiting is not None:
                self.accept(station, following, waiting.packet, now)
            elif following in station.delivered_ahead:
                station.delivered_ahead.discard(following)
                station.last_valid = following
                station.confirmed = False  # A flag: the new last_valid is still to confirm
            else:
                return

    def expire_waiting(self, station: Station, now: float) -> None:
        """§2.3: "If a time period of WI seconds elapsed before the reception of the answer to
        the Nack, the corresponding packet is delivered to the application." The missing one,
        when it comes, is delivered as a late arrival (§3)."""
        if not station.waiting or not self._s.serving():
            return
        for seq in sorted(s for s, w in station.waiting.items() if w.deliver_at <= now):
            waiting = station.waiting.pop(seq)
            station.delivered_ahead.add(seq)
            self._s.counters["wi_expiries"] += 1
            self._s.upper.protocol_event(
                "wait_interval_expired", {"source": station.ident, "seq": seq}
            )
            self._consume(station, waiting.packet, now)

    def detect_gap(self, station: Station, seq: int, now: float) -> None:
        """``seq`` is known to exist (a header's S_n, a confirmation): ask for what is behind."""
        if self._s.knows_sequence() and seq > station.last_valid:
            self.mark_missing(station, station.last_valid + 1, seq, now)

    def mark_missing(self, station: Station, first: int, last: int, now: float) -> None:
        # At most MAX_GAP packets are asked for at a time, and a gap never moves last_valid by
        # itself: a Confirm naming a far-off number (a broken or hostile peer) costs bounded
        # work and cannot make us skip a station's real packets. Only give_up_after does.
        last = min(last, station.last_valid + MAX_GAP)
        if len(station.missing) >= MAX_GAP:
            return
        # One random delay for the whole gap, so that its NACKs leave together (NackRange).
        p = self._s.params
        delay = self._s.rng.random() * p.nack_delay if p.nack_delay else 0.0
        for seq in range(first, last + 1):
            if seq in station.missing or seq in station.waiting or seq in station.delivered_ahead:
                continue
            station.missing[seq] = Missing(now, now + delay)

    def give_up_on(self, station: Station, seqs: Iterable[int], now: float) -> None:
        """Stop waiting for ``seqs`` from ``station``: counted, reported, skipped."""
        lost = [s for s in seqs if s not in station.waiting]
        for seq in lost:
            station.missing.pop(seq, None)
            station.delivered_ahead.add(seq)
        if lost:
            self._s.counters["packets_given_up"] += len(lost)
            self._s.upper.failure(
                f"{len(lost)} drawing packet(s) from member {station.ident:08x} could not be "
                "recovered"
            )
        self.drain(station, now)
