"""Simulator speed: python benchmarks/bench_sim.py [transport ...].

Runs the issue's reference scenario (10 stations, 1,000 strokes, 10% loss) and prints virtual
time, wall time and their ratio: the simulator must run protocol scenarios in seconds."""

from __future__ import annotations

import sys

from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import ScenarioConfig, run_scenario
from whiteboard.transport.registry import TransportUnavailable


def main(transports: list[str]) -> None:
    for transport in transports:
        config = ScenarioConfig(
            transport,
            peers=10,
            messages=1000,
            seed=1,
            impairment=Impairment(loss=0.1),
            settle_s=30.0,
        )
        try:
            result = run_scenario(config)
        except TransportUnavailable as exc:
            print(f"{transport}: {exc}")
            continue
        ratio = float(result["virtual_ms"]) / 1000.0 / max(float(result["wall_s"]), 1e-9)
        print(
            f"{transport}: 10 stations x 1000 strokes, 10% loss: complete={result['complete']} "
            f"virtual {result['virtual_ms']} ms, wall {result['wall_s']} s "
            f"({ratio:,.0f}x real time), {result['events']} events, "
            f"{result['losses_injected']} losses, nacks/loss {result['nacks_per_loss']}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["raw", "rmp", "mtp"])
