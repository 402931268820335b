"""Late join of a large board on loopback, with real processes (issue 18, point 3).

    python benchmarks/bench_join.py [--strokes 10000] [--reps 3] [--transports rmp,mtp]

A ``holder`` (``whiteboard peer --board FILE``: it holds a board of N synthetic strokes, the
ones ``whiteboard peer --send`` draws) starts alone; once it is in the group, a ``joiner``
starts and runs until its board has every stroke. Printed for each run: the joiner's
``join_ms`` (from its transport's start to Ready: the join request, the answer and the whole
image), its wall time to the full board, the image's bytes as the board snapshot and as sent
(the holder's counters), the parts or packets that carried it, and whether both boards hash
alike. Runs of the transports are interleaved, repetition by repetition. A measurement, not a
test: the host's load (``uptime``) is printed with it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whiteboard.board import Board  # noqa: E402
from whiteboard.board.files import save_board  # noqa: E402
from whiteboard.board.synthetic import synthetic_stroke  # noqa: E402

AUTHORS = 5  # synthetic authors, as several members drew the board
HOLDER_SETTLE_S = 3.0  # the holder is alone in the group by then (rmp lan: 5 tries x 0.3 s)
RUN_CAP_S = 60


def build_board(strokes: int, seed: int = 1) -> Board:
    rng = random.Random(seed)
    board = Board()
    for i in range(strokes):
        board.apply((10 * (i + 1),), synthetic_stroke(1 + i % AUTHORS, i + 1, rng))
    return board


def peer(transport: str, group: str, name: str, *args: str) -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "whiteboard", "peer", "--transport", transport,
        "--group", group, "--iface", "127.0.0.1", "--ttl", "0", "--name", name,
        "--json", "--no-presence", "--no-log", *args,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )


def report(process: subprocess.Popen[str], name: str) -> dict[str, Any]:
    out, err = process.communicate(timeout=RUN_CAP_S + 30)
    if process.returncode != 0 or not out.strip():
        raise RuntimeError(f"{name} exited with {process.returncode}: {err.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    return result


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(transport: str, board_file: Path, strokes: int, params: list[str]) -> dict[str, Any]:
    rng = random.SystemRandom()
    cpu_before = _children_cpu()
    extra = [arg for param in params for arg in ("--param", param)]
    group = f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}:{rng.randrange(20000, 32768)}"
    roles = ("--role", "master") if transport == "mtp" else ()
    holder = peer(
        transport, group, "holder", "--board", str(board_file), *roles, *extra,
        "--duration", str(RUN_CAP_S),
    )  # fmt: skip
    try:
        time.sleep(HOLDER_SETTLE_S)
        roles = ("--role", "consumer") if transport == "mtp" else ()
        started = time.perf_counter()
        joiner = peer(
            transport, group, "joiner", *roles, *extra, "--until-delivered", str(strokes),
            "--linger", "0", "--duration", str(RUN_CAP_S),
        )  # fmt: skip
        late = report(joiner, "joiner")
        spawn_to_board_s = time.perf_counter() - started
        joiner_cpu_s = _children_cpu() - cpu_before
    finally:
        holder.terminate()  # it leaves properly on SIGTERM and prints its report
    held = report(holder, "holder")
    holder_cpu_s = _children_cpu() - cpu_before - joiner_cpu_s
    counters = held["counters"]
    return {
        "transport": transport,
        "join_ms": late["join_ms"],
        "joiner_elapsed_s": late["elapsed_s"],
        "spawn_to_board_s": round(spawn_to_board_s, 3),
        "delivered": late["delivered_total"],
        "same_hash": late["board_hash"] == held["board_hash"],
        # CPU seconds (user + system) of each whole process, start-up and leaving included.
        "joiner_cpu_s": round(joiner_cpu_s, 3),
        "holder_cpu_s": round(holder_cpu_s, 3),
        # rmp: image_*; mtp: state_* (the board message, TR §3.4).
        "image_state_bytes": counters.get("image_state_bytes", counters.get("state_bytes")),
        "image_bytes_sent": counters.get("image_bytes_sent", counters.get("state_bytes_sent")),
        "image_parts_sent": counters.get("image_parts_sent", counters.get("state_packets_sent")),
        "failures": late["failures"] + held["failures"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strokes", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--transports", default="rmp,mtp")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="T:NAME=VALUE",
        help="a transport parameter for transport T's members (repeatable), e.g. mtp:window=128",
    )
    parser.add_argument("--json", action="store_true", help="one JSON line per run")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()} (uptime: {subprocess.getoutput('uptime').strip()})")
    board = build_board(args.strokes)
    snapshot = board.snapshot()
    print(f"board: {args.strokes} strokes, snapshot {len(snapshot):,} bytes")
    transports = args.transports.split(",")
    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in transports}
    with tempfile.TemporaryDirectory() as folder:
        board_file = Path(folder) / "board.wbd"
        save_board(board_file, board)
        for rep in range(args.reps):
            for transport in transports:
                params = [p.split(":", 1)[1] for p in args.param if p.startswith(transport + ":")]
                run = one_run(transport, board_file, args.strokes, params)
                runs[transport].append(run)
                print(json.dumps(run) if args.json else f"rep {rep + 1}: {run}", flush=True)
    for transport, done in runs.items():
        joins = [r["join_ms"] for r in done if r["join_ms"] is not None]
        boards = [r["spawn_to_board_s"] for r in done]
        print(
            f"{transport}: join_ms median {statistics.median(joins) if joins else None} "
            f"(all {joins}); spawn to full board median {statistics.median(boards):.2f} s; "
            f"image {done[-1]['image_state_bytes']} B as snapshot, "
            f"{done[-1]['image_bytes_sent']} B sent in {done[-1]['image_parts_sent']} parts; "
            f"same hash in {sum(r['same_hash'] for r in done)}/{len(done)}"
        )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
