"""Payloads longer than a packet, up to 4 MiB (issue 20): cut into a run of pieces, each a data
packet sequenced, stored, NACKed and repaired as any (RR-2100 §2.2-§2.7), put back together per
source and delivered once, whole, under the last piece's order key. Simulated, virtual time."""

from __future__ import annotations

import random

import pytest

from rmp.context import MAX_MESSAGE
from rmp.wire import Data, Piece, Remind, Retransmit
from tests.rmp.core_harness import Recorder, ready_node
from tests.rmp.large import Group
from whiteboard.sim.network import Impairment

MIB = 1 << 20


def random_payload(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def assert_once_everywhere(group: Group, payload: bytes) -> None:
    for member in group.members:
        assert member.copies(payload) == 1, (member.index, member.failures)
        assert member.failures == []
        counters = member.core.counters()
        assert counters["messages_refused"] == 0 and counters["pieces_dropped"] == 0
        assert member.core._delivery.pieces.held == 0  # nothing left in reassembly


def test_a_mebibyte_reaches_four_members_once_and_byte_identical() -> None:
    group = Group(4, seed=3)
    group.start_all()
    recorder = Recorder(group.network)
    payload = random_payload(MIB)
    start = group.network.now
    group.members[0].send(payload)
    done = group.run_until(group.has(payload), 5.0)
    group.settle(1.0)
    assert_once_everywhere(group, payload)
    # 747 pieces of 1,404 bytes at the lan profile's 4,000 packets a second: ~0.19 s.
    finals = [w.packet.options[-1] for w in recorder.sent_by(0) if w.packet.options]
    pieces = {(o.index, o.count) for o in finals if isinstance(o, Piece)}
    assert pieces == {(i, 747) for i in range(747)}
    assert done - start < 0.25
    # Every member files it under the same key: the last piece's.
    keys = {d.order_key for m in group.members for d in m.delivered if d.payload == payload}
    assert len(keys) == 1


def test_the_run_is_consecutive_and_marked_and_fits_the_datagram() -> None:
    group = Group(3, seed=4)
    group.start_all()
    recorder = Recorder(group.network)
    payload = random_payload(300_000)
    sender = group.members[0]
    sender.send(b"before")
    sender.send(payload)
    sender.send(b"after")  # queued behind the run: never in the middle of it
    group.run_until(group.has(b"after"), 5.0)
    data = [  # the first sending of each data packet: no repair, no reminder
        w.packet
        for w in recorder.sent_by(0)
        if w.packet.data is not None
        and not any(isinstance(o, Retransmit | Remind) for o in w.packet.options)
    ]
    finals = [p.options[-1] for p in data]
    assert isinstance(finals[0], Data) and data[0].data == b"before"
    assert isinstance(finals[-1], Data) and data[-1].data == b"after"
    run = data[1:-1]
    count = len(run)
    assert count == -(-len(payload) // 1404)
    assert [p.options[-1] for p in run] == [Piece(i, count) for i in range(count)]
    assert [p.seq for p in run] == [(run[0].seq + i) & 0xFFFF for i in range(count)]
    assert [p.s_bit for p in run] == [False] * (count - 1) + [True]
    assert b"".join(p.data or b"" for p in run) == payload
    assert max(len(w.raw) for w in recorder.wires) <= 1472
    for member in group.members:
        mine = [d.payload for d in member.delivered if d.origin == sender.member_id]
        assert mine == [b"before", payload, b"after"]


def test_a_mebibyte_under_five_percent_loss_with_small_payloads_around_it() -> None:
    group = Group(4, seed=5, impairment=Impairment(loss=0.05, jitter_ms=1.0))
    group.start_all(5.0)
    payload = random_payload(MIB, seed=2)
    sender, other = group.members[0], group.members[1]
    for k in range(5):
        sender.send(f"a{k}".encode())
        other.send(f"o{k}".encode())
    sender.send(payload)
    group.settle(0.05)
    for k in range(5):
        other.send(f"p{k}".encode())  # while the run is on its way
    sender.send(b"last")
    group.run_until(group.has(b"last"), 10.0)
    group.run_until(group.has(b"p4"), 5.0)
    group.settle(2.0)
    assert_once_everywhere(group, payload)
    retransmissions = sum(m.core.counters()["retransmissions"] for m in group.members)
    assert retransmissions > 0  # the loss was repaired, not missed
    expected = [*(f"a{k}".encode() for k in range(5)), payload, b"last"]
    for member in group.members:
        mine = [d.payload for d in member.delivered if d.origin == sender.member_id]
        assert mine == expected
        theirs = [d.payload for d in member.delivered if d.origin == other.member_id]
        assert theirs == [f"{c}{k}".encode() for c in "op" for k in range(5)]
        assert all(b == 1 for b in map(member.copies, expected))
    # Every member holds the same payloads under the same keys.
    boards = {tuple(sorted((d.order_key, d.payload) for d in m.delivered)) for m in group.members}
    assert len(boards) == 1


def test_send_refuses_a_payload_over_four_mebibytes_and_takes_one_of_exactly_that() -> None:
    node = ready_node()
    with pytest.raises(ValueError, match=r"4194305 bytes exceeds .* 4194304 bytes \(4 MiB\)"):
        node.core.send(bytes(MAX_MESSAGE + 1), node.now)
    node.core.send(bytes(MAX_MESSAGE), node.now)
    assert node.core.max_message == MAX_MESSAGE == 4 << 20
    assert node.core.max_payload == 1200


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.1, 0.4])
def test_a_joiner_arriving_during_a_run_gets_the_message_once(delay: float) -> None:
    """The run's first pieces are history before its join answer: the answerer lists them as
    holes (rmp/answer.py), so the joiner asks for them and puts the whole message together,
    or finds it in its image; never half of it, never twice."""
    group = Group(4, seed=6)
    for index in range(3):
        group.start(index)
    group.run_until(lambda: all(m.ready for m in group.members[:3]), 5.0)
    payload = random_payload(4 * MIB - 7, seed=3)
    group.members[0].send(payload)
    group.settle(delay)  # the run takes ~0.75 s
    group.start(3)
    joiner = group.members[3]
    group.run_until(lambda: joiner.ready and joiner.copies(payload) == 1, 10.0)
    group.run_until(group.has(payload, [0, 1, 2]), 5.0)
    group.settle(2.0)
    for member in group.members:
        assert member.copies(payload) == 1, (member.index, member.failures)
        assert member.core.counters()["messages_refused"] == 0


