"""RR-2100 §2.1 (the active station list and S_n), §2.3 (confirmations) and §2.5 (depth)."""

from __future__ import annotations

from rmp.image import split_image
from rmp.wire import Confirm, Image, Join, Nack, Retransmit, RmpPacket, ntp_middle32
from tests.rmp.core_harness import (
    A,
    B,
    C,
    D,
    J,
    Node,
    control_packet,
    data_packet,
    incompressible,
    payload_of,
    ready_node,
)

# -- §2.1 ----------------------------------------------------------------------------------------


def test_s2_1_active_station_entry_has_identifier_last_valid_seq_a_flag_and_depth() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.5), 5.5)
    entry = node.core.stations.get(B)
    assert entry is not None
    assert (entry.ident, entry.last_valid, entry.confirmed, entry.depth) == (B, 1, False, 0)
    node.receive(data_packet(B, 2, 5.6), 5.6)
    assert (entry.last_valid, entry.confirmed) == (2, False)
    # §2.1: "valid" means the previous valid number plus one: a jump does not count.
    node.receive(data_packet(B, 4, 5.7), 5.7)
    assert entry.last_valid == 2
    node.receive(data_packet(B, 3, 5.8), 5.8)
    assert entry.last_valid == 4
    # A station only named in someone else's confirmations is not listed: hearsay could fill
    # the list with phantoms (bounded memory); it is listed once heard, or named in a join list.
    node.receive(data_packet(C, 1, 5.9, confirms=[Confirm(7, D)]), 5.9)
    assert node.core.stations.get(D) is None


def test_s2_1_local_sequence_numbers_advance_only_on_new_data() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)  # a gap: we send NACKs (control packets)
    node.send(b"first", 5.5)
    node.run_until(7.0)  # reminders of "first" go out (nobody confirms it)
    # A NACK for our packet 1: we retransmit it (depth 0: we emitted last).
    node.receive(control_packet(C, 0, 7.1, Nack(0, 1, A)), 7.1)
    node.run_until(7.2)
    node.send(b"second", 7.5)

    own = [s for s in node.sent if s.packet.source == A]
    kinds = {
        "data": [s for s in own if s.is_data and s.remind is None],
        "reminder": [s for s in own if s.remind is not None],
        "nack": [s for s in own if s.options_of(Nack)],
        "retransmit": [s for s in own if s.options_of(Retransmit)],
    }
    assert all(kinds.values()), {k: len(v) for k, v in kinds.items()}
    assert [s.packet.seq for s in kinds["data"]] == [1, 2]
    assert [s.packet.data for s in kinds["data"]] == [b"first", b"second"]
    # Control packets, reminders and retransmissions between the two carry S_n = 1 unchanged.
    between = [s for s in own if kinds["data"][0].at <= s.at < kinds["data"][1].at]
    assert {s.packet.seq for s in between} == {1}
    (_, option) = node.retransmits()[0]
    assert option.packet.seq == 1 and option.packet.data == b"first"


def test_s2_1_image_parts_are_new_data_and_advance_the_sequence_number() -> None:
    node = ready_node()
    node.send(b"drawn", 5.5)  # S_n = 1
    node.receive(RmpPacket(seq=0, timestamp=ntp_middle32(6.0), options=(Join(0),), source=J), 6.0)
    (request,) = node.requests()
    node.provide(request, incompressible(2500), 6.0)  # three image parts of 1024 bytes at most
    node.run_until(6.5)
    node.send(b"after", 7.0)
    data = [s for s in node.sent if s.is_data and s.remind is None]
    assert [type(s.packet.options[-1]).__name__ for s in data] == [
        "Data",
        "Image",
        "Image",
        "Image",
        "Data",
    ]
    assert [s.packet.seq for s in data] == [1, 2, 3, 4, 5]
    # The join answer (a control packet) went out between, with S_n = 1.
    (answer,) = [s for s in node.sent if any(j.answer for j in s.options_of(Join))]
    assert answer.packet.seq == 1 and answer.packet.data is None


# -- §2.3 ----------------------------------------------------------------------------------------


def test_s2_3_confirmations_are_piggybacked_for_stations_whose_a_flag_is_zero() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.2), 5.2)
    node.receive(data_packet(C, 2, 5.3), 5.3)
    node.send(b"one", 6.0)
    node.send(b"two", 6.5)  # nothing new since: nothing to confirm
    node.receive(data_packet(B, 2, 6.6), 6.6)
    node.send(b"three", 7.0)
    confirms = [set(s.options_of(Confirm)) for s in node.data_sent()]
    assert confirms == [{Confirm(1, B), Confirm(2, C)}, set(), {Confirm(2, B)}]
    assert node.core.stations.get(B).confirmed and node.core.stations.get(C).confirmed


