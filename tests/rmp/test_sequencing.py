"""``Sequencer`` alone: each station's receive sequence (RR-2100 §2.3), its gaps, the wait
interval and giving up, on hand-built data packets and a recording ``consume``."""

from __future__ import annotations

import random

from rmp.context import Phase
from rmp.sequencing import Sequencer
from rmp.stations import Missing
from tests.rmp.core_harness import A, B, J, data_packet, payload_of
from tests.rmp.parts import Consumed, Context
from whiteboard.transport.events import Failure


def sequencer(phase: Phase = Phase.READY, **params: object) -> tuple[Context, Sequencer, Consumed]:
    ctx = Context(J, phase, **params)
    consumed = Consumed()
    return ctx, Sequencer(ctx.shared, consumed), consumed


def test_s2_3_in_sequence_packets_are_consumed_and_owe_a_confirmation() -> None:
    ctx, part, consumed = sequencer()
    station = ctx.station(A)
    for seq in (1, 2):
        part.on_data(station, data_packet(A, seq, 0.1), 0.1, live=True)
    assert consumed.payloads == [payload_of(A, 1), payload_of(A, 2)]
    assert station.last_valid == 2 and not station.confirmed  # the A flag (§2.3)
    assert ctx.shared.store.get(A, 2) is not None  # kept for repairs (§2.7)


def test_s2_5_a_live_packet_moves_its_emitter_to_the_front_a_repair_does_not() -> None:
    ctx, part, _ = sequencer()
    ctx.station(A)
    b = ctx.station(B)
    part.on_data(b, data_packet(B, 1, 0.1), 0.1, live=False)
    assert b.depth == 2
    part.on_data(b, data_packet(B, 2, 0.2), 0.2, live=True)
    assert b.depth == 0


def test_s2_3_out_of_sequence_waits_and_marks_the_gap_missing_with_one_random_delay() -> None:
    ctx, part, consumed = sequencer(nack_delay=0.5)
    station = ctx.station(A)
    part.on_data(station, data_packet(A, 4, 1.0), 1.0, live=True)
    delay = random.Random(0).random() * 0.5  # one draw for the whole gap
    assert consumed.items == [] and list(station.waiting) == [4]
    assert station.missing == {s: Missing(1.0, 1.0 + delay) for s in (1, 2, 3)}
    assert station.waiting[4].deliver_at == 1.0 + 10.0  # WI (§2.3)


def test_s2_3_filling_the_gap_delivers_the_waiting_packets_in_order() -> None:
    ctx, part, consumed = sequencer()
    station = ctx.station(A)
    for seq in (3, 2, 1):
        part.on_data(station, data_packet(A, seq, 1.0), 1.0, live=True)
    assert consumed.payloads == [payload_of(A, s) for s in (1, 2, 3)]
    assert station.missing == {} and station.waiting == {} and station.last_valid == 3


def test_s2_3_wi_runs_from_when_the_gap_was_found() -> None:
    ctx, part, _ = sequencer()
    station = ctx.station(A)
    part.on_data(station, data_packet(A, 3, 1.0), 1.0, live=True)
    part.on_data(station, data_packet(A, 4, 6.0), 6.0, live=True)
    assert station.waiting[4].deliver_at == 11.0  # not 16: the gap before it dates from 1.0


def test_duplicates_are_dropped_and_counted() -> None:
    ctx, part, consumed = sequencer()
    station = ctx.station(A)
    packet = data_packet(A, 1, 0.1)
    part.on_data(station, packet, 0.1, live=True)
    part.on_data(station, packet, 0.2, live=True)
    part.on_data(station, data_packet(A, 3, 0.3), 0.3, live=True)
    part.on_data(station, data_packet(A, 3, 0.3), 0.4, live=True)
    assert len(consumed.items) == 1 and ctx.shared.counters["duplicates_dropped"] == 2


def test_s2_3_wi_expiry_delivers_ahead_and_the_late_packet_still_comes_once() -> None:
    ctx, part, consumed = sequencer()
    station = ctx.station(A)
    part.on_data(station, data_packet(A, 2, 1.0), 1.0, live=True)
    assert list(part.deadlines()) == [11.0]
    part.expire_waiting(station, 10.9)
    assert consumed.items == []
    part.expire_waiting(station, 11.0)
    assert consumed.payloads == [payload_of(A, 2)] and station.delivered_ahead == {2}
    assert ctx.shared.counters["wi_expiries"] == 1
    assert [e.fields for e in ctx.protocol_events("wait_interval_expired")] == [
        {"source": A, "seq": 2}
    ]
    part.on_data(station, data_packet(A, 1, 1.0), 12.0, live=False)
    assert consumed.payloads == [payload_of(A, 2), payload_of(A, 1)]
    assert station.last_valid == 2 and station.delivered_ahead == set()


def test_before_the_join_answer_nothing_is_a_gap_and_nothing_expires() -> None:
    ctx, part, consumed = sequencer(Phase.JOINING)
    station = ctx.station(A)
    part.on_data(station, data_packet(A, 7, 1.0), 1.0, live=True)
    part.detect_gap(station, 9, 1.0)
    assert station.missing == {} and list(station.waiting) == [7] and consumed.items == []
    assert list(part.deadlines()) == []
    part.expire_waiting(station, 100.0)
    assert list(station.waiting) == [7]


def test_detect_gap_asks_for_everything_up_to_a_confirmed_number() -> None:
    ctx, part, _ = sequencer()
    station = ctx.station(A, last_valid=5)
    part.detect_gap(station, 5, 1.0)
    assert station.missing == {}
    part.detect_gap(station, 8, 1.0)
    assert sorted(station.missing) == [6, 7, 8]


def test_giving_up_reports_a_failure_and_moves_past_the_lost_packets() -> None:
    ctx, part, consumed = sequencer()
    station = ctx.station(A)
    part.on_data(station, data_packet(A, 3, 1.0), 1.0, live=True)
    part.give_up_on(station, [1, 2], 2.0)
    assert consumed.payloads == [payload_of(A, 3)] and station.last_valid == 3
    assert ctx.shared.counters["packets_given_up"] == 2
    (failure,) = [e for e in ctx.drain() if isinstance(e, Failure)]
    assert "2 drawing packet(s) from member 000000a1" in failure.reason
