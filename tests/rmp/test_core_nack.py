"""RR-2100 §2.6 (negative acknowledgements), §2.7 (retransmissions, the retention store) and the
§5 NackRange extension."""

from __future__ import annotations

from itertools import pairwise

import pytest

from rmp.stations import Waiting
from rmp.wire import Confirm, Nack, NackRange, Retransmit, RmpPacket, encode, ntp_middle32
from tests.rmp.core_harness import (
    A,
    B,
    C,
    D,
    Node,
    Recorder,
    addr_of,
    carries,
    control_packet,
    core_of,
    data_packet,
    payload_of,
    ready_node,
    rmp_session,
    start_all_alone,
)
from whiteboard.sim.session import SimSession

# -- §2.6: detecting a loss ------------------------------------------------------------------


def test_s2_6_a_gap_in_the_sequence_numbers_is_nacked() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)
    node.run_until(5.2)
    assert node.nacks() == [(5.2, Nack(0, 2, B))]
    (nack_packet,) = [s for s in node.sent if s.options_of(Nack)]
    assert nack_packet.dest is None  # multicast: any station may answer (§2.6)
    assert nack_packet.packet.data is None and nack_packet.packet.source == A


def test_s2_6_a_third_stations_confirm_of_a_packet_we_lack_is_nacked() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    # C confirms B's packet 3 in a data packet: we lack 2 and 3.
    node.receive(data_packet(C, 1, 5.2, confirms=[Confirm(3, B)]), 5.2)
    node.run_until(5.2)
    assert node.nacks() == [(5.2, NackRange(0, 2, B, 2))]  # §5: one option for the run
    # A control packet's confirmations reveal a loss just as well (§2.3: "faster detection").
    other = ready_node()
    other.receive(data_packet(B, 1, 5.1), 5.1)
    other.receive(control_packet(C, 0, 5.2, Confirm(2, B)), 5.2)
    other.run_until(5.2)
    assert other.nacks() == [(5.2, Nack(0, 2, B))]
    assert other.delivered_payloads() == [payload_of(B, 1)]


def test_s5_a_nack_names_several_missing_packets_with_a_nack_range() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 5, 5.2), 5.2)  # 2, 3 and 4 lost
    node.receive(data_packet(C, 1, 5.2), 5.2)
    node.receive(data_packet(C, 3, 5.2), 5.2)  # C's 2 lost
    node.run_until(5.2)
    assert sorted(node.nacks(), key=lambda n: n[1].source) == [
        (5.2, NackRange(0, 2, B, 3)),
        (5.2, Nack(0, 2, C)),
    ]


def test_s5_a_nack_range_is_answered_packet_by_packet() -> None:
    node = ready_node()
    for seq in range(1, 6):
        node.receive(data_packet(B, seq, 5.0 + seq / 10), 5.0 + seq / 10)
    node.receive(control_packet(D, 0, 6.0, NackRange(255, 2, B, 3)), 6.0)
    node.run_until(6.1)
    repaired = sorted(option.packet.seq for _, option in node.retransmits())
    assert repaired == [2, 3, 4]


def test_s2_6_the_nack_number_grows_and_the_nack_is_resent_every_nack_retry_not_more_often() -> (
    None
):
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)
    # Poke the core often (a busy timer, more packets that show the same gap): no extra NACK.
    for step in range(1, 45):
        now = 5.2 + step / 10
        node.run_until(now)
        node.tick(now)
        if step == 13:
            node.receive(data_packet(B, 4, now), now)
            node.receive(data_packet(C, 1, now, confirms=[Confirm(4, B)]), now)
    nacks = [(at, n) for at, n in node.nacks() if isinstance(n, Nack) and n.seq == 2]
    assert [n.nack_number for _, n in nacks] == [0, 1, 2, 3, 4]
    times = [at for at, _ in nacks]
    assert times[0] == 5.2
    assert [b - a for a, b in pairwise(times)] == pytest.approx([1.0] * 4)
    # Answered: no more NACKs for it.
    node.receive(data_packet(B, 2, 5.15), 9.65)
    node.run_until(15.0)
    assert [n for _, n in node.nacks() if n.seq == 2] == [n for _, n in nacks]
    assert node.delivered_payloads()[-3:] == [payload_of(B, s) for s in (2, 3, 4)]


