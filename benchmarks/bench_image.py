"""A picture pasted into a session: python benchmarks/bench_image.py [--transport rmp|mtp] [--json]

Issue 20's "Done when": a 1 MiB image pasted into a 4-member session on loopback reaches
everyone in < 1 s, on RMP and on MTP.

For each transport, 4 members as real processes (this file run with ``member``: a
``whiteboard.net.runtime`` transport on real sockets and a ``whiteboard.replica.Replica``, as
the app and ``whiteboard peer`` have) join one session on loopback multicast (a random group in
239.255.0.0/16, TTL 0, iface 127.0.0.1, the ``lan`` profile; for MTP the sender is the master,
started first, the others producers as the app's members are). Once every member sees the
three others active, the sender pastes a picture as the app does (whiteboard/app/
image_insert.py): a ``Blob`` op of its bytes and the ``Image`` op showing it, each made into a
payload by ``Replica.payload_of`` and sent; each member applies what it is delivered through
``Replica.handle``. The time is from the paste (before the ``Blob`` is made: its SHA-256, the
encoding and the sends are in it) to the moment the last member has applied both ops (all four,
the sender's own deliveries included; the three others alone are printed too), on the host's
monotonic clock, which every process shares. Repeated ``--reps`` times (5) with new bytes each
time (a PNG signature and random bytes, 1 MiB in all: the board never decodes them).

Printed per transport: median and max of that time against the goal (< 1 s), the datagrams the
sender and all members sent per paste (transport counters), repairs (NACKs, retransmissions)
and sends the kernel refused; and as a reference, before each paste, raw Python UDP multicast
moving the same 1 MiB in 1,400-byte datagrams (unpaced ``sendto`` from this process) to 3
receivers (benchmarks/plain_multicast.py, blocking ``recv``), from the first ``sendto`` to the
last receiver's last datagram, with the ratio. The machine's load is printed with them.

Every wait is bounded (joining 30 s, a paste 20 s, leaving 10 s); members are killed on the way
out whatever happens. ``--profile DIR`` runs every member under cProfile and writes
DIR/<transport>-m<i>.prof. A measurement, not a test. The figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import signal
import socket
import statistics
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLAIN = Path(__file__).with_name("plain_multicast.py")
MEMBERS = 4
PICTURE_BYTES = 1 << 20
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RAW_DATAGRAM = 1400  # the reference's datagrams, header included
RAW_HEADER = 6  # plain_multicast.py's (sender index, sequence)
GOAL_S = 1.0
JOIN_TIMEOUT_S = 30.0
PASTE_TIMEOUT_S = 20.0
LEAVE_TIMEOUT_S = 10.0
MEMBER_CAP_S = 600.0  # a member leaves by itself after this, whatever the parent does
SETTLE_S = 0.5  # between pastes: the last one's acknowledgements and heartbeats die down
SUMMED = ("datagrams_sent", "nacks_sent", "retransmissions")

Row = dict[str, Any]

# -- a member (a child process) -------------------------------------------------------------------


def member_main(args: argparse.Namespace) -> None:
    """One member: joins, reports on the control socket, pastes when told, leaves when told."""
    from whiteboard.board import Blob, Change, Image, OpId
    from whiteboard.net.reactor import SelectorReactor
    from whiteboard.net.runtime import NetConfig, open_transport
    from whiteboard.net.sockets import GroupAddress
    from whiteboard.replica import Replica
    from whiteboard.transport.events import Delivered, Event, Failure, MemberChanged, Ready
    from whiteboard.transport.interface import MemberState

    control = socket.socket(fileno=args.control)
    control.setblocking(False)
    reactor = SelectorReactor()
    replica = Replica()
    members: dict[int, MemberState] = {}
    state = {"finished": False, "counter": 0, "active": -1}
    inbox = bytearray()

    def tell(**fields: Any) -> None:
        control.setblocking(True)
        control.sendall(json.dumps(fields).encode() + b"\n")
        control.setblocking(False)

    def on_event(event: Event) -> None:
        if isinstance(event, Delivered):
            change = replica.handle(event, transport)
            now = time.monotonic()
            if isinstance(change, Change) and not change.duplicate:
                op = replica.board.op(change.op_id)
                if isinstance(op, Blob | Image):
                    kind = "blob" if isinstance(op, Blob) else "image"
                    tell(e=kind, digest=op.digest.hex(), t=now, late=change.late)
            return
        replica.handle(event, transport)  # a board state asked for or given
        if isinstance(event, Ready):
            tell(e="ready", id=transport.member_id)
        elif isinstance(event, MemberChanged):
            members[event.member] = event.state
            active = sum(
                1
                for member, s in members.items()
                if member != transport.member_id and s is MemberState.ACTIVE
            )
            if active != state["active"]:
                state["active"] = active
                tell(e="active", n=active)
        elif isinstance(event, Failure):
            tell(e="failure", reason=event.reason)

    def paste(seed: int) -> None:
        """As the app's ImageInserter.insert_bytes: the BLOB, then the IMAGE, each sent."""
        rng = random.Random(seed)
        data = PNG_SIGNATURE + rng.randbytes(PICTURE_BYTES - len(PNG_SIGNATURE))
        started = time.monotonic()
        me = transport.member_id
        blob = Blob(OpId(me, state["counter"] + 1), data)
        image = Image(OpId(me, state["counter"] + 2), blob.digest, 100.0, 100.0, 400.0, 300.0)
        state["counter"] += 2
        payloads = [replica.payload_of(blob), replica.payload_of(image)]
        encoded = time.monotonic()
        for payload in payloads:
            transport.send(payload)
        tell(
            e="sent",
            digest=blob.digest.hex(),
            t=started,
            encode_s=encoded - started,
            send_s=time.monotonic() - encoded,
            payload_bytes=[len(p) for p in payloads],
        )

    def on_command() -> None:
        try:
            chunk = control.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:  # the parent is gone: leave
            leave()
            return
        inbox.extend(chunk)
        while b"\n" in inbox:
            line, _, rest = bytes(inbox).partition(b"\n")
            inbox[:] = rest
            command, _, argument = line.decode().partition(" ")
            if command == "paste":
                paste(int(argument))
            elif command == "counters":
                tell(e="counters", c=transport.counters(), send_errors=carrier.stats.send_errors)
            elif command == "leave":
                leave()

    def leave() -> None:
        reactor.remove_reader(control)
        if not state["finished"] and not transport.finished:
            transport.close()

    def done() -> None:
        state["finished"] = True

    params: dict[str, object] = {"profile": "lan"}
    if args.role:
        params["role"] = args.role
    config = NetConfig(group=GroupAddress.parse(args.group), iface="127.0.0.1", ttl=0)
    transport, carrier = open_transport(
        args.transport, config, reactor, on_event, params, on_finished=done
    )
    reactor.add_reader(control, on_command)
    reactor.call_later(MEMBER_CAP_S, leave)
    transport.open()
    try:
        reactor.run(stop=lambda: bool(state["finished"]), timeout=MEMBER_CAP_S + 15.0)
    finally:
        if not state["finished"]:
            carrier.release()
        reactor.close()
    with suppress(OSError):
        tell(e="bye")


