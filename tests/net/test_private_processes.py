"""Private sessions with real processes on loopback (issue 21): two `whiteboard peer`s with a
passphrase draw together; a third on the same group without it sees none of their strokes and
gets none of its own applied at theirs; an eavesdropper on the group reads no name and no op,
and its replays and forgeries are counted and change nothing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from tests.processes import ROOT, child_env, whiteboard_command
from whiteboard.net.sockets import GroupAddress
from whiteboard.security import derive_session_key, is_sealed
from whiteboard.sessionlog.format import LocalOpRecord
from whiteboard.sessionlog.reader import read_log

ATTACK_AFTER = 20


def start_peer(
    group: GroupAddress, name: str, log_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    command = [
        *("peer", "--group", str(group), "--iface", "127.0.0.1", "--ttl", "0"),
        *("--name", name, "--json", "--log-dir", str(log_dir / name), *args),
    ]
    return subprocess.Popen(
        whiteboard_command(*command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(**(env or {})),
        cwd=ROOT,
    )


def finish(process: subprocess.Popen[str]) -> dict[str, object]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    result: dict[str, object] = json.loads(out)
    return result


class Eavesdropper:
    """Joins the group on loopback and keeps every datagram sent to it; once it has heard
    ATTACK_AFTER sealed ones, sends each of them again (a replay) and as many forgeries: the
    same key id, random sender ids, counters and bytes."""

    def __init__(self, group: GroupAddress) -> None:
        self.datagrams: list[bytes] = []
        self.attacked = 0
        self._group = group
        self._sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
        self._sender.setsockopt(
            socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1")
        )
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((group.host, group.port))
        membership = socket.inet_aton(group.host) + socket.inet_aton("127.0.0.1")
        self._socket.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
        self._socket.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        while not self._stop.is_set():
            try:
                self.datagrams.append(self._socket.recv(65536))
            except TimeoutError:
                continue
            if not self.attacked:
                sealed = [d for d in self.datagrams if is_sealed(d)]
                if len(sealed) >= ATTACK_AFTER:
                    self._attack(sealed[:ATTACK_AFTER])

    def _attack(self, sealed: list[bytes]) -> None:
        target = (self._group.host, self._group.port)
        for datagram in sealed:
            self._sender.sendto(datagram, target)  # a replay: authentic, accepted before
            forged = datagram[:12] + os.urandom(16) + os.urandom(len(datagram) - 28)
            self._sender.sendto(forged, target)
            self.attacked += 2

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._socket.close()
        self._sender.close()


@pytest.mark.parametrize("transport", ["rmp", "mtp"])
def test_a_private_session_is_closed_to_a_member_without_its_passphrase(
    transport: str, group: GroupAddress, tmp_path: Path
) -> None:
    secret = tmp_path / "passphrase"
    secret.write_text("a long and private passphrase\n")
    roles = {"alice": "master", "bob": "producer", "mallory": "master"}

    def role(name: str) -> tuple[str, ...]:
        return ("--role", roles[name]) if transport == "mtp" else ()

    common = ("--transport", transport, "--send", "30", "--rate", "20", "--duration", "60")
    eavesdropper = Eavesdropper(group)
    try:
        honest = [
            start_peer(
                group,
                name,
                tmp_path,
                *common,
                *role(name),
                *("--wait-members", "1", "--until-delivered", "60", "--seed", str(n)),
                *("--passphrase-file", str(secret)),
            )
            for n, name in enumerate(("alice", "bob"))
        ]
        stranger = start_peer(
            group, "mallory", tmp_path, *common, *role("mallory"), "--until-delivered", "30"
        )
        results = [finish(process) for process in honest]
        outsider = finish(stranger)
    finally:
        eavesdropper.stop()
    for result in results:
        assert result["private"] is True and result["delivered_total"] == 60, result
        assert result["viewers"] is False and result["unproven_ops"] == 0
        assert sorted(result["delivered_by_origin"].values()) == [30, 30]  # type: ignore[attr-defined]
        # The eavesdropper's replays and forgeries: counted, and nothing more.
        assert result["auth_failures"] > 0, result
        counters = result["counters"]
        assert isinstance(counters, dict) and counters["clear_dropped"] > 0
        assert counters["replays_dropped"] > 0
    assert results[0]["board_hash"] == results[1]["board_hash"]
    assert outsider["private"] is False and outsider["delivered_total"] == 30
    assert outsider["counters"]["sealed_dropped"] > 0  # type: ignore[index]
    assert outsider["counters"].get("malformed_dropped", 0) == 0  # type: ignore[union-attr]

    # What the honest members sent, as their logs have it, is nowhere on the wire.
    def sent_by(name: str) -> list[bytes]:
        return [
            record.payload
            for log in (tmp_path / name).glob("*")
            for record in read_log(log).records
            if isinstance(record, LocalOpRecord)
        ]

    # Their logs say the session was private and under which key id, never the key.
    key = derive_session_key("a long and private passphrase", str(group))
    for name in ("alice", "bob"):
        [log] = (tmp_path / name).glob("*")
        assert read_log(log).header.key_id == key.key_id.hex()
        assert read_log(log).header.drawing_key is None  # no viewers: ops carry no proof
        raw = log.read_bytes()
        assert key.root not in raw and b"private passphrase" not in raw
    [outsider_log] = (tmp_path / "mallory").glob("*")
    assert read_log(outsider_log).header.key_id is None
    sent = sent_by("alice") + sent_by("bob")
    assert len(sent) >= 60 and len(eavesdropper.datagrams) > 100
    assert eavesdropper.attacked == 2 * ATTACK_AFTER
    wire = b"\x00".join(eavesdropper.datagrams)
    # The outsider is in clear: its name and its strokes are there (the capture works).
    assert b"mallory" in wire and all(payload[8:40] in wire for payload in sent_by("mallory"))
    assert b"alice" not in wire and b"bob" not in wire
    assert not any(payload[8:40] in wire for payload in sent)


@pytest.mark.parametrize("transport", ["rmp", "mtp"])
def test_a_viewer_with_the_view_code_sees_the_board_and_gets_no_op_applied(
    transport: str, group: GroupAddress, tmp_path: Path
) -> None:
    """Alice and Bob hold the passphrase, Vic its view code; all three draw 20 strokes. Vic's
    datagrams are authentic (it holds the view secret), so the transports deliver its strokes;
    no member applies one, Vic included, and every board ends equal. Alice's log replays to
    the same board, Vic's strokes refused there too."""
    from whiteboard.replay.timeline import timeline_of
    from whiteboard.sessionlog.rows import rows_of

    key = derive_session_key("a long and private passphrase", str(group), viewers=True)
    secret, code = tmp_path / "passphrase", tmp_path / "view-code"
    secret.write_text("a long and private passphrase\n")
    code.write_text(key.view_code() + "\n")
    roles = {"alice": "master", "bob": "producer", "vic": "producer"}
    common = ("--transport", transport, "--send", "20", "--rate", "20", "--duration", "60")
    processes = [
        start_peer(
            group,
            name,
            tmp_path,
            *common,
            *(("--role", roles[name]) if transport == "mtp" else ()),
            *("--wait-members", "2", "--until-delivered", "40", "--linger", "4"),
            *("--seed", str(n), "--passphrase-file", str(file), "--allow-viewers"),
        )
        for n, (name, file) in enumerate((("alice", secret), ("bob", secret), ("vic", code)))
    ]
    alice, bob, vic = (finish(process) for process in processes)
    assert alice["can_draw"] is True and vic["can_draw"] is False
    assert alice["viewers"] is True and vic["viewers"] is True
    # Vic's strokes come back to it and are refused; a drawer that joined by an image (one
    # Vic may have given, its proofs checked) never had them delivered at all.
    assert vic["unproven_ops"] == 20
    assert int(alice["unproven_ops"]) + int(bob["unproven_ops"]) > 0  # type: ignore[call-overload]
    for result in (alice, bob, vic):
        assert result["private"] is True and result["delivered_total"] == 40, result
        assert f"{vic['member_id']:08x}" not in result["delivered_by_origin"]  # type: ignore[operator]
        assert result["board_hash"] == alice["board_hash"]
    [log] = (tmp_path / "alice").glob("*")
    recorded = read_log(log)
    assert recorded.header.drawing_key == key.drawing_public.hex()
    timeline = timeline_of(recorded)
    assert len(timeline.drawings()) == 40 and timeline.refused == alice["unproven_ops"]
    kinds = [row["payload_kind"] for row in rows_of(recorded.header, iter(recorded.records))]
    assert kinds.count("unproven") == alice["unproven_ops"]


