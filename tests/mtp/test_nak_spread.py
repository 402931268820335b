"""Naks for a loss every member shares (our extension after RFC 1301 §3.4.2, issue 18; docs/mtp.md
"Naks for a loss everyone shares"): with ``nak_spread`` (and ``nak_dally`` off) a first nak
waits a random time over a window that grows with the log of the web's size, within §3.4.2's
retention - 2 heartbeats, and a member whose wait has not run out when the producer's
multicast retransmission comes never naks. Naks are unicast to the producer (§3.2.4), so
members cannot hear each other's: the retransmission is what they hear."""

from __future__ import annotations

import math

import pytest

from mtp.wire import DataModifier
from tests.mtp.core_harness import (
    C1,
    HEARTBEAT,
    MASTER,
    P2,
    Node,
    addr_of,
    data,
    founded_master,
    join_confirm,
    join_request,
    token_request,
)
from tests.mtp.test_core_repair import (
    ACCEPTED,
    PARTS,
    STROKE,
    body,
    entries,
    master_beat,
    run_with_master,
)
from tests.sim.shared_loss import nack_packets_per_shared_loss

SPREAD = 1.0  # heartbeats per doubling of the web, for these tests (the harness turns it off)


def _spreading_consumer(seed: int, spread: float = SPREAD) -> Node:
    """C1 with nak_spread on in a web whose retention is 5; it hears packets 0 and 2 (eom) of
    P2's message 0 at 0.05 and so lacks packet 1."""
    node = Node(C1, {"role": "consumer", "join_with_state": False, "nak_spread": spread}, seed=seed)
    node.start(0.0)
    node.receive(join_confirm(MASTER, C1, 0), 0.01)
    node.receive(master_beat(0, retention=5), 0.02)
    node.receive(data(P2, 0, 0, PARTS[0]), 0.05)
    node.receive(data(P2, 0, 2, PARTS[2], DataModifier.EOM), 0.05)
    return node


def _window(node: Node) -> float:
    return node.core._receiver.nak_window()


def test_a_first_nak_waits_a_random_time_within_the_window() -> None:
    delays = []
    for seed in range(12):
        node = _spreading_consumer(seed)
        window = _window(node)
        run_with_master(node, 1.5, 1, retention=5)
        first = node.named("nak[request]")[0]
        assert entries(first) == [(0, 1)] and first.dest == addr_of(P2)
        delays.append(first.at - 0.05)
        assert 0.0 <= delays[-1] < window, (seed, delays[-1], window)
    assert len({round(d, 6) for d in delays}) > 8  # random, not a constant
    # Not whole heartbeats (that is §3.4.2's own dally, nak_dally): anywhere in the window.
    assert any(abs(d / HEARTBEAT - round(d / HEARTBEAT)) > 0.05 for d in delays)


def test_without_nak_spread_the_nak_goes_at_once() -> None:
    node = _spreading_consumer(0, spread=0.0)
    run_with_master(node, 1.5, 1, retention=5)
    assert node.named("nak[request]")[0].at == pytest.approx(0.05)


def test_the_master_naks_at_once_even_with_nak_spread() -> None:
    """Its verdict, which every member waits for, waits for its copy (§2.2.6); a producer
    serves its nak without an isMember round trip (§3.4.3), and the repair is multicast
    (§3.2.6): so the master naks as §3.2.4 says, at once (after reorder_wait only)."""
    master = founded_master({"join_with_state": False, "nak_spread": SPREAD})
    web = master.core.web_id
    master.receive(join_request(P2), 2.1)
    master.receive(token_request(P2, MASTER, 0), 2.12)
    master.receive(data(P2, 0, 0, body(0, 0), web=web), 2.15)
    master.receive(data(P2, 0, 2, body(0, 2, 10), DataModifier.EOM, web=web), 2.15)
    assert master.core._receiver.nak_window() > 0.0
    master.run_until(2.3)
    first = master.named("nak[request]")[0]
    assert entries(first) == [(0, 1)] and first.at == pytest.approx(2.15, abs=1e-9)


def test_the_window_grows_with_the_log_of_the_web_within_retention_minus_2() -> None:
    node = _spreading_consumer(0, spread=0.25)
    known = len(node.core._link.addresses) + 1
    assert _window(node) == pytest.approx(HEARTBEAT * 0.25 * max(1.0, math.log2(known)))
    for k in range(62):
        node.core._link.addresses[0x5000 + k] = addr_of(0x5000 + k)
    members = len(node.core._link.addresses) + 1
    assert _window(node) == pytest.approx(HEARTBEAT * 0.25 * math.log2(members))
    wide = _spreading_consumer(0, spread=1.0)
    for k in range(62):
        wide.core._link.addresses[0x5000 + k] = addr_of(0x5000 + k)
    assert _window(wide) == pytest.approx(HEARTBEAT * 3)  # retention 5, less 2 (§3.4.2)


def test_a_member_that_hears_the_retransmission_first_never_naks() -> None:
    # The producer multicasts what another member asked for (§3.2.6): it fills our gap.
    stood_down = 0
    for seed in range(12):
        node = _spreading_consumer(seed)
        node.run_until(0.051)
        if node.named("nak[request]"):
            continue  # this seed drew (almost) no wait
        node.receive(data(P2, 0, 1, PARTS[1]), 0.052)
        run_with_master(node, 1.5, 1, {0: ACCEPTED}, retention=5)
        assert node.named("nak[request]") == []
        assert node.delivered_payloads() == [STROKE]
        stood_down += 1
    assert stood_down >= 10


def test_a_loss_every_member_shares_costs_few_naks() -> None:
    """10 members, 5% of every sender's datagrams lost before the network: nak packets per
    loss event stay low (7 without the spread: one per member that lost it, nearly)."""
    assert nack_packets_per_shared_loss("mtp", "lan") <= 2.5
