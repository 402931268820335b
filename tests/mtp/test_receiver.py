"""mtp/receiver.py alone: reassembly, gap detection and naks (RFC 1301 §3.2.4-§3.2.6), and
in-order delivery of accepted messages (TR 90-1141 §3.2), driven with no MtpCore."""

from __future__ import annotations

from mtp.framing import STATE_SUBCHANNEL, encode_batch
from mtp.link import Phase
from mtp.messages import OutMessage
from mtp.receiver import Receiver
from mtp.wire import DataModifier, MessageStatus, NakList, NakModifier, PacketType
from tests.mtp.core_harness import P1, P2, addr_of
from tests.mtp.parts_harness import (
    FakeHost,
    delivered,
    events,
    in_web,
    make_link,
    protocol,
    sent,
)

HEARTBEAT = 0.2


def receiver(**params: object) -> tuple[Receiver, FakeHost]:
    link = in_web(make_link(P2, **params), next_number=5)
    link.remember(P1, addr_of(P1))
    host = FakeHost()
    return Receiver(link, host), host


def arrive(
    rx: Receiver,
    number: int,
    index: int,
    body: bytes,
    modifier: DataModifier,
    now: float = 0.0,
    source: int = P1,
) -> bool:
    message = rx.message(number, now)
    assert message is not None
    assert Receiver.claim(message, source, None)
    return rx.store(message, modifier, index, body, now)


def test_a_gap_in_what_arrives_is_asked_for_and_filled() -> None:
    rx, _ = receiver()
    assert arrive(rx, 0, 0, b"a" * 10, DataModifier.DATA)
    assert rx.incoming[0].nak_at is None  # nothing missing yet
    assert arrive(rx, 0, 2, b"c" * 10, DataModifier.EOM, now=0.01)
    message = rx.incoming[0]
    assert message.nak_at == 0.01 and message.missing(tail=False) == [1]  # §3.2.4: at once
    assert arrive(rx, 0, 1, b"b" * 10, DataModifier.DATA, now=0.02)
    assert message.complete and message.nak_at is None
    assert message.body() == b"a" * 10 + b"b" * 10 + b"c" * 10


def test_a_reordered_packet_waits_reorder_wait_before_a_nak() -> None:
    rx, _ = receiver(reorder_wait=0.01)
    arrive(rx, 0, 1, b"x", DataModifier.DATA, now=1.0)
    assert rx.incoming[0].nak_at == 1.01


def test_duplicates_and_packets_past_the_end_are_dropped_and_counted() -> None:
    rx, _ = receiver()
    counters = rx._link.counters
    assert arrive(rx, 0, 0, b"a", DataModifier.EOM)
    assert not arrive(rx, 0, 0, b"a", DataModifier.EOM)
    assert not arrive(rx, 0, 1, b"b", DataModifier.DATA)  # after data[eom]
    assert counters["duplicates_dropped"] == 1 and counters["malformed_dropped"] == 1


def test_a_second_producer_for_one_message_is_refused() -> None:
    rx, _ = receiver()
    message = rx.message(0, 0.0)
    assert message is not None
    assert Receiver.claim(message, P1, owner=None)
    assert not Receiver.claim(message, P2, owner=None)
    other = rx.message(1, 0.0)
    assert other is not None and not Receiver.claim(other, P1, owner=P2)  # the token's holder


def test_the_bytes_held_are_counted_and_released() -> None:
    rx, _ = receiver()
    arrive(rx, 0, 0, bytes(100), DataModifier.DATA)
    arrive(rx, 1, 0, bytes(50), DataModifier.DATA)
    assert rx.incoming_bytes == 150
    rx.drop(0)
    assert rx.incoming_bytes == 50 and 0 not in rx.incoming


