"""MTP master failover on real multicast (an extension to RFC 1301: mtp/failover.py): a headless
master and three producers (`whiteboard peer`) on loopback, every process losing a tenth of what
it receives; the master is killed with SIGKILL while the producers draw. The producers keep
drawing; the first successor the master named re-forms the web, the others join it, and each
producer delivers everything the producers drew and reports the same board hash.

Waits are bounded by signals, not delays, except one: the kill comes a few seconds after the
producers start, while they draw slowly enough (40 strokes at 5 a second) that it lands in the
middle of their drawing even when the VM stalls. A producer that had not joined yet when the
master died still joins the new web (its join requests are answered by whoever takes over).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.net.test_mtp_processes import finish, processes, start_mtp_peer, summary
from whiteboard.net.sockets import GroupAddress

PRODUCERS = 3
PER_PRODUCER = 40
TOTAL = PRODUCERS * PER_PRODUCER
KILL_AFTER_S = 3.0  # producers draw for 8 s; the master dies about a third of the way in

__all__ = ["processes"]  # the fixture, shared


@pytest.mark.network
def test_producers_keep_drawing_and_agree_when_the_master_is_killed(
    group: GroupAddress, processes: list[Any]
) -> None:
    master = start_mtp_peer(group, "master", "master", 200, "--duration", "120")
    processes.append(master)
    # The master is up once a consumer has joined it and left (its readiness signal).
    probe = start_mtp_peer(
        group,
        "probe",
        "consumer",
        201,
        *("--until-delivered", "0", "--linger", "0"),
        *("--duration", "30"),
    )
    processes.append(probe)
    assert finish(probe, "probe")["join_ms"] is not None

    drawing = ("--send", str(PER_PRODUCER), "--rate", "5", "--until-delivered", str(TOTAL))
    drawing += ("--linger", "3", "--duration", "90")
    producers = [
        start_mtp_peer(group, f"p{i}", "producer", 210 + i, *drawing) for i in range(PRODUCERS)
    ]
    processes.extend(producers)
    time.sleep(KILL_AFTER_S)
    master.kill()  # SIGKILL: no quit, no last word
    master.communicate(timeout=30)

    results = [finish(p, f"p{i}") for i, p in enumerate(producers)]
    for result in results:
        print(summary(result), "board", result["board_hash"][:12], result["failures"][:2])
    for result in results:
        assert result["delivered_total"] >= TOTAL, result
        assert result["counters"]["internal_errors"] == 0, result
        # every producer drew all it had to, through the outage
        assert result["sent"] == PER_PRODUCER, result
    assert len({r["board_hash"] for r in results}) == 1, [r["board_hash"] for r in results]
    # the master's death was seen and reported, and someone took over
    assert any("new master" in f for r in results for f in r["failures"]), results
