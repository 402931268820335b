"""The NACK / remind / retransmit engine alone (RR-2100 §2.3-§2.7): ``RepairEngine`` and
``Reminder`` over a real ``Sequencer``, on hand-built packets, with no core around them."""

from __future__ import annotations

import pytest

from rmp.context import Phase
from rmp.remind import Reminder
from rmp.repair import QUIET_CONFIRM_STATIONS, RepairEngine
from rmp.sequencing import Sequencer
from rmp.stations import Missing, Station
from rmp.wire import Confirm, Data, Nack, NackRange, Remind, Retransmit, RmpPacket, encode
from tests.rmp.core_harness import A, B, C, J, addr_of, data_packet, payload_of
from tests.rmp.parts import Consumed, Context


class Engine:
    """A RepairEngine and its Reminder on one context; ``known`` adds named stations."""

    def __init__(self, phase: Phase = Phase.READY, **params: object) -> None:
        self.ctx = Context(J, phase, **params)
        self.consumed = Consumed()
        self.sequencer = Sequencer(self.ctx.shared, self.consumed)
        self.reminder = Reminder(self.ctx.shared, self.sequencer)
        self.part = RepairEngine(self.ctx.shared, self.sequencer, self.reminder, self.known)

    def known(self, ident: int, now: float) -> Station | None:
        station = self.ctx.shared.stations.get(ident)
        return station if station is not None else self.ctx.station(ident)

    def store(self, source: int, seq: int) -> RmpPacket:
        """A packet of ``source`` we hold (ours in our own store)."""
        s = self.ctx.shared
        packet = data_packet(source, seq, 0.0)
        (s.own_store if source == J else s.store).put(source, seq, packet, 0.0)
        # As the core has it: our own packets are numbered up to S_n, and the sequencer marks
        # what it stores of another station as seen.
        station = s.stations.get(source)
        if source == J:
            s.seq = max(s.seq, seq)
        elif station is not None:
            station.seen_top = max(station.seen_top, seq)
        return packet


# -- asking: NACKs (§2.3, §2.6) ---------------------------------------------------------------


def test_s2_6_due_nacks_leave_together_one_option_per_run() -> None:
    engine = Engine()
    station = engine.ctx.station(A)
    for seq in (3, 4, 5, 8):
        station.missing[seq] = Missing(1.0, 1.0)
    station.missing[9] = Missing(1.0, 7.0)  # not due yet
    engine.part.send_due_nacks(station, 2.0)
    ((packet, to),) = engine.ctx.sent()
    assert to is None  # multicast: any station whose depth allows may answer
    assert packet.options == (NackRange(0, 3, A, 3), Nack(0, 8, A))
    assert [station.missing[s].nack_number for s in (3, 8, 9)] == [1, 1, 0]
    assert station.missing[3].next_nack_at == 3.0  # nack_retry later (§2.3)
    assert engine.ctx.shared.counters["nacked_packets"] == 4
    assert engine.ctx.shared.counters["nacks_sent"] == 2
    assert list(engine.part.deadlines()) == [3.0]  # the station's earliest NACK


def test_s4_2_2_a_run_asked_for_a_different_number_of_times_is_split() -> None:
    engine = Engine()
    station = engine.ctx.station(A)
    station.missing[1] = Missing(1.0, 1.0, nack_number=2)
    station.missing[2] = Missing(1.0, 1.0)
    engine.part.send_due_nacks(station, 1.0)
    ((packet, _),) = engine.ctx.sent()
    assert packet.options == (Nack(2, 1, A), Nack(0, 2, A))


def test_a_packet_asked_for_past_give_up_after_is_given_up() -> None:
    engine = Engine(give_up_after=300.0)
    station = engine.ctx.station(A)
    station.missing[1] = Missing(0.0, 400.0)
    engine.part.send_due_nacks(station, 300.5)
    assert station.missing == {} and station.last_valid == 1
    assert engine.ctx.shared.counters["packets_given_up"] == 1 and engine.ctx.sent() == []


