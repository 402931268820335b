"""Joining the group (RR-2100 §2.8, and §5's passive join): join requests, the answer's
station list, the board image, and what is held back until the image is on the board."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from coreapi import MemberState
from coreapi.seqnum import to_wire, unwrap
from rmp.context import Phase, Shared
from rmp.image import ImageAssembly, ImageError, StateFormatError, image_owner
from rmp.ordering import Delivery
from rmp.sequencing import Sequencer
from rmp.stations import Station, Waiting
from rmp.wire import Confirm, Intro, Join, NackRange, RmpPacket, seconds_from_middle32

IMAGE_CONFIRM_EVERY = 16  # image parts between our progress confirmations (§5)

Enter = Callable[[Phase], None]  # RmpCore._enter: the one way to change phase
Known = Callable[[int, float], Station | None]
Pace = Callable[[float], None]


@dataclass
class Held:
    """A delivery held back while joining: the image comes first (§2.8)."""

    origin: int
    packet: RmpPacket
    seq: int  # unbounded: a later answer's list says whether its image holds it already


@dataclass
class JoinLinks:
    """What the joiner calls outside itself, given by the core."""

    sequencer: Sequencer
    delivery: Delivery
    known: Known
    enter: Enter
    pace: Pace


class Joiner:
    """Owns the joining side: tries and the next try, who we heard and who answered, the image
    being assembled and its progress, and the deliveries held for after it. Its lifetime ends
    at READY (``become_ready``); a joined member keeps it idle."""

    def __init__(self, shared: Shared, links: JoinLinks) -> None:
        self._s = shared
        self._links = links
        self.tries = 0
        self.next_join_at: float | None = None
        self.heard_active = False
        self.heard_from = 0
        self.answerer: int | None = None
        self.image: ImageAssembly | None = None
        self._asked_again = False  # this image phase, after another joiner's image (below)
        self.image_progress_at = 0.0
        self._parts_since_confirm = 0
        self.held: list[Held] = []
        self.introduction = b""  # what our join requests carry (an Intro option), if anything

    def deadlines(self) -> Iterator[float]:
        phase = self._s.phase
        if self.next_join_at is not None and phase in (Phase.LISTENING, Phase.JOINING):
            yield self.next_join_at
        if phase is Phase.IMAGE:
            yield self.image_progress_at + self._s.params.image_stall

    def start(self, now: float) -> None:
        p = self._s.params
        if p.passive_join:
            self._links.enter(Phase.LISTENING)
            self.next_join_at = now + p.join_interval * p.join_tries
        else:
            self._links.enter(Phase.JOINING)
            self.send_join(now, None)

    def heard(self, station: Station, now: float) -> None:
        """A packet from an active station, while not yet joined."""
        if self._s.phase is Phase.LISTENING:
            # §5, passive join: the first active station we hear is asked for the image.
            self.send_join(now, station)
            self._links.enter(Phase.JOINING)
        if self._s.phase is Phase.JOINING:
            self.heard_active = True
            self.heard_from = station.ident

    def hold(self, station: Station, packet: RmpPacket) -> None:
        self.held.append(Held(station.ident, packet, station.last_valid))

    def send_join(self, now: float, to: Station | None) -> None:
        s = self._s
        if to is not None:
            # Passive join (§5): ask one station directly; 255 obliges it whatever its depth.
            number, address = 255, to.address
        else:
            number, address = min(self.tries, 255), None
        self.tries += 1
        intro = self.introduction
        packet = RmpPacket(
            seq=to_wire(s.seq),
            timestamp=s.timestamp(now),
            options=(Join(number), Intro()) if intro else (Join(number),),
            data=intro if intro else None,
            source=s.member_id,
        )
        s.transmit(packet, address, now)
        s.counters["joins_sent"] += 1
        self.next_join_at = now + s.params.join_interval

    def timers(self, now: float) -> None:
        s, p = self._s, self._s.params
        if s.phase is Phase.LISTENING and self.next_join_at is not None:
            if now >= self.next_join_at:
                self.become_ready(now, alone=True)
            return
        if s.phase is Phase.IMAGE and now >= self.image_progress_at + p.image_stall:
            # The answering station went quiet mid-image (left, crashed, partitioned): ask
            # again; another station will answer (§2.8, §2.6: "if the first station on the
            # virtual queue left the group").
            s.upper.protocol_event("image_stalled", {"answerer": self.answerer or 0})
            self._ask_again(now)
            return
        if s.phase is not Phase.JOINING or self.next_join_at is None:
            return
        if now < self.next_join_at:
            return
        limit = p.join_tries_when_heard if self.heard_active else p.join_tries
        if self.tries < limit:
            heard = s.stations.get(self.heard_from) if self.heard_from else None
            if self.tries >= p.join_tries and heard is not None:
                # Everyone's depth may exceed our join numbers (an idle group deeper than our
                # tries, §2.5): ask a station we heard, directly, as a passive join does (§5).
                self.send_join(now, heard)
            else:
                self.send_join(now, None)
            return
        if self.heard_active:
            s.upper.failure("no member answered our join requests; starting with an empty board")
        self.become_ready(now, alone=True)

    def on_answer(self, answerer: Station, packet: RmpPacket, now: float) -> None:
        """§2.8: the answer to our join, while JOINING: its list, then the image."""
        s = self._s
        if answerer.state is not MemberState.ACTIVE:
            answerer.state = MemberState.ACTIVE
            s.upper.member_changed(answerer.ident, MemberState.ACTIVE)
        listed: dict[int, int] = {}
        holes: dict[int, list[NackRange]] = {}
        for option in packet.options:
            if isinstance(option, Confirm):
                listed[option.source] = option.seq
            elif isinstance(option, NackRange):
                holes.setdefault(option.source, []).append(option)
        # §2.8: a station that sees itself in the list had a previous session: resume S_n.
        # A restarted process knows nothing of its previous run: the answerer lists the highest
        # number of ours it has seen (rmp/answer.py), and every packet of our new run says where
        # it resumed, so that a station holding more of our previous run drops it (reported)
        # rather than drop our new packets as duplicates (rmp/remind.py, Sequencer.resumed).
        if s.member_id in listed:
            s.seq = listed.pop(s.member_id)
            s.resumed_after = s.seq or None
        self._take_list(listed, holes, now)
        # §2.8: the clock offset, from the answer's timestamp; under 0.5 s it is taken as null.
        offset = seconds_from_middle32(packet.timestamp, now) - now
        s.clock_offset = offset if abs(offset) >= 0.5 else 0.0
        s.upper.protocol_event(
            "join_answered",
            {"answerer": answerer.ident, "stations": len(listed), "clock_offset": offset},
        )
        self._requeue_held(set(listed), now)
        self.answerer = answerer.ident
        self.image = None
        self._asked_again = False
        self.image_progress_at = now
        self._links.enter(Phase.IMAGE)
        for station in s.stations:
            first_waiting = min(station.waiting, default=None)
            if first_waiting is not None:
                self._links.sequencer.mark_missing(
                    station, station.last_valid + 1, first_waiting - 1, now
                )
            self._links.sequencer.drain(station, now)

    def _take_list(
        self, listed: dict[int, int], holes: dict[int, list[NackRange]], now: float
    ) -> None:
        """Each listed station's number is the last of its packets the image holds, but for
        the holes listed below it (rmp/answer.py, image_holes): its sequence starts for us at
        the first hole, and what the image holds above that is taken as delivered ahead
        (§2.3), never again. A later answer (the first answerer stalled) starts afresh."""
        for ident, wire in listed.items():
            station = self._links.known(ident, now)
            if station is None:
                continue
            top = unwrap(wire, station.last_valid) if station.last_valid else wire
            lacking = {unwrap(q, top) for r in holes.get(ident, ()) for q in r.missing()}
            lacking = {q for q in lacking if q <= top}
            station.last_valid = min(lacking, default=top + 1) - 1
            station.delivered_ahead = set(range(station.last_valid + 1, top + 1)) - lacking
            station.history_known = True  # §2.8: the list says where its sequence starts
            station.confirmed = True
            for seq in [s for s in station.waiting if s <= top and s not in lacking]:
                del station.waiting[seq]
            station.missing = {s: m for s, m in station.missing.items() if s in lacking or s > top}
            station.scanned_top = 0  # its sequence is rewritten: scan it whole again
            if lacking:
                self._links.sequencer.mark_missing(station, station.last_valid + 1, top, now)

    def _requeue_held(self, listed: set[int], now: float) -> None:
        """Strokes held under an earlier answer (its answerer stalled mid-image) are in the
        new image if the new list counts them: delivering them too would double them. Those it
        does not count go back to waiting in their station's sequence, as if just received,
        and are held again in order once the sequence reaches them. A station the new list
        does not name keeps its held strokes: the new image cannot hold them."""
        s = self._s
        held, self.held = self.held, []
        for item in held:
            station = s.stations.get(item.origin)
            if station is None or item.origin not in listed:
                self.held.append(item)  # the new image knows nothing of its station
                continue
            if item.seq <= station.last_valid or item.seq in station.delivered_ahead:
                continue
            station.missing.pop(item.seq, None)
            station.waiting[item.seq] = Waiting(item.packet, now + s.params.wait_interval)

    def on_image_part(self, station: Station, packet: RmpPacket, now: float) -> None:
        if self._s.phase is not Phase.IMAGE or station.ident != self.answerer:
            return  # another joiner's image: in the sequence, but not for us
        assert packet.data is not None
        if image_owner(packet.data) != self._s.member_id:
            # The image of another joiner answered by the same station. If none of ours came
            # yet, the answer we took may have been that joiner's: §2.8's answer names no
            # joiner (every joiner is in its list, and join numbers repeat), so two joining
            # together both take the first. Ask again now, once, rather than wait image_stall
            # for an image that will not come (extension; issue 19's ten members started
            # together waited ~6 s). An answerer that did answer us answers again, the same
            # list, and our parts it already sent are held and repaired in sequence.
            if self.image is None and not self._asked_again:
                self._asked_again = True
                self._s.upper.protocol_event("image_for_another", {"answerer": station.ident})
                self._ask_again(now)
            return
        try:
            if self.image is None:
                self.image = ImageAssembly.start(packet.data)
            else:
                self.image.add(packet.data)
        except ImageError as exc:
            self._s.upper.protocol_event("image_part_refused", {"reason": str(exc)})
            self.image = None
            return
        self.image_progress_at = now
        self._s.upper.join_progress(len(self.image.received), self.image.parts)
        self._parts_since_confirm += 1
        done = self.image.complete and packet.s_bit
        if done or self._parts_since_confirm >= IMAGE_CONFIRM_EVERY:
            # Our progress, point to point: the answerer paces the image on it (§5).
            self._parts_since_confirm = 0
            confirm = (Confirm(to_wire(station.last_valid), station.ident),)
            self._s.send_control(confirm, station.address, now)
            self._s.counters["confirms_sent"] += 1
        if done:
            self._image_done(self.image, now)

    def _image_done(self, image: ImageAssembly, now: float) -> None:
        """The last part is in: the board, unpacked, then READY. An image that will not unpack
        (corrupt, cut short, a decompression bomb: coreapi/boardstate.py) is refused, counted
        and reported, and we ask again, as for an answerer gone quiet (§2.8)."""
        s = self._s
        self.image = None
        try:
            state = image.state()
        except StateFormatError as exc:
            s.counters["images_refused"] += 1
            s.upper.protocol_event("image_refused", {"answerer": self.answerer or 0})
            s.upper.failure(
                f"the board image from member {self.answerer or 0:08x} was "
                f"refused: {exc}; asking again"
            )
            self._ask_again(now)
            return
        s.upper.board_state_received(state)
        self.become_ready(now, alone=False)

    def _ask_again(self, now: float) -> None:
        self._links.enter(Phase.JOINING)
        self.answerer = None
        self.image = None
        self.send_join(now, None)

    def become_ready(self, now: float, alone: bool) -> None:
        s = self._s
        if alone:
            # No list says where each station's sequence starts: the first packet we heard of
            # it does, as for a station first heard once joined (Sequencer.take_in): what is
            # before it is asked for (the last NEW_STATION_HISTORY of it) or given up and
            # reported, never skipped in silence.
            sequencer = self._links.sequencer
            for station in s.stations:
                if station.waiting:
                    first = min(station.waiting)
                    sequencer.take_in(station, first, now)
                    sequencer.mark_missing(station, station.last_valid + 1, first - 1, now)
                sequencer.drain(station, now)
        self._links.enter(Phase.READY)
        self.next_join_at = None
        s.stations.joined()  # §2.5: depth = active stations + 1
        s.upper.member_changed(s.member_id, MemberState.ACTIVE)
        s.upper.ready()
        held, self.held = self.held, []
        for item in held:
            self._links.delivery.deliver(item.origin, item.packet, now)
        self._links.pace(now)
