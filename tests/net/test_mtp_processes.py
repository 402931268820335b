"""MTP on real multicast: `whiteboard peer --transport mtp` processes on loopback, a master and
three producers each losing a tenth of what it receives (`--rx-loss`), so that the repair
paths run (naks to producers, retransmissions, the master's relays of accepted messages,
resent token confirms and join requests); then a consumer that joins after the drawing is
done and must be handed the board by the master (TR 90-1141 §3.4).

Loopback loses nothing by itself at these rates, so every loss here is injected, and it hits
control packets too (join requests and confirms, token requests and confirms, naks, the
master's heartbeats and quits). The VM this runs on stalls for a second or two at random, so
no wait below is a race against a fixed delay: every step waits for a signal (a process that
exits once it has what it came for), with generous caps.

MTP members hear of each other only through what they multicast, and a producer multicasts
nothing before it draws (only the master is reported to them, when it confirms their join),
so producers cannot wait for each other with `--wait-members`, which would wait forever: each
draws as soon as it has joined, and one that joins after another has begun is given the board
as its first message (TR §3.4). The boards must agree whatever the order of the joins.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.processes import start_whiteboard
from whiteboard.net.sockets import GroupAddress

PRODUCERS = 3
PER_PRODUCER = 40
TOTAL = PRODUCERS * PER_PRODUCER
RX_LOSS = "0.1"
# Caps: the processes' own (--duration, after which a member leaves whatever it has), and ours
# on each process (well past its --duration plus the protocol's bounded leaving).
DURATION_S = 30
MASTER_DURATION_S = 90  # the master is told to leave (SIGTERM) once everyone else is done
PROCESS_TIMEOUT_S = 60.0
# Producers keep serving repairs this long after they have everything (the master also holds
# every accepted message and repairs what a departed producer cannot).
PRODUCER_LINGER_S = 2


def start_mtp_peer(
    group: GroupAddress, name: str, role: str, seed: int, *args: str
) -> subprocess.Popen[str]:
    return start_whiteboard(
        "peer",
        "--transport",
        "mtp",
        "--role",
        role,
        "--group",
        str(group),
        "--iface",
        "127.0.0.1",
        "--ttl",
        "0",
        "--name",
        name,
        "--json",
        "--rx-loss",
        RX_LOSS,
        "--seed",
        str(seed),
        *args,
    )


def finish(process: subprocess.Popen[str], name: str) -> dict[str, Any]:
    out, err = process.communicate(timeout=PROCESS_TIMEOUT_S)
    assert process.returncode == 0, f"{name} exited with {process.returncode}: {err}"
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        pytest.fail(f"{name} printed no JSON report: stdout={out!r} stderr={err!r}")


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Every process the test starts; whatever is still running at the end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)


def summary(result: dict[str, Any]) -> str:
    counters = result["counters"]
    return (
        f"{result['name']}: delivered {result['delivered_total']}, join_ms {result['join_ms']}, "
        f"nacks_sent {result['nacks_sent']}, retransmissions {result['retransmissions']}, "
        f"relays {counters['relays']}, tokens_granted {counters['tokens_granted']}, "
        f"messages_sent {counters['messages_sent']}, joins_confirmed "
        f"{counters['joins_confirmed']}, rejoins {counters['rejoins']}, rx_loss_injected "
        f"{result['rx_loss_injected']}, elapsed_s {result['elapsed_s']}"
    )


def assert_clean(result: dict[str, Any]) -> None:
    """Nothing went wrong inside the member: no internal error of the core, no failure
    reported (a rejoin is one), nothing malformed, refused or delivered twice."""
    assert result["counters"]["internal_errors"] == 0, result
    assert result["failures"] == [], result
    assert result["malformed_dropped"] == 0, result
    assert result["duplicates_delivered"] == 0, result
    assert result["rejected_ops"] == 0, result
    assert result["rejected_states"] == 0, result
    assert int(result["rx_loss_injected"]) > 0, result


def test_lossy_mtp_master_and_producers_agree_and_a_late_consumer_gets_the_board(
    group: GroupAddress, processes: list[subprocess.Popen[str]]
) -> None:
    # The master founds the web (after probing that none answers, RFC 1301 §3.1) and stays
    # until we tell it to leave: the web ends with it (§3.3.2).
    master = start_mtp_peer(group, "master", "master", 100, "--duration", str(MASTER_DURATION_S))
    processes.append(master)

    # Its readiness signal: a consumer that leaves as soon as it has joined (a join[confirm]
    # and the board), so it exits only once the master answers joins.
    probe = start_mtp_peer(
        group,
        "probe",
        "consumer",
        101,
        "--until-delivered",
        "0",
        "--linger",
        "0",
        "--duration",
        str(DURATION_S),
    )
    processes.append(probe)
    ready = finish(probe, "probe")
    print(summary(ready))
    assert ready["join_ms"] is not None, ready
    assert ready["counters"]["internal_errors"] == 0 and ready["failures"] == [], ready
    assert master.poll() is None, "the master left before the producers came"

    producers = [
        start_mtp_peer(
            group,
            f"p{i}",
            "producer",
            i,
            "--send",
            str(PER_PRODUCER),
            "--rate",
            "20",
            "--until-delivered",
            str(TOTAL),
            "--linger",
            str(PRODUCER_LINGER_S),
            "--duration",
            str(DURATION_S),
        )
        for i in range(PRODUCERS)
    ]
    processes.extend(producers)
    results = [finish(p, f"p{i}") for i, p in enumerate(producers)]
    assert master.poll() is None, "the master left before the late consumer came"

    # The drawing is done and the producers are gone: a consumer joins late, with the same
    # loss, and only the master can hand it the board (TR §3.4).
    joiner = start_mtp_peer(
        group,
        "late",
        "consumer",
        PRODUCERS + 1,
        "--until-delivered",
        str(TOTAL),
        "--linger",
        "0",
        "--duration",
        str(DURATION_S),
    )
    processes.append(joiner)
    late = finish(joiner, "late")

    # Everyone else has left: the master ends the web (SIGTERM makes it leave as §3.3.2 says
    # and print its report).
    master.send_signal(signal.SIGTERM)
    held = finish(master, "master")

    for result in [held, *results, late]:
        print(summary(result))
    total_nacks = sum(int(r["nacks_sent"]) for r in [held, *results, late])
    total_repairs = sum(int(r["retransmissions"]) for r in [held, *results, late])
    print(
        f"late consumer join_ms {late['join_ms']}; all members: nacks_sent {total_nacks}, "
        f"retransmissions {total_repairs}; producers' elapsed_s "
        f"{max(float(r['elapsed_s']) for r in results)}, master's {held['elapsed_s']}"
    )

    for result in results:
        assert_clean(result)
        assert result["sent"] == PER_PRODUCER, result
        assert result["reached_goal"], result
        assert result["delivered_total"] == TOTAL, result
        # Its own strokes it delivers itself (it joined before drawing them); others' it may
        # have had in the board it joined with, if it joined after they began.
        own = f"{int(result['member_id']):08x}"
        assert result["delivered_by_origin"][own] == PER_PRODUCER, result
    assert_clean(held)
    assert held["sent"] == 0 and held["delivered_total"] == TOTAL, held
    # Every stroke went through the master's acceptance, and it delivered each one itself.
    assert sorted(held["delivered_by_origin"].values()) == [PER_PRODUCER] * PRODUCERS, held
    assert held["counters"]["joins_confirmed"] >= PRODUCERS + 2, held  # probe, producers, late
    # The loss was repaired, not avoided.
    assert total_nacks > 0 and total_repairs > 0
    hashes = {r["board_hash"] for r in [held, *results]}
    assert len(hashes) == 1, hashes

    # The late consumer was admitted and handed the board, not left with an empty one.
    assert_clean(late)
    assert late["sent"] == 0, late
    assert late["join_ms"] is not None, late
    assert late["delivered_total"] == TOTAL, late
    assert late["delivered_by_origin"] == {}, late  # all of it came in the board
    assert late["board_hash"] in hashes, late
