"""Replay speed: python benchmarks/bench_replay.py [--ops N] [--clear-every K] [--seeks S].

Writes a synthetic session log of N ops (100,000 by default) from five members with the
sessionlog writer: mostly drawings (whiteboard/board/synthetic.py), some erases, moves and
undos, ~2% delivered late (inserted before ops already applied), idle minutes now and then,
presences and NACK/retransmission events; with --clear-every K a CLEAR every K ops, so that
the board shows at most K objects (a long session on a board that is wiped now and then).

Then it prints, each as median and max over S random seeks (50 by default):

* loading: reading and decoding the log, building the keyframes; memory (RSS) taken;
* a seek in the core: ``Replay.seek`` (keyframe copy, steps after it, the difference);
* opening the window: its keyframes, the canvas bounding and indexing every drawing of the
  recording, the first picture;
* a seek in the window (1200x800, offscreen): the board plus the canvas told what changed,
  then the first frame (the canvas paints what it can in its frame budget and finishes the
  rest between events, as in the live app) and how much of that the garbage collector took,
  then every tile in view rendered and grabbed as an image (the whole picture at the
  window's size; --render-seeks of them, it is slow).

Target (issue "Replay in the app"): every seek under 200 ms.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from whiteboard.board import Clear, Erase, Move, Op, OpId, Undo, encode_op, synthetic_op
from whiteboard.presence import BoardFingerprint, Presence, encode_presence
from whiteboard.replay import Replay, Timeline, load_timeline
from whiteboard.sessionlog import (
    DeliveredRecord,
    MemberRecord,
    ProtocolRecord,
    SessionLogWriter,
    new_header,
)

MEMBERS = (0x1001, 0x2002, 0x3003, 0x4004, 0x5005)
START_S = 1_710_000_000.0
WIDTH, HEIGHT = 1200, 800


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def write_log(path: Path, count: int, clear_every: int, seed: int) -> None:
    rng = random.Random(seed)
    header = new_header(
        transport="rmp",
        params={"profile": "lan"},
        group="239.255.9.9:20000",
        iface=None,
        ttl=1,
        member_id=MEMBERS[0],
        member_name="member-1",
        now=START_S,
    )
    counters = dict.fromkeys(MEMBERS, 0)
    drawn: list[OpId] = []
    now = START_S + 1.0
    with SessionLogWriter(path, header) as writer:
        for member in MEMBERS[1:]:
            writer.append(MemberRecord(round(now * 1e6), member, "active"))
        for i in range(1, count + 1):
            author = rng.choice(MEMBERS)
            counters[author] += 1
            op_id = OpId(author, counters[author])
            roll = rng.random()
            op: Op
            if clear_every and i % clear_every == 0:
                op = Clear(op_id)
            elif roll < 0.03 and drawn:
                op = Erase(op_id, (rng.choice(drawn[-200:]),))
            elif roll < 0.06 and drawn:
                op = Move(op_id, (rng.choice(drawn[-200:]),), rng.uniform(-50, 50), 10.0)
            elif roll < 0.08 and drawn:
                own = [d for d in drawn[-50:] if d.author == author]
                op = Undo(op_id, own[-1]) if own else synthetic_op(author, op_id.counter, rng)
            else:
                op = synthetic_op(author, op_id.counter, rng)
            if not isinstance(op, Clear | Erase | Move | Undo):
                drawn.append(op.id)
            # ~2% late: ordered before the op delivered just before it.
            late = i > 2 and rng.random() < 0.02
            key = (10 * i - 15,) if late else (10 * i,)
            now += rng.lognormvariate(-1.2, 0.8)  # ~0.3 s apart
            if rng.random() < 0.002:
                now += rng.uniform(60.0, 300.0)  # an idle stretch
            t_us = round(now * 1e6)
            writer.append(DeliveredRecord(t_us, author, key, t_us - 2000, late, encode_op(op)))
            if i % 50 == 0:
                fingerprint = BoardFingerprint(i, key, "0" * 64)
                presence = encode_presence(Presence(f"m{author:x}", 0xFF000000, fingerprint))
                writer.append(
                    DeliveredRecord(t_us + 1, author, (10 * i + 1,), t_us, False, presence)
                )
            if rng.random() < 0.01:
                writer.append(ProtocolRecord(t_us + 2, "nack_sent", {"source": author}))
                writer.append(ProtocolRecord(t_us + 3, "retransmission", {"source": author}))
        writer.close(now + 1.0)


def report(name: str, seconds: list[float]) -> None:
    ms = [s * 1000.0 for s in seconds]
    under = sum(m < 200.0 for m in ms)
    print(
        f"{name}: median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms "
        f"({len(ms)} seeks, {under} under 200 ms)"
    )


class CollectorClock:
    """Time spent in Python's cyclic garbage collector from now on (gc.callbacks)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--clear-every", type=int, default=0, metavar="K")
    parser.add_argument("--seeks", type=int, default=50)
    parser.add_argument("--render-seeks", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    path = folder / "session.wblog"
    start = time.perf_counter()
    write_log(path, args.ops, args.clear_every, args.seed)
    print(
        f"log: {args.ops:,} ops, {path.stat().st_size / 2**20:.1f} MiB "
        f"(written in {time.perf_counter() - start:.1f} s)"
        + (f", a CLEAR every {args.clear_every:,} ops" if args.clear_every else "")
    )

    base = rss_mb()
    start = time.perf_counter()
    timeline = load_timeline(path)
    loaded = time.perf_counter() - start
    after_load = rss_mb()
    print(
        f"load: read and decode {loaded:.2f} s (+{after_load - base:.0f} MiB); "
        f"{len(timeline.steps):,} steps over {timeline.duration_us / 3.6e9:.1f} h"
    )
    rng = random.Random(args.seed)
    moments = [rng.randint(timeline.start_us, timeline.end_us) for _ in range(args.seeks)]
    core(timeline, moments)
    in_window(timeline, moments, args.render_seeks)


def core(timeline: Timeline, moments: list[int]) -> None:
    """Seeks in the core: the board at t, and what the canvas is to be told."""
    before = rss_mb()
    replay = Replay(timeline)
    start = time.perf_counter()
    replay.prepare()
    prepared = time.perf_counter() - start
    keyframes = replay.keyframes
    print(
        f"keyframes: {prepared:.2f} s, +{rss_mb() - before:.0f} MiB, "
        f"{len(keyframes.counts)} keyframes {keyframes.spacing:,} steps apart"
    )
    replay.seek(timeline.end_us)
    print(f"board at the end: {len(replay.board.objects()):,} objects shown")
    report(
        "core seek, anywhere (before gc.freeze)",
        [timed(lambda t=t: replay.seek(t)) for t in moments],
    )
    gc.freeze()  # as the app does once a recording is loaded (replay_window.prepared_replay)
    report("core seek, anywhere", [timed(lambda t=t: replay.seek(t)) for t in moments])
    times = timeline.times
    back: list[float] = []
    for t in moments:  # one change back from there: restore a keyframe, replay up to it
        replay.seek(t)
        earlier = times[max(0, replay.steps_applied - 2)]
        back.append(timed(lambda earlier=earlier: replay.seek(earlier)))
    report("core seek, one change back", back)
    report("core board_at(t) alone", [timed(lambda t=t: replay.board_at(t)) for t in moments])


def in_window(timeline: Timeline, moments: list[int], render_seeks: int) -> None:
    """Seeks in the replay window, offscreen, at WIDTH x HEIGHT."""
    from PySide6.QtWidgets import QApplication

    from whiteboard.app.replay_window import ReplayWindow, prepared_replay

    app = QApplication.instance() or QApplication(sys.argv[:1])
    start = time.perf_counter()
    replay = prepared_replay(timeline)
    keyframes = time.perf_counter() - start
    before = rss_mb()
    window = ReplayWindow(timeline, replay=replay)
    made = time.perf_counter() - start - keyframes
    window.resize(WIDTH, HEIGHT)
    window.show()
    app.processEvents()
    window.fit_recording()
    window.canvas.finish_rendering()
    print(
        f"window opened in {time.perf_counter() - start:.2f} s: keyframes {keyframes:.2f} s, "
        f"the window {made:.2f} s (every drawing bounded and indexed, "
        f"+{rss_mb() - before:.0f} MiB), the first picture rendered"
    )
    seek_times, frame_times, full_times, collecting = [], [], [], []
    collector = CollectorClock()
    for index, t in enumerate(moments):
        before = collector.seconds
        seek_times.append(timed(lambda t=t: window.seek_to(t)))
        frame_times.append(seek_times[-1] + timed(window.canvas.repaint))
        collecting.append(collector.seconds - before)
        if index < render_seeks:
            image_time = timed(lambda: (window.canvas.finish_rendering(), window.canvas.grab()))
            full_times.append(frame_times[-1] + image_time)
        else:
            app.processEvents()  # the rest of the tiles, between seeks, as between events
    report("window seek (board + canvas told)", seek_times)
    report("window seek to the first frame painted", frame_times)
    report("  of which the garbage collector", collecting)
    if full_times:
        report(f"window seek to the whole {WIDTH}x{HEIGHT} picture rendered", full_times)
    opened = rss_mb()
    for t in moments * 3:  # memory stays put however long one seeks (each seek freezes)
        window.seek_to(t)
        app.processEvents()
    print(f"memory after {len(moments) * 3} more seeks: {rss_mb() - opened:+.0f} MiB")
    window.close()


if __name__ == "__main__":
    main()
