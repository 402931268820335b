"""The ``whiteboard sim`` scenario: M synthetic strokes spread over N peers, under impairments,
run to completion (or a virtual-time limit), summarised as one JSON-able dict.

Optionally the ops are people's rather than round-robin strokes (``workload="collab"``:
whiteboard/sim/workload.py), and every member records a session log
(whiteboard/sim/recording.py)."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from whiteboard.sim.network import Impairment
from whiteboard.sim.recording import DEFAULT_START, SimRecorder
from whiteboard.sim.session import ParamsFor, Peer, SimSession
from whiteboard.sim.workload import CollabWorkload
from whiteboard.transport.events import Delivered
from whiteboard.transport.registry import describe

WORKLOADS = ("uniform", "collab")


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
    workload: str = "uniform"  # or "collab": people drawing (--rate is not used)
    log_dir: Path | None = None  # record every member's session log there
    start: float = DEFAULT_START.timestamp()  # the logs' wall-clock time at virtual time 0

    def __post_init__(self) -> None:
        if self.workload not in WORKLOADS:
            raise ValueError(f"--workload must be one of {', '.join(WORKLOADS)}")
        if self.peers < 1:
            raise ValueError("--peers must be at least 1")
        if self.messages < 0:
            raise ValueError("--messages must not be negative")
        if self.rate <= 0:
            raise ValueError("--rate must be positive")


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


def run_scenario(config: ScenarioConfig) -> dict[str, object]:
    wall_start = time.perf_counter()
    session = SimSession(
        config.transport,
        config.peers,
        config.seed,
        config.impairment,
        params_for_transport(config.transport, config.params),
    )
    # The workload before the recorder: the recorder must see what the workload's members send.
    workload = CollabWorkload(session, config.seed) if config.workload == "collab" else None
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
    if workload is None:
        last_draw = session.schedule_draws(
            config.messages, config.rate, network.now + 0.1, everyone
        )
    else:
        last_draw = workload.schedule(config.messages, network.now + 0.1)
    complete: set[int] = set()

    def note_complete(peer: Peer, event: Delivered) -> None:
        if len(peer.replica.board) == config.messages:
            complete.add(peer.index)

    # Completion is monotone per peer (ops never leave the log), so noting the moment each
    # peer's log reaches M avoids an O(N) check after every event.
    session.on_delivered = note_complete
    done = not config.messages or network.run(
        until=last_draw + config.settle_s, stop=lambda: len(complete) >= config.peers
    )
    virtual_end = network.now
    counters = session.counters_total()
    live = session.live()
    delivered = [len(p.replica.board) for p in live]
    hashes = session.hashes()
    losses = network.stats.losses_injected
    result: dict[str, object] = {
        "transport": config.transport,
        "peers": config.peers,
        "messages": config.messages,
        "seed": config.seed,
        "complete": bool(done) and all(d == config.messages for d in delivered),
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
    }
    if workload is not None:
        result["workload"] = config.workload
        workload.stop()
    # Leave as the protocol says, so leaving is exercised too (bounded in virtual time).
    for peer in live:
        peer.station.transport.close()
    network.run(until=network.now + 30.0, stop=lambda: all(p.station.released for p in live))
    result["left_cleanly"] = all(p.station.released for p in live)
    if recorder is not None:
        result["logs"] = [str(path) for path in recorder.finish()]
    result["wall_s"] = round(time.perf_counter() - wall_start, 3)
    return result