def test_a_sender_that_dies_mid_run_costs_one_failure_and_its_memory_is_freed() -> None:
    group = Group(3, seed=7)
    group.start_all()
    payload = random_payload(MIB)
    group.members[0].send(payload)
    group.settle(0.05)  # ~200 of its 747 pieces out
    group.network.crash(group.members[0].station)
    for member in group.members[1:]:
        assert member.core._delivery.pieces.held > 0
    group.settle(60.0)  # lan: forgotten after 30 s of silence
    for member in group.members[1:]:
        assert payload not in member.payloads()
        assert not any(len(p) > 1200 for p in member.payloads())  # nothing of it, in part
        assert member.core.counters()["messages_refused"] == 1
        assert member.core._delivery.pieces.held == 0
        assert len([f for f in member.failures if "was dropped" in f]) == 1


def test_the_seed_profile_delivers_a_mebibyte_to_listeners_under_loss() -> None:
    """At the report's values (a 200-packet store, a window of 64) a run outpaces the store of
    members that only listen, unless the run's window waits for them (rmp/sender.py)."""
    group = Group(4, seed=8, impairment=Impairment(loss=0.05), params={"profile": "seed"})
    group.start_all(10.0)
    payload = random_payload(MIB, seed=4)
    group.members[0].send(payload)
    group.run_until(group.has(payload), 60.0)
    group.settle(2.0)
    assert_once_everywhere(group, payload)