def test_s2_3_only_a_multicast_data_packet_sets_the_a_flag() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    # Idle: the keepalive (an extension) multicasts our confirmations in a control packet.
    node.run_until(11.0)
    controls = [s for s in node.sent if not s.is_data and s.options_of(Confirm)]
    assert controls and Confirm(1, B) in controls[0].options_of(Confirm)
    assert controls[0].dest is None  # multicast, yet a control packet
    assert node.core.stations.get(B).confirmed is False  # §2.3: it does not set A
    node.send(b"data", 11.5)
    assert Confirm(1, B) in node.data_sent()[-1].options_of(Confirm)
    assert node.core.stations.get(B).confirmed is True
    node.send(b"more", 12.0)
    assert node.data_sent()[-1].options_of(Confirm) == []


def test_s2_3_reminders_carry_confirmations_without_setting_the_a_flag() -> None:
    node = ready_node()
    node.send(b"mine", 5.1)
    node.receive(data_packet(B, 1, 5.2), 5.2)
    node.run_until(6.5)  # a reminder of "mine" is due within 0.5-1 s
    reminders = node.reminders()
    assert reminders and Confirm(1, B) in reminders[0].options_of(Confirm)
    assert node.core.stations.get(B).confirmed is False


def test_s2_3_out_of_sequence_packets_go_to_the_waiting_list() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)
    node.receive(data_packet(B, 4, 5.3), 5.3)
    entry = node.core.stations.get(B)
    assert sorted(entry.waiting) == [3, 4] and entry.last_valid == 1
    assert node.delivered_payloads() == [payload_of(B, 1)]
    assert set(entry.missing) == {2}
    # The gap filled, the waiting packets are delivered in sequence and the list updated.
    node.receive(data_packet(B, 2, 5.15), 5.4)
    assert node.delivered_payloads() == [payload_of(B, s) for s in (1, 2, 3, 4)]
    assert (entry.waiting, entry.missing, entry.last_valid, entry.confirmed) == ({}, {}, 4, False)


# -- §2.5 ----------------------------------------------------------------------------------------


def test_s2_5_depth_on_joining_is_the_number_of_active_stations_plus_one() -> None:
    alone = ready_node()
    assert alone.core.depth == 1  # no station: 0 + 1
    joiner = Node(J)
    joiner.start(0.0)
    answer = control_packet(
        A, 2, 0.3, Join(0, answer=True), Confirm(2, A), Confirm(5, B), Confirm(1, C)
    )
    joiner.receive(answer, 0.3)
    for index, part in enumerate(parts := split_image(J, b"board", 1024)):
        last = index == len(parts) - 1
        joiner.receive(
            RmpPacket(
                seq=3 + index,
                timestamp=ntp_middle32(0.4),
                options=(Image(last),),
                data=part,
                s_bit=last,
                source=A,
            ),
            0.4,
        )
    assert joiner.is_ready()
    assert joiner.core.depth == 4  # A, B and C are active: 3 + 1


def test_s2_5_depth_is_zero_after_emitting_and_grows_when_a_deeper_station_emits() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.2), 5.2)
    node.send(b"mine", 5.3)
    assert node.core.depth == 0
    # We are in front now: B and C are behind us, C (the last before us) nearest.
    depth = {s.ident: s.depth for s in node.core.stations}
    assert 0 < depth[C] < depth[B]
    node.receive(data_packet(B, 2, 5.4), 5.4)  # B was deeper than us: we move back one
    assert node.core.depth == 1
    assert node.core.stations.get(B).depth == 0
    node.receive(data_packet(C, 2, 5.5), 5.5)  # C was deeper than us too
    assert node.core.depth == 2
    node.receive(data_packet(C, 3, 5.6), 5.6)  # C, at depth 0, is in front of us: no change
    assert node.core.depth == 2
    node.receive(data_packet(B, 3, 5.7), 5.7)  # B (depth 1) was in front of us too
    assert node.core.depth == 2


def test_s2_5_control_packets_and_retransmissions_do_not_move_the_queue() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.send(b"mine", 5.3)
    assert node.core.depth == 0
    depth_b = node.core.stations.get(B).depth
    node.receive(control_packet(B, 1, 5.4, Confirm(1, A)), 5.4)
    assert (node.core.depth, node.core.stations.get(B).depth) == (0, depth_b)
    # B's packet 2, repaired by C: a late reception (§2.7), not an emission by B or C.
    node.receive(data_packet(B, 3, 5.5), 5.5)
    assert node.core.depth == 1  # B emitted (3)
    node.send(b"again", 5.6)
    before = (node.core.depth, {s.ident: s.depth for s in node.core.stations})
    repair = RmpPacket(
        seq=0,
        timestamp=ntp_middle32(5.7),
        options=(Retransmit(B, data_packet(B, 2, 5.45)),),
        source=C,
    )
    node.receive(repair, 5.7)
    assert payload_of(B, 2) in node.delivered_payloads()
    after = (node.core.depth, {s.ident: s.depth for s in node.core.stations if s.ident != C})
    assert after == (before[0], {k: v for k, v in before[1].items() if k != C})
