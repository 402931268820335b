"""A seeded fault campaign: random sessions in the simulator, each made from its seed alone, and
the promises of a reliable transport checked at the end of each (issue 17).

A scenario mixes 3-8 members, loss up to 30%, duplication, reordering, delay and jitter, and
one class of fault (or several, in ``mixed``): partitions that heal, crashes, crash-and-restart,
late joins and, on a transport whose sessions live with a host (MTP), the host's crash. It is
built on :class:`~whiteboard.sim.session.SimSession` and its network's partition, heal, crash
and start, so ``scenario_for(transport, seed)`` and :func:`run` give the same outcome every
time, on any machine.

What is checked, once the session is at rest (or its virtual time is up):

* ``lost_silently``: an op drawn by a member whose station stayed up (since its last start) is
  missing at a member that is up at the end, and that member was told of no failure since the
  op was drawn (a rejected op that nobody has is excused by a failure told to its author);
* ``lost_reported``: such an op is missing, but the members lacking it were told of a failure:
  not silent, yet still an op lost (issue 17: "nothing drawn is ever lost");
* ``duplicate``: an op delivered twice to one member (``ReplicaStats.duplicates_delivered``);
* ``out_of_order``: an op delivered before an earlier one of the same author, not as a late
  one (``ReplicaStats.order_violations``): MTP's agreed order broken (TR 90-1141 §3.2);
* ``diverged``: the members that are up and were told of no failure hold different boards,
  where the transport promises one board to all its members;
* ``error``: the simulator or a core raised.

Ops drawn by a station before it crashed may legitimately be missing: they are not required.
A crashed station draws nothing until it restarts (its strokes meanwhile are skipped).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import partial

from whiteboard.board import OpId
from whiteboard.replica import ReplicaStats
from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import params_for_transport
from whiteboard.sim.session import DrawnOp, Peer, SimSession
from whiteboard.transport.events import Event, EventHandler, Failure
from whiteboard.transport.registry import describe

SETTLE_S = 60.0  # virtual seconds allowed after the last stroke and the last fault
JOIN_S = 60.0  # virtual seconds allowed for the first members to join
MAX_EVENTS = 5_000_000  # a runaway core is an error, not an endless run


class ScenarioClass(Enum):
    IMPAIRED = "impaired"  # loss, duplication and reordering only
    DELAYED = "delayed"  # and long, jittery delays
    PARTITION = "partition"  # the network splits in two, then heals
    CRASH = "crash"  # a member's station dies for good
    RESTART = "restart"  # a member's station dies and comes back empty
    LATE_JOIN = "late_join"  # a member joins while the others draw
    HOST_CRASH = "host_crash"  # the station the session lives with dies (MTP's master)
    MIXED = "mixed"  # every impairment, and two or three of the faults above


class Violation(Enum):
    LOST_SILENTLY = "lost_silently"
    LOST_REPORTED = "lost_reported"
    DUPLICATE = "duplicate"
    OUT_OF_ORDER = "out_of_order"
    DIVERGED = "diverged"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Partition:
    """Stations ``side`` hear only each other (and the rest only each other) from ``at`` to
    ``heal_at``, in seconds after drawing starts."""

    side: frozenset[int]
    at: float
    heal_at: float


@dataclass(frozen=True, slots=True)
class StationEvent:
    """Station ``station`` crashes, restarts or first starts ``at`` seconds after drawing
    starts."""

    station: int
    at: float


@dataclass(frozen=True)
class Scenario:
    transport: str
    seed: int
    kind: ScenarioClass
    peers: int
    messages: int
    rate: float  # strokes per second, all members together, round robin
    profile: str
    impairment: Impairment
    partitions: tuple[Partition, ...] = ()
    crashes: tuple[StationEvent, ...] = ()
    restarts: tuple[StationEvent, ...] = ()
    late_joins: tuple[StationEvent, ...] = ()

    def describe(self) -> str:
        imp = self.impairment
        parts = [
            f"{self.transport} seed {self.seed} {self.kind.value}: {self.peers} members, "
            f"{self.messages} strokes at {self.rate:g}/s, {self.profile} profile, "
            f"loss {imp.loss:.0%} dup {imp.dup:.0%} reorder {imp.reorder:.0%} "
            f"delay {imp.delay_ms:.1f}+{imp.jitter_ms:.1f} ms"
        ]
        parts += [
            f"partition {sorted(p.side)} at {p.at:.2f}-{p.heal_at:.2f} s" for p in self.partitions
        ]
        parts += [f"crash {c.station} at {c.at:.2f} s" for c in self.crashes]
        parts += [f"restart {r.station} at {r.at:.2f} s" for r in self.restarts]
        parts += [f"late join {j.station} at {j.at:.2f} s" for j in self.late_joins]
        return "; ".join(parts)


@dataclass
class Outcome:
    scenario: Scenario
    violations: Counter[Violation] = field(default_factory=Counter)
    detail: str = ""
    failures_reported: int = 0  # members told of a failure (not a violation)
    virtual_s: float = 0.0
    wall_s: float = 0.0

    @property
    def clean(self) -> bool:
        return not self.violations


# -- making scenarios from a seed ----------------------------------------------------------------


def classes_for(transport: str) -> tuple[ScenarioClass, ...]:
    """The classes a transport's scenarios are drawn from: a host's crash only where a station
    hosts the session."""
    hosted = describe(transport).host_role is not None
    return tuple(c for c in ScenarioClass if hosted or c is not ScenarioClass.HOST_CRASH)


def scenario_for(transport: str, seed: int) -> Scenario:
    """The scenario of ``seed``: everything in it comes from the seed (and the transport)."""
    rng = random.Random(f"campaign:{transport}:{seed}")
    kind = rng.choice(classes_for(transport))
    peers = rng.randint(3, 8)
    messages = rng.randint(30, 150)
    rate = round(rng.uniform(20.0, 300.0), 1)
    profile = "seed" if rng.random() < 0.2 else "lan"
    duration = messages / rate
    impairment = _impairment(rng, kind)
    hosts = _hosts(transport, peers)
    others = [i for i in range(peers) if i not in hosts]
    rng.shuffle(others)  # the members the faults fall on, each at most once
    faults = _fault_kinds(rng, kind, transport)
    partitions: list[Partition] = []
    crashes: list[StationEvent] = []
    restarts: list[StationEvent] = []
    late_joins: list[StationEvent] = []
    for fault in faults:
        at = round(rng.uniform(0.0, duration), 3)
        if fault is ScenarioClass.PARTITION:
            side = frozenset(rng.sample(range(peers), rng.randint(1, peers - 1)))
            heal = round(at + rng.uniform(0.2, 6.0), 3)
            partitions.append(Partition(side, at, heal))
        elif fault is ScenarioClass.HOST_CRASH:
            crashes.append(StationEvent(min(hosts), at))
        elif len(others) > 1:  # a member stays untouched to draw throughout
            station = others.pop()
            if fault is ScenarioClass.CRASH:
                crashes.append(StationEvent(station, at))
            elif fault is ScenarioClass.RESTART:
                crashes.append(StationEvent(station, at))
                restarts.append(StationEvent(station, round(at + rng.uniform(0.3, 8.0), 3)))
            else:
                late_joins.append(StationEvent(station, at))
    return Scenario(
        transport,
        seed,
        kind,
        peers,
        messages,
        rate,
        profile,
        impairment,
        tuple(partitions),
        tuple(crashes),
        tuple(restarts),
        tuple(late_joins),
    )


def _impairment(rng: random.Random, kind: ScenarioClass) -> Impairment:
    if kind is ScenarioClass.IMPAIRED:
        return Impairment(
            loss=rng.uniform(0.0, 0.3), dup=rng.uniform(0.0, 0.1), reorder=rng.uniform(0.0, 0.1)
        )
    heavy = kind in (ScenarioClass.DELAYED, ScenarioClass.MIXED)
    return Impairment(
        loss=rng.uniform(0.0, 0.3 if heavy else 0.1),
        dup=rng.uniform(0.0, 0.1) if heavy else 0.0,
        reorder=rng.uniform(0.0, 0.1) if heavy else 0.0,
        delay_ms=rng.uniform(0.5, 20.0) if heavy else rng.uniform(0.5, 3.0),
        jitter_ms=rng.uniform(0.0, 10.0) if heavy else rng.uniform(0.0, 1.0),
    )


_FAULTS = (
    ScenarioClass.PARTITION,
    ScenarioClass.CRASH,
    ScenarioClass.RESTART,
    ScenarioClass.LATE_JOIN,
    ScenarioClass.HOST_CRASH,
)


def _fault_kinds(rng: random.Random, kind: ScenarioClass, transport: str) -> list[ScenarioClass]:
    if kind in _FAULTS:
        return [kind]
    if kind is not ScenarioClass.MIXED:
        return []
    allowed = [f for f in _FAULTS if f in classes_for(transport)]
    return rng.sample(allowed, rng.randint(2, 3))


def _hosts(transport: str, peers: int) -> set[int]:
    description = describe(transport)
    params = params_for_transport(transport, {})
    hosting = set()
    for index in range(peers):
        role = description.role_in(params(index))
        if role is not None and role.hosts:
            hosting.add(index)
    return hosting


# -- running one -----------------------------------------------------------------------------


class _Run:
    """One scenario on a :class:`SimSession`, and what the checks need of it."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        params = params_for_transport(scenario.transport, {"profile": scenario.profile})
        self.session = SimSession(
            scenario.transport, scenario.peers, scenario.seed, scenario.impairment, params
        )
        self.session.skip_draws_while_down = True  # a dead program draws nothing
        self.gone = ReplicaStats()  # the stats of the replicas that died with their station
        self.dirty = True  # a member heard something since the last look
        # (station, incarnation) -> the virtual times its member was told of a failure
        self.told_at: dict[tuple[int, int], list[float]] = {}
        self.session.crash_observers.append(self._crashed)
        self.session.handler_wrappers.append(self._wrap)

    def _crashed(self, peer: Peer) -> None:
        self.gone.duplicates_delivered += peer.replica.stats.duplicates_delivered
        self.gone.order_violations += peer.replica.stats.order_violations

    def _wrap(
        self, peer: Peer, params: Mapping[str, object], handler: EventHandler
    ) -> EventHandler:
        told = self.told_at.setdefault((peer.index, peer.station.incarnation + 1), [])

        def handle(event: Event) -> None:
            handler(event)
            self.dirty = True
            if isinstance(event, Failure):
                told.append(self.session.network.now)

        return handle

    def play(self) -> None:
        scenario, session = self.scenario, self.session
        network = session.network
        late = {j.station for j in scenario.late_joins}
        first = [i for i in range(scenario.peers) if i not in late]
        for index in first:
            session.start(index)
        network.run(JOIN_S, lambda: all(session.peers[i].ready for i in first), MAX_EVENTS)
        start = network.now + 0.1
        ends = [self._schedule_faults(start)]
        everyone = list(range(scenario.peers))
        ends.append(session.schedule_draws(scenario.messages, scenario.rate, start, everyone))
        quiet = max(ends)
        network.run(quiet + SETTLE_S, lambda: network.now >= quiet and self._at_rest(), MAX_EVENTS)

    def _schedule_faults(self, start: float) -> float:
        """Schedule the faults from ``start`` (before the strokes: a crash at the instant of a
        stroke comes first); return the time of the last."""
        scenario, session = self.scenario, self.session
        network = session.network
        last = start
        for p in scenario.partitions:
            rest = set(range(scenario.peers)) - p.side
            network.schedule(start + p.at, partial(network.partition, [set(p.side), rest]))
            network.schedule(start + p.heal_at, network.heal)
            last = max(last, start + p.heal_at)
        for event, action in self._station_events():
            network.schedule(start + event.at, partial(action, event.station))
            last = max(last, start + event.at)
        return last

    def _station_events(self) -> Iterator[tuple[StationEvent, Callable[[int], None]]]:
        scenario, session = self.scenario, self.session
        yield from ((c, session.crash) for c in scenario.crashes)
        yield from ((r, session.start) for r in scenario.restarts)
        yield from ((j, session.start) for j in scenario.late_joins)

    # -- what is checked ---------------------------------------------------------------------

    def required_drawn(self) -> list[DrawnOp]:
        """Ops drawn by a station in the incarnation it is still up in."""
        stations = [p.station for p in self.session.peers]
        return [
            d
            for d in self.session.drawn
            if stations[d.index].up and stations[d.index].incarnation == d.incarnation
        ]

    def required(self) -> list[OpId]:
        return [d.op_id for d in self.required_drawn()]

    def _at_rest(self) -> bool:
        if not self.dirty:
            return False
        self.dirty = False
        live = self.session.live()
        if len({p.replica.board.hash() for p in live}) > 1:
            return False
        required = self.required()
        return all(op in p.replica.board for p in live for op in required)

    def _told_since(self, peer: Peer, when: float) -> bool:
        """Whether ``peer`` (in its current incarnation) was told of a failure at or after
        ``when``."""
        told = self.told_at.get((peer.index, peer.station.incarnation), [])
        return any(at >= when for at in told)

    def outcome(self) -> Outcome:
        session = self.session
        outcome = Outcome(self.scenario, virtual_s=round(session.network.now, 3))
        live = session.live()
        peers = session.peers
        outcome.failures_reported = sum(1 for p in live if self._told_since(p, 0.0))
        silent: list[OpId] = []
        reported = 0
        for drawn in self.required_drawn():
            lacking = [p for p in live if drawn.op_id not in p.replica.board]
            if not lacking:
                continue
            author = peers[drawn.index]
            rejected = len(lacking) == len(live) and self._told_since(author, drawn.at)
            if rejected or all(self._told_since(p, drawn.at) for p in lacking):
                reported += 1
            else:
                silent.append(drawn.op_id)
        _count(outcome, Violation.LOST_SILENTLY, len(silent))
        _count(outcome, Violation.LOST_REPORTED, reported)
        duplicates = self.gone.duplicates_delivered
        duplicates += sum(p.replica.stats.duplicates_delivered for p in live)
        _count(outcome, Violation.DUPLICATE, duplicates)
        disorder = self.gone.order_violations + sum(p.replica.stats.order_violations for p in live)
        _count(outcome, Violation.OUT_OF_ORDER, disorder)
        untold = [p for p in live if not self._told_since(p, 0.0)]
        boards = {p.replica.board.hash() for p in untold}
        _count(outcome, Violation.DIVERGED, len(boards) - 1 if len(boards) > 1 else 0)
        if silent:
            outcome.detail = f"{len(silent)} ops lost silently, the first {silent[0]}"
        return outcome


def _count(outcome: Outcome, kind: Violation, number: int) -> None:
    if number:
        outcome.violations[kind] += number


def run(scenario: Scenario) -> Outcome:
    """Play ``scenario`` and check it. A simulator or core error is an ``error`` violation."""
    wall = time.perf_counter()
    attempt = _Run(scenario)
    try:
        attempt.play()
        outcome = attempt.outcome()
    except Exception as exc:
        outcome = Outcome(scenario, Counter({Violation.ERROR: 1}), f"{type(exc).__name__}: {exc}")
        outcome.virtual_s = round(attempt.session.network.now, 3)
    outcome.wall_s = round(time.perf_counter() - wall, 3)
    return outcome


def run_seed(transport: str, seed: int) -> Outcome:
    return run(scenario_for(transport, seed))


__all__ = [
    "Outcome",
    "Partition",
    "Scenario",
    "ScenarioClass",
    "StationEvent",
    "Violation",
    "classes_for",
    "run",
    "run_seed",
    "scenario_for",
]
