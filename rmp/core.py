"""The RMP protocol engine (Dabbous & Kiss, INRIA RR-2100, 1993), sans-I/O.

It never touches a socket or a clock: the driver feeds it datagrams and ``now`` and takes its
datagrams and its next deadline (see ``whiteboard/transport/interface.py`` for the shape, which
this class meets structurally without importing the whiteboard).

``RmpCore`` is thin: it routes each packet's options to the part whose job they are, runs the
parts' timers in a fixed order, takes the earliest of their deadlines, and is the only one to
change the phase (``_enter``). The parts (docs/rmp.md, "For implementers"):

- ``Members`` (rmp/members.py) and ``StationList`` (rmp/stations.py): who is in the group, and
  the depth virtual queue that decides who answers (§2.1, §2.5);
- ``Sequencer`` (rmp/sequencing.py): each station's receive sequence and its gaps (§2.3);
- ``RepairEngine`` (rmp/repair.py): NACKs, repairs, answers to reminders (§2.3-§2.7);
- ``Reminder`` (rmp/remind.py): confirmations and our reminders (§2.3, §2.4);
- ``Sender`` (rmp/sender.py): our data and image parts, paced and windowed (§2.2, §5);
- ``Delivery`` (rmp/ordering.py): timestamp order to the application (§3);
- ``Joiner`` (rmp/join.py) and ``JoinAnswers`` (rmp/answer.py): joining and answering (§2.8);
- ``Admission`` (rmp/admission.py): how many newcomers' packets get this work at all.

Section references are to the report. What the report leaves open, and our extensions, are
said where they happen and summed up in docs/rmp.md.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from coreapi import Address, MemberState, Outgoing, UpperLayer
from coreapi.seqnum import unwrap
from rmp.admission import Admission
from rmp.answer import AnswerLinks, JoinAnswers
from rmp.context import COUNTERS, MAX_MESSAGE, MAX_PACKET, MAX_PAYLOAD, Phase, Shared
from rmp.digest import join_of, options_to_read
from rmp.image import image_owner
from rmp.join import Joiner, JoinLinks
from rmp.members import Members
from rmp.ordering import Delivery
from rmp.params import RmpParams, params_from_mapping
from rmp.remind import Reminder
from rmp.repair import RepairEngine
from rmp.sender import Sender
from rmp.sequencing import Sequencer
from rmp.side import SideChannel
from rmp.stations import Station, StationList
from rmp.wire import (
    FORMAT_EPHEMERAL,
    FORMAT_RMP,
    Confirm,
    Image,
    Join,
    Nack,
    NackRange,
    Option,
    Remind,
    Retransmit,
    RmpDecodeError,
    RmpPacket,
    decode_once,
    peek_source,
)

MAX_WI_DELIVERIES_PER_TIMER = 64

__all__ = [
    "COUNTERS",
    "MAX_MESSAGE",
    "MAX_PACKET",
    "MAX_PAYLOAD",
    "Phase",
    "RmpCore",
    "make_core",
]


class RmpCore:
    max_payload = MAX_PAYLOAD
    # Issue 20: longer payloads go as runs of pieces (rmp/fragment.py, rmp/reassembly.py).
    max_message = MAX_MESSAGE

    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: RmpParams
    ) -> None:
        if not 0 < member_id < 2**32:
            raise ValueError(f"member id must be a non-zero 32-bit number, got {member_id}")
        self.member_id = member_id
        self._upper = upper
        self._p = params
        self._shared = s = Shared(member_id, upper, rng, params)
        self._delivery = Delivery(s)
        self._sequencer = Sequencer(s, self._consume, self._delivery.pieces.skipped)
        self._reminder = Reminder(s, self._sequencer)
        self._sender = Sender(s, self._reminder, self._delivery)
        self._members = Members(s, self._forgotten)
        self._repair = RepairEngine(s, self._sequencer, self._reminder, self._members.known)
        links = JoinLinks(
            self._sequencer, self._delivery, self._members.known, self._enter, self._sender.pace
        )
        self._joiner = Joiner(s, links)
        self._answers = JoinAnswers(
            s,
            AnswerLinks(
                sending=lambda joiner: joiner in self._sender.image_jobs,
                settle=self._sequencer.settle,
                resumed=self._sequencer.resumed,
                unfinished=self._unfinished,
            ),
        )
        self._side = SideChannel(s, upper)
        self._admission = Admission(
            s, lambda ident: ident in self._sender.image_jobs or ident in self._answers.answered
        )
        self._leave_deadline: float | None = None
        self._timer_at: float | None = None  # get_timer's answer, while _timer_known
        self._timer_known = False

    # -- the one way the phase changes -------------------------------------------------------

    def _enter(self, phase: Phase) -> None:
        """Change phase, and say so: a session log shows every transition."""
        old, self._shared.phase = self._shared.phase, phase
        if old is not phase:
            self._upper.protocol_event("phase", {"from": old.value, "to": phase.value})
            # Some deadlines count only in some phases (WI only once joined): reckon them.
            for station in self._shared.stations:
                self._note_due(station)

    # -- the TransportCore interface ---------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self._shared.phase is Phase.FINISHED

    @property
    def phase(self) -> Phase:
        return self._shared.phase

    @property
    def depth(self) -> int:
        return self._shared.stations.depth

    @property
    def answerer(self) -> int | None:
        """While joining: the station whose image we are receiving (§2.8)."""
        return self._joiner.answerer if self._shared.phase is Phase.IMAGE else None

    @property
    def image_parts_received(self) -> int:
        image = self._joiner.image
        return len(image.received) if image is not None else 0

    @property
    def stations(self) -> StationList:
        return self._shared.stations

    def counters(self) -> dict[str, int]:
        s = self._shared
        counters = dict(s.counters)
        counters["retained"] = len(s.store) + len(s.own_store)
        counters["retention_evictions"] = s.store.evictions + s.own_store.evictions
        counters.update(self._side.counters())
        pieces = self._delivery.pieces
        counters["messages_refused"] = pieces.messages_refused
        counters["pieces_dropped"] = pieces.pieces_dropped
        return counters

    def introduce(self, introduction: bytes) -> None:
        self._joiner.introduction = bytes(introduction)  # our join requests carry it (Intro)

    def start(self, now: float) -> None:
        self._timer_known = False
        if self._shared.phase is not Phase.NEW:
            return
        self._shared.last_sent_at = now
        self._upper.member_changed(self.member_id, MemberState.JOINING)
        self._joiner.start(now)

    def send(self, payload: bytes, now: float) -> None:
        self._timer_known = False
        if self._shared.phase in (Phase.NEW, Phase.LEAVING, Phase.FINISHED):
            raise RuntimeError("the rmp transport is not in a session")
        if len(payload) > MAX_MESSAGE:
            raise ValueError(
                f"payload of {len(payload)} bytes exceeds the largest message rmp sends, "
                f"{MAX_MESSAGE} bytes (4 MiB)"
            )
        self._sender.queue(payload, now)

    def send_ephemeral(self, payload: bytes, now: float) -> None:
        self._timer_known = False
        if self._shared.phase in (Phase.NEW, Phase.FINISHED):
            raise RuntimeError("the rmp transport is not in a session")
        self._side.send(payload, now)

    def leave(self, now: float) -> None:
        self._timer_known = False
        self._side.stop()
        phase = self._shared.phase
        if phase in (Phase.LEAVING, Phase.FINISHED):
            return
        if phase in (Phase.NEW, Phase.LISTENING, Phase.JOINING, Phase.IMAGE):
            self._finish(now)
            return
        # RMP has no leave message; we stop drawing, but keep answering NACKs and reminding
        # until every station confirmed our last packet (§2.4), or leave_linger has passed.
        self._enter(Phase.LEAVING)
        self._leave_deadline = now + self._p.leave_linger
        self._sender.image_jobs.clear()

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        self._timer_known = False
        answer = self._answers.take(request)
        if answer is None or self._shared.phase is not Phase.READY:
            return
        self._answers.send_answer(answer, now)
        self._sender.start_image(answer.joiner, state, now)

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        out, self._shared.outbox = self._shared.outbox, []
        return out

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        s = self._shared
        if s.phase in (Phase.NEW, Phase.FINISHED):
            return
        s.counters["datagrams_received"] += 1
        source = peek_source(data)
        if source == 0:
            # No Source option first: not a packet of ours (docs/rmp-wire.md), or no identity.
            s.counters["malformed_dropped"] += 1
            return
        if source == self.member_id:
            return  # our own multicast, looped back
        if not self._admission.admits(source, now):
            return  # a newcomer's packet beyond the rate newcomers get, counted there
        self._timer_known = False  # what comes next may change a deadline (before: counters)
        s.credit.received(addr, len(data))  # what we may send it back (rmp/amplification.py)
        if self._side.receive_laid_out(data, source, now):
            return  # a side-channel packet, apart from everything below (rmp/side.py)
        try:
            packet = decode_once(data)
        except RmpDecodeError:
            s.counters["malformed_dropped"] += 1
            return
        if packet.format == FORMAT_EPHEMERAL:
            self._side.receive(packet, now)  # apart from everything below (rmp/side.py)
            return
        if packet.format != FORMAT_RMP:  # (its identity is the one peek_source read)
            s.counters["malformed_dropped"] += 1  # another RTP payload
            return
        inner = (
            packet.options[-1].packet
            if packet.options and isinstance(packet.options[-1], Retransmit)
            else None
        )
        # A whole datagram's packet is as long as the datagram (fixed-size options, checked
        # padding): len(data) is its wire_size without summing a Confirm per station.
        if (packet.data is not None and len(data) > s.max_packet) or (
            inner is not None and inner.wire_size > s.max_packet
        ):
            # No member of ours makes a data packet this large; stored, it could not even be
            # retransmitted (it would not fit a datagram).
            s.counters["malformed_dropped"] += 1
            return
        self._on_packet(packet, addr, now)

    def handle_timer(self, now: float) -> None:
        self._timer_known = False
        s = self._shared
        if s.phase is Phase.FINISHED:
            return
        # The order matters (the same packets in the same order, the same random draws).
        self._joiner.timers(now)
        self._answers.answer_due(now)
        self._answers.forget(now)
        s.store.expire(now)
        s.own_store.expire(now)
        # Only the stations whose own deadline has come: the timer's work does not grow with
        # the number of stations heard (issue 17: phantom stations must cost bounded work).
        due = s.stations.take_due(now)
        # WI deliveries per timer call are bounded too: a crowd of stations whose waiting
        # packets fall due together is delivered over several calls, with the sockets read
        # in between (their deadlines stay due, so the timer comes back at once).
        budget = MAX_WI_DELIVERIES_PER_TIMER
        for station in due:
            budget -= self._sequencer.expire_waiting(station, now, budget)
            self._repair.send_due_nacks(station, now)
        self._repair.flush_repairs(now)
        self._sender.pace(now)
        self._reminder.remind(now)
        self._sender.keepalive(now)
        self._members.watch(now, due)
        self._sender.watch_image_jobs(now)
        self._side.timer(now)
        self._check_leave(now)
        for station in due:
            if s.stations.get(station.ident) is station:
                self._note_due(station)

    def _note_due(self, station: Station) -> None:
        """Tell the station list when ``station`` next needs the timer (liveness, WI, NACKs)."""
        deadlines = [self._members.due(station)]
        for part_due in (self._sequencer.due(station), self._repair.nack_due(station)):
            if part_due is not None:
                deadlines.append(part_due)
        self._shared.stations.note_due(station, min(deadlines))

    def get_timer(self) -> float | None:
        # Asked after every call (the driver's pump): the deadline is kept until a call that
        # may change it, so a datagram dropped before any work (malformed, looped back,
        # throttled) costs no recomputation. No state changes but through those calls.
        if not self._timer_known:
            self._timer_at = self._compute_timer()
            self._timer_known = True
        return self._timer_at

    def _compute_timer(self) -> float | None:
        s = self._shared
        phase = s.phase
        if phase is Phase.FINISHED:
            return None
        # O(1) in the number of stations: their deadlines are kept in the station list's heap.
        # Computed after every datagram that did any work: one running minimum, no list, and
        # a part's deadlines asked for only when it can have any (issue 18: a tenth of a
        # 100-member run was this).
        best: float | None = None
        joining = phase is not Phase.READY and phase is not Phase.LEAVING  # or new
        if joining:  # the joiner has deadlines only while listening, joining or in the image
            for due in self._joiner.deadlines():
                best = due if best is None or due < best else best
        answers = self._answers
        if answers.due or answers.answered:
            for due in answers.deadlines():
                best = due if best is None or due < best else best
        sender = self._sender
        if sender.sends or sender.image_jobs:  # nothing to send, no image: no deadline
            for due in sender.deadlines():
                best = due if best is None or due < best else best
        for maybe in (
            s.stations.next_due(),
            self._repair.repairs_due(),
            self._reminder.next_remind_at,
            self._leave_deadline,
            s.store.next_expiry(),
            s.own_store.next_expiry(),
            self._side.deadline(),
        ):
            if maybe is not None and (best is None or maybe < best):
                best = maybe
        if not joining:  # s.serving(): ready or leaving
            keepalive = s.last_sent_at + self._p.keepalive
            best = keepalive if best is None or keepalive < best else best
        return best

    # -- receiving: each option to its part --------------------------------------------------

    def _on_packet(self, packet: RmpPacket, addr: Address, now: float) -> None:
        options = packet.options
        join = join_of(packet)  # a packet may carry a Confirm for every station (§2.3)
        station = self._members.heard(packet.source, now, addr, joining=join is not None)
        if station is None:
            return
        if join is not None:
            self._on_join(station, join, packet, now)
            return
        self._joiner.heard(station, now)
        # §4.1: its header carries its current S_n (a data packet's own number, a control
        # packet's S_n): what it says it has sent, which bounds what we may give up (repair.py).
        station.source_seq = unwrap(packet.seq, station.last_valid)
        station.source_seq_at = now
        self._repair.new_packet()
        remind = options[0] if options and isinstance(options[0], Remind) else None
        # §2.4: when the remind number is below our depth, the NACKs in the packet are not ours
        # to answer, and no retransmission is made on its confirmations.
        trusted = remind is None or self._shared.stations.depth <= remind.remind_number
        to_read: Sequence[Option] = options
        if not station.joined_again:
            # The Confirms that name what we hold are skipped, in C (rmp/digest.py).
            to_read = options_to_read(
                packet, self._shared.stations.wire_last_valid, self.member_id
            )
        for option in to_read:
            if type(option) is Confirm:  # the most frequent: one per station (§2.3)
                self._reminder.on_confirm(station, option, now)
            elif isinstance(option, Nack | NackRange):
                self._shared.counters["nacks_received"] += 1
                self._repair.on_nack(station, option, trusted, now)
            elif isinstance(option, Retransmit):
                self._repair.on_retransmit(option, now)
        if packet.data is not None:
            self._reminder.heard_data(station, now)  # §2.4: does it have our last packet?
            self._sequencer.on_data(station, packet, now, live=True)
        else:
            # A control packet carries our peer's current S_n (§4.1): a higher one than we
            # have reveals data packets we missed (a confirmation by the source itself).
            seq = unwrap(packet.seq, station.last_valid)
            self._sequencer.detect_gap(station, seq, now)
            if packet.s_bit and not station.missing:
                # Its farewell (extension, docs/rmp.md "Leaving"), and we lack nothing of it:
                # gone now, not at suspect_after, so that no send window waits for it.
                self._members.farewell(station)
        if remind is not None:
            self._repair.on_remind(station, packet, remind, trusted, now)
        if station.confirmed_mine < self._shared.seq and self._shared.serving():
            self._reminder.wake(now)  # §2.4: it lacks our last packet, whenever we met it
        if self._sender.image_jobs or self._sender.sends:
            self._sender.pace(now)  # confirmations may have opened the window

    def _on_join(self, station: Station, join: Join, packet: RmpPacket, now: float) -> None:
        if not join.answer and (station.last_valid or station.seen_top):
            station.joined_again = True  # restarted under its id: its marker may come (§2.8)
        if packet.data is not None and packet.data != station.introduction:
            # Who asks (an Intro option): told once, and again if it changes (a restart).
            station.introduction = packet.data
            self._upper.member_introduced(station.ident, packet.data)
        if not join.answer:
            self._answers.on_request(station, join, now)
            return
        self._answers.heard_answer(packet, now)
        if self._shared.phase is Phase.JOINING:
            self._joiner.on_answer(station, packet, now)

    def _consume(self, station: Station, packet: RmpPacket, now: float) -> None:
        """The next packet in ``station``'s sequence: an image part is the joiner's, anything
        else is delivered, or held while joining: the image comes first (§2.8)."""
        if isinstance(packet.options[-1], Image):
            owner = image_owner(packet.data) if packet.data is not None else None
            if owner is not None:
                self._answers.heard_image(owner, now)  # that joiner is answered
            self._joiner.on_image_part(station, packet, now)
        elif self._shared.phase in (Phase.JOINING, Phase.IMAGE, Phase.LISTENING):
            self._joiner.hold(station, packet)
        else:
            self._delivery.deliver(station.ident, packet, now)

    def _unfinished(self) -> dict[int, tuple[int, int]]:
        """The runs of pieces not yet whole here, ours included (rmp/answer.py, issue 20)."""
        runs = self._delivery.pieces.unfinished()
        ours = self._sender.unfinished()
        if ours is not None:
            runs[self.member_id] = ours
        return runs

    def _forgotten(self, ident: int) -> None:
        self._sender.image_jobs.pop(ident, None)
        self._delivery.pieces.forget(ident)  # a message it was sending is lost with it
        self._side.forget(ident)

    # -- leaving -----------------------------------------------------------------------------

    def _check_leave(self, now: float) -> None:
        if self._shared.phase is not Phase.LEAVING:
            return
        assert self._leave_deadline is not None
        sends = self._sender.sends
        if now >= self._leave_deadline:
            if sends:
                self._upper.failure(f"left with {len(sends)} drawing(s) still unsent")
            self._finish(now)
        elif not sends and self._reminder.all_confirmed():
            self._finish(now)

    def _finish(self, now: float) -> None:
        if self._shared.phase is Phase.LEAVING:
            self._reminder.farewell(now)
        self._enter(Phase.FINISHED)
        self._reminder.stop()
        self._repair.clear()
        self._upper.member_changed(self.member_id, MemberState.LEFT)


def make_core(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> RmpCore:
    """The factory the whiteboard's transport registry calls."""
    return RmpCore(member_id, upper, rng, params_from_mapping(params))