# -- the parent's side ----------------------------------------------------------------------------


class Child:
    """A member process and its control socket (newline-delimited JSON from it)."""

    def __init__(self, name: str, command: list[str]) -> None:
        self.name = name
        mine, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [*command, "--control", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        theirs.close()
        self.sock = mine
        self._buffer = b""
        self.member_id: int | None = None
        self.active = 0
        self.failures: list[str] = []

    def send(self, line: str) -> None:
        with suppress(OSError):
            self.sock.sendall(line.encode() + b"\n")

    def messages(self, timeout: float) -> list[Row]:
        """What it said within ``timeout`` seconds (possibly nothing)."""
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not ready:
            return []
        try:
            chunk = self.sock.recv(1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            raise RuntimeError(f"{self.name} exited: {self.stderr_tail()}")
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        out = [json.loads(line) for line in lines if line.strip()]
        for message in out:
            if message["e"] == "ready":
                self.member_id = message["id"]
            elif message["e"] == "active":
                self.active = message["n"]
            elif message["e"] == "failure":
                self.failures.append(message["reason"])
        return out

    def stderr_tail(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")[-1500:]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        with suppress(Exception):
            self.process.communicate(timeout=10)
        self.sock.close()


def wait_for(
    children: list[Child], done: Any, timeout: float, what: str, collect: list[Row] | None = None
) -> None:
    """Read the children's messages until ``done()``; RuntimeError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            states = ", ".join(f"{c.name} id {c.member_id} sees {c.active}" for c in children)
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what} ({states})")
        ready, _, _ = select.select([c.sock for c in children], [], [], left)
        for child in children:
            if child.sock in ready:
                for message in child.messages(0.0):
                    if collect is not None:
                        collect.append({**message, "who": child.name})


def random_group() -> tuple[str, int]:
    rng = random.Random()
    return f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}", rng.randrange(20_000, 60_000)


def open_session(transport: str, profile_dir: Path | None) -> list[Child]:
    host, port = random_group()
    group = f"{host}:{port}"
    children: list[Child] = []
    try:
        for i in range(MEMBERS):
            role = ("master" if i == 0 else "producer") if transport == "mtp" else ""
            command = [sys.executable]
            if profile_dir is not None:
                out = profile_dir / f"{transport}-m{i}.prof"
                command += ["-m", "cProfile", "-o", str(out)]
            command += [
                str(Path(__file__).resolve()), "member", "--transport", transport,
                "--group", group, *(["--role", role] if role else []),
            ]  # fmt: skip
            children.append(Child(f"m{i}", command))
            if i == 0:  # the first member alone in the group first (MTP: the master's web)
                wait_for(children, lambda: children[0].member_id is not None, JOIN_TIMEOUT_S, "m0")
        # Everyone ready, and the sender sees the three others active. An RMP member learns of
        # every other from its join; an MTP member of the others only once it hears them (the
        # app's presences would tell it), the master of every member that joins its web.
        seers = children if transport == "rmp" else children[:1]
        wait_for(
            children,
            lambda: (
                all(c.member_id is not None for c in children)
                and all(c.active >= MEMBERS - 1 for c in seers)
            ),
            JOIN_TIMEOUT_S,
            "every member to join",
        )
    except BaseException:
        for child in children:
            child.kill()
        raise
    return children


def counters(children: list[Child]) -> list[Row]:
    """Every member's transport counters, now (and the sends its kernel refused)."""
    messages: list[Row] = []
    for child in children:
        child.send("counters")

    def replies() -> dict[str, Row]:
        return {m["who"]: m for m in messages if m["e"] == "counters"}

    wait_for(children, lambda: len(replies()) == len(children), 10.0, "counters", messages)
    got = replies()
    return [got[c.name] for c in children]


def one_paste(children: list[Child], seed: int) -> Row:
    """The sender (children[0]) pastes; every member's time to have applied both ops."""
    before = counters(children)
    messages: list[Row] = []
    children[0].send(f"paste {seed}")
    applied: dict[str, dict[str, float]] = {}

    def complete() -> bool:
        sent = next((m for m in messages if m["e"] == "sent"), None)
        if sent is None:
            return False
        for m in messages:
            if m["e"] in ("blob", "image") and m["digest"] == sent["digest"]:
                applied.setdefault(m["who"], {})[m["e"]] = m["t"]
        return sum(len(ops) == 2 for ops in applied.values()) == len(children)

    try:
        wait_for(children, complete, PASTE_TIMEOUT_S, "every member to apply both ops", messages)
    except RuntimeError as exc:
        got = {who: sorted(ops) for who, ops in applied.items()}
        return {"error": f"{exc}; applied so far: {got}"}
    after = counters(children)
    sent = next(m for m in messages if m["e"] == "sent")
    t0 = sent["t"]
    each = {who: max(ops.values()) - t0 for who, ops in applied.items()}
    row: Row = {
        "all_s": max(each.values()),
        "others_s": max(v for who, v in each.items() if who != children[0].name),
        "sender_own_s": each[children[0].name],
        "encode_s": sent["encode_s"],
        "send_s": sent["send_s"],
        "payload_bytes": sent["payload_bytes"],
        "sender_datagrams": after[0]["c"]["datagrams_sent"] - before[0]["c"]["datagrams_sent"],
        "send_errors": sum(
            a["send_errors"] - b["send_errors"] for a, b in zip(after, before, strict=True)
        ),
        "late": [m["who"] for m in messages if m.get("late")],
    }
    for name in SUMMED:
        row[f"all_{name}"] = sum(
            a["c"].get(name, 0) - b["c"].get(name, 0) for a, b in zip(after, before, strict=True)
        )
    return row


def close_session(children: list[Child]) -> list[str]:
    """Each member told to leave, waited for (bounded), killed past that; their failures."""
    for child in children:
        child.send("leave")
    deadline = time.monotonic() + LEAVE_TIMEOUT_S
    for child in children:
        with suppress(subprocess.TimeoutExpired):
            child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
    failures = [f"{c.name}: {f}" for c in children for f in c.failures]
    for child in children:
        child.kill()
    return failures


# -- the reference: raw Python UDP multicast --------------------------------------------------


def raw_python() -> Row:
    """1 MiB in RAW_DATAGRAM-byte datagrams, unpaced, from here to 3 plain receivers."""
    host, port = random_group()
    count = -(-PICTURE_BYTES // RAW_DATAGRAM)
    body = os.urandom(RAW_DATAGRAM - RAW_HEADER)
    command = [sys.executable, str(PLAIN), "receive", host, str(port), str(count), "1", "15", "udp"]
    receivers = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(MEMBERS - 1)
    ]
    try:
        for receiver in receivers:
            assert receiver.stdout is not None
            ready, _, _ = select.select([receiver.stdout], [], [], 15.0)
            if not ready or receiver.stdout.readline().strip() != "ready":
                raise RuntimeError("a raw Python receiver did not start")
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        target = (host, port)
        started = time.time()
        for seq in range(count):
            sock.sendto((0).to_bytes(2, "big") + seq.to_bytes(4, "big") + body, target)
        sent_s = time.time() - started
        time.sleep(0.2)
        for _ in range(5):
            sock.sendto(b"END!", target)  # plain_multicast.py's END: a receiver short of some ends
            time.sleep(0.05)
        sock.close()
        results = []
        for receiver in receivers:
            out, _ = receiver.communicate(timeout=20)
            line = next(x for x in out.splitlines() if x.startswith("result "))
            results.append(json.loads(line[len("result ") :]))
    finally:
        for receiver in receivers:
            if receiver.poll() is None:
                receiver.kill()
            with suppress(Exception):
                receiver.communicate(timeout=5)
    return {
        "all_s": max(r["last"] for r in results) - started,
        "send_s": sent_s,
        "datagrams": count,
        "complete": min(r["count"] for r in results) / count,
    }


# -- the session ----------------------------------------------------------------------------------


def run(args: argparse.Namespace, say: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"transports": {}, "load_start": os.getloadavg()}
    for transport in args.transport:
        rows: list[Row] = []
        raws: list[Row] = []
        failures: list[str] = []
        children = open_session(transport, args.profile)
        try:
            say(f"{transport}: 4 members joined")
            for rep in range(args.reps):
                raw = raw_python()
                raws.append(raw)
                time.sleep(SETTLE_S)
                row = one_paste(children, seed=rep + (1000 if transport == "mtp" else 0))
                row["load"] = os.getloadavg()[0]
                rows.append(row)
                text = (
                    row["error"]
                    if "error" in row
                    else f"all {row['all_s'] * 1e3:.0f} ms (others {row['others_s'] * 1e3:.0f}"
                    f" ms, the sender's own {row['sender_own_s'] * 1e3:.0f} ms), "
                    f"{row['sender_datagrams']} datagrams from the sender, "
                    f"{row['all_datagrams_sent']} from all, retransmissions "
                    f"{row['all_retransmissions']}, NACKs {row['all_nacks_sent']}, "
                    f"send errors {row['send_errors']}"
                )
                say(f"  rep {rep + 1} {transport}: {text}; raw Python {raw['all_s'] * 1e3:.1f} ms "
                    f"(complete {raw['complete']:.3f}); load {row['load']:.2f}")  # fmt: skip
                time.sleep(SETTLE_S)
        finally:
            failures = close_session(children)
        result["transports"][transport] = {"runs": rows, "raw": raws, "failures": failures}
    result["load_end"] = os.getloadavg()
    return result


def summarise(result: dict[str, Any]) -> list[Row]:
    out = []
    for transport, data in result["transports"].items():
        good = [r for r in data["runs"] if "error" not in r]
        raws = [r["all_s"] for r in data["raw"]]
        pairs = [
            r["all_s"] / raw["all_s"]
            for r, raw in zip(data["runs"], data["raw"], strict=True)
            if "error" not in r
        ]
        row: Row = {"transport": transport, "reps": len(data["runs"]), "ok": len(good)}
        if good:
            times = [r["all_s"] for r in good]
            row.update(
                median_s=statistics.median(times),
                max_s=max(times),
                others_median_s=statistics.median(r["others_s"] for r in good),
                sender_own_median_s=statistics.median(r["sender_own_s"] for r in good),
                encode_median_s=statistics.median(r["encode_s"] for r in good),
                sender_datagrams=statistics.median(r["sender_datagrams"] for r in good),
                all_datagrams=statistics.median(r["all_datagrams_sent"] for r in good),
                retransmissions=statistics.median(r["all_retransmissions"] for r in good),
                nacks=statistics.median(r["all_nacks_sent"] for r in good),
                send_errors=sum(r["send_errors"] for r in good),
                goal_met=max(times) < GOAL_S,
                ratio_median=statistics.median(pairs),
            )
        row.update(raw_median_s=statistics.median(raws), raw_max_s=max(raws))
        row["failures"] = data["failures"]
        out.append(row)
    return out


def report(result: dict[str, Any]) -> None:
    print(f"\n1 MiB picture (BLOB + IMAGE) pasted into a {MEMBERS}-member session, loopback; "
          f"time until all {MEMBERS} members applied both (goal < {GOAL_S:.0f} s)")  # fmt: skip
    for row in result["summary"]:
        t = row["transport"]
        if not row["ok"]:
            print(f"  {t}: no paste completed ({row['reps']} tried)")
            continue
        print(
            f"  {t}: median {row['median_s'] * 1e3:.0f} ms, max {row['max_s'] * 1e3:.0f} ms "
            f"({row['ok']}/{row['reps']} pastes) -> goal {'met' if row['goal_met'] else 'NOT met'};"
            f" the 3 others {row['others_median_s'] * 1e3:.0f} ms, the sender's own delivery "
            f"{row['sender_own_median_s'] * 1e3:.0f} ms, making the ops "
            f"{row['encode_median_s'] * 1e3:.1f} ms (medians)"
        )
        print(
            f"      datagrams per paste: {row['sender_datagrams']:.0f} from the sender, "
            f"{row['all_datagrams']:.0f} from all members; retransmissions "
            f"{row['retransmissions']:.0f}, NACKs {row['nacks']:.0f}, sends refused by the "
            f"kernel {row['send_errors']} (medians; refusals summed)"
        )
        print(
            f"      raw Python UDP multicast, 1 MiB in {RAW_DATAGRAM}-byte datagrams to 3 "
            f"receivers: median {row['raw_median_s'] * 1e3:.1f} ms, max "
            f"{row['raw_max_s'] * 1e3:.1f} ms; {t} / raw Python (same repetition) median "
            f"{row['ratio_median']:.0f}x"
        )
        if row["failures"]:
            print(f"      failures reported: {row['failures'][:5]}")
    start, end = result["load_start"], result["load_end"]
    print(f"load average: {' '.join(f'{x:.2f}' for x in start)} at the start, "
          f"{' '.join(f'{x:.2f}' for x in end)} at the end ({os.cpu_count()} CPUs)")  # fmt: skip


def main() -> None:
    if sys.argv[1:2] == ["member"]:
        parser = argparse.ArgumentParser()
        parser.add_argument("member")
        parser.add_argument("--transport", required=True)
        parser.add_argument("--group", required=True)
        parser.add_argument("--role", default="")
        parser.add_argument("--control", type=int, required=True)
        member_main(parser.parse_args())
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--transport", nargs="+", choices=("rmp", "mtp"), default=["rmp", "mtp"])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object, no table")
    parser.add_argument("--profile", type=Path, metavar="DIR", help="cProfile every member")
    args = parser.parse_args()
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)

    def say(text: str) -> None:
        print(text, file=sys.stderr if args.json else sys.stdout, flush=True)

    say(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    result = run(args, say)
    result["summary"] = summarise(result)
    if args.json:
        print(json.dumps(result, default=str))
    else:
        report(result)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    main()
