"""A live RMP member under a forger: python benchmarks/bench_forged.py [--packets N] [--phantoms K].

Issue 17: well-formed packets from forged stations (data with gaps to NACK, NACKs and NACK
ranges naming a real member's packets, retransmissions naming further phantoms, join requests,
control packets claiming far-off numbers) cost a member far more than they cost the sender. This
runs, on loopback multicast (TTL 0, a random group in 239.255.0.0/16):

- a member (`whiteboard peer --transport rmp --send 0`, its session log kept),
- a real station drawing 100 strokes a second (`whiteboard peer --send ...`),
- then a forger (this file, `--forge`) sending N forged packets from K phantom station ids,

and prints the member's CPU seconds (from /proc) and its longest pause in serving the real
station (the largest gap between two deliveries of the real station's strokes, from the
member's session log) over the attack, next to the same figures over an equally long window
just before it, without the forger: the machine's own stalls. Then it sends the member SIGTERM
and prints how long it took to start leaving (its "left" record) and to exit.

Goal (issue 17): under 1 s of CPU for 10,000 packets from 1,000 phantoms, and no pause over
100 ms beyond the machine's own. Not part of the test suite (tests/rmp/test_core_bounds.py
checks the bounds deterministically; tests/net/test_peer_signal.py the signal)."""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from tempfile import TemporaryDirectory

from rmp.wire import (
    Confirm,
    Data,
    Join,
    Nack,
    NackRange,
    Retransmit,
    RmpPacket,
    decode,
    encode,
    ntp_middle32,
)
from whiteboard.presence import is_presence
from whiteboard.sessionlog.format import DeliveredRecord, FailureRecord
from whiteboard.sessionlog.reader import read_log

ROOT = Path(__file__).resolve().parents[1]
RATE = 100  # the real station's strokes a second

# -- forged packets ------------------------------------------------------------------------------

NACK_OPTIONS = 8  # NACK options per forged NACK packet
KINDS = ("data", "nack", "nack_range", "retransmit", "join", "control")


