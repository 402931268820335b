"""RR-2100 §5 (flow control is "missing"): our pacing of data packets at ``rate`` a second, and
the ``window`` of image parts a joiner has not confirmed."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest

from rmp.sender import PACE_CATCH_UP
from rmp.wire import Confirm, Image, Join, RmpPacket, ntp_middle32
from tests.rmp.core_harness import (
    A,
    J,
    Node,
    Sent,
    control_packet,
    incompressible,
    ready_node,
    rmp_session,
)


def _burst(rate: float, count: int) -> list[float]:
    node = ready_node(params={"rate": rate, "batch": False})  # a packet per stroke
    for k in range(count):
        node.send(f"stroke {k}".encode(), 6.0)
    node.run_until(6.0 + 2 * count / rate)
    sent = node.data_sent()
    assert [s.packet.data for s in sent] == [f"stroke {k}".encode() for k in range(count)]
    return [s.at for s in sent]


@pytest.mark.parametrize("rate", [10.0, 50.0])
def test_s5_a_burst_of_sends_is_paced_at_the_rate(rate: float) -> None:
    count = 25
    times = _burst(rate, count)
    period = 1.0 / rate
    assert times[0] == 6.0  # the first goes at once
    # Then one every 1/rate: the burst spreads over (count - 2) periods at least.
    assert times[-1] - times[0] >= (count - 2) * period - 1e-9
    later_gaps = [b - a for a, b in pairwise(times[1:])]
    assert later_gaps == pytest.approx([period] * len(later_gaps))


@pytest.mark.parametrize("rate", [10.0, 50.0])
def test_s5_no_second_holds_more_than_rate_packets_and_the_catch_up(rate: float) -> None:
    times = _burst(rate, int(2 * rate) + 5)
    for start in times:
        in_window = [t for t in times if start <= t < start + 1.0 - 1e-9]
        assert len(in_window) <= rate + math.ceil(PACE_CATCH_UP * rate)


def test_s5_a_late_wake_up_sends_every_packet_that_fell_due() -> None:
    """A reactor whose timer comes a millisecond late (a selector rounds its timeout up) still
    sends at the rate: what fell due goes at once, up to PACE_CATCH_UP's worth (issue 18)."""
    rate = 4000.0
    node = ready_node(params={"rate": rate, "batch": False})  # a packet per stroke
    for k in range(200):
        node.send(f"stroke {k}".encode(), 6.0)
    now = 6.0
    for _ in range(20):  # 20 ms of wake-ups at 1 ms, each later than the 0.25 ms asked for
        now += 0.001
        node.tick(now)
    sent = len(node.data_sent())
    assert sent >= 0.9 * rate * 0.020  # one per wake-up would be 21
    assert sent <= rate * 0.020 + PACE_CATCH_UP * rate + 1
    node.tick(now + 1.0)  # after a long stall, no more than the catch-up at once
    assert len(node.data_sent()) - sent <= PACE_CATCH_UP * rate + 1


def _answer_a_join(window: int, parts: int) -> Node:
    node = ready_node(params={"window": window, "retention_count": 3 * window, "image_part": 64})
    node.send(b"own", 5.5)  # depth 0: we answer join number 0
    node.receive(RmpPacket(seq=0, timestamp=ntp_middle32(6.0), options=(Join(0),), source=J), 6.0)
    (request,) = node.requests()
    # Packed to 64 * (parts - 1) + 15 bytes: `parts` slices of 64 (image_part), the last shorter.
    state = incompressible(64 * (parts - 1))
    node.provide(request, state, 6.0)
    return node


def _image_parts(sent: list[Sent]) -> list[Sent]:
    return [
        s
        for s in sent
        if s.remind is None and s.is_data and isinstance(s.packet.options[-1], Image)
    ]


def test_s5_an_images_unconfirmed_parts_never_exceed_the_window() -> None:
    window = 4
    node = _answer_a_join(window, 20)
    node.run_until(12.0)
    parts = _image_parts(node.sent)
    assert len(parts) == window  # and no more, however long we wait unconfirmed
    first = parts[0].packet.seq
    confirmed = first - 1
    now = 12.0
    while len(_image_parts(node.sent)) < 20:
        # The joiner confirms one part in two, now and then.
        confirmed = min(confirmed + 2, _image_parts(node.sent)[-1].packet.seq)
        now += 0.25
        node.receive(control_packet(J, 0, now, Confirm(confirmed, A)), now)
        node.run_until(now + 0.2)
        highest = _image_parts(node.sent)[-1].packet.seq
        assert highest - confirmed <= window
        assert highest - confirmed == window or highest == first + 19
        assert now < 30.0
    parts = _image_parts(node.sent)
    assert [p.packet.seq for p in parts] == list(range(first, first + 20))
    assert [p.packet.s_bit for p in parts] == [False] * 19 + [True]


def test_s5_in_a_group_a_large_image_reaches_the_joiner_through_a_small_window() -> None:
    params = {"window": 16, "retention_count": 64, "image_part": 64}
    session, recorder = rmp_session(2, 6, params=params)
    session.start(0)
    session.network.run(6.0)
    session.schedule_draws(40, 50.0, 6.0, [0])
    session.network.run(8.0)
    session.start(1)
    session.network.run(60.0)
    assert session.peers[1].ready and session.converged()
    parts = [
        w
        for w in recorder.sent_by(0)
        if w.packet.data is not None and isinstance(w.packet.options[-1], Image)
    ]
    assert len({w.packet.seq for w in parts}) > 3 * 16  # several windows' worth
