"""The behaviour of the three transports, pinned: ``whiteboard sim --json`` over a table of
seeds, profiles, workloads and impairments, recorded before the cores were reshaped (issue 16).

A change of structure must leave every line identical (``wall_s`` aside, which is the host's).
A change of behaviour re-records the table on purpose, and says why in its commit:

    .venv/bin/python -m tests.sim.golden --record
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

from whiteboard.cli import main as whiteboard_main

GOLDEN = Path(__file__).with_name("golden_sim.jsonl")

# (peers, messages, loss, dup, reorder, delay_ms, jitter_ms, rate, profile, workload, seed)
_SCENARIOS: tuple[tuple[int, int, float, float, float, float, float, float, str, str, int], ...] = (
    (3, 60, 0.0, 0.0, 0.0, 1.0, 0.0, 100.0, "lan", "uniform", 1),
    (4, 120, 0.05, 0.0, 0.0, 1.0, 0.0, 200.0, "lan", "uniform", 2),
    (5, 150, 0.2, 0.0, 0.0, 2.0, 1.0, 300.0, "lan", "uniform", 3),
    (3, 100, 0.1, 0.1, 0.1, 1.0, 2.0, 150.0, "lan", "uniform", 4),
    (6, 80, 0.3, 0.05, 0.05, 3.0, 3.0, 100.0, "lan", "uniform", 5),
    (2, 200, 0.02, 0.0, 0.2, 0.5, 0.5, 400.0, "lan", "uniform", 6),
    (4, 60, 0.0, 0.0, 0.0, 1.0, 0.0, 50.0, "seed", "uniform", 7),
    (3, 80, 0.1, 0.0, 0.0, 5.0, 2.0, 100.0, "seed", "uniform", 8),
    (5, 60, 0.15, 0.1, 0.1, 2.0, 2.0, 80.0, "seed", "uniform", 9),
    (4, 120, 0.05, 0.0, 0.0, 1.0, 1.0, 100.0, "lan", "collab", 10),
    (3, 100, 0.2, 0.05, 0.1, 2.0, 2.0, 100.0, "lan", "collab", 11),
    (4, 80, 0.1, 0.0, 0.0, 2.0, 1.0, 100.0, "seed", "collab", 12),
    (1, 30, 0.0, 0.0, 0.0, 1.0, 0.0, 100.0, "lan", "uniform", 13),
)
TRANSPORTS = ("raw", "rmp", "mtp")


def scenarios() -> list[list[str]]:
    """The ``whiteboard sim`` argument lists, one per line of the golden file."""
    table = []
    for transport in TRANSPORTS:
        for peers, messages, loss, dup, reorder, delay, jitter, rate, profile, work, seed in (
            _SCENARIOS
        ):
            table.append(
                [
                    "sim", "--transport", transport, "--peers", str(peers),
                    "--messages", str(messages), "--loss", str(loss), "--dup", str(dup),
                    "--reorder", str(reorder), "--delay-ms", str(delay),
                    "--jitter-ms", str(jitter), "--rate", str(rate), "--profile", profile,
                    "--workload", work, "--seed", str(seed), "--json",
                ]
            )  # fmt: skip
    return table


def run(argv: list[str]) -> dict[str, object]:
    """One ``whiteboard sim --json`` run, its result without the host's ``wall_s``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = whiteboard_main(argv)
    if status != 0:
        raise RuntimeError(f"whiteboard {' '.join(argv)} exited {status}")
    result = json.loads(out.getvalue())
    del result["wall_s"]
    return result


def line(argv: list[str]) -> str:
    return json.dumps({"argv": argv, "result": run(argv)}, sort_keys=True)


def record() -> None:
    GOLDEN.write_text("".join(line(argv) + "\n" for argv in scenarios()))


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python -m tests.sim.golden --record")
    record()