def forged_packets(
    count: int, phantoms: int, real: int, seed: int = 0, now: float | None = None
) -> list[bytes]:
    """``count`` datagrams from ``phantoms`` phantom station ids, round robin over the kinds;
    ``real`` is the identifier of a real member whose packets the NACKs and confirmations name."""
    rng = random.Random(seed)
    stamp = ntp_middle32(time.time() if now is None else now)
    ids = [0x7000_0000 + rng.randrange(1, 2**24) for _ in range(phantoms)]
    out: list[bytes] = []
    for index in range(count):
        source = ids[index % phantoms]
        kind = KINDS[(index // phantoms) % len(KINDS)]
        seq = rng.randrange(2, 4000)
        out.append(encode(_forge(kind, source, seq, real, ids, rng, stamp)))
    return out


def _forge(
    kind: str, source: int, seq: int, real: int, ids: list[int], rng: random.Random, stamp: int
) -> RmpPacket:
    data = b"x" * rng.randrange(20, 400)
    if kind == "data":
        return RmpPacket(seq, stamp, (Data(),), data, source=source)
    if kind == "nack":
        options = tuple(Nack(255, rng.randrange(1, 2**16), real) for _ in range(NACK_OPTIONS))
        return RmpPacket(seq, stamp, options, source=source)
    if kind == "nack_range":
        options = tuple(
            NackRange(255, rng.randrange(1, 2**16), real, 30_000) for _ in range(NACK_OPTIONS)
        )
        return RmpPacket(seq, stamp, options, source=source)
    if kind == "retransmit":
        other = rng.choice(ids)
        inner = RmpPacket(rng.randrange(2, 60_000), stamp, (Data(),), data, source=other)
        return RmpPacket(seq, stamp, (Retransmit(other, inner),), source=source)
    if kind == "join":
        return RmpPacket(seq, stamp, (Join(255),), source=source)
    confirms = (Confirm(rng.randrange(1, 2**16), real), Confirm(seq, rng.choice(ids)))
    return RmpPacket(rng.randrange(1, 2**16), stamp, confirms, source=source)


# -- the forger (a process of its own) -----------------------------------------------------------


def forge(group: str, port: int, count: int, phantoms: int, real: int, rate: float) -> None:
    packets = forged_packets(count, phantoms, real)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
    sock.bind(("127.0.0.1", 0))
    started = time.monotonic()
    for index, data in enumerate(packets):
        pause = started + index / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        sock.sendto(data, (group, port))
    sock.close()


# -- the run -------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peer(group: str, name: str, log_dir: str, *args: str) -> subprocess.Popen[str]:
    profile = os.environ.get(f"BENCH_FORGED_PROFILE_{name.upper()}")
    command = [
        sys.executable,
        *(["-m", "cProfile", "-o", profile] if profile else []),
        "-m",
        "whiteboard",
        "peer",
        "--transport",
        "rmp",
        "--group",
        group,
        "--iface",
        "127.0.0.1",
        "--ttl",
        "0",
        "--name",
        name,
        "--json",
        "--log-dir",
        log_dir,
        *args,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )


def real_station(group: str, port: int, timeout: float = 30.0) -> tuple[int, int]:
    """Listen to the group until a stroke shows the drawing station: (its id, its S_n)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((group, port))
    membership = socket.inet_aton(group) + socket.inet_aton("127.0.0.1")
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
    sock.settimeout(1.0)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            packet = decode(data)
            # A stroke: the member sends presences too, and it is not the station served.
            if (
                packet.data is not None
                and isinstance(packet.options[-1], Data)
                and not is_presence(packet.data)
            ):
                return packet.source, packet.seq
    finally:
        sock.close()
    raise SystemExit("no station drew within 30 s")


def longest_gap(times: list[float], start: float, end: float) -> float:
    """The longest time in [start, end] without a delivery of the real station's strokes:
    the member's stalls, and the drawing station's (it is attacked too)."""
    inside = [t for t in times if start <= t <= end]
    points = [start, *inside, end]
    return max(b - a for a, b in pairwise(points))


def gap_report(records: tuple[object, ...], real: int) -> None:
    """With BENCH_FORGED_GAPS set: what the member recorded around its longest delivery gap."""
    if not os.environ.get("BENCH_FORGED_GAPS"):
        return
    times = [r.t_us for r in records if isinstance(r, DeliveredRecord) and r.origin == real]
    start, end = max(pairwise(times), key=lambda pair: pair[1] - pair[0])
    print(f"longest gap: {(end - start) / 1000:.0f} ms")
    kinds: dict[str, int] = {}
    for record in records:
        t_us = getattr(record, "t_us", None)
        if t_us is not None and start <= t_us <= end:
            name = getattr(record, "name", type(record).__name__)
            kinds[name] = kinds.get(name, 0) + 1
    print(f"  recorded meanwhile: {kinds}")
    for record in records:
        t_us = getattr(record, "t_us", 0)
        if start - 200_000 <= t_us <= end + 200_000 and (
            isinstance(record, FailureRecord)
            or (isinstance(record, DeliveredRecord) and record.origin == real)
        ):
            print(f"  {(t_us - start) / 1000:+8.0f} ms {record}"[:160])


def run(packets: int, phantoms: int, forge_rate: float, window: float) -> None:
    rng = random.Random()
    host = f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}"
    port = rng.randrange(20_000, 60_000)
    group = f"{host}:{port}"
    strokes = int(RATE * (window * 3 + 20))
    with TemporaryDirectory() as log_dir:
        member = peer(group, "member", log_dir, "--send", "0", "--duration", "300")
        time.sleep(1.0)
        drawer = peer(
            group,
            "real",
            log_dir,
            "--send",
            str(strokes),
            "--rate",
            str(RATE),
            "--wait-members",
            "1",
            "--duration",
            "300",
            "--no-log",
        )
        real, _ = real_station(host, port)
        time.sleep(2.0)  # drawing steadily
        t_base = time.time()
        cpu_base, drawer_base = cpu_seconds(member.pid), cpu_seconds(drawer.pid)
        time.sleep(window)
        t_attack = time.time()
        cpu_attack, drawer_attack = cpu_seconds(member.pid), cpu_seconds(drawer.pid)
        forger = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--forge",
                host,
                str(port),
                str(packets),
                str(phantoms),
                str(real),
                str(forge_rate),
            ],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        forger.wait()
        forged_s = time.time() - t_attack
        cpu_flood = cpu_seconds(member.pid) - cpu_attack
        time.sleep(max(0.0, window - forged_s))
        t_end = time.time()
        cpu_end, drawer_end = cpu_seconds(member.pid), cpu_seconds(drawer.pid)
        member.send_signal(signal.SIGTERM)
        t_signal = time.time()
        out, err = member.communicate(timeout=60)
        exit_s = time.time() - t_signal
        drawer.send_signal(signal.SIGTERM)
        drawer.communicate(timeout=60)
        report = json.loads(out)
        log = read_log(report["log"])
        gap_report(log.records, real)
        times = [
            r.t_us / 1e6 for r in log.records if isinstance(r, DeliveredRecord) and r.origin == real
        ]
    base_cpu, attack_cpu = cpu_attack - cpu_base, cpu_end - cpu_attack
    base_gap = longest_gap(times, t_base, t_attack)
    attack_gap = longest_gap(times, t_attack, t_end)
    counters = report["counters"]
    refused = {
        k: counters.get(k, 0)
        for k in (
            "history_given_up",
            "far_jumps_refused",
            "gaps_refused",
            "repairs_refused",
            "joins_refused",
            "members_refused",
            "strangers_throttled",
            "hearsay_refused",
        )
    }
    print(
        f"forger: {packets:,} packets from {phantoms:,} phantom stations in {forged_s:.2f} s; "
        f"windows of {t_end - t_attack:.1f} s"
    )
    print(
        f"member CPU: {attack_cpu:.2f} s under attack, {base_cpu:.2f} s without "
        f"(+{attack_cpu - base_cpu:.2f} s); {cpu_flood:.2f} s of it while the forger sent"
    )
    print(
        f"the drawing station's CPU (attacked too): {drawer_end - drawer_attack:.2f} s under "
        f"attack, {drawer_attack - drawer_base:.2f} s without"
    )
    print(
        f"longest pause serving the real station: {attack_gap * 1000:.0f} ms under attack, "
        f"{base_gap * 1000:.0f} ms without (+{(attack_gap - base_gap) * 1000:.0f} ms; "
        f"strokes every {1000 / RATE:.0f} ms)"
    )
    print(f"SIGTERM: member exited after {exit_s:.2f} s (leaving lingers up to leave_linger)")
    print(
        f"member counters: datagrams_received {counters['datagrams_received']:,}, "
        f"delivered {counters['delivered']:,}, refused/given up {refused}"
    )
    if err.strip():
        print(f"member stderr: {err.strip()[:500]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packets", type=int, default=10_000)
    parser.add_argument("--phantoms", type=int, default=1_000)
    parser.add_argument("--forge-rate", type=float, default=5_000.0, help="packets a second")
    parser.add_argument("--window", type=float, default=8.0, help="seconds measured, each")
    parser.add_argument("--forge", nargs=6, metavar=("HOST", "PORT", "N", "K", "REAL", "RATE"))
    args = parser.parse_args()
    if args.forge:
        host, port, count, phantoms, real, rate = args.forge
        forge(host, int(port), int(count), int(phantoms), int(real), float(rate))
        return
    run(args.packets, args.phantoms, args.forge_rate, args.window)


if __name__ == "__main__":
    main()