def test_s2_6_only_stations_whose_depth_is_at_most_the_nack_number_answer() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.2), 5.2)
    assert node.core.depth == 3  # alone: 1; B and C, deeper, emitted since
    requesters = [D + number for number in range(6)]
    for number, requester in enumerate(requesters):
        at = 6.0 + number
        node.receive(control_packet(requester, 0, at, Nack(number, 1, B)), at)
        node.run_until(at + 0.5)
    assert node.core.depth == 3
    answered = [(s.at, s.dest, option.packet.seq) for s, option in node.retransmits()]
    # NACK numbers 3, 4 and 5 are answered, repair_hold after they came; 0, 1 and 2 are not.
    assert answered == [
        (pytest.approx(6.0 + number + 0.02), addr_of(requesters[number]), 1) for number in (3, 4, 5)
    ]


def test_s2_6_a_nack_resent_after_nack_retry_is_answered_again() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.send(b"mine", 5.2)  # depth 0: we answer every NACK
    for at in (6.0, 7.0, 8.0):  # D re-sends its NACK every nack_retry: each repair was lost
        node.receive(control_packet(D, 0, at, Nack(0, 1, B)), at)
        node.run_until(at + 0.5)
    assert [s.at for s, _ in node.retransmits()] == pytest.approx([6.02, 7.02, 8.02])


def _group_with_known_depths(seed: int) -> tuple[SimSession, Recorder]:
    """Four members, alone at t = 5, then members 1, 2 and 3 draw in that order: the virtual
    queue is 3 (depth 0), 2 (1), 1 (2), 0 (never drew: 4, the members it knew plus one)."""
    session, recorder = rmp_session(4, seed)
    start_all_alone(session)
    for k, index in enumerate((1, 2, 3)):
        session.network.schedule(6.0 + k, lambda index=index: session.draw(index))
    session.network.run(9.5)
    assert [core_of(session, i).depth for i in range(4)] == [4, 2, 1, 0]
    for index in range(4):  # every member agrees on the others' places
        estimates = {s.ident: s.depth for s in core_of(session, index).stations}
        for other in range(4):
            if other != index:
                assert estimates[session.peers[other].member_id] == core_of(session, other).depth
    return session, recorder


def test_s2_6_in_a_group_the_front_of_the_queue_answers_the_first_nack() -> None:
    session, recorder = _group_with_known_depths(5)
    source = session.peers[3].member_id
    recorder.drop(lambda s, r, data: s == 3 and r == 0 and carries(data, source, 2, False))
    session.network.schedule(10.0, lambda: session.draw(3))  # its packet 2: lost at member 0
    session.network.schedule(10.1, lambda: session.draw(3))  # packet 3 shows the gap
    session.network.run(15.0)
    nacks = [o for w in recorder.sent_by(0) for o in w.packet.options if isinstance(o, Nack)]
    assert [(n.nack_number, n.seq, n.source) for n in nacks] == [(0, 2, source)]
    repairs = recorder.retransmissions()
    # Depth 0 answers. Member 0 never drew: its address is not proven and the repair is more
    # than 3x what it sent, so it is multicast, not point to point (rmp/amplification.py).
    assert [(w.sender, w.dest, o.packet.seq) for w, o in repairs] == [(3, None, 2)]
    assert session.converged()


def test_s2_6_when_the_front_station_is_gone_the_next_in_the_queue_answers() -> None:
    session, recorder = _group_with_known_depths(5)
    source = session.peers[3].member_id
    recorder.drop(lambda s, r, data: s == 3 and r == 0 and carries(data, source, 2, False))
    session.network.schedule(10.0, lambda: session.draw(3))
    session.network.schedule(10.1, lambda: session.draw(3))
    session.network.schedule(10.1005, lambda: session.crash(3))  # packet 3 is on its way
    session.network.run(16.0)
    nacks = [o for w in recorder.sent_by(0) for o in w.packet.options if isinstance(o, Nack)]
    assert [(n.nack_number, n.seq) for n in nacks] == [(0, 2), (1, 2)]
    repairs = recorder.retransmissions()
    # NACK 0: nobody at depth 0 is left. NACK 1: member 2 (depth 1) answers, member 1 (2) not;
    # to the group, member 0's address being unproven (it never drew; rmp/amplification.py).
    assert [(w.sender, w.dest, o.packet.seq) for w, o in repairs] == [(2, None, 2)]
    second_nack_at = [w.at for w in recorder.sent_by(0) if w.packet.options[:1] == (nacks[1],)]
    # Sent when NACK 1 arrived (1 ms on the wire), after repair_hold.
    assert repairs[0][0].at == pytest.approx(second_nack_at[0] + 0.001 + 0.02, abs=1e-6)
    hashes = session.hashes()
    assert hashes[0] == hashes[1] == hashes[2]


# -- §2.7: retransmissions -------------------------------------------------------------------