def test_an_encrypted_recording_opens_only_with_the_passphrase(
    group: GroupAddress, tmp_path: Path
) -> None:
    """`whiteboard peer --encrypt-log` records a private session encrypted at rest;
    `whiteboard log info` says what it needs without the passphrase, and reads it with."""
    secret = tmp_path / "passphrase"
    secret.write_text("a long and private passphrase\n")
    peer = start_peer(
        group,
        "ada",
        tmp_path,
        *("--transport", "raw", "--send", "3", "--until-delivered", "3", "--linger", "0"),
        *("--passphrase-file", str(secret), "--encrypt-log"),
    )
    assert finish(peer)["delivered_total"] == 3
    [log] = (tmp_path / "ada").glob("*")
    assert b"ada" not in log.read_bytes()

    def info(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            whiteboard_command("log", "info", str(log), "--json", *args),
            capture_output=True,
            text=True,
            env=child_env(),
            cwd=ROOT,
            timeout=60,
        )

    locked = info()
    assert locked.returncode == 2 and "encrypted recording" in locked.stderr
    assert "Traceback" not in locked.stderr
    opened = info("--passphrase-file", str(secret))
    assert opened.returncode == 0, opened.stderr
    summary = json.loads(opened.stdout)
    assert summary["encrypted"] is True and summary["member_name"] == "ada"
    assert summary["sent"]["ops"] == 3
