"""RR-2100 §2.4 (the last packet problem: reminders) and §2.5 (repairs on an emitter's stale
confirmations)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from rmp.remind import PATIENT_REMINDS, PATIENT_STATIONS, UNCONFIRMED_BY
from rmp.wire import Confirm, Data, Nack, Remind, decode
from tests.rmp.core_harness import (
    A,
    B,
    C,
    Node,
    addr_of,
    carries,
    control_packet,
    data_packet,
    payload_of,
    ready_node,
    rmp_session,
    start_all_alone,
)


def test_s2_4_the_last_data_packet_is_repeated_with_remind_first_until_all_confirmed() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.2), 5.2)
    node.send(b"mine", 5.5)
    (original,) = node.data_sent()
    node.run_until(9.0)
    reminders = node.reminders()
    assert len(reminders) >= 4
    for number, reminder in enumerate(reminders, start=1):
        packet = reminder.packet
        assert packet.options[0] == Remind(number)  # first, counting the repetitions
        assert isinstance(packet.options[-1], Data) and reminder.dest is None
        assert (packet.seq, packet.timestamp, packet.data) == (
            original.packet.seq,
            original.packet.timestamp,
            b"mine",
        )
    times = [original.at] + [r.at for r in reminders]
    gaps = [b - a for a, b in pairwise(times)]
    assert all(0.5 <= gap <= 1.0 for gap in gaps), gaps  # §2.4: "0.5 to one second"
    # B confirms: not enough, C has not.
    node.receive(control_packet(B, 1, 9.0, Confirm(1, A)), 9.0)
    node.run_until(11.0)
    assert len(node.reminders()) > len(reminders)
    # C confirms in a data packet of its own: everyone has it, the reminders stop.
    node.receive(data_packet(C, 2, 11.0, confirms=[Confirm(1, A)]), 11.0)
    count = len(node.reminders())
    node.run_until(40.0)
    assert len(node.reminders()) == count
    assert count < 12


def test_s2_4_a_new_data_packet_restarts_the_reminders_at_one() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.send(b"first", 5.5)
    node.run_until(8.0)
    node.send(b"second", 8.0)
    node.run_until(10.0)
    after = [r for r in node.reminders() if r.at > 8.0]
    assert after and after[0].packet.options[0] == Remind(1)
    assert {r.packet.data for r in after} == {b"second"} and {r.packet.seq for r in after} == {2}


def test_s2_4_a_station_that_has_the_reminded_packet_answers_with_a_confirm() -> None:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    mark = len(node.sent)
    node.receive(data_packet(B, 1, 5.1, remind=1), 6.0)
    (answer,) = node.sent_after(mark)
    assert answer.dest == addr_of(B)  # point to point, to the emitter
    assert answer.packet.options == (Confirm(1, B),) and answer.packet.data is None
    # A reminder of a packet we lacked gives it to us; we deliver it and confirm it.
    mark = len(node.sent)
    node.receive(data_packet(B, 2, 6.5, remind=1), 7.0)
    assert node.delivered_payloads() == [payload_of(B, 1), payload_of(B, 2)]
    assert [s.packet.options for s in node.sent_after(mark)] == [(Confirm(2, B),)]
    assert node.counter("duplicates_dropped") == 1  # the first reminder's copy of packet 1


def _reminder(raw: bytes) -> bool:
    options = decode(raw).options
    return bool(options) and isinstance(options[0], Remind)


def _holding_c_and_own() -> Node:
    node = ready_node()
    for seq in (1, 2, 3):
        node.receive(data_packet(C, seq, 5.0 + seq / 10), 5.0 + seq / 10)
    node.send(b"own 1", 5.5)
    node.send(b"own 2", 5.6)
    node.receive(data_packet(B, 1, 5.7), 5.7)  # B, deeper, emitted: we are at depth 1
    assert node.core.depth == 1
    return node


def test_s2_5_a_station_within_the_remind_number_repairs_what_the_emitter_lacks() -> None:
    node = _holding_c_and_own()
    mark = len(node.sent)
    # B's reminder confirms only C's packet 1 and our packet 1: it lacks C's 2, 3 and our 2.
    reminder = data_packet(B, 1, 5.7, remind=1, confirms=[Confirm(1, C), Confirm(1, A)])
    node.receive(reminder, 6.5)
    node.run_until(6.6)
    repairs = sorted((o.source, o.packet.seq) for _, o in node.retransmits())
    assert repairs == [(A, 2), (C, 2), (C, 3)]
    assert all(s.dest == addr_of(B) for s, _ in node.retransmits())  # point to point
    assert any(s.packet.options == (Confirm(1, B),) for s in node.sent_after(mark))


def test_s2_4_below_the_remind_number_no_repair_and_no_nack_is_treated() -> None:
    node = _holding_c_and_own()
    mark = len(node.sent)
    # Remind number 0 < our depth 1: the confirmations do not trigger repairs, and the NACK in
    # the packet is not ours to answer (§2.4).
    reminder = data_packet(
        B, 1, 5.7, remind=0, confirms=[Confirm(1, C), Confirm(1, A), Nack(0, 3, C)]
    )
    node.receive(reminder, 6.5)
    node.run_until(6.6)
    assert node.retransmits() == []
    assert [s.packet.options for s in node.sent_after(mark) if not s.is_data] == [(Confirm(1, B),)]
    # The same NACK outside a reminder, and numbered for our depth, is answered.
    node.receive(control_packet(B, 1, 7.0, Nack(1, 3, C)), 7.0)
    node.run_until(7.1)
    assert [(o.source, o.packet.seq) for _, o in node.retransmits()] == [(C, 3)]


def test_s2_4_in_a_group_a_lost_last_packet_is_recovered_from_the_reminders() -> None:
    session, recorder = rmp_session(3, 8)
    start_all_alone(session)
    emitter = session.peers[0].member_id
    # Member 2 misses member 0's packet 1 as first sent; the reminders get through.
    recorder.drop(lambda s, r, data: r == 2 and carries(data, emitter, 1) and not _reminder(data))
    payload = session.draw(0)
    session.network.run(20.0)
    sent = [w for w in recorder.sent_by(0) if w.packet.data is not None]
    reminders = [w for w in sent if isinstance(w.packet.options[0], Remind)]
    assert reminders and [w.packet.options[0].remind_number for w in reminders] == list(
        range(1, len(reminders) + 1)
    )
    assert all(w.packet.data == payload for w in sent)
    # Member 2 got it from the first reminder and confirmed; then they stopped.
    assert len(reminders) == 1
    confirms = [w for w in recorder.sent_by(2) if w.dest == session.peers[0].station.address]
    assert confirms and Confirm(1, emitter) in confirms[0].packet.options
    assert session.converged()
    assert session.peers[2].replica.stats.ops_applied == 1


def test_s2_4_a_station_heard_after_the_last_packet_is_reminded_and_repaired() -> None:
    """Issue 17: reminders stopped once the stations known when the last packet left had
    confirmed it; a station heard later that confirms only an older number got keepalives and
    no reminder (and so never NACKed what it lacked) for good."""
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.send(b"one", 5.5)
    node.send(b"two", 5.6)
    node.receive(control_packet(B, 1, 5.7, Confirm(2, A)), 5.7)  # B has both: all confirmed
    node.run_until(8.0)
    quiet = len(node.reminders())
    node.run_until(10.0)
    assert len(node.reminders()) == quiet  # nothing unconfirmed: no reminders
    # C, never heard before, confirms our packet 1 only: it lacks packet 2.
    node.receive(control_packet(C, 0, 10.0, Confirm(1, A)), 10.0)
    node.run_until(11.0)  # remind_max is 1 s in the seed profile
    late = node.reminders()[quiet:]
    assert late and late[0].packet.data == b"two"  # §2.4: the last message, reminded
    # C NACKs packet 1..2's gap from the reminder's S_n; we answer it (§2.6, depth 0).
    node.receive(control_packet(C, 0, 11.5, Nack(0, 2, A)), 11.5)
    node.run_until(12.0)
    assert any(o.packet.data == b"two" and s.dest == addr_of(C) for s, o in node.retransmits())
    # Once C confirms, the reminders stop again.
    node.receive(control_packet(C, 0, 12.0, Confirm(2, A)), 12.0)
    count = len(node.reminders())
    node.run_until(20.0)
    assert len(node.reminders()) == count


def _crowd_confirming(others: int, confirmers: int) -> Node:
    """Us (A) and ``others`` stations that drew once; we draw at 5.5, and from 5.6 on one of
    them a quarter second draws again, confirming our packet (§2.3), ``confirmers`` in all."""
    node = ready_node()
    crowd = [0x1000 + n for n in range(others)]
    for station in crowd:
        node.receive(data_packet(station, 1, 5.1), 5.1)
    node.send(b"mine", 5.5)
    for k, station in enumerate(crowd[:confirmers]):
        at = 5.6 + 0.25 * k
        node.run_until(at)
        node.receive(data_packet(station, 2, at, confirms=[Confirm(1, A)]), at)
    return node


@pytest.mark.parametrize("others", [PATIENT_STATIONS - 1, PATIENT_STATIONS])
def test_s2_4_in_a_large_group_a_first_reminder_waits_while_confirmations_come(
    others: int,
) -> None:
    """§2.4: a packet goes unconfirmed because nobody got it or because "all other stations are
    quiet". While others' data packets keep confirming it, neither is so: from PATIENT_STATIONS
    on, the first reminder waits another period (each a fresh draw in [remind_min, remind_max],
    0.5-1 s here) as long as a station confirmed it in the last one. [extension]"""
    node = _crowd_confirming(others, confirmers=8)  # confirmations from 5.6 to 7.35
    node.run_until(14.0)
    first = node.reminders()[0]
    if others >= PATIENT_STATIONS:
        # One or two periods after the last confirmation (the one it fell in, and the next).
        assert 7.35 < first.at <= 7.35 + 2 * 1.0
    else:
        assert 6.0 <= first.at <= 6.5  # as before: remind_min to remind_max after 5.5
    assert first.remind == Remind(1)
    assert {c.source for c in first.options_of(Confirm)} <= set(range(0x1000, 0x1000 + others))


def test_s2_4_a_patient_first_reminder_waits_a_bounded_number_of_periods() -> None:
    """Confirmations that keep trickling in do not put the reminder off for ever: at most
    PATIENT_REMINDS periods more, then the quiet stations are reminded."""
    node = _crowd_confirming(40, confirmers=40)  # one every quarter second until 15.35
    first = node.reminders()[0]
    assert first.at <= 5.5 + (PATIENT_REMINDS + 1) * 1.0
    assert first.at < 15.35


def test_s2_4_a_closed_send_window_is_not_patient() -> None:
    """The send window full (§5): the reminder comes remind_min after the sender found it shut
    (Reminder.hurry, on the confirmation at 5.7 that let it look), confirmations or not."""
    node = ready_node(params={"window": 1})
    crowd = [0x1000 + n for n in range(PATIENT_STATIONS + 2)]
    for station in crowd:
        node.receive(data_packet(station, 1, 5.1), 5.1)
    node.send(b"one", 5.5)
    node.send(b"two", 5.5)  # waits for the window: hurry
    node.receive(data_packet(crowd[0], 2, 5.7, confirms=[Confirm(1, A)]), 5.7)
    node.run_until(6.3)
    assert [r.at for r in node.reminders()] == [5.7 + 0.5]


@pytest.mark.parametrize("others", [PATIENT_STATIONS - 1, PATIENT_STATIONS])
def test_s2_4_in_a_large_group_a_packet_nobody_confirms_is_reminded_at_once(
    others: int,
) -> None:
    """§2.4's other case: nobody received it. A station that has our packet confirms it in its
    next data packet (its A flag, §2.3); when UNCONFIRMED_BY stations' data packets, sent after
    ours had time to reach them, do not and none has, the first reminder (a copy of it) goes
    at once, not remind_min to remind_max after. [extension]"""
    node = ready_node()
    crowd = [0x1000 + n for n in range(others)]
    for station in crowd:
        node.receive(data_packet(station, 1, 5.1), 5.1)
    node.send(b"mine", 5.5)
    times = [5.6 + 0.02 * k for k in range(UNCONFIRMED_BY)]
    for station, at in zip(crowd, times, strict=False):
        node.run_until(at)
        node.receive(data_packet(station, 2, at), at)  # no Confirm of ours: it lacks it
    node.run_until(7.0)
    first = node.reminders()[0]
    if others >= PATIENT_STATIONS:
        assert first.at == times[-1] and first.packet.data == b"mine"
    else:
        assert 6.0 <= first.at <= 6.5


def test_s2_4_one_confirmation_and_the_first_reminder_is_not_hurried() -> None:
    """Some station got it: those that did not see its confirmation and ask (§2.6), and the
    reminder keeps its time (or waits, above)."""
    node = ready_node()
    crowd = [0x1000 + n for n in range(PATIENT_STATIONS + 4)]
    for station in crowd:
        node.receive(data_packet(station, 1, 5.1), 5.1)
    node.send(b"mine", 5.5)
    node.receive(data_packet(crowd[0], 2, 5.55, confirms=[Confirm(1, A)]), 5.55)
    for k, station in enumerate(crowd[1 : 2 + UNCONFIRMED_BY]):
        at = 5.6 + 0.02 * k
        node.run_until(at)
        node.receive(data_packet(station, 2, at), at)
    node.run_until(5.95)
    assert node.reminders() == []


def test_s2_4_a_data_packet_too_soon_after_ours_says_nothing_of_it() -> None:
    """A station's packet sent before ours could reach it does not count against it: within
    an eighth of remind_min (0.0625 s here) of ours, none does."""
    node = ready_node()
    crowd = [0x1000 + n for n in range(PATIENT_STATIONS + 4)]
    for station in crowd:
        node.receive(data_packet(station, 1, 5.1), 5.1)
    node.send(b"mine", 5.5)
    for k, station in enumerate(crowd[: UNCONFIRMED_BY + 2]):
        at = 5.5 + 0.01 * k
        node.run_until(at)
        node.receive(data_packet(station, 2, at), at)
    node.run_until(5.95)
    assert node.reminders() == []
