"""Live pointers at scale (issue 19): ``MEMBERS`` headless members on loopback multicast, each
moving a synthetic pointer ``--rate`` times a second on its transport's side channel
(``whiteboard peer --cursor-rate``), for raw, RMP and MTP; and the canvas's cost of a frame
with that many pointers moving, in this process (Qt offscreen).

    .venv/bin/python benchmarks/bench_cursors.py [--members 10] [--rate 30] [--seconds 10]

Per transport it prints the pointers' latency from the sender's clock to the receiver's
(p50, p90 over every member's, goal p50 < 5 ms and p90 < 20 ms), the share of each member's
CPU that the pointers cost (its CPU with pointers minus the same run without, over the run's
length, goal < 5% of a core), and how much of what was sent arrived. The members share this
machine's CPUs, so the figures include their contention, as they would on a real host only
if it ran ten members. The frame cost is the time to repaint what ten moving pointers
changed (the canvas under them from its tiles, and the pointers), against the same repaint
without pointers, over a board of 1,000 strokes (goal < 2 ms a frame).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

TRANSPORTS = ("raw", "rmp", "mtp")
MASTER_HEAD_START_S = 1.5


def peers(transport: str, members: int, rate: float, seconds: float) -> list[dict[str, object]]:
    group = f"239.255.{random.randrange(1, 255)}.{random.randrange(1, 255)}:" + str(
        random.randrange(20000, 32000)
    )
    processes = []
    for index in range(members):
        role: Sequence[str] = ()
        duration = seconds
        if transport == "mtp":
            role = ("--role", "master" if index == 0 else "producer")
            if index == 0:  # started MASTER_HEAD_START_S early, it leaves with the others
                duration += MASTER_HEAD_START_S
        command = [
            sys.executable, "-m", "whiteboard", "peer", "--transport", transport, "--group",
            group, "--iface", "127.0.0.1", "--ttl", "0", "--name", f"m{index}", "--json",
            "--no-log", "--cursor-rate", str(rate), "--duration", str(duration), *role,
        ]  # fmt: skip
        processes.append(subprocess.Popen(command, stdout=subprocess.PIPE, text=True))
        if transport == "mtp" and index == 0:
            time.sleep(MASTER_HEAD_START_S)  # the master founds the web first
    reports = []
    for process in processes:
        out, _ = process.communicate(timeout=seconds + 120)
        reports.append(json.loads(out))
    return reports


def pointer_share(
    moving: list[dict[str, object]], still: list[dict[str, object]], rate: float
) -> float:
    """The share of a core a member spends on pointers while they move: its CPU beyond what
    a member without pointers spends in as long a run, over the seconds its pointer moved
    (members join at different times, and the first pointers go only once joined)."""
    idle = statistics.fmean(number(r, "cpu_s") / number(r, "elapsed_s") for r in still)
    spent = sum(number(r, "cpu_s") - idle * number(r, "elapsed_s") for r in moving)
    moved_s = sum(number(r, "cursors_sent") / rate for r in moving)
    return spent / moved_s


def number(report: dict[str, object], key: str) -> float:
    value = report[key]
    assert isinstance(value, int | float), (key, value)
    return float(value)


def pointers_row(transport: str, members: int, rate: float, seconds: float) -> None:
    moving = peers(transport, members, rate, seconds)
    still = peers(transport, members, 0.0, seconds)
    latencies = []
    heard = sent = 0
    for report in moving:
        latency = report["cursor_latency_ms"]
        assert isinstance(latency, dict)
        if latency["p50"] is not None:
            latencies.append((latency["p50"], latency["p90"]))
        received = report["cursors_received"]
        assert isinstance(received, dict)
        heard += sum(received.values())
        sent += int(number(report, "cursors_sent"))
    share = pointer_share(moving, still, rate)
    p50 = statistics.median(p for p, _ in latencies) if latencies else float("nan")
    p90 = statistics.median(p for _, p in latencies) if latencies else float("nan")
    arrived = heard / max(1, sent * (members - 1))
    print(
        f"{transport:<4} latency p50 {p50:6.2f} ms  p90 {p90:6.2f} ms (medians over members)  "
        f"pointer CPU {share * 100:5.1f}% of a core per member  arrived {arrived:.3f}  "
        f"({sent:,} sent, load {os.getloadavg()[0]:.2f})"
    )


def frame_cost(members: int, frames: int = 300) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from whiteboard.app.canvas import BoardCanvas
    from whiteboard.app.pointers import CursorOverlay
    from whiteboard.board import Board, OpId
    from whiteboard.board.synthetic import synthetic_stroke
    from whiteboard.pointer import PointerPosition

    app = QApplication.instance() or QApplication([])
    board = Board()
    rng = random.Random("frames")
    for n in range(1, 1001):
        board.apply((n,), synthetic_stroke(7, n, rng))
    canvas = BoardCanvas(lambda: board, lambda: OpId(1, 1))
    canvas.resize(1200, 800)
    canvas.show()
    canvas.fit_to_content()
    clock = [0.0]
    overlay = CursorOverlay(canvas, lambda m: (f"member {m}", 0xFF1E88E5), lambda: clock[0])
    canvas.finish_rendering()
    for _ in range(20):
        app.processEvents()

    def run(with_pointers: bool) -> list[float]:
        times = []
        for frame in range(frames):
            clock[0] += 1 / 60
            started = time.perf_counter()
            for member in range(members):
                x = 100.0 + 40 * member + 30 * (frame % 20)
                y = 100.0 + 20 * member + 10 * (frame % 7)
                if with_pointers:
                    overlay.show_position(member, PointerPosition(x, y, True, 0))
                else:  # the same areas repainted, without a pointer in them
                    wx, wy = canvas.view.to_widget(x, y)
                    canvas.update(round(wx) - 3, round(wy) - 3, 263, 48)
            app.processEvents()
            times.append((time.perf_counter() - started) * 1000)
        return times

    plain = statistics.median(run(False))
    moving = statistics.median(run(True))
    print(
        f"canvas frame with {members} pointers moving: {moving:.3f} ms (median of {frames}); "
        f"the same areas repainted without pointers {plain:.3f} ms; x{moving / plain:.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--rate", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--transports", nargs="+", default=list(TRANSPORTS))
    parser.add_argument("--no-frames", dest="frames", action="store_false")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.members} members at {args.rate}/s")
    for transport in args.transports:
        pointers_row(transport, args.members, args.rate, args.seconds)
    if args.frames:
        frame_cost(args.members)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
