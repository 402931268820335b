"""What one delivered stroke costs a receiver, stage by stage, in one process (issue 18's
"receive CPU <= 10 us per stroke", without the network, the transport or painting):

    .venv/bin/python benchmarks/bench_receive.py [--strokes 10000] [--reps 5]

Strokes as `whiteboard peer --send` makes them (whiteboard/board/synthetic.py). Each stage is
timed over all the strokes, the best of ``--reps`` (the machine stalls; the best is the cost),
and printed in microseconds a stroke and as a ratio to msgpack's unpacking of the same bytes,
the reference measured in the same run: the part of decoding that runs in C.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import msgpack

from whiteboard.board import Board, decode_op, encode_op
from whiteboard.board.codec import UNPACK_LIMITS, op_from_wire
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.replica import Replica
from whiteboard.transport.events import Delivered


def best_us(work: Callable[[], object], count: int, reps: int) -> float:
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times) / count * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strokes", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random("bench")
    ops = [synthetic_stroke(0x5EED_0001, n, rng) for n in range(1, args.strokes + 1)]
    payloads = [encode_op(op) for op in ops]
    items = [msgpack.unpackb(p, raw=False, use_list=False) for p in payloads]
    size = statistics.fmean(len(p) for p in payloads)
    points = statistics.fmean(len(op.points) for op in ops) / 2
    print(f"{len(ops):,} strokes, {size:.0f} bytes and {points:.0f} points each on average")

    def fresh_board() -> None:
        board = Board()
        for n, op in enumerate(ops):
            board.apply((n + 1,), op)

    def replica_run() -> None:
        replica = Replica()
        for n, payload in enumerate(payloads):
            replica.apply_delivered(Delivered(1, (n + 1,), 0.0, payload, False, 0.0))

    stages: list[tuple[str, Callable[[], object]]] = [
        ("msgpack unpack (reference)", lambda: [
            msgpack.unpackb(p, raw=False, strict_map_key=True, use_list=False, **UNPACK_LIMITS)
            for p in payloads
        ]),
        ("op from wire (validation)", lambda: [op_from_wire(item) for item in items]),
        ("decode_op (both)", lambda: [decode_op(p) for p in payloads]),
        ("board apply", fresh_board),
        ("replica: decode + apply", replica_run),
    ]  # fmt: skip
    reference = 0.0
    print(f"{'stage':<28} {'us/stroke':>10} {'x ref':>7}")
    for name, work in stages:
        cost = best_us(work, len(ops), args.reps)
        reference = reference or cost
        print(f"{name:<28} {cost:>10.2f} {cost / reference:>7.1f}")
    print("goal (issue 18): <= 10 us a stroke for the whole receive path, transport included")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
