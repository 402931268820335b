"""NACK suppression for losses the whole group shares (our extension beyond RR-2100, issue 18;
rmp/suppression.py, docs/rmp.md "NACK suppression"): a random first delay scaled to the group,
standing down on another member's NACK, jittered and backed-off retries, the source answering
for its own packets whatever its depth, and a simulator check of NACK packets per loss."""

from __future__ import annotations

import itertools
import math

import pytest

from rmp.suppression import NACK_BACKOFF_AFTER, NACK_BACKOFF_MAX, nack_window
from rmp.wire import Nack, Retransmit
from tests.rmp.core_harness import (
    A,
    B,
    C,
    D,
    Node,
    control_packet,
    data_packet,
    ready_node,
)
from tests.sim.shared_loss import nack_packets_per_shared_loss

DELAY = 0.1  # nack_delay for these tests (the harness turns it off)
OTHERS = 0x1000  # identifiers of the extra stations a group is made of


def _node(seed: int, stations: int = 1, **params: object) -> Node:
    """A ready core (at t = 5) with ``nack_delay`` on that has taken packet 1 of ``stations``
    stations in sequence (B first): the group it counts is them and itself."""
    node = ready_node(params={"nack_delay": DELAY, **params}, seed=seed)
    for k in range(stations):
        ident = B if k == 0 else OTHERS + k
        node.receive(data_packet(ident, 1, 5.01), 5.01)
    return node


def _first_nack_delay(seed: int, stations: int) -> float:
    """B's packet 2 is found missing at 5.1 (packet 3 came): how long before our NACK."""
    node = _node(seed, stations)
    node.receive(data_packet(B, 3, 5.1), 5.1)
    node.run_until(8.0)
    (first, *_) = [at for at, n in node.nacks() if n.source == B]
    return first - 5.1


def test_the_first_nack_waits_a_random_time_within_the_window() -> None:
    delays = [_first_nack_delay(seed, stations=1) for seed in range(20)]
    window = DELAY * 1.0  # two members: log2(2) = 1 nack_delay
    assert all(0.0 <= d < window for d in delays), delays
    assert len({round(d, 6) for d in delays}) > 10  # random, not a constant


def test_the_window_grows_with_the_log_of_the_group() -> None:
    small = [_first_nack_delay(seed, stations=1) for seed in range(20)]
    large = [_first_nack_delay(seed, stations=15) for seed in range(20)]
    window = DELAY * math.log2(16)  # us and 15 stations
    assert all(0.0 <= d < window for d in large), large
    assert max(large) > DELAY > max(small)  # beyond the small group's whole window
    node = _node(0, stations=15)
    assert nack_window(node.core._shared) == pytest.approx(window)


def test_strangers_do_not_stretch_the_window_beyond_a_crowd() -> None:
    """A crowd of phantom stations (never a packet in sequence) counts as 16 at most."""
    node = _node(0, stations=1)
    for k in range(200):
        node.receive(data_packet(OTHERS + 500 + k, 40, 5.02), 5.02)  # far in: strangers
    assert nack_window(node.core._shared) == pytest.approx(DELAY * math.log2(1 + 1 + 16))


def test_a_member_that_hears_another_nack_for_the_packet_does_not_send_its_own() -> None:
    for seed in range(10):
        node = _node(seed)
        node.receive(data_packet(B, 3, 5.1), 5.1)  # 2 missing: our NACK waits up to 0.1 s
        node.receive(control_packet(C, 0, 5.1, Nack(0, 2, B)), 5.1)  # C asks first
        node.run_until(5.1 + 1.0)  # within nack_retry (1 s) of C's NACK
        assert node.nacks() == [], seed
        window = nack_window(node.core._shared)  # C counts now: log2(3) nack_delays
        node.run_until(5.1 + 1.0 + window)  # no repair came: we ask, C's number plus one
        assert [n for _, n in node.nacks()] == [Nack(1, 2, B)], seed


def test_members_a_nack_suppressed_do_not_ask_again_in_lock_step() -> None:
    """Ten members heard the same NACK at the same instant, no repair came: their own NACKs
    are spread over the window after nack_retry, not all at once."""
    times = []
    for seed in range(10):
        node = _node(seed)
        node.receive(data_packet(B, 3, 5.1), 5.1)
        node.receive(control_packet(C, 0, 5.1, Nack(0, 2, B)), 5.1)
        node.run_until(8.0)
        times.append(node.nacks()[0][0])
        window = nack_window(node.core._shared)
    assert all(6.1 <= t < 6.1 + window for t in times), times
    assert len({round(t, 6) for t in times}) == 10


def test_retries_are_jittered_and_back_off() -> None:
    node = _node(3)
    node.receive(data_packet(B, 3, 5.1), 5.1)
    node.run_until(40.0)
    times = [at for at, n in node.nacks() if n.source == B]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    tries = list(range(1, len(gaps) + 1))
    for tried, gap in zip(tries, gaps, strict=True):
        backoff = (
            1
            if tried < NACK_BACKOFF_AFTER
            else min(NACK_BACKOFF_MAX, 2 ** (tried - NACK_BACKOFF_AFTER + 1))
        )
        assert backoff <= gap < backoff + DELAY, (tried, gaps)
    assert len({round(g % 1.0, 6) for g in gaps}) > 3  # jittered, not whole seconds
    assert max(gaps) >= NACK_BACKOFF_MAX


def test_without_nack_delay_retries_come_every_nack_retry_exactly() -> None:
    node = ready_node()  # the harness's seed profile: nack_delay 0
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)
    node.run_until(12.0)
    times = [at for at, _ in node.nacks()]
    assert times == pytest.approx([5.2 + k for k in range(7)])


def _deep_source(seed: int = 0) -> Node:
    """A (we) sent packet 1 at 5.05; B and C drew since, so our depth is 2."""
    node = _node(seed)
    node.send(b"mine", 5.05)
    node.run_until(5.06)
    node.receive(data_packet(B, 2, 5.07), 5.07)
    node.receive(data_packet(C, 1, 5.08), 5.08)
    assert node.core.depth == 2
    return node


def test_the_source_answers_a_first_nack_for_its_packet_whatever_its_depth() -> None:
    node = _deep_source()
    node.receive(control_packet(D, 0, 5.2, Nack(0, 1, A)), 5.2)  # number 0 < our depth
    node.run_until(6.0)
    repairs = node.retransmits()
    assert [(s.dest, o.packet.seq) for s, o in repairs] == [(None, 1)]  # multicast: others wait
    hold = 0.02 + nack_window(node.core._shared)  # repair_hold, plus the window: not obliged
    assert repairs[0][0].at == pytest.approx(5.2 + hold)


def test_the_source_stands_down_when_it_hears_another_repair_first() -> None:
    node = _deep_source()
    node.receive(control_packet(D, 0, 5.2, Nack(0, 1, A)), 5.2)
    ours = next(s.packet for s in node.data_sent())
    assert ours.seq == 1
    repair = control_packet(C, 1, 5.21, Retransmit(A, ours))
    node.receive(repair, 5.21)  # C, obliged by its depth, repaired it for the group
    node.run_until(6.0)
    assert node.retransmits() == []
    assert node.counter("repairs_suppressed") == 1


@pytest.mark.parametrize("profile", ["lan", "seed"])
def test_a_loss_every_member_shares_costs_few_nack_packets(profile: str) -> None:
    """10 members, 5% of every sender's datagrams lost before the network: NACK packets per
    loss event stay low (18 and 16 without suppression), and everything is delivered."""
    assert nack_packets_per_shared_loss("rmp", profile) <= 2.5