def test_accepted_messages_are_delivered_in_order_and_rejected_ones_skipped() -> None:
    rx, _ = receiver()
    web = rx._link.web
    web.next_deliver = 0
    web.book.decide(0, MessageStatus.ACCEPTED)
    web.book.decide(1, MessageStatus.REJECTED)
    web.book.decide(2, MessageStatus.ACCEPTED)
    arrive(rx, 2, 0, encode_batch([(1.0, b"two")]), DataModifier.EOM)
    rx.deliver(0.0)
    assert delivered(events(rx._link)) == [] and web.next_deliver == 0  # 0 is not here yet
    assert rx.incoming[0].nak_at is not None  # accepted, yet unseen: asked for
    arrive(rx, 0, 0, encode_batch([(1.0, b"zero"), (1.0, b"again")]), DataModifier.EOM)
    rx.deliver(0.1)
    assert delivered(events(rx._link)) == [
        (P1, (0, 0), b"zero"),
        (P1, (0, 1), b"again"),
        (P1, (2, 0), b"two"),
    ]
    assert web.next_deliver == 3 and not rx.incoming and rx.incoming_bytes == 0


def test_our_own_messages_are_delivered_from_what_we_sent() -> None:
    rx, host = receiver()
    rx._link.web.book.decide(0, MessageStatus.ACCEPTED)
    host.own_messages[0] = OutMessage(0, 0, [b""], [(1.0, b"mine")])
    rx.deliver(0.0)
    assert delivered(events(rx._link)) == [(P2, (0, 0), b"mine")]


def test_a_rejected_board_while_syncing_makes_the_member_rejoin() -> None:
    rx, host = receiver()
    web = rx._link.web
    web.join_number = 0
    web.book.decide(0, MessageStatus.REJECTED)
    host.phase = Phase.SYNCING
    rx.deliver(0.0)
    assert [c[0] for c in host.calls] == ["rejoin"]


def test_the_board_is_handed_to_the_host_and_delivery_goes_on() -> None:
    rx, host = receiver()
    web = rx._link.web
    web.join_number = 0
    web.book.decide(0, MessageStatus.ACCEPTED)
    host.phase = Phase.SYNCING
    message = rx.message(0, 0.0)
    assert message is not None and Receiver.take_subchannel(message, STATE_SUBCHANNEL)
    arrive(rx, 0, 0, b"board", DataModifier.EOM)
    rx.deliver(0.0)
    assert host.named("finish_sync") == [("finish_sync", STATE_SUBCHANNEL, b"board")]


def test_a_due_nak_goes_to_the_producer_and_is_retried_every_heartbeat() -> None:
    rx, _ = receiver()
    link = rx._link
    arrive(rx, 0, 2, b"c", DataModifier.EOW)
    rx.nak_rounds(0.0)
    [(packet, to)] = sent(link)
    assert packet.packet_type is PacketType.NAK and packet.modifier is NakModifier.REQUEST
    assert to == addr_of(P1) and packet.header.destination == P1
    assert isinstance(packet.body, NakList)
    assert [(e.message, e.packet) for e in packet.body.packets] == [(0, 0), (0, 1)]
    assert link.counters["nacks_sent"] == 1 and link.counters["nacked_packets"] == 2
    assert protocol(events(link), "nak_sent")
    rx.nak_rounds(0.1)
    assert sent(link) == []  # not yet a heartbeat
    rx.nak_rounds(HEARTBEAT)
    assert len(sent(link)) == 1


def test_naks_wait_while_the_member_is_joining() -> None:
    rx, host = receiver()
    arrive(rx, 0, 2, b"c", DataModifier.EOW)
    host.phase = Phase.JOINING
    rx.nak_rounds(0.0)
    assert sent(rx._link) == []


def test_rebase_renumbers_what_is_being_received() -> None:
    rx, _ = receiver()
    arrive(rx, 3, 0, b"x", DataModifier.DATA)
    rx.rebase(10)
    assert list(rx.incoming) == [13] and rx.incoming[13].number == 13