def test_another_stations_nack_for_a_packet_we_lack_postpones_ours() -> None:
    engine = Engine()
    a, b = engine.ctx.station(A), engine.ctx.station(B)
    b.missing[4] = Missing(1.0, 1.2)
    engine.part.on_nack(a, Nack(3, 4, B), trusted=True, now=1.1)
    assert b.missing[4] == Missing(1.0, 2.1, nack_number=4)


# -- answering NACKs: the depth decides (§2.6) and repairs (§2.7) -----------------------------


def test_s2_6_a_station_answers_a_nack_only_when_its_depth_allows() -> None:
    engine = Engine()
    a = engine.ctx.station(A)
    engine.ctx.station(B)
    engine.ctx.shared.stations.depth = 2
    engine.store(B, 4)
    engine.part.on_nack(a, Nack(1, 4, B), trusted=True, now=1.0)
    assert engine.part.repairs == {}
    engine.part.on_nack(a, Nack(2, 4, B), trusted=True, now=1.0)
    assert list(engine.part.repairs) == [(B, 4)]
    assert list(engine.part.deadlines()) == [1.0 + 0.02]  # repair_hold gathers requesters


def test_s2_4_an_untrusted_nack_is_not_answered() -> None:
    engine = Engine()
    a = engine.ctx.station(A)
    engine.store(J, 1)
    engine.part.on_nack(a, Nack(0, 1, J), trusted=False, now=1.0)
    assert engine.part.repairs == {}


def test_s2_7_one_requester_is_repaired_point_to_point_once() -> None:
    engine = Engine()
    a = engine.ctx.station(A)
    engine.ctx.shared.credit.received(addr_of(A), 10_000)  # A sent us plenty (its strokes)
    packet = engine.store(J, 1)
    engine.part.on_nack(a, Nack(0, 1, J), trusted=True, now=1.0)
    engine.part.flush_repairs(1.0)
    assert engine.ctx.sent() == []  # held repair_hold first
    engine.part.flush_repairs(1.02)
    ((wrapper, to),) = engine.ctx.sent()
    assert to == addr_of(A) and wrapper.options == (Retransmit(J, packet),)
    engine.part.on_nack(a, Nack(1, 1, J), trusted=True, now=1.03)
    engine.part.flush_repairs(1.05)
    assert engine.ctx.sent() == []  # within half a retry interval: not doubled
    engine.part.on_nack(a, Nack(2, 1, J), trusted=True, now=1.6)
    engine.part.flush_repairs(1.7)
    assert len(engine.ctx.sent()) == 1
    assert engine.ctx.shared.counters["retransmissions"] == 2