def _holding_b(node: Node, count: int) -> list[RmpPacket]:
    packets = [
        data_packet(B, seq, 5.0 + seq / 10, confirms=[Confirm(0, C)]) for seq in range(1, count + 1)
    ]
    for packet in packets:
        node.receive(packet, 5.0 + packet.seq / 10)
    return packets


def test_s2_7_the_retransmit_option_carries_the_original_packet_and_its_source() -> None:
    node = ready_node()
    originals = _holding_b(node, 2)
    mark = len(node.sent)
    node.receive(control_packet(D, 0, 6.0, Nack(255, 2, B)), 6.0)
    assert node.sent_after(mark) == []  # held repair_hold, in case others ask too
    node.run_until(6.1)
    (sent,) = node.sent_after(mark)
    assert sent.at == pytest.approx(6.02)
    assert sent.dest == addr_of(D)  # point to point by default
    assert sent.packet.source == A and sent.packet.data is None
    (option,) = sent.packet.options  # the one option of the packet (§2.7)
    assert isinstance(option, Retransmit) and option.source == B
    assert encode(option.packet) == encode(originals[1])  # byte for byte as received


def test_s2_7_a_retransmission_is_multicast_when_several_stations_ask_within_repair_hold() -> None:
    node = ready_node()
    _holding_b(node, 2)
    node.receive(control_packet(C, 0, 6.0, Nack(255, 2, B)), 6.0)
    node.receive(control_packet(D, 0, 6.01, Nack(255, 2, B)), 6.01)
    node.run_until(6.5)
    assert [(s.dest, o.packet.seq) for s, o in node.retransmits()] == [(None, 2)]
    # Asked again more than repair_hold apart: one point-to-point repair each.
    node.receive(control_packet(C, 0, 8.0, Nack(255, 1, B)), 8.0)
    node.run_until(8.1)
    node.receive(control_packet(D, 0, 8.1, Nack(255, 1, B)), 8.1)
    node.run_until(8.5)
    assert [(s.dest, o.packet.seq) for s, o in node.retransmits()[1:]] == [
        (addr_of(C), 1),
        (addr_of(D), 1),
    ]


def test_s2_7_the_multicast_threshold_is_a_parameter() -> None:
    node = ready_node(params={"multicast_threshold": 3})
    _holding_b(node, 2)
    node.receive(control_packet(C, 0, 6.0, Nack(255, 2, B)), 6.0)
    node.receive(control_packet(D, 0, 6.01, Nack(255, 2, B)), 6.01)
    node.run_until(6.5)
    assert sorted((s.dest, o.packet.seq) for s, o in node.retransmits()) == [
        (addr_of(C), 2),
        (addr_of(D), 2),
    ]


def test_s2_7_a_retransmission_is_a_late_reception_delivered_once_without_depth_change() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.2), 5.2)
    node.receive(data_packet(C, 2, 5.25), 5.25)
    node.receive(data_packet(B, 3, 5.3), 5.3)  # B's 2 is missing
    node.run_until(5.3)
    depths = (node.core.depth, {s.ident: s.depth for s in node.core.stations})
    mark = len(node.sent)
    # D repairs it. The original confirms C's packet 1 (old: we have 2) and D's packet 2 (which
    # we never saw).
    original = data_packet(B, 2, 5.2, confirms=[Confirm(1, C), Confirm(2, D)])
    repair = RmpPacket(
        seq=0, timestamp=ntp_middle32(5.5), options=(Retransmit(B, original),), source=D
    )
    node.receive(repair, 5.5)
    node.receive(repair, 5.6)  # a second copy (the multicast one, say)
    node.receive(
        RmpPacket(
            seq=0,
            timestamp=ntp_middle32(5.7),
            options=(Retransmit(B, data_packet(B, 1, 5.1)),),
            source=C,
        ),
        5.7,
    )
    node.run_until(5.8)
    assert node.delivered_payloads().count(payload_of(B, 2)) == 1
    assert node.delivered_payloads().count(payload_of(B, 1)) == 1
    assert node.delivered_payloads()[-2:] == [payload_of(B, 2), payload_of(B, 3)]
    assert node.counter("duplicates_dropped") >= 2
    assert node.core.depth == depths[0]
    assert {i: d for i, d in depths[1].items()} == {
        s.ident: s.depth for s in node.core.stations if s.ident in depths[1]
    }
    # No automatic retransmission on the original's stale confirmation of C's 1 (§2.7) ...
    assert not node.retransmits()
    # ... but what it confirms and we lack is asked for.
    new_nacks = [o for s in node.sent_after(mark) for o in s.options_of(NackRange)]
    assert new_nacks == [NackRange(0, 1, D, 2)]


