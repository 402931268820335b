"""The ``whiteboard sim`` scenario: M synthetic strokes spread over N peers, under impairments,
run to completion (or a virtual-time limit), summarised as one JSON-able dict.

Optionally the ops are people's rather than round-robin strokes (``workload="collab"``:
whiteboard/sim/workload.py), every member records a session log (whiteboard/sim/recording.py),
and stations crash at chosen times (``crashes``): the result then says what the members that
never crashed (the survivors) have, and how long the session took to carry on if the station
hosting it was among the crashed."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from whiteboard.board import OpId
from whiteboard.security import SessionKey
from whiteboard.sim.network import Impairment
from whiteboard.sim.recording import DEFAULT_START, SimRecorder
from whiteboard.sim.session import ParamsFor, Peer, SimSession
from whiteboard.sim.workload import MIXES, CollabWorkload
from whiteboard.transport.events import Delivered, Event, EventHandler
from whiteboard.transport.registry import describe

WORKLOADS = ("uniform", *MIXES)  # uniform: round-robin strokes (whiteboard/sim/session.py)


@dataclass(frozen=True, slots=True)
class Crash:
    """Station ``station`` dies ``at`` virtual seconds after drawing starts (the first stroke's
    time, once every member has joined), and stays down. From then on it draws nothing: its
    scheduled strokes are skipped, not held for a restart it never gets."""

    station: int
    at: float

    @classmethod
    def parse(cls, text: str) -> Crash:
        """``STATION@SECONDS``, as ``whiteboard sim --crash`` takes it."""
        station, sep, seconds = text.partition("@")
        if not sep or not station.strip().isdigit():
            raise ValueError(
                f"--crash {text!r} must be STATION@SECONDS, a station number and the seconds "
                "after drawing starts, for example 0@1.5"
            )
        try:
            at = float(seconds)
        except ValueError:
            raise ValueError(f"--crash {text!r}: {seconds!r} is not a number of seconds") from None
        return cls(int(station), at)

    def __str__(self) -> str:
        return f"{self.station}@{self.at:g}"


@dataclass(frozen=True)
class ScenarioConfig:
    transport: str = "raw"
    peers: int = 3
    messages: int = 100
    impairment: Impairment = field(default_factory=Impairment)
    seed: int = 1
    rate: float = 100.0  # strokes per second, all peers together
    settle_s: float = 120.0  # virtual time allowed after the last stroke for repairs
    params: Mapping[str, object] = field(default_factory=dict)
    # Or "collab": people drawing; "edit": people editing, every op kind (--rate not used).
    workload: str = "uniform"
    log_dir: Path | None = None  # record every member's session log there
    start: float = DEFAULT_START.timestamp()  # the logs' wall-clock time at virtual time 0
    crashes: tuple[Crash, ...] = ()
    key: SessionKey | None = None  # a private session (every member's datagrams sealed)

    def __post_init__(self) -> None:
        if self.workload not in WORKLOADS:
            raise ValueError(f"--workload must be one of {', '.join(WORKLOADS)}")
        if self.peers < 1:
            raise ValueError("--peers must be at least 1")
        if self.messages < 0:
            raise ValueError("--messages must not be negative")
        if self.rate <= 0:
            raise ValueError("--rate must be positive")
        for crash in self.crashes:
            if not 0 <= crash.station < self.peers:
                raise ValueError(
                    f"--crash {crash}: there is no station {crash.station} "
                    f"(--peers {self.peers} gives stations 0 to {self.peers - 1})"
                )
            if not crash.at >= 0 or math.isinf(crash.at):  # not: NaN too
                raise ValueError(
                    f"--crash {crash}: the time must be a finite number of seconds, 0 or more"
                )


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100.0 * len(ordered))))
    return round(ordered[rank - 1], 3)


def params_for_transport(transport: str, base: Mapping[str, object]) -> ParamsFor:
    """On a transport with roles, station 0 hosts (the MTP master) and everyone else draws."""
    description = describe(transport)
    host, member = description.host_role, description.member_role

    def params(index: int) -> dict[str, object]:
        result = dict(base)
        role = host if index == 0 and host is not None else member
        if role is not None:
            result.setdefault(description.role_param, role.value)
        return result

    return params


class SurvivorWatch:
    """What the members that never crash (the survivors) have of the ops the survivors drew,
    and when the session carried on after the crash of the station hosting it.

    ``failover_ms``, transport-neutral: from the first crash of a station whose role hosts the
    session (RFC 1301's master) until every survivor has delivered an op drawn after that
    crash; None if no such station crashed, or if that never happened."""

    def __init__(
        self, session: SimSession, survivors: list[int], host_crash_at: float | None
    ) -> None:
        self.session = session
        self.survivors = survivors
        self.host_crash_at = host_crash_at
        self.resumed_at: dict[int, float] = {}  # survivor -> its first delivery after it
        self.dirty = True  # a survivor heard something since the last check
        self._checked = dict.fromkeys(survivors, 0)  # survivor -> survivor ops seen in order
        self._wanted = set(survivors)

    def wrap(self, peer: Peer, params: Mapping[str, object], handler: EventHandler) -> EventHandler:
        if peer.index not in self._wanted:
            return handler

        def handle(event: Event) -> None:
            handler(event)
            self.dirty = True

        return handle

    def on_delivered(self, peer: Peer, event: Delivered) -> None:
        crash_at = self.host_crash_at
        if crash_at is None or peer.index not in self._wanted or peer.index in self.resumed_at:
            return
        sent = self.session.sent_at.get(event.payload)
        if sent is not None and sent >= crash_at:
            self.resumed_at[peer.index] = self.session.network.now

    def survivor_ops(self) -> list[OpId]:
        wanted = self._wanted
        return [d.op_id for d in self.session.drawn if d.index in wanted]

    def all_have_all(self) -> bool:
        """Every survivor has every op a survivor drew so far (checked only when something
        arrived: a board never loses an op, so what was seen stays seen)."""
        if not self.dirty:
            return False
        self.dirty = False
        expected = self.survivor_ops()
        for index in self.survivors:
            board = self.session.peers[index].replica.board
            seen = self._checked[index]
            while seen < len(expected) and expected[seen] in board:
                seen += 1
            self._checked[index] = seen
            if seen < len(expected):
                return False
        return True

    def ops_missing(self) -> int:
        """Survivors' ops that some survivor lacks."""
        boards = [self.session.peers[i].replica.board for i in self.survivors]
        return sum(1 for op in self.survivor_ops() if any(op not in b for b in boards))

    def failover_ms(self) -> float | None:
        if self.host_crash_at is None or len(self.resumed_at) < len(self.survivors):
            return None
        if not self.survivors:
            return None
        return round((max(self.resumed_at.values()) - self.host_crash_at) * 1000.0, 3)


def _host_stations(config: ScenarioConfig) -> set[int]:
    """The stations whose role hosts the session (station 0 on MTP: its master)."""
    description = describe(config.transport)
    params = params_for_transport(config.transport, config.params)
    hosting = set()
    for index in range(config.peers):
        role = description.role_in(params(index))
        if role is not None and role.hosts:
            hosting.add(index)
    return hosting


def run_scenario(config: ScenarioConfig) -> dict[str, object]:
    wall_start = time.perf_counter()
    session = SimSession(
        config.transport,
        config.peers,
        config.seed,
        config.impairment,
        params_for_transport(config.transport, config.params),
    )
    if config.key is not None:
        session.keys = dict.fromkeys(range(config.peers), config.key)
    crashed = {crash.station for crash in config.crashes}
    survivors = [i for i in range(config.peers) if i not in crashed]
    hosts = _host_stations(config)
    host_crashes = [c.at for c in config.crashes if c.station in hosts]
    watch = SurvivorWatch(session, survivors, None)
    if config.crashes:
        session.skip_draws_while_down = True
        session.handler_wrappers.append(watch.wrap)
    # The workload before the recorder: the recorder must see what the workload's members send.
    mix = MIXES.get(config.workload)
    workload = None if mix is None else CollabWorkload(session, config.seed, mix)
    recorder = None
    if config.log_dir is not None:
        run_key = repr(dataclasses.replace(config, log_dir=None))
        recorder = SimRecorder(session, config.log_dir, config.start, run_key)
    for index in range(config.peers):
        session.start(index)
    network = session.network
    # Draw once everyone has joined, so that latencies measure the protocol, not the join.
    network.run(until=60.0, stop=lambda: all(p.ready for p in session.peers))
    everyone = list(range(config.peers))
    draw_start = network.now + 0.1
    # Before the draws: a crash at the instant of a stroke comes first (ties go in order).
    for crash in config.crashes:
        network.schedule(draw_start + crash.at, partial(session.crash, crash.station))
    if host_crashes:
        watch.host_crash_at = draw_start + min(host_crashes)
    nacks_before: list[int] = [0]
    if config.impairment.source_loss:
        # NACKs are counted from the first stroke: those of joining are not a stroke's.
        network.schedule(
            draw_start,
            lambda: nacks_before.__setitem__(0, session.counters_total().get("nack_packets", 0)),
        )
    if workload is None:
        last_draw = session.schedule_draws(config.messages, config.rate, draw_start, everyone)
    else:
        last_draw = workload.schedule(config.messages, draw_start)
    until = max([last_draw, *(draw_start + c.at for c in config.crashes)]) + config.settle_s
    complete: set[int] = set()

    def note_complete(peer: Peer, event: Delivered) -> None:
        watch.on_delivered(peer, event)
        if len(peer.replica.board) == config.messages:
            complete.add(peer.index)

    # Completion is monotone per peer (ops never leave the log), so noting the moment each
    # peer's log reaches M avoids an O(N) check after every event.
    session.on_delivered = note_complete
    if not config.crashes:
        done = not config.messages or network.run(
            until=until, stop=lambda: len(complete) >= config.peers
        )
    else:
        # Ops drawn by a station before its crash may be missing: wait for the survivors' ops.
        done = network.run(
            until=until, stop=lambda: network.now >= last_draw and watch.all_have_all()
        )
    result = _summary(config, session, watch, bool(done), recorder)
    if config.key is not None:
        counters = session.counters_total()
        result["private"] = True
        result["auth_failures"] = counters.get("auth_failures", 0)
    if config.impairment.source_loss:
        nack_packets = session.counters_total().get("nack_packets", 0) - nacks_before[0]
        result.update(_source_loss_summary(session, nack_packets))
    if workload is not None:
        result["workload"] = config.workload
        workload.stop()
    # Leave as the protocol says, so leaving is exercised too (bounded in virtual time).
    live = session.live()
    for peer in live:
        peer.station.transport.close()
    network.run(until=network.now + 30.0, stop=_all_released(live))
    result["left_cleanly"] = all(p.station.released for p in live)
    if recorder is not None:
        result["logs"] = [str(path) for path in recorder.finish()]
    result["wall_s"] = round(time.perf_counter() - wall_start, 3)
    return result


def _all_released(peers: list[Peer]) -> Callable[[], bool]:
    """A stop condition for the leaving: every peer's carrier released. Checked after every
    event, so it skips the peers already seen released (not a scan of the group each time)."""
    pending = list(reversed(peers))

    def check() -> bool:
        while pending and pending[-1].station.released:
            pending.pop()
        return not pending

    return check


def _source_loss_summary(session: SimSession, nack_packets: int) -> dict[str, object]:
    """With --source-loss: how many NACK packets a loss that every receiver shares costs.

    ``source_loss_events`` counts the datagrams lost at their sender that carried a stroke (a
    data packet, or a repair of one); ``nack_packets`` the NACK (RMP) or nak (MTP) datagrams
    all members sent, for any reason, from the first stroke until the result (not those of
    joining); ``nack_packets_per_loss_event`` is their ratio (0 with no event). With --loss 0,
    every NACK answers a source loss: a lost stroke, or a lost control packet or repair."""
    events = session.source_data_losses
    return {
        "source_losses_injected": session.network.stats.source_losses_injected,
        "source_loss_events": events,
        "nack_packets": nack_packets,
        "nack_packets_per_loss_event": round(nack_packets / events, 4) if events else 0.0,
    }


def _summary(
    config: ScenarioConfig,
    session: SimSession,
    watch: SurvivorWatch,
    done: bool,
    recorder: SimRecorder | None,
) -> dict[str, object]:
    network = session.network
    virtual_end = network.now
    counters = session.counters_total()
    live = session.live()
    delivered = [len(p.replica.board) for p in live]
    hashes = session.hashes()
    losses = network.stats.losses_injected
    missing = watch.ops_missing()
    if config.crashes:
        complete = done and missing == 0
    else:
        complete = done and all(d == config.messages for d in delivered)
    return {
        "transport": config.transport,
        "peers": config.peers,
        "messages": config.messages,
        "seed": config.seed,
        "complete": complete,
        "delivered_min": min(delivered, default=0),
        "delivered_max": max(delivered, default=0),
        "duplicates_delivered": sum(p.replica.stats.duplicates_delivered for p in live),
        "order_violations": sum(p.replica.stats.order_violations for p in live),
        "late_inserts": sum(p.replica.stats.late_inserts for p in live),
        "converged": len(set(hashes.values())) <= 1,
        "board_hash": next(iter(hashes.values())) if len(set(hashes.values())) == 1 else None,
        "distinct_board_hashes": len(set(hashes.values())),
        "losses_injected": losses,
        "duplicates_injected": network.stats.duplicates_injected,
        "reorders_injected": network.stats.reorders_injected,
        "datagrams_sent": network.stats.datagrams_sent,
        "nacks_sent": counters.get("nacks_sent", 0),
        "retransmissions": counters.get("retransmissions", 0),
        "nacks_per_loss": round(counters.get("nacks_sent", 0) / losses, 4) if losses else 0.0,
        # NACK implosion: repairs sent per distinct packet a station asked for (RR-2100 §2.6)
        "nacked_packets": counters.get("nacked_packets", 0),
        "retransmissions_per_nacked_packet": (
            round(counters.get("retransmissions", 0) / counters["nacked_packets"], 4)
            if counters.get("nacked_packets")
            else 0.0
        ),
        "malformed_dropped": counters.get("malformed_dropped", 0),
        "failures": sorted({reason for p in session.peers for reason in p.failures}),
        "latency_ms_p50": percentile(session.latencies_ms, 50),
        "latency_ms_p99": percentile(session.latencies_ms, 99),
        "recovery_ms_p99": percentile(session.recoveries_ms, 99),
        "recoveries": len(session.recoveries_ms),
        "virtual_ms": round(virtual_end * 1000.0, 3),
        # The recorder's flush timers are not the simulated session's events.
        "events": network.events_processed - (recorder.ticks if recorder else 0),
        "survivors": watch.survivors,
        "survivor_ops_missing": missing,
        "failover_ms": watch.failover_ms(),
        "crashes": [str(crash) for crash in config.crashes],
    }
