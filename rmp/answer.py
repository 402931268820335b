"""Answering other stations' joins (RR-2100 §2.8): who answers (depth, §2.6), the answer's
station list, and asking the application for the board the image is cut from."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from coreapi import MemberState
from coreapi.seqnum import to_wire
from rmp.context import MAX_DATAGRAM_OUT, Phase, Shared
from rmp.stations import Station
from rmp.wire import Confirm, Join, NackRange, RmpPacket

# A join answer's list (8 bytes a station, holes included) must fit one datagram with the
# header, the Source and the Join option: 180 stations in 1,472 bytes, fewer in a private
# session's smaller datagrams (max_datagram, whose envelope takes 44 bytes).
ANSWER_OVERHEAD = 32


def answer_list_bytes(max_datagram: int) -> int:
    """The room for an answer's list in a datagram of ``max_datagram`` bytes."""
    return (max_datagram - ANSWER_OVERHEAD) // Confirm.SIZE * Confirm.SIZE


# Joiners answered at once (due, waiting for the board, or answered within image_stall), at most:
# each costs the application a copy of the board and us an image; a burst of join requests from
# phantom stations must not (extension, issue 17). A joiner refused asks again (§2.8).
MAX_JOINERS_SERVED = 8

Sending = Callable[[int], bool]  # an image to this joiner is on its way (the sender's)
# Issue 20: each source's run of pieces not yet whole here, ours included: (its first piece's
# wire number, the pieces taken or sent so far). Their payload is not on the board yet.
Unfinished = Callable[[], Mapping[int, tuple[int, int]]]
Settle = Callable[[Station, int, float], None]  # Sequencer.settle


@dataclass
class AnswerLinks:
    """What the answering side calls outside itself, given by the core."""

    sending: Sending
    settle: Settle
    resumed: Settle  # Sequencer.resumed
    unfinished: Unfinished = dict


@dataclass
class Answer:
    """A join answer we owe once the application gives us the board (§2.8)."""

    joiner: int
    stations: dict[int, int]  # station -> the last of its packets the image holds, ours included
    join_number: int  # the request's, echoed in the answer
    holes: tuple[NackRange, ...] = ()  # below those numbers, the packets the image lacks


def image_holes(
    stations: list[Station],
    list_bytes: int = answer_list_bytes(MAX_DATAGRAM_OUT),
    unfinished: Mapping[int, tuple[int, int]] | None = None,
) -> tuple[dict[int, int], tuple[NackRange, ...]]:
    """What the board holds of each station: up to its last valid number, and the packets
    delivered above it at WI expiry (§2.3), which are on the board the image is cut from. A
    joiner told only the last valid number would take those again and deliver them twice
    (issue 17, campaign seeds 207, 405, 834, 857). So a station with packets delivered ahead
    is listed at the last of them, and its holes below (missing, or waiting) follow as
    NackRange options (our framing): the joiner asks for those and takes nothing else again.
    Holes that do not fit the datagram leave their station listed at its last valid number.

    ``unfinished``: the pieces of each source's run of pieces taken so far (issue 20). They
    are in its sequence, but their payload is not on the board until the run is whole: they
    are holes too, so that the joiner asks for them and puts the whole payload together
    rather than take half a run as history and drop the rest. A hole that does not fit
    leaves the joiner to drop that run (reported there)."""
    listed = {t.ident: t.last_valid for t in stations}
    holes: list[NackRange] = []
    # The list names these stations, the answerer and the joiner.
    most = list_bytes // Confirm.SIZE
    room = list_bytes - Confirm.SIZE * min(len(stations) + 2, most)
    for station in stations:
        top = max(station.delivered_ahead, default=0)
        if top <= station.last_valid:
            continue
        ranges = _ranges(station)
        if NackRange.SIZE * len(ranges) > room:
            continue
        room -= NackRange.SIZE * len(ranges)
        holes.extend(ranges)
        listed[station.ident] = top
    for ident, (first, taken) in (unfinished or {}).items():
        if room >= NackRange.SIZE:
            room -= NackRange.SIZE
            holes.append(NackRange(0, first, ident, taken))
    return listed, tuple(holes)