def test_an_unproven_address_is_repaired_point_to_point_within_3x_what_it_sent() -> None:
    engine = Engine()
    a = engine.ctx.station(A)
    packet = engine.store(J, 1)
    size = len(encode(packet)) + 24  # wrapped in a Retransmit
    engine.ctx.shared.credit.received(addr_of(A), (size + 2) // 3)  # enough for one
    engine.part.on_nack(a, Nack(0, 1, J), trusted=True, now=1.0)
    engine.part.flush_repairs(1.02)
    ((_, to),) = engine.ctx.sent()
    assert to == addr_of(A)
    engine.part.on_nack(a, Nack(1, 1, J), trusted=True, now=1.6)  # its credit is spent
    engine.part.flush_repairs(1.7)
    ((wrapper, to),) = engine.ctx.sent()
    assert to is None and wrapper.options == (Retransmit(J, packet),)
    assert engine.ctx.shared.counters["repairs_to_group_unproven"] == 1


def test_s2_7_several_requesters_get_one_multicast_repair() -> None:
    engine = Engine(multicast_threshold=2)
    a, c = engine.ctx.station(A), engine.ctx.station(C)
    engine.store(J, 1)
    engine.part.on_nack(a, Nack(0, 1, J), trusted=True, now=1.0)
    engine.part.on_nack(c, Nack(0, 1, J), trusted=True, now=1.01)
    engine.part.flush_repairs(1.02)
    ((_, to),) = engine.ctx.sent()
    assert to is None
    assert [e.fields["multicast"] for e in engine.ctx.protocol_events("retransmission")] == [1]


def test_a_nack_for_our_evicted_packet_is_reported_unavailable() -> None:
    engine = Engine(retention_count=65, window=64)
    a = engine.ctx.station(A)
    for seq in range(1, 67):
        engine.store(J, seq)
    engine.ctx.shared.seq = 66
    engine.part.on_nack(a, Nack(0, 1, J), trusted=True, now=1.0)
    assert engine.part.repairs == {}
    assert engine.ctx.shared.counters["repairs_unavailable"] == 1


def test_s2_7_a_retransmission_is_received_as_a_late_packet_with_its_confirmations() -> None:
    engine = Engine()
    a = engine.ctx.station(A)
    b = engine.ctx.station(B)
    inner = data_packet(B, 1, 0.5, confirms=(Confirm(3, A),))
    engine.part.on_retransmit(Retransmit(B, inner), 1.0)
    assert engine.consumed.payloads == [payload_of(B, 1)] and b.last_valid == 1
    assert sorted(a.missing) == [1, 2, 3]  # B's confirmation shows what we lack from A
    assert b.depth == 2  # not live: the queue does not move (§2.5)


def test_a_retransmission_naming_another_source_is_malformed() -> None:
    engine = Engine()
    engine.part.on_retransmit(Retransmit(A, data_packet(B, 1, 0.5)), 1.0)
    assert engine.ctx.shared.counters["malformed_dropped"] == 1 and engine.consumed.items == []


# -- answering reminders (§2.4, §2.5) ---------------------------------------------------------


def reminder_packet(source: int, seq: int, *confirms: Confirm) -> RmpPacket:
    return data_packet(source, seq, 0.0, confirms=confirms, remind=1)


def test_s2_4_a_reminder_we_have_is_confirmed_point_to_point() -> None:
    engine = Engine()
    a = engine.ctx.station(A, last_valid=5)
    a.confirmed = False  # §2.3's A flag: no data packet of ours confirmed it yet
    engine.part.on_remind(a, reminder_packet(A, 5), Remind(1), trusted=True, now=1.0)
    ((packet, to),) = engine.ctx.sent()
    assert to == addr_of(A) and packet.options == (Confirm(5, A),) and packet.data is None


@pytest.mark.parametrize("others", [QUIET_CONFIRM_STATIONS - 2, QUIET_CONFIRM_STATIONS - 1])
def test_s2_3_in_a_large_group_a_first_reminder_of_what_we_confirmed_goes_unanswered(
    others: int,
) -> None:
    """§2.3: a confirmation that went out in a multicast data packet "will not have to be
    confirmed" again. In a group of QUIET_CONFIRM_STATIONS (the emitter and ``others``) only
    a second reminder (ours did not get there) is answered; in a smaller one, every one."""
    engine = Engine()
    a = engine.ctx.station(A, last_valid=5)
    for n in range(others):
        engine.ctx.station(0x1000 + n)
    large = len(engine.ctx.shared.stations) >= QUIET_CONFIRM_STATIONS
    assert a.confirmed  # the A flag: our last data packet confirmed 5
    engine.part.on_remind(a, reminder_packet(A, 5), Remind(1), trusted=True, now=1.0)
    assert len(engine.ctx.sent()) == (0 if large else 1)
    engine.part.on_remind(a, reminder_packet(A, 5), Remind(2), trusted=True, now=2.0)
    ((packet, to),) = engine.ctx.sent()
    assert to == addr_of(A) and packet.options == (Confirm(5, A),)


def test_s2_5_a_reminders_confirmations_show_what_its_emitter_missed() -> None:
    engine = Engine()
    a = engine.ctx.station(A, last_valid=5)
    engine.ctx.shared.seq = 3
    for seq in (2, 3):
        engine.store(J, seq)
    packet = reminder_packet(A, 5, Confirm(1, J))
    engine.part.on_remind(a, packet, Remind(1), trusted=True, now=1.0)
    assert sorted(engine.part.repairs) == [(J, 2), (J, 3)]
    engine.part.repairs.clear()
    engine.part.on_remind(a, packet, Remind(1), trusted=False, now=1.0)
    assert engine.part.repairs == {}


def test_a_reminder_before_the_join_answer_is_ignored() -> None:
    engine = Engine(Phase.JOINING)
    a = engine.ctx.station(A, last_valid=5)
    engine.part.on_remind(a, reminder_packet(A, 5), Remind(1), trusted=True, now=1.0)
    assert engine.ctx.sent() == []


# -- the Reminder: our last packet (§2.4) and confirmations (§2.3) ----------------------------


def our_packet(seq: int) -> RmpPacket:
    return RmpPacket(seq=seq, timestamp=0, options=(Data(),), data=b"ours", source=J)


def test_s2_4_our_last_packet_is_reminded_until_every_station_confirms_it() -> None:
    engine = Engine(remind_min=0.5, remind_max=1.0)
    a = engine.ctx.station(A)
    reminder, shared = engine.reminder, engine.ctx.shared
    shared.seq = 1
    reminder.sent(our_packet(1), 0.0)
    first = reminder.next_remind_at
    assert first is not None and 0.5 <= first <= 1.0
    reminder.remind(first - 0.01)
    assert engine.ctx.sent() == []
    reminder.remind(first)
    ((packet, to),) = engine.ctx.sent()
    assert to is None and packet.options[0] == Remind(1) and packet.data == b"ours"
    reminder.on_confirm(a, Confirm(1, J), first)
    assert a.confirmed_mine == 1 and reminder.all_confirmed()
    reminder.remind(10.0)
    assert engine.ctx.sent() == [] and reminder.next_remind_at is None


def test_s2_4_reminding_stops_at_remind_limit() -> None:
    engine = Engine(remind_limit=2)
    engine.ctx.station(A)
    reminder = engine.reminder
    engine.ctx.shared.seq = 1
    reminder.sent(our_packet(1), 0.0)
    for _ in range(3):
        assert reminder.next_remind_at is not None
        reminder.remind(reminder.next_remind_at)
    assert len(engine.ctx.sent()) == 2 and reminder.next_remind_at is None
    assert [e.fields for e in engine.ctx.protocol_events("remind_gave_up")] == [{"seq": 1}]


def test_s2_3_owed_confirmations_are_given_in_turn_within_the_budget() -> None:
    engine = Engine()
    stations = [engine.ctx.station(ident, last_valid=1) for ident in (A, B, C)]
    for station in stations:
        station.confirmed = False
    first, chosen = engine.reminder.confirm_options(16)
    assert first == [Confirm(1, A), Confirm(1, B)] and chosen == stations[:2]
    second, _ = engine.reminder.confirm_options(16)
    assert second == [Confirm(1, C), Confirm(1, A)]


def test_hurry_brings_the_next_reminder_forward_never_back() -> None:
    engine = Engine(remind_min=0.5)
    engine.reminder.hurry(1.0)
    assert engine.reminder.next_remind_at == 1.5
    engine.reminder.hurry(1.2)
    assert engine.reminder.next_remind_at == 1.5


def test_a_third_stations_confirmation_reveals_a_gap_but_names_no_new_station() -> None:
    engine = Engine()
    a = engine.ctx.station(A)
    b = engine.ctx.station(B, last_valid=2)
    engine.reminder.on_confirm(a, Confirm(4, B), 1.0)
    assert sorted(b.missing) == [3, 4]
    engine.reminder.on_confirm(a, Confirm(4, C), 1.0)
    assert C not in engine.ctx.shared.stations
