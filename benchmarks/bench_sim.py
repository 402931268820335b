"""Simulator speed: python benchmarks/bench_sim.py [--peers N] [--loss L] [transport ...].

By default runs the reference scenario (10 stations, 1,000 strokes, 10% loss); issue 18's goal
is ``--peers 100 --loss 0``: 100 members x 1,000 strokes in under 20 s of wall time for every
transport. Prints virtual time, wall time, their ratio, the events (datagram arrivals and
timers) and the wall time per event, so that a protocol's chatter and the simulator's cost per
event can be told apart."""

from __future__ import annotations

import argparse
import os

from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import ScenarioConfig, run_scenario
from whiteboard.transport.registry import TransportUnavailable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transports", nargs="*", default=["raw", "rmp", "mtp"])
    parser.add_argument("--peers", type=int, default=10)
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--loss", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for transport in args.transports:
        config = ScenarioConfig(
            transport,
            peers=args.peers,
            messages=args.messages,
            seed=args.seed,
            impairment=Impairment(loss=args.loss),
            settle_s=30.0,
        )
        try:
            result = run_scenario(config)
        except TransportUnavailable as exc:
            print(f"{transport}: {exc}")
            continue
        wall = max(float(result["wall_s"]), 1e-9)
        events = int(result["events"])  # type: ignore[call-overload]
        print(
            f"{transport}: {args.peers} stations x {args.messages} strokes, "
            f"{args.loss:.0%} loss: complete={result['complete']} "
            f"converged={result['converged']} virtual {result['virtual_ms']} ms, "
            f"wall {wall:.1f} s ({float(result['virtual_ms']) / 1000.0 / wall:,.2f}x real "
            f"time), {result['datagrams_sent']} datagrams, {events:,} events "
            f"({wall / max(events, 1) * 1e6:.0f} µs each), nacks/loss {result['nacks_per_loss']}"
        )


if __name__ == "__main__":
    main()