def test_s2_7_the_retention_store_is_bounded_by_count() -> None:
    node = ready_node(params={"retention_count": 5, "window": 2, "batch": False})
    for k in range(8):
        node.send(f"stroke {k}".encode(), 5.5)
    node.run_until(6.0)
    assert [s.packet.seq for s in node.data_sent()] == list(range(1, 9))
    counters = node.core.counters()
    assert (counters["retained"], counters["retention_evictions"]) == (5, 3)
    node.receive(control_packet(D, 0, 6.0, Nack(0, 3, A)), 6.0)  # evicted
    node.receive(control_packet(D, 0, 6.0, Nack(0, 4, A)), 6.0)  # still held
    node.run_until(6.5)
    assert node.counter("repairs_unavailable") == 1
    (event,) = node.protocol_events("repair_unavailable")
    assert (event.fields["requester"], event.fields["seq"]) == (D, 3)
    assert [o.packet.seq for _, o in node.retransmits()] == [4]


def test_s2_7_the_retention_store_is_bounded_by_age() -> None:
    node = ready_node(params={"retention_age": 30.0})
    node.receive(data_packet(B, 1, 5.2), 5.2)
    node.send(b"mine", 5.5)
    node.run_until(35.0)
    assert node.core.counters()["retained"] == 2
    node.run_until(36.0)
    assert node.core.counters()["retained"] == 0
    node.receive(control_packet(D, 0, 36.0, Nack(5, 1, A)), 36.0)
    node.run_until(36.5)
    assert node.counter("repairs_unavailable") == 1
    assert len(node.protocol_events("repair_unavailable")) == 1
    assert not node.retransmits()


def test_s2_7_seed_retention_keeps_200_packets_for_300_seconds() -> None:
    node = ready_node()
    for k in range(210):
        node.receive(data_packet(B, k + 1, 5.0 + k / 100), 5.0 + k / 100)
    counters = node.core.counters()
    assert (counters["retained"], counters["retention_evictions"]) == (200, 10)
    # Kept: packets 11 to 210, received from t = 5.10 to t = 7.09.
    node.run_until(5.10 + 300.0 - 0.001)
    assert node.core.counters()["retained"] == 200
    node.run_until(5.195 + 300.0)  # 11 to 20 are 300 s old
    assert node.core.counters()["retained"] == 190
    node.run_until(7.10 + 300.0)
    assert node.core.counters()["retained"] == 0


class _CountingDict(dict[int, Waiting]):
    """A station's waiting packets, counting the membership tests made of them."""

    looks = 0

    def __contains__(self, item: object) -> bool:
        _CountingDict.looks += 1
        return super().__contains__(item)


def test_s2_3_packets_arriving_behind_a_gap_do_not_rescan_those_waiting() -> None:
    """Each packet that arrives out of sequence asks for what is missing below it; what was
    looked at before (waiting, or asked for) is not looked at again: O(1) a packet, where a
    scan from the gap up was O(k) with k waiting (issue 18), and every gap is still asked."""
    node = ready_node()
    node.receive(data_packet(B, 1, 6.0), 6.0)
    station = node.core.stations.get(B)
    assert station is not None
    station.waiting = _CountingDict()
    _CountingDict.looks = 0
    for seq in range(3, 503):  # 2 is lost; 3..502 wait behind it
        if seq % 50 == 0:
            continue  # ... and a few more are lost
        node.receive(data_packet(B, seq, 6.0), 6.0)
    assert _CountingDict.looks < 2_000  # ~120,000 when each packet rescanned the gap
    assert sorted(station.missing) == [2, *range(50, 501, 50)]


def test_s2_3_a_repair_dropped_for_want_of_room_is_asked_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With MAX_WAITING packets held (10 here), a repair that is not the next in sequence is
    dropped ("it will be asked for again"): the next gap check must ask for it, though it lies
    below what was scanned before."""
    monkeypatch.setattr("rmp.sequencing.MAX_WAITING", 10)
    node = ready_node()
    node.receive(data_packet(B, 1, 6.0), 6.0)
    for seq in range(3, 14):  # 2 lost, and 7 lost: 10 wait
        if seq != 7:
            node.receive(data_packet(B, seq, 6.0), 6.0)
    station = node.core.stations.get(B)
    assert station is not None and len(station.waiting) == 10
    assert {2, 7} <= set(station.missing)
    node.receive(data_packet(B, 7, 6.1), 6.1)  # the repair: no room, dropped
    assert 7 not in station.missing and 7 not in station.waiting
    node.receive(control_packet(B, 13, 6.2), 6.2)  # its keepalive: a gap check
    assert 7 in station.missing