def _ranges(station: Station) -> list[NackRange]:
    """The packets of ``station`` between its last valid number and the last it delivered
    ahead that are not delivered: from the packets delivered ahead, in order, not a walk over
    every number up to the last (a phantom's packet far ahead made each answer cost thousands
    of steps, issue 17)."""
    ranges: list[NackRange] = []
    expected = station.last_valid + 1
    for seq in sorted(station.delivered_ahead):
        if seq > expected:
            ranges.append(NackRange(0, to_wire(expected), station.ident, seq - expected))
        expected = max(expected, seq + 1)
    return ranges


@dataclass
class Settling:
    """A restarted joiner whose old packets we recover before answering (``_settled``)."""

    limit: float  # then what is still missing is given up
    first_due: float  # when our answer first fell due: answers heard since make ours stand down
    respread: bool = False  # once in sequence, our answer was spread again


class JoinAnswers:
    """Owns the answers in progress: due after a random spread (``due``), waiting for the
    board (``requests``), sent and kept for repeats (``answered``), and the answers heard
    from other stations (``heard_for``) that make ours stand down."""

    def __init__(self, shared: Shared, links: AnswerLinks) -> None:
        self._s = shared
        self._links = links
        self.settling: dict[int, Settling] = {}  # joiner -> recovering its old packets
        self.requests: dict[int, Answer] = {}
        self._next_request = 1
        self.heard_for: dict[int, float] = {}  # joiner -> when we heard it answered
        self.answered: dict[int, tuple[Answer, float]] = {}  # joiner -> our answer, when
        self.due: dict[int, tuple[float, int]] = {}  # joiner -> (when, join number)

    def deadlines(self) -> Iterator[float]:
        if self.due:
            yield min(due for due, _ in self.due.values())
        if self.answered:
            yield min(at for _, at in self.answered.values()) + self._s.params.image_stall

    def take(self, request: int) -> Answer | None:
        """The answer the application's board state (``request``) is for, once."""
        return self.requests.pop(request, None)

    def on_request(self, joiner: Station, join: Join, now: float) -> None:
        s = self._s
        if s.phase is not Phase.READY:
            return
        ours = self.answered.get(joiner.ident)
        if ours is not None:
            # It asks again: our answer was lost. The same list (which the image parts already
            # sent follow) serves, freshly timestamped for the joiner's clock offset (§2.8).
            self.send_answer(ours[0], now)
            return
        if self._links.sending(joiner.ident) or joiner.ident in self.due:
            return  # its image will be on its way (the sequence repairs any loss)
        if any(a.joiner == joiner.ident for a in self.requests.values()):
            return
        if len(self.due) + len(self.requests) + len(self.answered) >= MAX_JOINERS_SERVED:
            s.counters["joins_refused"] += 1
            return
        # §2.8: "the station with the depth value equal or less than this number must answer".
        # Extension: so must the station nobody is in front of. In a group where nobody drew
        # since the last join, no depth is 0, and the first request (number 0) went unanswered
        # until the next try (0.30 s of a lan late join, issue 18).
        if s.stations.depth > join.join_number and not s.stations.at_front():
            return
        # Depth is each station's own estimate, so two may answer at once. Extension (as SRM
        # does for repairs): wait a random moment and stand down if another answer is heard.
        delay = s.rng.random() * s.params.answer_spread
        self.due[joiner.ident] = (now + delay, join.join_number)
        if not delay:
            self.answer_due(now)

    def answer_due(self, now: float) -> None:
        s = self._s
        for joiner, (due, number) in list(self.due.items()):
            if due > now:
                continue
            del self.due[joiner]
            heard = self.heard_for.get(joiner)
            settling = self.settling.get(joiner)
            first_due = settling.first_due if settling is not None else due
            if heard is not None and heard >= first_due - s.params.answer_spread:
                self.settling.pop(joiner, None)
                continue  # another station answered it meanwhile
            if not self._settled(joiner, due, number, now):
                continue
            listed, holes = image_holes(
                [t for t in s.stations if t.state is not MemberState.LEFT and t.ident != joiner],
                answer_list_bytes(s.max_datagram),
                self._links.unfinished(),
            )
            listed[s.member_id] = s.seq
            rejoined = s.stations.get(joiner)
            if rejoined is not None:
                # It resumes above the highest number of its we know of (see _settled).
                listed[joiner] = max(rejoined.last_valid, rejoined.seen_top, rejoined.source_seq)
                if listed[joiner]:
                    # Its previous run's numbers above that will be its new run's: ours now.
                    self._links.resumed(rejoined, listed[joiner], now)
            request = self._next_request
            self._next_request += 1
            self.requests[request] = Answer(joiner, listed, number, holes)
            # The application answers with provide_board_state once every delivery before
            # this request is on its board: the image then matches the list exactly.
            s.upper.board_state_requested(request)

    def _settled(self, joiner: int, due: float, number: int, now: float) -> bool:
        """§2.8 tells a station in the list to resume its S_n from its entry, and a restarted
        process knows nothing of its previous run: the entry must be the highest number of its
        we have seen, or its new packets would reuse numbers we (and others) hold and be dropped
        as duplicates. The image must then hold everything up to that number, so we first
        recover its old packets still missing (or, after join_interval * join_tries, give them
        up, counted and reported) and cut the image only then."""
        s, p = self._s, self._s.params
        station = s.stations.get(joiner)
        settling = self.settling.get(joiner)
        if station is None or not (station.missing or station.waiting):
            if settling is None or settling.respread or not p.answer_spread:
                self.settling.pop(joiner, None)
                return True
            # Every station waiting on the same repairs is ready at the same moment: spread
            # the answers again, so that one is heard and the others stand down.
            settling.respread = True
            self.due[joiner] = (now + s.rng.random() * p.answer_spread, number)
            return False
        if settling is None:
            settling = self.settling[joiner] = Settling(now + p.join_interval * p.join_tries, due)
        if now >= settling.limit:
            self._links.settle(station, max(station.seen_top, station.last_valid), now)
            return self._settled(joiner, due, number, now)
        # Look again soon (the NACKs for its old packets are on their way, §2.6).
        self.due[joiner] = (min(settling.limit, now + p.nack_retry / 2), number)
        return False

    def send_answer(self, answer: Answer, now: float) -> None:
        s = self._s
        # Our own entry first: the joiner needs it most (the image follows it).
        entries = sorted(answer.stations.items(), key=lambda e: e[0] != s.member_id)
        confirms = tuple(Confirm(to_wire(seq), ident) for ident, seq in entries)
        packet = RmpPacket(
            seq=to_wire(s.seq),
            timestamp=s.timestamp(now),
            options=(
                Join(answer.join_number, answer=True),
                *confirms[: answer_list_bytes(s.max_datagram) // Confirm.SIZE],
                *answer.holes,
            ),
            source=s.member_id,
        )
        # Multicast: the joiner gets it, and other stations hear that the join is answered.
        s.transmit(packet, None, now)
        s.counters["join_answers_sent"] += 1
        first = self.answered.get(answer.joiner)
        self.answered[answer.joiner] = (answer, first[1] if first else now)

    def heard_answer(self, packet: RmpPacket, now: float) -> None:
        """Another station's answer: the list names its joiner too (its request put it in the
        answerer's list), so that join is answered and ours for it can stand down."""
        for option in packet.options:
            if isinstance(option, Confirm) and option.source in self.due:
                self.heard_for[option.source] = now

    def heard_image(self, joiner: int, now: float) -> None:
        """Another station's image part for ``joiner``: its join is answered (we may have
        missed that answer), so ours, still due, stands down."""
        if joiner in self.due:
            self.heard_for[joiner] = now

    def forget(self, now: float) -> None:
        """An answer is kept for image_stall: a joiner still asking after that has given up on
        our image and deserves a fresh one."""
        for joiner, (_, at) in list(self.answered.items()):
            if now >= at + self._s.params.image_stall:
                del self.answered[joiner]
                self.heard_for.pop(joiner, None)
