"""Confirmations (RR-2100 §2.3) and the emitter's side of the last packet problem (§2.4)."""

from __future__ import annotations

from coreapi import MemberState
from coreapi.seqnum import to_wire, unwrap
from rmp.context import Shared
from rmp.sequencing import Sequencer
from rmp.stations import Station
from rmp.wire import HEADER_SIZE, SOURCE_SIZE, Confirm, Remind, RmpPacket

# Packets past a station's own S_n (§4.1) that a stranger's confirmation may reveal (issue 17).
STRANGER_HEARSAY = 8
# From this many stations on, a first reminder waits while others' data packets keep
# confirming our last packet (Reminder.remind), at most PATIENT_REMINDS periods more.
PATIENT_STATIONS = 16
PATIENT_REMINDS = 4
# ... and is sent at once when this many stations' data packets, sent after ours reached them,
# confirm it no more than anyone else has: nobody got it (Reminder.heard_data).
UNCONFIRMED_BY = 3


class Reminder:
    """Owns our last data packet and its reminders (count, next time), and the fair cursor over
    the confirmations we owe; reads the confirmations others send."""

    def __init__(self, shared: Shared, sequencer: Sequencer) -> None:
        self._previous_run_reported = False
        self._s = shared
        self._sequencer = sequencer
        self.last_data: RmpPacket | None = None
        self.remind_count = 0
        self.next_remind_at: float | None = None
        self._confirm_cursor = 0
        self._confirmed_lately = False  # a station confirmed our last packet this period
        self._patience = 0  # periods the first reminder was put off (PATIENT_REMINDS)
        self._sent_at = 0.0  # when our last packet left
        self._confirmed_any = False  # a station confirmed it
        self._lacking: set[int] = set()  # stations whose data since did not (UNCONFIRMED_BY)

    def sent(self, packet: RmpPacket, now: float) -> None:
        """We multicast a new data packet (§2.2): it is the one to remind from now on."""
        p = self._s.params
        self.last_data = packet
        self.remind_count = 0
        self._confirmed_lately = False
        self._patience = 0
        self._sent_at = now
        self._confirmed_any = False
        self._lacking.clear()
        self.next_remind_at = now + self._s.rng.uniform(p.remind_min, p.remind_max)

    def hurry(self, now: float) -> None:
        """The send window is closed: ask for confirmations now rather than at the next
        reminder; a reminder is answered by every station that has our last packet (§2.4)."""
        soon = now + self._s.params.remind_min
        self._patience = PATIENT_REMINDS  # no more waiting: the window needs them now
        if self.next_remind_at is None or self.next_remind_at > soon:
            self.next_remind_at = soon

    def stop(self) -> None:
        self.next_remind_at = None

    def wake(self, now: float) -> None:
        """A station has not confirmed our last packet, and no reminder is due: one must be.
        §2.4 asks for reminders while the last message is unconfirmed, whoever lacks it: a
        station heard after we sent it (or that confirms an older number) is reminded too, and
        its NACKs for what is in between follow. Not once remind_limit is spent on it."""
        if self.last_data is None or self.next_remind_at is not None:
            return
        if self.remind_count >= self._s.params.remind_limit:
            return
        p = self._s.params
        self.next_remind_at = now + self._s.rng.uniform(p.remind_min, p.remind_max)

    def on_confirm(self, confirmer: Station, option: Confirm, now: float) -> None:
        s = self._s
        source = option.source
        if source == s.member_id:
            seq = unwrap(option.seq, s.seq)
            if seq <= s.seq:  # a confirmation of a packet we never sent is nobody's
                if seq == s.seq and confirmer.confirmed_mine < seq:
                    self._confirmed_lately = self._confirmed_any = True
                confirmer.confirmed_mine = max(confirmer.confirmed_mine, seq)
            elif not self._previous_run_reported and not confirmer.stranger:
                # ... or of a previous run of ours under this id, which no join answer told us
                # of (we started alone, or cut off, §2.8, §5): its strokes are not on our board.
                self._previous_run_reported = True
                s.upper.failure(
                    f"member {confirmer.ident:08x} holds our packets up to {seq} from before "
                    "we restarted: what we drew then is missing here (no member answered our "
                    "join)"
                )
            return
        if source == confirmer.ident:
            # A station's confirmation of its own number: it restarted and its new run resumes
            # above it (§2.8, our resumption marker, see confirm_options).
            if confirmer.joined_again:
                seq = unwrap(option.seq, confirmer.last_valid)
                self._sequencer.resumed(confirmer, seq, now)
            return
        station = s.stations.get(source)
        if station is None:
            return  # never heard from it ourselves: no phantom stations from hearsay
        seq = unwrap(option.seq, station.last_valid)
        if seq <= station.last_valid and station.history_known:
            # What we hold already, its start settled: it tells us nothing, whoever says it,
            # so it is no hearsay to refuse either. The common case (issue 18): such Confirms
            # are mostly skipped unread (rmp/digest.py), a stranger's first packet's included.
            return
        if confirmer.stranger and seq > station.source_seq + STRANGER_HEARSAY:
            # Hearsay far beyond what the station itself said it sent, from a station none
            # of whose data we took in (a phantom's?): believed only STRANGER_HEARSAY packets
            # past it. A forged confirmation would have us NACK thousands of packets the
            # station never sent, every retry, for as long as it lives (issue 17); all the
            # phantoms together add no more than those few. The station's own headers and
            # reminders (§2.4) reveal the rest.
            s.counters["hearsay_refused"] += 1
            seq = station.source_seq + STRANGER_HEARSAY
        # §2.6: a third station confirms a packet we never got.
        self._sequencer.detect_gap(station, seq, now)

    def heard_data(self, station: Station, now: float) -> None:
        """A data packet of ``station``'s, its confirmations read. Once ours has had time to
        reach it (an eighth of remind_min), its next data packet confirms ours if it has it
        (its A flag, §2.3). In a large group, when UNCONFIRMED_BY stations' packets do not and
        none has, nobody got it (§2.4's first case; lost at our link, say): the first reminder,
        a copy of it, goes at once rather than a period after. [extension, docs/rmp.md]"""
        s = self._s
        if (
            self._confirmed_any
            or self.remind_count
            or self.next_remind_at is None
            or station.confirmed_mine >= s.seq
            or now < self._sent_at + s.params.remind_min / 8
            or station.stranger
            or len(s.stations) < PATIENT_STATIONS
        ):
            return
        self._lacking.add(station.ident)
        if len(self._lacking) >= UNCONFIRMED_BY and self.next_remind_at > now:
            self.next_remind_at = now

    def confirm_options(self, budget: int) -> tuple[list[Confirm], list[Station]]:
        """Confirm options for the stations whose last packet we have not confirmed yet in a
        multicast data packet (A flag 0, §2.3), as many as ``budget`` bytes allow, fairly."""
        marker = self._resumption_marker()
        budget -= 8 * len(marker)
        owed = [s for s in self._s.stations if not s.confirmed and s.last_valid > 0]
        if not owed:
            return marker, []
        limit = max(0, budget // 8)
        start = self._confirm_cursor % len(owed)
        chosen = (owed[start:] + owed[:start])[:limit]
        self._confirm_cursor += len(chosen)
        return [*marker, *(Confirm(to_wire(s.last_valid), s.ident) for s in chosen)], chosen

    def control_confirms(self) -> tuple[Confirm, ...]:
        """The confirmations we owe, as many as a control packet of ours holds (its header and
        Source option, then Confirms): for a keepalive or a farewell."""
        confirms, _ = self.confirm_options(self._s.max_packet - HEADER_SIZE - SOURCE_SIZE)
        return tuple(confirms)

    def farewell(self, now: float) -> None:
        """We leave: what we hold of each station's, in one multicast control packet, so that
        no emitter goes on reminding a member that is gone of a packet it had (RMP has no
        leave message; before this, a group leaving together reminded each other ten times
        over). §2.3 lets confirmations ride in control packets; the emitters count them.
        Its S bit says we are gone: nobody's send window waits for us any longer
        (Members.farewell). [extension, docs/rmp.md]"""
        self._s.send_control(self.control_confirms(), None, now, last=True)

    def _resumption_marker(self) -> list[Confirm]:
        """§2.8: a member that restarted resumes its S_n from a join answer; a station that
        holds more of its previous run than the answerer did would take its new packets for
        duplicates. So each packet of the new run carries a Confirm of our own number where it
        resumed (a station never confirms itself otherwise, and older members ignore it), for
        as long as it runs: a packet of the previous run numbered above it may still be
        repaired by a member that kept it, and only the marker tells the runs apart."""
        s = self._s
        if s.resumed_after is None:
            return []
        return [Confirm(to_wire(s.resumed_after), s.member_id)]

    def all_confirmed(self) -> bool:
        return all(
            s.confirmed_mine >= self._s.seq
            for s in self._s.stations
            if s.state is not MemberState.LEFT
        )

    def remind(self, now: float) -> None:
        s = self._s
        if self.next_remind_at is None or now < self.next_remind_at:
            return
        last = self.last_data
        if last is None or self.all_confirmed():
            self.next_remind_at = None
            return
        if self.remind_count >= s.params.remind_limit:
            self.next_remind_at = None
            s.upper.protocol_event("remind_gave_up", {"seq": s.seq})
            return
        if (
            self.remind_count == 0
            and self._confirmed_lately
            and self._patience < PATIENT_REMINDS
            and len(s.stations) >= PATIENT_STATIONS
        ):
            self._confirmed_lately = False
            self._patience += 1
            self.next_remind_at = now + s.rng.uniform(s.params.remind_min, s.params.remind_max)
            return
        self.remind_count += 1
        assert last.data is not None
        budget = s.max_packet - last.wire_size - 4
        confirms, _ = self.confirm_options(budget)
        # §2.4: "the emitter must retransmit its last message periodically", the remind
        # option first. Its confirmations do not set the A flags: only new data does.
        reminder = RmpPacket(
            seq=last.seq,
            timestamp=last.timestamp,
            options=(Remind(self.remind_count % 256), *confirms, *last.options[-1:]),
            data=last.data,
            s_bit=last.s_bit,
            source=s.member_id,
        )
        s.transmit(reminder, None, now)
        s.counters["reminders_sent"] += 1
        self.next_remind_at = now + s.rng.uniform(s.params.remind_min, s.params.remind_max)
