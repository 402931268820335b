"""Plain multicast for benchmarks/bench_transport.py: raw Python UDP or ZeroMQ ``epgm://``.

    python plain_multicast.py receive HOST PORT EXPECTED SENDERS CAP udp|zmq [latency]
    python plain_multicast.py send HOST PORT INDEX COUNT RATE udp|zmq[:KBPS] PAYLOAD_HEX

Standard library and pyzmq only, so that Debian's /usr/bin/python3 (whose python3-zmq has PGM)
runs it. A receiver prints 'ready' once it listens, then 'result {json}' (its count, first and
last receive times, its own CPU clock over that span, per-datagram times with 'latency'); a
sender sends COUNT datagrams (a 6-byte header, then the payload), unpaced if RATE is 0, then a
few END marks, and prints 'result {json}' (its send times when paced)."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time
from contextlib import suppress
from typing import Any

HEADER = struct.Struct("!HI")  # sender index, sequence
END = b"END!"  # a sender's last word (sent a few times)
WARM = b"WARM"  # a ZeroMQ sender's first words: PGM receivers take a while to hear a source
ZMQ_RATE_KBPS = 400_000  # a receiver's; each sender is given its share on the command line


def _own_stdout() -> Any:
    """stdout for our lines alone: C libraries' writes (OpenPGM's warnings) go to stderr."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return out


def plain_receive(args: list[str]) -> None:
    """host port expected senders cap kind(udp|zmq) [latency]: prints 'ready', then a JSON line."""
    host, port, expected, senders, cap, kind = args[:6]
    want, latency = int(expected), len(args) > 6
    out_file = _own_stdout()
    signal.alarm(int(float(cap)) + 1)  # bounded, whatever happens
    times: dict[int, float] = {}
    count, first, last, ends = 0, 0.0, 0.0, 0
    cpu_first = cpu_last = 0.0
    if kind == "zmq":
        import zmq  # type: ignore[import-not-found, unused-ignore]

        context = zmq.Context()
        sock = context.socket(zmq.SUB)
        sock.setsockopt(zmq.RCVHWM, 0)
        sock.setsockopt(zmq.RATE, ZMQ_RATE_KBPS)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        sock.connect(f"epgm://127.0.0.1;{host}:{port}")
        receive = sock.recv
    else:
        plain = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        plain.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        plain.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
        force = getattr(socket, "SO_RCVBUFFORCE", None)  # as whiteboard/net/sockets.py
        if force is not None:
            with suppress(OSError):  # not root: keep what the kernel granted
                plain.setsockopt(socket.SOL_SOCKET, force, 4 * 1024 * 1024)
        plain.bind((host, int(port)))
        membership = socket.inet_aton(host) + socket.inet_aton("127.0.0.1")
        plain.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)

        def receive() -> bytes:
            return plain.recv(65536)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # out of a blocking recv: report what came

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, stop)
    print("ready", file=out_file, flush=True)
    with suppress(KeyboardInterrupt):
        while count < want:
            data = receive()
            now = time.time()
            if data == END:
                ends += 1
                if ends >= int(senders):
                    break
                continue
            if data == WARM:
                continue
            if not count:
                first, cpu_first = now, time.process_time()
            count += 1
            last = now
            if count == want:
                cpu_last = time.process_time()
            if latency:
                index, seq = HEADER.unpack_from(data)
                times[index << 32 | seq] = now
    cpu_last = cpu_last or time.process_time()
    out: dict[str, Any] = {"count": count, "first": first, "last": last}
    out["cpu"] = cpu_last - cpu_first
    out["times"] = list(times.items())
    print("result " + json.dumps(out), file=out_file, flush=True)


def plain_send(args: list[str]) -> None:
    """host port index count rate(0: unpaced) kind payload_hex: sends, then prints send times."""
    host, port, index, count, rate, kind, payload_hex = args
    body, n, pace = bytes.fromhex(payload_hex), int(count), float(rate)
    stamps: list[tuple[int, float]] = []
    out_file = _own_stdout()
    if kind.startswith("zmq"):
        import zmq  # type: ignore[import-not-found, unused-ignore]

        context = zmq.Context()
        sock = context.socket(zmq.PUB)
        sock.setsockopt(zmq.SNDHWM, 0)
        # The default 100 kbit/s would throttle; each sender has its share of the link.
        sock.setsockopt(zmq.RATE, int(kind.partition(":")[2] or ZMQ_RATE_KBPS))
        sock.setsockopt(zmq.LINGER, 2000)
        sock.connect(f"epgm://127.0.0.1;{host}:{port}")
        send = sock.send
        for _ in range(100):  # 2 s: PGM receivers discard what comes before they hear us
            send(WARM)
            time.sleep(0.02)
    else:
        plain = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        plain.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
        plain.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        target = (host, int(port))

        def send(data: bytes) -> None:
            plain.sendto(data, target)

    started = time.time()
    for seq in range(n):
        if pace:
            pause = started + seq / pace - time.time()
            if pause > 0:
                time.sleep(pause)
        send(HEADER.pack(int(index), seq) + body)
        if pace:
            stamps.append((int(index) << 32 | seq, time.time()))
    time.sleep(0.2)
    for _ in range(5):
        send(END)
        time.sleep(0.05)
    print("result " + json.dumps({"times": stamps}), file=out_file, flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["receive"]:
        plain_receive(sys.argv[2:])
    elif sys.argv[1:2] == ["send"]:
        plain_send(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
