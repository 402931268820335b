"""RMP on real multicast: `whiteboard peer --transport rmp` processes on loopback, each losing a
tenth of what it receives (`--rx-loss`), so that every repair path of the protocol runs; then a
member that joins late and must be handed the board (RR-2100 §2.8).

Loopback loses nothing by itself at these rates, so every loss here is injected, and it hits
control packets too (NACKs, confirmations, join requests and answers, repairs): the protocol
has to get through all of it. The VM this runs on stalls for a second or two at random, so no
wait below is a race against a fixed delay: every step waits for a signal, with generous caps.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.processes import start_whiteboard
from whiteboard.net.sockets import GroupAddress

DRAWERS = 4
PER_DRAWER = 40
TOTAL = DRAWERS * PER_DRAWER
RX_LOSS = "0.1"
# Caps: the processes' own (--duration, after which a member leaves whatever it has), and ours
# on each process (well past its --duration plus the protocol's bounded leaving).
DURATION_S = 90
PROCESS_TIMEOUT_S = 150.0
# The drawers keep serving after they have everything, long enough for the late joiner to be
# started, to join and to receive the image even if this host stalls meanwhile.
DRAWER_LINGER_S = 15


def start_rmp_peer(group: GroupAddress, name: str, *args: str) -> subprocess.Popen[str]:
    return start_whiteboard(
        "peer",
        "--transport",
        "rmp",
        "--group",
        str(group),
        "--iface",
        "127.0.0.1",
        "--ttl",
        "0",
        "--name",
        name,
        "--json",
        # The protocol's traffic alone: a presence sent at once on joining would make every
        # member that joins a moment later a late joiner, given the board by image (§2.8),
        # and this test counts each drawer's strokes delivered one by one.
        "--no-presence",
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
        f"reminders {counters['reminders_sent']}, images_sent {counters['images_sent']}, "
        f"rx_loss_injected {result['rx_loss_injected']}, elapsed_s {result['elapsed_s']}"
    )


def test_four_lossy_rmp_peers_deliver_everything_and_a_late_joiner_gets_the_board(
    group: GroupAddress, processes: list[subprocess.Popen[str]]
) -> None:
    # A silent observer (no loss) tells us when every stroke is out: it exits as soon as it
    # has delivered all of them. The drawers wait for it (and for each other) before drawing.
    observer = start_rmp_peer(
        group,
        "observer",
        "--send",
        "0",
        "--until-delivered",
        str(TOTAL),
        "--linger",
        "0",
        "--duration",
        str(DURATION_S),
    )
    processes.append(observer)
    drawers = [
        start_rmp_peer(
            group,
            f"p{i}",
            "--send",
            str(PER_DRAWER),
            "--rate",
            "20",
            "--wait-members",
            str(DRAWERS),  # the three other drawers and the observer
            "--until-delivered",
            str(TOTAL),
            "--linger",
            str(DRAWER_LINGER_S),
            "--duration",
            str(DURATION_S),
            "--rx-loss",
            RX_LOSS,
            "--seed",
            str(i),
        )
        for i in range(DRAWERS)
    ]
    processes.extend(drawers)

    seen = finish(observer, "observer")
    print(summary(seen))
    assert seen["delivered_total"] == TOTAL, seen
    assert all(d.poll() is None for d in drawers), "a drawer left before the late joiner came"

    # Every stroke is out and the drawers are lingering: a fifth member joins late, with the
    # same loss, draws nothing, and must be handed the board (the image, §2.8).
    joiner = start_rmp_peer(
        group,
        "late",
        "--send",
        "0",
        "--until-delivered",
        str(TOTAL),
        "--linger",
        "1",
        "--duration",
        "60",
        "--rx-loss",
        RX_LOSS,
        "--seed",
        str(DRAWERS + 1),
    )
    processes.append(joiner)
    late = finish(joiner, "late")
    results = [finish(d, f"p{i}") for i, d in enumerate(drawers)]

    for result in results:
        print(summary(result))
    print(summary(late))
    total_nacks = sum(int(r["nacks_sent"]) for r in [*results, late])
    total_repairs = sum(int(r["retransmissions"]) for r in [*results, late])
    images = sum(int(r["counters"]["images_sent"]) for r in results)
    print(
        f"late joiner join_ms {late['join_ms']} (images sent to it: {images}); all members: "
        f"nacks_sent {total_nacks}, retransmissions {total_repairs}; drawers' elapsed_s "
        f"{max(float(r['elapsed_s']) for r in results)}, late joiner's {late['elapsed_s']}"
    )

    for result in results:
        assert result["sent"] == PER_DRAWER, result
        assert result["malformed_dropped"] == 0, result
        assert result["failures"] == [], result
        assert result["delivered_total"] == TOTAL, result
        assert sorted(result["delivered_by_origin"].values()) == [PER_DRAWER] * DRAWERS
        assert result["duplicates_delivered"] == 0, result
        assert int(result["rx_loss_injected"]) > 0, result
    # The loss was repaired, not avoided.
    assert total_nacks > 0 and total_repairs > 0
    hashes = {r["board_hash"] for r in [*results, seen]}
    assert len(hashes) == 1, hashes

    # The late joiner was answered and handed the board, not left alone with an empty one.
    assert late["join_ms"] is not None, late
    assert late["failures"] == [], late
    assert late["malformed_dropped"] == 0, late
    assert late["delivered_total"] == TOTAL, late
    assert late["board_hash"] in hashes, late
    assert images >= 1
