"""Sending alone (RR-2100 §2.2, §5): ``Sender``'s pacing, send window, image jobs and
keepalive, with a real ``Reminder`` and ``Delivery``; and ``Delivery``'s order (§3)."""

from __future__ import annotations

import pytest

from rmp.context import Phase
from rmp.ordering import Delivery
from rmp.remind import Reminder
from rmp.sender import PACE_CATCH_UP, Sender
from rmp.sequencing import Sequencer
from rmp.wire import Confirm, Data, Image, RmpPacket, ntp_middle32
from tests.rmp.core_harness import A, B, J, incompressible
from tests.rmp.parts import Consumed, Context
from whiteboard.transport.events import Delivered


class Sending:
    def __init__(self, phase: Phase = Phase.READY, **params: object) -> None:
        self.ctx = Context(J, phase, **params)
        self.reminder = Reminder(self.ctx.shared, Sequencer(self.ctx.shared, Consumed()))
        self.part = Sender(self.ctx.shared, self.reminder, Delivery(self.ctx.shared))

    def data_sent(self) -> list[RmpPacket]:
        return [p for p, to in self.ctx.sent() if p.data is not None and to is None]


def test_s5_drawings_leave_at_the_pace_and_are_delivered_to_ourselves() -> None:
    sending = Sending(rate=10.0)
    sending.part.queue(b"one", 1.0)
    sending.part.queue(b"two", 1.0)
    (first,) = sending.data_sent()
    assert first.seq == 1 and first.options == (Data(),) and first.data == b"one"
    # 1/rate after the first, less the catch-up a token bucket grants after an idle spell.
    assert list(sending.part.deadlines()) == [pytest.approx(1.1 - PACE_CATCH_UP)]
    sending.part.pace(1.05)
    assert sending.data_sent() == []
    sending.part.pace(1.1)
    assert [p.seq for p in sending.data_sent()] == [2]
    shared = sending.ctx.shared
    assert shared.seq == 2 and shared.own_store.get(J, 2) is not None  # kept for repairs
    assert shared.counters["sent"] == 2
    delivered = [e.payload for e in sending.ctx.drain() if isinstance(e, Delivered)]
    assert delivered == [b"one", b"two"]


def test_s2_5_emitting_puts_us_at_depth_zero_and_arms_the_reminder() -> None:
    sending = Sending()
    sending.ctx.station(A)
    sending.ctx.shared.stations.joined()
    sending.part.queue(b"x", 2.0)
    assert sending.ctx.shared.stations.depth == 0
    assert sending.reminder.last_data is not None and sending.reminder.last_data.data == b"x"
    assert sending.reminder.next_remind_at is not None


def test_s4_2_1_nothing_is_sent_before_the_join_is_complete() -> None:
    sending = Sending(Phase.JOINING)
    sending.part.queue(b"early", 0.0)
    assert sending.ctx.sent() == [] and list(sending.part.deadlines()) == []
    sending.ctx.shared.phase = Phase.READY
    sending.part.pace(0.5)
    assert [p.data for p in sending.data_sent()] == [b"early"]


def test_s2_3_owed_confirmations_ride_on_new_data_and_clear_the_a_flag() -> None:
    sending = Sending()
    a = sending.ctx.station(A, last_valid=4)
    a.confirmed = False
    sending.part.queue(b"x", 1.0)
    (packet,) = sending.data_sent()
    assert packet.options == (Confirm(4, A), Data()) and a.confirmed


def test_s5_a_closed_send_window_holds_data_and_hurries_the_reminder() -> None:
    sending = Sending(window=2, remind_min=0.5)
    # A member whose data we have taken (not a stranger, which would not hold the window:
    # issue 17), and which confirms nothing of ours.
    sending.ctx.station(A).accepted_any = True
    for payload in (b"1", b"2", b"3"):
        sending.part.queue(payload, 1.0)
        sending.part.pace(sending.part.next_send_at)
    assert [p.data for p in sending.data_sent()] == [b"1", b"2"]
    assert not sending.part.send_window_open() and not sending.part.sendable()
    assert sending.reminder.next_remind_at is not None
    assert sending.reminder.next_remind_at <= sending.part.next_send_at + 0.5


def test_s2_8_image_parts_and_drawings_take_turns_the_last_part_marked() -> None:
    sending = Sending(rate=100.0, image_part=64, batch=False)  # a packet per stroke
    sending.ctx.station(B)
    sending.part.start_image(B, incompressible(100), 1.0)  # packed to 115 bytes: two parts
    sending.part.queue(b"d1", 1.0)
    sending.part.queue(b"d2", 1.0)
    for _ in range(4):
        sending.part.pace(sending.part.next_send_at)
    kinds = [type(p.options[-1]).__name__ for p in sending.data_sent()]
    assert kinds == ["Image", "Data", "Image", "Data"]
    assert sending.part.image_jobs == {}
    (event,) = sending.ctx.protocol_events("image_started")
    assert event.fields == {"joiner": B, "bytes": 100, "packed": 115, "parts": 2}


def test_s2_8_the_last_image_part_has_the_last_and_s_bits() -> None:
    sending = Sending(image_part=64)
    sending.ctx.station(B)
    sending.part.start_image(B, b"s" * 10, 1.0)  # one part
    (packet,) = sending.data_sent()
    assert packet.options == (Image(last=True),) and packet.s_bit


def test_an_image_whose_joiner_stops_confirming_is_abandoned() -> None:
    sending = Sending(image_part=64, window=2, image_stall=5.0)
    sending.ctx.station(B)
    sending.part.start_image(B, incompressible(1000), 1.0)
    sending.part.watch_image_jobs(5.9)
    assert B in sending.part.image_jobs
    sending.part.watch_image_jobs(6.0)
    assert sending.part.image_jobs == {}
    assert [e.fields for e in sending.ctx.protocol_events("image_abandoned")] == [{"joiner": B}]


def test_keepalive_when_idle_carries_our_confirmations() -> None:
    sending = Sending(keepalive=5.0)
    a = sending.ctx.station(A, last_valid=3)
    a.confirmed = False
    sending.part.keepalive(4.9)
    assert sending.ctx.sent() == []
    sending.part.keepalive(5.0)
    ((packet, to),) = sending.ctx.sent()
    assert to is None and packet.data is None and packet.options == (Confirm(3, A),)
    assert sending.ctx.shared.last_sent_at == 5.0


# -- Delivery (§3) ------------------------------------------------------------------------------


def stamped(source: int, seq: int, at: float) -> RmpPacket:
    return RmpPacket(
        seq=seq, timestamp=ntp_middle32(at), options=(Data(),), data=b"d", source=source
    )


def test_s3_delivery_orders_by_timestamp_then_originator_and_flags_late_ones() -> None:
    ctx = Context(J)
    delivery = Delivery(ctx.shared)
    delivery.deliver(B, stamped(B, 1, 10.0), 10.5)
    delivery.deliver(A, stamped(A, 1, 10.0), 10.5)  # same time, lower originator: late
    delivery.deliver(A, stamped(A, 2, 11.0), 11.5)
    late = [e.late for e in ctx.drain() if isinstance(e, Delivered)]
    assert late == [False, True, False]
    assert ctx.shared.counters["late_delivered"] == 1 and ctx.shared.counters["delivered"] == 3
    assert delivery.last_key[1:] == (A, 2)
