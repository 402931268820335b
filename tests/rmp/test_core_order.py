"""RR-2100 §2.3 and §3: the wait interval (WI), late arrivals, and the delivery order."""

from __future__ import annotations

from rmp.wire import Nack
from tests.rmp.core_harness import (
    B,
    C,
    carries,
    data_packet,
    payload_of,
    ready_node,
    rmp_session,
    start_all_alone,
)
from whiteboard.sim.network import Impairment
from whiteboard.transport.events import Delivered

# -- §2.3 / §3: the wait interval ------------------------------------------------------------


def test_s2_3_after_the_wait_interval_a_waiting_packet_is_delivered_out_of_sequence() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)  # waits for 2
    node.run_until(15.19)
    assert node.delivered_payloads() == [payload_of(B, 1)]
    node.run_until(15.2)  # WI = 10 s (seed profile) after it came
    last = node.deliveries()[-1]
    assert (last.payload, last.late) == (payload_of(B, 3), False)
    assert node.counter("wi_expiries") == 1
    (event,) = node.protocol_events("wait_interval_expired")
    assert (event.fields["source"], event.fields["seq"], event.at) == (B, 3, 15.2)
    # The missing packet finally comes: delivered on arrival, as a late one (§3).
    node.receive(data_packet(B, 2, 5.15), 16.0)
    last = node.deliveries()[-1]
    assert (last.payload, last.late) == (payload_of(B, 2), True)
    assert node.counter("late_delivered") == 1
    assert node.delivered_payloads().count(payload_of(B, 3)) == 1  # not twice
    entry = node.core.stations.get(B)
    assert (entry.last_valid, entry.waiting, entry.missing) == (3, {}, {})
    # The sequence carries on normally, and the NACKs for 2 have stopped.
    node.receive(data_packet(B, 4, 16.5), 16.5)
    assert (node.deliveries()[-1].payload, node.deliveries()[-1].late) == (payload_of(B, 4), False)
    nacks_for_2 = [n for _, n in node.nacks() if isinstance(n, Nack) and n.seq == 2]
    node.run_until(30.0)
    assert [n for _, n in node.nacks() if isinstance(n, Nack) and n.seq == 2] == nacks_for_2
    assert len(nacks_for_2) == 11  # 5.2, 6.2, ..., 15.2: NACKs go on during WI


def test_s2_3_the_wait_interval_is_a_parameter() -> None:
    node = ready_node(params={"wait_interval": 2.5})
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)
    node.run_until(7.69)
    assert len(node.deliveries()) == 1
    node.run_until(7.7)
    assert node.delivered_payloads() == [payload_of(B, 1), payload_of(B, 3)]


def test_s3_a_late_packet_after_the_wait_interval_is_inserted_and_the_boards_converge() -> None:
    session, recorder = rmp_session(3, 21)
    start_all_alone(session)
    seen: list[tuple[int, bytes, bool, float]] = []
    session.on_delivered = lambda peer, event: seen.append(
        (peer.index, event.payload, event.late, session.network.now)
    )
    member = session.peers[1].member_id
    # Member 0 cannot get member 1's packet 1 (nor any copy: reminder, retransmission) until
    # t = 20, long after WI.
    recorder.drop(
        lambda s, r, data: r == 0 and session.network.now < 20.0 and carries(data, member, 1)
    )
    drawn: list[bytes] = []
    session.network.schedule(6.0, lambda: drawn.append(session.draw(1)))
    session.network.schedule(6.1, lambda: drawn.append(session.draw(1)))
    session.network.schedule(25.0, lambda: drawn.append(session.draw(2)))
    session.network.run(40.0)
    first, second, third = drawn
    at_0 = [(payload, late, at) for index, payload, late, at in seen if index == 0]
    by_payload = {payload: (late, at) for payload, late, at in at_0}
    assert [p for p, _, _ in at_0].count(first) == 1 and [p for p, _, _ in at_0].count(second) == 1
    late, at = by_payload[second]
    assert not late and abs(at - (6.1 + 10.0)) < 0.01  # WI after it came
    late, at = by_payload[first]
    assert late and 20.0 <= at < 22.0  # delivered on arrival, as late
    assert by_payload[third][0] is False
    assert session.converged()
    replica = session.peers[0].replica
    assert replica.stats.late_inserts == 1 and replica.stats.duplicates_delivered == 0
    assert len(replica.board.log()) == 3


# -- §3: ordering ----------------------------------------------------------------------------


def test_s3_delivery_keys_order_by_timestamp_then_originator_then_sequence() -> None:
    node = ready_node()
    node.receive(data_packet(C, 1, 6.0), 6.0)
    node.receive(data_packet(B, 1, 6.0), 6.001)  # same timestamp, smaller originator
    node.receive(data_packet(B, 2, 5.9), 6.002)  # an earlier timestamp, arriving later
    node.receive(data_packet(C, 2, 6.5), 6.5)
    node.send(b"mine", 6.6)
    deliveries = node.deliveries()
    keys = [d.order_key for d in deliveries]
    assert [(k[1], k[2]) for k in keys] == [(C, 1), (B, 1), (B, 2), (C, 2), (node.member_id, 1)]
    assert keys[0][0] == keys[1][0] < keys[3][0] < keys[4][0]  # equal timestamps, equal key
    assert keys[2][0] < keys[0][0]
    assert [d.late for d in deliveries] == [False, True, True, False, False]
    assert sorted(keys) == [keys[2], keys[1], keys[0], keys[3], keys[4]]
    assert [round(d.timestamp, 3) for d in deliveries] == [6.0, 6.0, 5.9, 6.5, 6.6]


def test_s3_all_replicas_converge_under_loss_duplication_and_reordering() -> None:
    session, _ = rmp_session(4, 3, Impairment(loss=0.15, dup=0.1, reorder=0.2, jitter_ms=5.0))
    start_all_alone(session)
    late_flags: list[Delivered] = []
    session.on_delivered = lambda peer, event: late_flags.append(event)
    session.schedule_draws(80, 40.0, 6.0, [0, 1, 2, 3])
    session.network.run(30.0)
    assert session.converged()
    logs = [[key for key, _ in peer.replica.board.log()] for peer in session.peers]
    assert all(log == logs[0] for log in logs) and len(logs[0]) == 80
    for peer in session.peers:
        stats = peer.replica.stats
        assert stats.duplicates_delivered == 0 and stats.order_violations == 0
    totals = session.counters_total()
    assert totals["retransmissions"] > 0 and totals["late_delivered"] > 0
    assert any(event.late for event in late_flags)


def test_s2_3_a_packet_behind_a_gap_whose_wait_interval_expired_is_not_held_again() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)  # 2 is lost for good
    node.run_until(20.0)  # 3 was delivered at 15.2, WI after the NACK for 2
    node.receive(data_packet(B, 4, 20.0), 20.0)
    node.run_until(20.5)
    assert node.delivered_payloads()[-1] == payload_of(B, 4)
