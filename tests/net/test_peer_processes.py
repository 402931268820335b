"""Real multi-process sessions: `whiteboard peer` processes on loopback multicast."""

from __future__ import annotations

import json
import subprocess

from tests.processes import start_whiteboard
from whiteboard.net.sockets import GroupAddress


def start_peer(group: GroupAddress, name: str, *args: str) -> subprocess.Popen[str]:
    return start_whiteboard(
        "peer",
        "--group",
        str(group),
        "--iface",
        "127.0.0.1",
        "--ttl",
        "0",
        "--name",
        name,
        "--json",
        *args,
    )


def finish(process: subprocess.Popen[str], timeout: float = 120.0) -> dict[str, object]:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    return json.loads(out)


def test_three_raw_peers_deliver_each_others_strokes_and_agree(group: GroupAddress) -> None:
    per_peer, peers = 40, 3
    total = per_peer * peers
    processes = [
        start_peer(
            group,
            f"p{i}",
            "--transport",
            "raw",
            "--send",
            str(per_peer),
            "--rate",
            "50",
            "--wait-members",
            str(peers - 1),
            "--until-delivered",
            str(total),
            "--duration",
            "60",
            "--seed",
            str(i),
        )
        for i in range(peers)
    ]
    results = [finish(p) for p in processes]
    for result in results:
        assert result["sent"] == per_peer
        assert result["malformed_dropped"] == 0
        assert result["failures"] == []
        assert result["members_seen"] == peers - 1
        # Nothing is dropped on loopback at this rate (4 MiB receive buffers), so raw, which
        # repairs nothing, must still have everything.
        assert result["delivered_total"] == total, result
        assert sorted(result["delivered_by_origin"].values()) == [per_peer] * peers
    assert len({r["board_hash"] for r in results}) == 1
