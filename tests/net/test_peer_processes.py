"""Real multi-process sessions: `whiteboard peer` processes on loopback multicast."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

from tests.processes import start_whiteboard
from whiteboard.board import encode_op
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.net.sockets import GroupAddress
from whiteboard.presence import decode_presence, is_presence
from whiteboard.sessionlog.format import LocalOpRecord
from whiteboard.sessionlog.reader import read_log


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


def test_a_peers_presences_carry_its_board_at_the_last_checkpoint(
    group: GroupAddress, tmp_path: Path
) -> None:
    """As the app's (whiteboard/app/own_presence.py): once its board passed a checkpoint
    (256 ops), a peer's presences say what its board was there, so that a member comparing
    boards finds a common point while ops are still arriving (whiteboard/app/health.py)."""
    process = start_peer(
        group,
        "pia",
        "--transport",
        "raw",
        "--send",
        "300",
        "--rate",
        "300",
        "--duration",
        "5",
        "--log-dir",
        str(tmp_path),
    )
    result = finish(process)
    assert result["delivered_total"] == 300 and result["presences_sent"] >= 2
    [log] = tmp_path.glob("*")
    sent = [r.payload for r in read_log(log).records if isinstance(r, LocalOpRecord)]
    presences = [decode_presence(payload) for payload in sent if is_presence(payload)]
    assert presences[0].checkpoint is None  # the first, on joining: nothing passed yet
    checkpoints = {p.checkpoint for p in presences if p.checkpoint is not None}
    assert [(c.ops, c.last_key is not None) for c in checkpoints] == [(256, True)]


def test_a_fast_peer_draws_what_fell_due_in_each_turn_the_strokes_of_its_seed(
    group: GroupAddress, tmp_path: Path
) -> None:
    """At a rate above the reactor's turns, strokes that fell due are drawn together (one per
    turn held a fast sender to the turns' rate: issue 18), and the strokes made in advance
    are those drawn one at a time would be: the seed's, in order."""
    process = start_peer(
        group,
        "fay",
        "--transport",
        "raw",
        "--send",
        "300",
        "--rate",
        "100000",
        "--seed",
        "4",
        "--no-presence",
        "--duration",
        "10",
        "--log-dir",
        str(tmp_path),
    )
    result = finish(process)
    assert result["delivered_total"] == 300
    [log] = tmp_path.glob("*")
    drawn = [r for r in read_log(log).records if isinstance(r, LocalOpRecord)]
    assert len(drawn) == 300
    assert len({r.t_us for r in drawn}) <= 0.75 * len(drawn)  # several per turn
    member = int(str(result["member_id"]))
    rng = random.Random("fay:4")
    expected = [encode_op(synthetic_stroke(member, n, rng)) for n in range(1, 301)]
    assert [r.payload for r in drawn] == expected


def test_peers_moving_pointers_hear_each_others_with_their_latency(group: GroupAddress) -> None:
    """``--cursor-rate``: each peer moves a synthetic pointer on the side channel (issue 19)
    and reports what it heard of the others' and how late, from the sender's clock."""
    processes = [
        start_peer(group, f"p{i}", "--transport", "rmp", "--cursor-rate", "30",
                   "--duration", "8", "--no-log", "--seed", str(i))
        for i in range(2)
    ]  # fmt: skip
    results = [finish(p) for p in processes]
    for me, other in (results, results[::-1]):
        assert me["cursors_sent"] > 30  # joined well within the run, then 30 a second
        heard = me["cursors_received"]
        assert isinstance(heard, dict) and list(heard) == [f"{other['member_id']:08x}"]
        # Most of what the other sent while we were both in: loopback loses none.
        assert 20 < heard[f"{other['member_id']:08x}"] <= other["cursors_sent"]  # type: ignore[operator]
        latency = me["cursor_latency_ms"]
        assert isinstance(latency, dict) and 0 <= latency["p50"] <= latency["p90"] < 2000
        assert me["cursors_rejected"] == 0 and me["delivered_total"] == 0  # never the board


def test_a_member_ready_again_after_a_takeover_moves_one_pointer(group: GroupAddress) -> None:
    """MTP: the master leaves, the producer takes the web over and is ready a second time;
    its pointer goes on at ``--cursor-rate``, not twice as often (one move loop, not two)."""
    master = start_peer(group, "m", "--transport", "mtp", "--role", "master",
                        "--cursor-rate", "30", "--duration", "3", "--no-log")  # fmt: skip
    producer = start_peer(group, "p", "--transport", "mtp", "--role", "producer",
                          "--cursor-rate", "30", "--duration", "7", "--no-log")  # fmt: skip
    finish(master)
    result = finish(producer)
    assert result["failures"]  # the master left: told, and it took over (ready again)
    elapsed = float(result["elapsed_s"])  # type: ignore[arg-type]
    assert 60 < int(result["cursors_sent"]) <= 30 * elapsed + 5  # type: ignore[call-overload]
