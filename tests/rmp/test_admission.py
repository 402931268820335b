"""Newcomers' packets are taken at a bounded rate, members' always (rmp/admission.py; issue 17:
well-formed packets from phantom stations must cost bounded work, in all)."""

from __future__ import annotations

from rmp.admission import STRANGER_BURST, STRANGER_RATE
from rmp.core import Phase
from rmp.wire import Join, RmpPacket, ntp_middle32
from tests.rmp.core_harness import B, J, Node, control_packet, data_packet, ready_node

PHANTOM = 0x7000_0000


def test_newcomers_packets_beyond_the_rate_are_dropped_unread_and_counted() -> None:
    node = ready_node(J, {"profile": "lan"})
    burst = int(STRANGER_BURST)
    for index in range(burst + 300):  # at one instant: the burst, no more
        node.receive(data_packet(PHANTOM + index, 5000, 6.0), 6.0)
    assert len(node.core.stations) == burst
    assert node.counter("strangers_throttled") == 300
    for index in range(int(STRANGER_RATE)):  # a second later: the rate's worth again
        node.receive(data_packet(PHANTOM + 10_000 + index, 5000, 7.0), 7.0)
    assert node.counter("strangers_throttled") == 300
    node.receive(data_packet(PHANTOM + 20_000, 5000, 7.0), 7.0)
    assert node.counter("strangers_throttled") == 301
    assert node.counter("malformed_dropped") == 0  # dropped unread, not taken for malformed


def test_a_member_is_served_whatever_newcomers_send() -> None:
    node = ready_node(J, {"profile": "lan"})
    node.receive(data_packet(B, 1, 6.0), 6.0)  # B's data in sequence: a member (one token)
    for index in range(int(STRANGER_BURST) - 1 + 100):
        node.receive(control_packet(PHANTOM + index, 1, 6.0), 6.0)
    assert node.counter("strangers_throttled") == 100
    for seq in range(2, 50):
        node.receive(data_packet(B, seq, 6.0), 6.0)
    assert node.counter("strangers_throttled") == 100
    assert len([p for p in node.delivered_payloads() if p.startswith(b"payload b2")]) == 49


def test_a_station_heard_for_long_is_no_longer_a_newcomer() -> None:
    """A viewer never sends data, so it stays a stranger; heard for suspect_after it is served
    like a member (the rate is for newcomers, not for whoever never draws)."""
    node = ready_node(J, {"profile": "lan"})
    viewer = PHANTOM - 1
    node.receive(control_packet(viewer, 0, 6.0), 6.0)
    for index in range(int(STRANGER_BURST) + 10):
        node.receive(control_packet(PHANTOM + index, 1, 20.0), 20.0)
    throttled = node.counter("strangers_throttled")
    node.receive(control_packet(viewer, 0, 20.0), 20.0)
    assert node.counter("strangers_throttled") == throttled


def test_while_joining_nothing_is_throttled() -> None:
    """Every station is new to a joiner: the answer and the image must come through."""
    node = Node(J, {"profile": "lan"})
    node.start(0.0)
    assert node.core.phase is Phase.JOINING
    for index in range(int(STRANGER_BURST) + 100):
        node.receive(control_packet(PHANTOM + index, 1, 0.1), 0.1)
    assert node.counter("strangers_throttled") == 0


def test_a_joiner_we_send_an_image_to_is_exempt() -> None:
    node = ready_node(J, {"profile": "lan", "answer_spread": 0.0})
    joiner = PHANTOM - 2
    node.receive(RmpPacket(0, ntp_middle32(6.0), (Join(255),), source=joiner), 6.0)
    (request,) = node.requests()
    node.provide(request, b"board" * 1000, 6.0)
    for index in range(int(STRANGER_BURST) + 10):  # newcomers spend the budget
        node.receive(control_packet(PHANTOM + index, 1, 6.0), 6.0)
    throttled = node.counter("strangers_throttled")
    node.receive(control_packet(joiner, 0, 6.0), 6.0)  # its confirmations still count
    assert node.counter("strangers_throttled") == throttled
