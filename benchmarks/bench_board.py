"""Benchmark of the board: python benchmarks/bench_board.py [N]."""

from __future__ import annotations

import random
import statistics
import sys
import time

from whiteboard.board import Board, Erase, OpId, Undo, decode_op, encode_op, synthetic_stroke


def main(count: int = 10_000) -> None:
    rng = random.Random(1)
    ops = [synthetic_stroke(1 + i % 5, i, rng) for i in range(count)]
    keys = [(10 * (i + 1),) for i in range(count)]
    sizes = [len(encode_op(op)) for op in ops]
    print(f"synthetic stroke: mean {statistics.mean(sizes):.0f} B, max {max(sizes)} B")

    wires = [encode_op(op) for op in ops]
    start = time.perf_counter()
    for wire in wires:
        decode_op(wire)
    print(f"decode {count} strokes: {(time.perf_counter() - start) * 1000:.1f} ms")

    board = Board()
    start = time.perf_counter()
    for key, op in zip(keys, ops, strict=True):
        board.apply(key, op)
    print(f"apply {count} strokes appended: {(time.perf_counter() - start) * 1000:.1f} ms")

    start = time.perf_counter()
    digest = board.hash()
    print(f"hash() of {count} objects: {(time.perf_counter() - start) * 1000:.1f} ms")

    late = []
    for i in range(20):
        op = synthetic_stroke(99, i, rng)
        start = time.perf_counter()
        change = board.apply((10 * (i + 1) + 5,), op)
        late.append(time.perf_counter() - start)
        assert change.late and change.added == (op.id,)
    print(f"late stroke insert near the start: median {statistics.median(late) * 1e3:.3f} ms")

    late_erase = []
    for i in range(20):
        op = Erase(OpId(1, 100_000 + i), (OpId(1 + (i * 5) % 5, i * 5),))
        start = time.perf_counter()
        board.apply((10 * (i + 1) * 5 + 7,), op)
        late_erase.append(time.perf_counter() - start)
    print(f"late erase insert: median {statistics.median(late_erase) * 1e3:.3f} ms")

    start = time.perf_counter()
    board.objects()
    print(f"objects() after late inserts (re-sort): {(time.perf_counter() - start) * 1e3:.2f} ms")
    start = time.perf_counter()
    board.hash()
    print(f"hash() after late inserts: {(time.perf_counter() - start) * 1e3:.1f} ms")

    undo = Undo(OpId(1, 200_000), OpId(1, 0))
    start = time.perf_counter()
    board.apply((10 * count + 100,), undo)
    print(f"undo of the first stroke at the end: {(time.perf_counter() - start) * 1e3:.3f} ms")

    start = time.perf_counter()
    data = board.snapshot()
    print(f"snapshot(): {(time.perf_counter() - start) * 1e3:.1f} ms, {len(data) / 1e6:.1f} MB")
    start = time.perf_counter()
    loaded = Board.from_snapshot(data)
    print(f"from_snapshot(): {(time.perf_counter() - start) * 1e3:.1f} ms")
    assert loaded.hash() == board.hash() != digest


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
