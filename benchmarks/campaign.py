"""The seeded fault campaign (issue 17): python benchmarks/campaign.py --transport rmp|mtp
[--count 1000] [--seed S] [--jobs 1] [--class CLASS] [--verbose].

Scenario i is made from seed S + i alone (whiteboard/sim/campaign.py): 3-8 members, loss up to
30%, duplication, reordering, delay and jitter, and partitions that heal, crashes,
crash-and-restart, late joins and (MTP) master crashes. Prints, per scenario class, how many
scenarios broke each promise (no op lost without a failure told, none delivered twice, none out
of order, boards converged), the seeds of the failing ones with a command to rerun each alone,
and the wall time. Exits 1 if any scenario failed. ``--class`` keeps only the seeds (from S up)
whose scenario is of that class, until ``--count`` of them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from functools import partial

from whiteboard.sim.campaign import (
    Outcome,
    ScenarioClass,
    Violation,
    classes_for,
    run_seed,
    scenario_for,
)
from whiteboard.transport.registry import transport_names

SEEDS_SHOWN = 10  # failing seeds listed per violation kind


def seeds_of(transport: str, first: int, count: int, kind: str | None) -> list[int]:
    """``count`` seeds from ``first`` up, of scenarios of class ``kind`` (any if None)."""
    if kind is None:
        return list(range(first, first + count))
    wanted = ScenarioClass(kind)
    found: list[int] = []
    seed = first
    while len(found) < count:
        if scenario_for(transport, seed).kind is wanted:
            found.append(seed)
        seed += 1
    return found


def outcomes(transport: str, seeds: list[int], jobs: int) -> Iterator[Outcome]:
    if jobs <= 1:
        yield from (run_seed(transport, seed) for seed in seeds)
        return
    with multiprocessing.Pool(jobs) as pool:
        yield from pool.imap(partial(run_seed, transport), seeds, chunksize=4)


def rerun_command(transport: str, seed: int) -> str:
    return (
        f".venv/bin/python benchmarks/campaign.py --transport {transport} --seed {seed} "
        "--count 1 -v"
    )


def report(transport: str, results: list[Outcome], wall_s: float) -> str:
    kinds = list(Violation)
    classes = [c for c in classes_for(transport)]
    per_class: dict[ScenarioClass, Counter[Violation]] = defaultdict(Counter)
    runs: Counter[ScenarioClass] = Counter()
    failed: Counter[ScenarioClass] = Counter()
    failing: dict[Violation, list[Outcome]] = defaultdict(list)
    for outcome in results:
        kind = outcome.scenario.kind
        runs[kind] += 1
        failed[kind] += not outcome.clean
        for violation in outcome.violations:
            per_class[kind][violation] += 1  # scenarios, not ops
            failing[violation].append(outcome)
    header = f"{'class':<11}{'runs':>6}{'failed':>8}" + "".join(f"{k.value:>15}" for k in kinds)
    lines = [
        f"{transport}: {len(results)} scenarios, seeds {results[0].scenario.seed}-"
        f"{results[-1].scenario.seed}"
        if results
        else f"{transport}: no scenarios",
        "scenarios per class and per violation kind (a scenario may break several):",
        header,
    ]
    for scenario_class in classes:
        counts = per_class[scenario_class]
        lines.append(
            f"{scenario_class.value:<11}{runs[scenario_class]:>6}{failed[scenario_class]:>8}"
            + "".join(f"{counts[k]:>15}" for k in kinds)
        )
    total = Counter({k: sum(per_class[c][k] for c in classes) for k in kinds})
    lines.append(
        f"{'all':<11}{len(results):>6}{sum(failed.values()):>8}"
        + "".join(f"{total[k]:>15}" for k in kinds)
    )
    for violation in kinds:
        bad = failing[violation]
        if not bad:
            continue
        lines.append(f"\n{violation.value}: {len(bad)} scenarios; the first {SEEDS_SHOWN}:")
        for outcome in bad[:SEEDS_SHOWN]:
            scenario = outcome.scenario
            lines.append(
                f"  seed {scenario.seed} ({scenario.kind.value}, "
                f"{outcome.violations[violation]}): {rerun_command(transport, scenario.seed)}"
            )
    lines.append(f"\nwall time {wall_s:.1f} s")
    return "\n".join(lines)


def describe_outcome(outcome: Outcome) -> str:
    found = ", ".join(f"{k.value} {n}" for k, n in outcome.violations.items()) or "clean"
    detail = f" ({outcome.detail})" if outcome.detail else ""
    return (
        f"{outcome.scenario.describe()}\n  -> {found}{detail}; {outcome.failures_reported} "
        f"members told of a failure; virtual {outcome.virtual_s} s, wall {outcome.wall_s} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", required=True, choices=list(transport_names()))
    parser.add_argument("--count", type=int, default=1000, help="scenarios (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="the first scenario's seed")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--class",
        dest="kind",
        choices=[kind.value for kind in ScenarioClass],
        default=None,
        help="only scenarios of this class",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print every scenario and its outcome"
    )
    args = parser.parse_args(argv)
    if args.count < 1 or args.jobs < 1:
        parser.error("--count and --jobs must be at least 1")
    if args.kind is not None and ScenarioClass(args.kind) not in classes_for(args.transport):
        parser.error(f"{args.transport} has no {args.kind} scenarios")
    seeds = seeds_of(args.transport, args.seed, args.count, args.kind)
    wall = time.perf_counter()
    results = []
    for outcome in outcomes(args.transport, seeds, args.jobs):
        results.append(outcome)
        if args.verbose:
            print(describe_outcome(outcome), flush=True)
    print(report(args.transport, results, time.perf_counter() - wall))
    return 0 if all(outcome.clean for outcome in results) else 1


if __name__ == "__main__":
    sys.exit(main())
