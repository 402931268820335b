"""Atomic agreement in MTP webs: Freier & Marzullo, Cornell TR 90-1141 §3.2 (properties AB-1
and AB-2, proved in its appendix through I1-I8), with the join of TR §3.4 and RFC 1301 §2.2.6
(the acceptance vector), §3.2.1 (tokens, a failed holder's message rejected) and §3.2.5 (a
member that loses the master abandons the web and rejoins).

Simulated webs (``mtp_session``: station 0 the master, the others producers) run under random
loss, duplication, reordering and jitter, partitions that cut a producer off from everyone,
crashes (some while the victim holds a transmit token) and restarts. Everything each member
delivers is recorded and checked after every step.

How delivered sequences are compared
------------------------------------
A *segment* is one stretch of membership of one member: from its core's joining the web
(protocol event ``joined``; ``web_founded`` for the master) until it abandons it (``rejoin``,
§3.2.5) or its station crashes. A member that rejoins, or a station that restarts, begins a new
segment. Each segment has a *join point* ``a``, the first message number it answers for: the
master's segment starts at 0; a joiner is confirmed at message s (the master's
``join_confirmed`` event, matched to the joiner's ``joined`` event by the 16-bit number on the
wire), gets the board as message s (TR §3.4) and delivers from ``a = s + 1``. A segment covers
``[a, hi]``, ``hi`` the highest message number it delivered (order keys are
``(message number, index in the message)``).

The reference sequence is the master's. The TR leaves M_0 undefined (its master has no client);
ours hosts a whiteboard and delivers each accepted message the moment it decides it, before any
other member can learn the decision, so its deliveries are A_0 in order (the appendix's proof
shows every M_i is a prefix of that sequence).

* AB-1 (checked after every step): for every two segments X and Y, their deliveries restricted
  to the common range ``[max(a_X, a_Y), min(hi_X, hi_Y)]`` are equal, key for key and payload
  for payload. Whole sequences of members that rejoined are not prefixes of each other (the
  messages between an old segment and the join point reach a rejoiner inside the board, not as
  deliveries), but on every range both cover they agree, which is what the prefix property
  says of them. Each segment's deliveries over ``[a, hi]`` are moreover exactly the master's
  (L3 with I2: no accepted message skipped, none added).
* I1: every status a member's book holds is the master's (a member accepts or rejects only what
  the master did); no member delivers under a message number the master rejected or has not
  accepted; order keys strictly increase within a segment; no segment delivers a payload twice,
  but for the documented exception of ``MtpCore.rejoin`` ("its fate is unknown to us: sent
  again; the board ignores an op it has"): a producer that rejoins sends again the payloads of
  its message whose fate it did not learn, so that message's payloads may arrive a second time
  in a message numbered after the producer's new join point.
* AB-2 (after a final settle with impairments removed and crashed producers restarted or given
  up): every member connected to the master delivered every accepted message from its join
  point on, the boards hold the same ops and hash alike, and every payload drawn by a producer
  that was connected at the end (after its last crash) was accepted (I4).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from coreapi.seqnum import to_wire
from mtp.core import MtpCore, Phase
from mtp.wire import STATUS_COUNT, MessageStatus
from tests.mtp.core_harness import core_of, mtp_session, run_until, start_all
from whiteboard.board import decode_op
from whiteboard.board.ops import OpId
from whiteboard.sim.network import Impairment
from whiteboard.sim.session import Peer, SimSession
from whiteboard.transport.events import Delivered, Event, ProtocolEvent

OrderKey = tuple[int, ...]

# The RFC's web, which ends with its master (§3.2.5): AB-1 and AB-2 are about one master.
# Failover has its own tests (tests/mtp/test_failover.py).
LAN: dict[str, object] = {"profile": "lan", "failover": False}


# -- recording what every member delivers --------------------------------------------------------


@dataclass
class Segment:
    """One stretch of membership of one member (see the module docstring)."""

    index: int  # station index
    incarnation: int  # the station's incarnation (a restart makes a new one)
    member: int
    start: int  # the join point a: the first message number this segment answers for
    keys: list[OrderKey] = field(default_factory=list)
    payloads: list[bytes] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    late: int = 0  # deliveries flagged late (MTP never should: it delivers in order)
    closed: bool = False

    @property
    def hi(self) -> int:
        return self.keys[-1][0] if self.keys else self.start - 1

    def numbers(self) -> list[int]:
        out: list[int] = []
        for key in self.keys:
            if not out or out[-1] != key[0]:
                out.append(key[0])
        return out

    def between(self, lo: int, hi: int) -> list[tuple[OrderKey, bytes]]:
        """The deliveries whose message number lies in ``[lo, hi]``, in order."""
        first = bisect.bisect_left(self.keys, (lo,))
        last = bisect.bisect_left(self.keys, (hi + 1,))
        return list(zip(self.keys[first:last], self.payloads[first:last], strict=True))

    def label(self) -> str:
        return f"peer {self.index}#{self.incarnation} (joined at {self.start})"


class AgreementLog:
    """Wraps a session's event handling to record, per segment, every delivery, and at the
    master its decisions and join confirmations; ``violations()`` checks AB-1 and I1."""

    def __init__(self, session: SimSession) -> None:
        self.session = session
        self.segments: list[Segment] = []
        self.current: dict[int, Segment] = {}
        self.confirmed: dict[int, list[int]] = {}  # joiner -> numbers the master confirmed at
        self.accepted: dict[int, int] = {}  # message -> owner ('message_accepted' events)
        self.rejected: dict[int, int] = {}
        self.state_messages: set[int] = set()  # boards the master sent joiners (subchannel 1)
        self.rejoins: dict[int, int] = {}  # station index -> 'rejoin' events
        self.documented_duplicates = 0
        self.problems: list[str] = []
        original = session._handle

        def handle(peer: Peer, event: Event) -> None:
            self._observe(peer, event)
            original(peer, event)

        session._handle = handle  # type: ignore[method-assign]

    # observing

    def _observe(self, peer: Peer, event: Event) -> None:
        if isinstance(event, Delivered):
            segment = self.current.get(peer.index)
            if segment is None or segment.closed:
                self.problems.append(
                    f"peer {peer.index} delivered {event.order_key} while not in the web"
                )
                return
            segment.keys.append(tuple(event.order_key))
            segment.payloads.append(event.payload)
            segment.origins.append(event.origin)
            segment.late += event.late
            return
        if not isinstance(event, ProtocolEvent):
            return
        name, fields = event.name, event.fields
        if name == "web_founded":
            self._open(peer, 0)
        elif name == "joined":
            joiner = int(fields["connection"])  # new at each rejoin (RFC 1301 §3.1.1)
            self._open(peer, self._join_point(peer, joiner, int(fields["message"])))
        elif name == "rejoin":
            self.rejoins[peer.index] = self.rejoins.get(peer.index, 0) + 1
            segment = self.current.get(peer.index)
            if segment is not None:
                segment.closed = True
        elif peer.index != 0:
            return
        elif name == "join_confirmed":
            self.confirmed.setdefault(int(fields["joiner"]), []).append(int(fields["message"]))
        elif name in ("message_accepted", "message_rejected"):
            number, owner = int(fields["message"]), int(fields["owner"])
            mine, other = (
                (self.accepted, self.rejected)
                if name == "message_accepted"
                else (self.rejected, self.accepted)
            )
            if number in other or number in mine:
                self.problems.append(f"the master decided message {number} twice ({name})")
            mine[number] = owner
        elif name == "state_sending":
            self.state_messages.add(int(fields["message"]))

    def _join_point(self, peer: Peer, joiner: int, wire: int) -> int:
        """TR §3.4: a joiner confirmed at s gets the board as message s and delivers from s+1."""
        for number in reversed(self.confirmed.get(joiner, [])):
            if to_wire(number) == wire:
                return number + 1
        self.problems.append(
            f"peer {peer.index} joined at message {wire}, which the master never confirmed to it"
        )
        return wire + 1

    def _open(self, peer: Peer, start: int) -> None:
        old = self.current.get(peer.index)
        if old is not None:
            old.closed = True
        segment = Segment(peer.index, peer.station.incarnation, peer.member_id, start)
        self.segments.append(segment)
        self.current[peer.index] = segment

    # looking

    def master(self) -> Segment:
        founded = [s for s in self.segments if s.index == 0]
        assert len(founded) == 1, f"the master founded {len(founded)} webs"
        return founded[0]

    def live(self) -> list[Segment]:
        """The current segments of members that are up and in the web."""
        out = []
        for index, segment in self.current.items():
            station = self.session.peers[index].station
            if station.up and station.incarnation == segment.incarnation and not segment.closed:
                out.append(segment)
        return out

    def delivered_anywhere(self, payload: bytes) -> list[str]:
        return [s.label() for s in self.segments if payload in s.payloads]

    def verdict(self, master: MtpCore, number: int) -> MessageStatus | None:
        """The master's decision on ``number``: from its events (its book forgets statuses
        far behind its delivery point), else from its book (numbers below zero, §2.2.6)."""
        if number in self.accepted:
            return MessageStatus.ACCEPTED
        if number in self.rejected:
            return MessageStatus.REJECTED
        return master.status(number)

    # checking

    def violations(self) -> list[str]:
        problems = list(self.problems)
        if not any(s.index == 0 for s in self.segments):
            return problems
        master = core_of(self.session, 0)
        reference = self.master()
        by_number: dict[int, list[tuple[OrderKey, bytes]]] = {}
        for key, payload in zip(reference.keys, reference.payloads, strict=True):
            by_number.setdefault(key[0], []).append((key, payload))
        numbers = sorted(by_number)
        problems += self._check_master(master, numbers)
        for segment in self.segments:
            problems += self._check_segment(segment, master, by_number, numbers)
        problems += self._check_pairs()
        problems += self._check_books(master)
        return problems

    def _check_master(self, master: MtpCore, numbers: list[int]) -> list[str]:
        """The reference itself: the master delivers, in order, every accepted message but the
        boards it sent joiners, and nothing else (RFC 1301 §2.2.6: it alone decides)."""
        problems = []
        delivered = set(numbers)
        for number in range(master.next_deliver):
            status = self.verdict(master, number)
            if status is MessageStatus.ACCEPTED:
                if number not in delivered and number not in self.state_messages:
                    problems.append(f"the master accepted message {number} but skipped it")
            elif number in delivered:
                problems.append(f"the master delivered message {number}, which it {status}")
        for number, verdict in (
            *((n, MessageStatus.ACCEPTED) for n in self.accepted),
            *((n, MessageStatus.REJECTED) for n in self.rejected),
        ):
            held = master.status(number)
            if held is not None and held is not verdict:
                problems.append(
                    f"the master reported message {number} {verdict.name.lower()} but its book "
                    f"says {held}"
                )
        return problems

    def _check_segment(
        self,
        segment: Segment,
        master: MtpCore,
        reference: dict[int, list[tuple[OrderKey, bytes]]],
        numbers: list[int],
    ) -> list[str]:
        who = segment.label()
        problems: list[str] = []
        if segment.late:
            problems.append(f"{who} delivered {segment.late} payloads flagged late")
        for before, after in zip(segment.keys, segment.keys[1:], strict=False):
            if not before < after:
                problems.append(f"{who}: order key {after} delivered after {before}")
                break
        for number in segment.numbers():
            status = self.verdict(master, number)
            if status is not MessageStatus.ACCEPTED:
                problems.append(f"{who} delivered message {number}, which the master {status}")
            mine = segment.between(number, number)
            if mine != reference.get(number, []):
                problems.append(
                    f"{who} delivered message {number} as {len(mine)} payloads that differ from "
                    f"the master's {len(reference.get(number, []))}"
                )
        if segment.keys:
            if segment.keys[0][0] < segment.start:
                problems.append(f"{who} delivered message {segment.keys[0][0]} before joining")
            expected = [n for n in numbers if segment.start <= n <= segment.hi]
            if segment.numbers() != expected:
                missing = sorted(set(expected) - set(segment.numbers()))
                problems.append(f"{who} skipped accepted messages {missing[:10]}")
        problems += self._check_duplicates(segment)
        return problems

    def _check_duplicates(self, segment: Segment) -> list[str]:
        """No payload twice in one segment, but for the documented re-send of a rejoining
        producer (``MtpCore.rejoin``): allowed only if its origin was confirmed into the web
        again between the two messages that carried it."""
        first: dict[bytes, int] = {}
        problems: list[str] = []
        allowed = 0
        for key, payload, origin in zip(
            segment.keys, segment.payloads, segment.origins, strict=True
        ):
            earlier = first.get(payload)
            if earlier is None:
                first[payload] = key[0]
                continue
            if any(earlier < s < key[0] for s in self.confirmed.get(origin, [])):
                allowed += 1
            else:
                problems.append(
                    f"{segment.label()} delivered a payload of {origin:#x} twice, in messages "
                    f"{earlier} and {key[0]}, with no rejoin of its producer between"
                )
        self.documented_duplicates = max(self.documented_duplicates, allowed)
        return problems

    def _check_pairs(self) -> list[str]:
        """AB-1 on the common range of every two segments."""
        problems = []
        active = [s for s in self.segments if s.keys]
        for i, x in enumerate(active):
            for y in active[i + 1 :]:
                lo, hi = max(x.start, y.start), min(x.hi, y.hi)
                if lo <= hi and x.between(lo, hi) != y.between(lo, hi):
                    problems.append(
                        f"AB-1: {x.label()} and {y.label()} diverge within messages {lo}..{hi}"
                    )
        return problems

    def _check_books(self, master: MtpCore) -> list[str]:
        """I1 and its mirror: a member holds a status only if the master decided it so, and
        nobody decides a message the master has not granted (§2.2.6)."""
        problems = []
        top = master.next_grant + 2 * STATUS_COUNT
        for peer in self.session.peers[1:]:
            if peer.station.driver is None:
                continue
            core = peer.station.driver.core
            assert isinstance(core, MtpCore)
            if core.phase in (Phase.NEW, Phase.JOINING, Phase.PROBING):
                continue
            if core.counters()["status_conflicts"]:
                problems.append(f"peer {peer.index} learned contradictory statuses")
            for number in range(top):
                mine = core.status(number)
                theirs = self.verdict(master, number)
                if mine is not None and mine is not theirs:
                    problems.append(
                        f"I1: peer {peer.index} holds message {number} {mine.name.lower()}, the "
                        f"master {theirs}"
                    )
        return problems


# -- driving sessions -----------------------------------------------------------------------------


def op_id(payload: bytes) -> OpId:
    return decode_op(payload).id


def board_ids(peer: Peer) -> set[OpId]:
    return {op.id for _, op in peer.replica.board.log()}


def in_web(session: SimSession, index: int) -> bool:
    driver = session.peers[index].station.driver
    return (
        driver is not None and isinstance(driver.core, MtpCore) and driver.core.phase is Phase.READY
    )


def caught_up(session: SimSession, log: AgreementLog, required: set[OpId]) -> bool:
    """AB-2's outcome: every member up is in the web, has every accepted message from its join
    point on, every required payload is accepted, and the boards agree."""
    if not all(in_web(session, p.index) for p in session.peers if p.station.up):
        return False
    reference = log.master()
    for segment in log.live():
        if [n for n in reference.numbers() if n >= segment.start] != [
            n for n in segment.numbers() if n >= segment.start
        ]:
            return False
    master_board = session.peers[0].replica.board
    if any(ident not in master_board for ident in required):
        return False
    return len(set(session.hashes().values())) == 1 and all(
        board_ids(p) == board_ids(session.peers[0]) for p in session.live()
    )


def settle(
    session: SimSession, log: AgreementLog, required: set[OpId], limit: float = 90.0
) -> float:
    """Run in slices of virtual time until :func:`caught_up`; returns the time it took. Fails,
    saying who is where, after ``limit`` virtual seconds."""
    network = session.network
    began = network.now
    for _ in range(int(limit / 0.25) + 1):
        if caught_up(session, log, required):
            return network.now - began
        network.run(until=network.now + 0.25)
    states = {
        p.index: (
            core_of(session, p.index).phase.value,
            len(p.replica.board),
            p.failures[-2:],
        )
        for p in session.peers
        if p.station.up
    }
    missing = [i for i in required if i not in session.peers[0].replica.board]
    raise AssertionError(
        f"AB-2: not settled within {limit} virtual seconds: {states}; "
        f"{len(missing)} required payloads not accepted"
    )


def assert_agreement(log: AgreementLog) -> None:
    problems = log.violations()
    assert not problems, "\n".join(problems[:20])


# -- the state machine ----------------------------------------------------------------------------

LOSS = st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3])
DUP = st.sampled_from([0.0, 0.1, 0.25])
REORDER = st.sampled_from([0.0, 0.1, 0.3])
JITTER = st.sampled_from([0.0, 2.0, 10.0])
# Virtual seconds a step lets pass: from nothing (two faults at one instant) to more than the
# silence limits (lan: holder_silence 2 s, silence_limit 3 s; seed: 0.6 s).
PAUSE = st.sampled_from([0.05, 0.0, 0.002, 0.01, 0.2, 0.5, 1.0])
LONG_PAUSE = st.sampled_from([1.0, 0.3, 2.5, 4.0, 6.0])
TRAFFIC = st.sampled_from([5.0, 0.0, 20.0, 40.0])  # background strokes per second
MAX_BACKGROUND = 100  # strokes scheduled by one step


class AtomicAgreementMachine(RuleBasedStateMachine):
    """A web of one master and 3-4 producers under random faults; AB-1 and I1 after every
    step, AB-2 at teardown (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.session: SimSession | None = None
        self.log: AgreementLog | None = None
        self.isolated: set[int] = set()
        self.cut: dict[int, int] = {}  # index -> payloads drawn before its last crash
        self.restart_at_end = True
        self.traffic = 0.0
        self.rng = random.Random(0)
        self.steps = 0
        self.checked = 0

    # helpers

    @property
    def sim(self) -> SimSession:
        assert self.session is not None
        return self.session

    @property
    def agreement(self) -> AgreementLog:
        assert self.log is not None
        return self.log

    def producers(self) -> range:
        return range(1, len(self.sim.peers))

    def up(self) -> list[int]:
        return [i for i in self.producers() if self.sim.peers[i].station.up]

    def down(self) -> list[int]:
        return [i for i in self.producers() if not self.sim.peers[i].station.up]

    def _step(self) -> None:
        self.steps += 1

    def _partition(self) -> None:
        if self.isolated:
            self.sim.network.partition([[i] for i in sorted(self.isolated)])
        else:
            self.sim.network.heal()

    def _run(self, seconds: float) -> None:
        """Let ``seconds`` pass, members drawing in the background at ``traffic`` strokes a
        second (from random members, up or down: a down one draws once restarted)."""
        network, rng = self.sim.network, self.rng
        count = min(MAX_BACKGROUND, int(self.traffic * seconds + rng.random()))
        for _ in range(count):
            index = rng.randrange(len(self.sim.peers))
            network.schedule(
                network.now + rng.random() * seconds, lambda index=index: self.sim.draw(index)
            )
        network.run(until=network.now + seconds)

    def _crash(self, index: int) -> None:
        self.sim.crash(index)
        self.cut[index] = len(self.sim.sent_by[index])

    # rules

    @initialize(
        profile=st.sampled_from(["lan", "seed"]),
        producers=st.integers(3, 4),
        seed=st.integers(0, 10_000),
        traffic=TRAFFIC,
        restart_at_end=st.booleans(),
    )
    def found_the_web(
        self, profile: str, producers: int, seed: int, traffic: float, restart_at_end: bool
    ) -> None:
        self._step()
        self.session, _ = mtp_session(
            producers + 1, seed, params={"profile": profile, "failover": False}
        )
        self.log = AgreementLog(self.session)
        self.traffic = traffic
        self.rng = random.Random(seed)
        self.restart_at_end = restart_at_end
        start_all(self.session)

    @rule(who=st.lists(st.integers(0, 4), min_size=1, max_size=4), pause=PAUSE)
    def draw(self, who: list[int], pause: float) -> None:
        """Strokes from several members at one instant: concurrent token requests (§3.2.1)
        and up to ``tokens`` messages in flight at once (TR §5.1). The master draws too."""
        self._step()
        for index in who:
            self.sim.draw(index % len(self.sim.peers))
        self._run(pause)

    @rule(seconds=LONG_PAUSE)
    def advance(self, seconds: float) -> None:
        """Long enough, at times, for a silent member to be given up (§3.2.1, §3.2.5)."""
        self._step()
        self._run(seconds)

    @rule(loss=LOSS, dup=DUP, reorder=REORDER, jitter=JITTER, pause=PAUSE)
    def impair(self, loss: float, dup: float, reorder: float, jitter: float, pause: float) -> None:
        """Change every link's loss, duplication, reordering and jitter (all zero: clean)."""
        self._step()
        self.sim.network.impairment = Impairment(
            loss=loss, dup=dup, reorder=reorder, jitter_ms=jitter
        )
        self._run(pause)

    @precondition(lambda self: len(self.isolated) < len(self.sim.peers) - 1)
    @rule(data=st.data(), pause=PAUSE)
    def partition_a_producer(self, data: st.DataObject, pause: float) -> None:
        """It hears nobody and nobody hears it (TR §3.2: it leaves S, the connected set)."""
        self._step()
        choices = [i for i in self.producers() if i not in self.isolated]
        self.isolated.add(data.draw(st.sampled_from(choices)))
        self._partition()
        self._run(pause)

    @precondition(lambda self: bool(self.isolated))
    @rule(data=st.data(), pause=PAUSE)
    def heal_a_producer(self, data: st.DataObject, pause: float) -> None:
        self._step()
        self.isolated.discard(data.draw(st.sampled_from(sorted(self.isolated))))
        self._partition()
        self._run(pause)

    @precondition(lambda self: bool(self.up()))
    @rule(data=st.data(), pause=PAUSE)
    def crash_a_producer(self, data: st.DataObject, pause: float) -> None:
        self._step()
        self._crash(data.draw(st.sampled_from(self.up())))
        self._run(pause)

    @precondition(lambda self: bool(self.up()))
    @rule(data=st.data(), pause=PAUSE)
    def crash_a_token_holder(self, data: st.DataObject, pause: float) -> None:
        """§3.2.1: it draws, the master grants it a token, and it dies before using it (or as
        it does): the master must decide its message, and everyone must agree."""
        self._step()
        index = data.draw(st.sampled_from(self.up()))
        member = core_of(self.sim, index).connection_id
        master = core_of(self.sim, 0)
        self.sim.draw(index)
        self.sim.network.run(
            until=self.sim.network.now + 1.0,
            stop=lambda: any(g.owner == member for g in master.grants.values()),
        )
        self._crash(index)
        self._run(pause)

    @precondition(lambda self: bool(self.down()))
    @rule(data=st.data(), pause=PAUSE)
    def restart_a_producer(self, data: st.DataObject, pause: float) -> None:
        """A fresh core with an empty board; it joins again and gets the board (TR §3.4)."""
        self._step()
        self.sim.start(data.draw(st.sampled_from(self.down())))
        self._run(pause)

    # checks

    @invariant()
    def ab1_and_i1_hold(self) -> None:
        if self.log is not None:
            assert_agreement(self.agreement)
        self.checked = self.steps

    def teardown(self) -> None:
        if self.session is None or self.checked != self.steps:
            return  # a step failed: that failure is the report
        session, log = self.sim, self.agreement
        network = session.network
        self.isolated.clear()
        network.heal()
        network.impairment = Impairment()
        for index in self.down():
            if self.restart_at_end:
                session.start(index)
        required = {
            op_id(payload)
            for index in range(len(session.peers))
            if session.peers[index].station.up
            for payload in session.sent_by[index][self.cut.get(index, 0) :]
        }
        settle(session, log, required)
        assert_agreement(log)
        master_board = session.peers[0].replica.board
        for peer in session.live():
            assert peer.replica.board.hash() == master_board.hash(), peer.index
        # every accepted payload message reached every member from its join point on
        reference = log.master()
        for segment in log.live():
            assert segment.numbers() == [n for n in reference.numbers() if n >= segment.start]


def test_ab1_and_ab2_hold_under_random_loss_partitions_and_crashes() -> None:
    run_state_machine_as_test(
        AtomicAgreementMachine,
        settings=settings(
            max_examples=50,
            stateful_step_count=25,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


# -- fixed scenarios ------------------------------------------------------------------------------


def recorded_session(
    producers: int, seed: int, impairment: Impairment | None = None
) -> tuple[SimSession, AgreementLog]:
    session, _ = mtp_session(producers + 1, seed, impairment, params=LAN)
    log = AgreementLog(session)
    start_all(session)
    return session, log


def draw_round_robin(
    session: SimSession, indices: list[int], count: int, gap: float = 0.02
) -> list[bytes]:
    payloads = []
    for k in range(count):
        payloads.append(session.draw(indices[k % len(indices)]))
        session.network.run(until=session.network.now + gap)
    return payloads


def has_ops(session: SimSession, indices: list[int], count: int) -> Callable[[], bool]:
    return lambda: all(len(session.peers[i].replica.board) >= count for i in indices)


def test_loss_duplication_and_reordering_with_four_producers_keep_one_order() -> None:
    """TR §3.2 AB-1 and AB-2 under RFC 1301 §3.2.4-§3.2.6's repairs: 20% loss, duplicates and
    reordering on every link, four producers drawing at once; everyone delivers every message,
    in the master's order."""
    impairment = Impairment(loss=0.2, dup=0.15, reorder=0.2, jitter_ms=3.0)
    session, log = recorded_session(4, seed=11, impairment=impairment)
    payloads = draw_round_robin(session, [1, 2, 3, 4], 60, gap=0.01)
    everyone = list(range(5))
    run_until(session, has_ops(session, everyone, 60), 60.0)
    assert_agreement(log)
    stats = session.network.stats
    assert stats.losses_injected and stats.duplicates_injected and stats.reorders_injected
    assert session.counters_total()["retransmissions"] > 0
    reference = log.master()
    assert sorted(reference.payloads) == sorted(payloads)  # each accepted exactly once
    for segment in log.live():
        # the same sequence of (order key, payload) at every member that stayed in the web
        assert segment.between(segment.start, reference.hi) == reference.between(
            segment.start, reference.hi
        ), segment.label()
    assert len(set(session.hashes().values())) == 1
    assert all(p.replica.stats.duplicates_delivered == 0 for p in session.peers)


def test_a_producer_partitioned_away_rejoins_and_converges_once_healed() -> None:
    """TR §3.2: a producer cut off from everyone leaves S; those still connected to the master
    go on delivering (AB-2) while it is away; past the silence limit it abandons the web
    (RFC 1301 §3.2.5) and, healed, rejoins with the board (TR §3.4): its strokes drawn while
    away are delivered then, in one order everywhere (AB-1)."""
    session, log = recorded_session(3, seed=5)
    before = draw_round_robin(session, [1, 2, 3], 9)
    run_until(session, has_ops(session, [0, 1, 2, 3], 9), 10.0)
    session.network.partition([[2]])
    away = draw_round_robin(session, [1, 2, 3], 12)
    others = [p for p in away if p not in session.sent_by[2]]
    mine = [p for p in away if p in session.sent_by[2]]
    connected = [0, 1, 3]
    run_until(session, has_ops(session, connected, 9 + len(others)), 10.0)
    # progress in S while 2 is away; nothing of 2's is accepted meanwhile
    master_ids = board_ids(session.peers[0])
    assert all(op_id(p) in master_ids for p in others)
    assert not any(op_id(p) in master_ids for p in mine)
    session.network.run(until=session.network.now + 6.0)  # past silence_limit (3 s)
    assert log.rejoins.get(2, 0) >= 1  # it abandoned the web (§3.2.5)
    session.network.heal()
    settle(session, log, {op_id(p) for p in before + away}, limit=30.0)
    assert_agreement(log)
    segments = [s for s in log.segments if s.index == 2]
    assert len(segments) >= 2  # it came back through a join, at a later message
    assert segments[-1].start > segments[0].hi
    assert len(set(session.hashes().values())) == 1


def test_a_producer_crashed_holding_a_token_has_its_message_rejected_everywhere() -> None:
    """RFC 1301 §3.2.1 and TR §3.2: the master grants a token, its holder dies before sending;
    the master finds it silent, removes it and rejects the message; every member learns the
    rejection, nobody delivers the stroke it was to carry, and the rest of the web goes on and
    converges (AB-1, AB-2)."""
    session, log = recorded_session(3, seed=7)
    draw_round_robin(session, [1, 2, 3], 6)
    run_until(session, has_ops(session, [0, 1, 2, 3], 6), 10.0)
    master = core_of(session, 0)
    victim = session.peers[2].member_id
    doomed = session.draw(2)
    run_until(session, lambda: any(g.owner == victim for g in master.grants.values()), 2.0)
    (number,) = [n for n, g in master.grants.items() if g.owner == victim]
    session.crash(2)
    after = draw_round_robin(session, [1, 3], 8)
    run_until(session, lambda: master.status(number) is MessageStatus.REJECTED, 10.0)
    assert log.rejected.get(number) == victim
    survivors = [0, 1, 3]
    required = {op_id(p) for i in (0, 1, 3) for p in session.sent_by[i]}
    settle(session, log, required, limit=30.0)
    assert_agreement(log)
    for index in survivors[1:]:
        assert core_of(session, index).status(number) is MessageStatus.REJECTED, index
    assert log.delivered_anywhere(doomed) == []
    assert all(op_id(doomed) not in board_ids(session.peers[i]) for i in survivors)
    assert all(op_id(p) in board_ids(session.peers[0]) for p in after)
    assert len({session.peers[i].replica.board.hash() for i in survivors}) == 1
    # the restarted producer joins at a later message and converges too
    session.start(2)
    settle(session, log, required, limit=30.0)
    assert_agreement(log)
    assert log.current[2].start > number
    assert op_id(doomed) not in board_ids(session.peers[2])
