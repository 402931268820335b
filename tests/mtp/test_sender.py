"""mtp/sender.py alone: the transmit token (RFC 1301 §3.2.1), messages under it and the window
per heartbeat (§3.2.2), dallies (§3.2.3), retention and retransmission (§3.2.6), and what a
rejection or an abandoned web does to our payloads, driven with no MtpCore."""

from __future__ import annotations

from mtp.framing import decode_batch
from mtp.sender import Flight, Sender
from mtp.wire import (
    DataModifier,
    EmptyModifier,
    MessageStatus,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    TokenModifier,
)
from tests.mtp.core_harness import MASTER, P1, P2, WEB, addr_of
from tests.mtp.parts_harness import FakeHost, events, in_web, make_link, protocol, sent

HEARTBEAT = 0.2


def sender(**params: object) -> tuple[Sender, FakeHost]:
    link = in_web(make_link(P1, **params), next_number=0)
    host = FakeHost()
    return Sender(link, host, master=None), host


def test_payloads_ask_the_master_for_one_token() -> None:
    tx, _ = sender()
    tx.add(1.0, b"a")
    tx.want_token(0.0)
    [(packet, to)] = sent(tx._link)
    assert packet.packet_type is PacketType.TOKEN and packet.modifier is TokenModifier.REQUEST
    assert to == addr_of(MASTER) and packet.header.destination == MASTER
    tx.add(1.0, b"b")
    tx.want_token(0.1)
    assert sent(tx._link) == []  # one request out at a time
    assert tx._link.counters["tokens_requested"] == 1


def test_a_suggestion_rides_on_the_token_request() -> None:
    """§3.4.1: a member suggests new values in its token[request]."""
    tx, _ = sender()
    tx.suggestion = (0.16, 18, 4)
    tx.add(1.0, b"a")
    tx.want_token(0.0)
    [(packet, _)] = sent(tx._link)
    assert (packet.header.heartbeat, packet.header.window, packet.header.retention) == (160, 18, 4)


def test_a_granted_token_carries_the_queue_in_one_message() -> None:
    tx, _ = sender()
    tx.add(1.0, b"first")
    tx.add(2.0, b"second")
    tx.want_token(0.0)
    sent(tx._link)
    tx.on_token_confirm(0, 0.01)
    [(packet, to)] = sent(tx._link)
    assert to is None and packet.header.destination == WEB  # multicast (§3.2.2)
    assert packet.packet_type is PacketType.DATA and packet.modifier is DataModifier.EOM
    assert isinstance(packet.body, bytes)
    assert decode_batch(packet.body) == [(1.0, b"first"), (2.0, b"second")]
    assert not tx.queue and tx.flight.own[0].all_sent and tx.flight.last_own == 0


def test_an_unneeded_token_goes_back_as_a_cancel() -> None:
    tx, _ = sender()
    tx.on_token_confirm(3, 0.0)  # nothing queued, nothing asked for
    [(packet, to)] = sent(tx._link)
    assert packet.packet_type is PacketType.EMPTY and packet.modifier is EmptyModifier.CANCEL
    assert to is None and tx._link.counters["cancels_sent"] == 1


def test_at_most_window_data_packets_go_out_per_heartbeat() -> None:
    tx, _ = sender(window=2, window_min=2, max_data_unit=128)
    tx.add(1.0, bytes(700))  # 6 packets of 128 bytes
    tx.want_token(0.0)
    sent(tx._link)
    tx.on_token_confirm(0, 0.0)
    first = [p for p, _ in sent(tx._link) if p.packet_type is PacketType.DATA]
    assert [p.modifier for p in first] == [DataModifier.DATA, DataModifier.EOW]
    tx.pump(HEARTBEAT / 2)
    assert not [p for p, _ in sent(tx._link) if p.packet_type is PacketType.DATA]
    # The window reopens a heartbeat after it opened, and no dally is due before.
    assert tx.next_deadline() == HEARTBEAT and not tx.flight.dally_due
    tx.pump(HEARTBEAT)
    assert len([p for p, _ in sent(tx._link) if p.packet_type is PacketType.DATA]) == 2


def test_a_short_message_is_followed_by_dallies() -> None:
    """§3.2.3: message_packets packets at least, empty[dally]s appended, one a heartbeat."""
    tx, _ = sender()
    tx.add(1.0, b"x")
    tx.want_token(0.0)
    sent(tx._link)
    tx.on_token_confirm(0, 0.0)
    sent(tx._link)
    tx.pump(HEARTBEAT)
    [(dally, _)] = sent(tx._link)
    assert dally.modifier is EmptyModifier.DALLY and dally.header.acceptance.packet_seq == 1
    tx.pump(2 * HEARTBEAT)
    assert len(sent(tx._link)) == 1
    tx.pump(3 * HEARTBEAT)
    assert sent(tx._link) == []  # 1 data + 2 dallies = message_packets (3)


def _dallies_of_a_one_packet_message(decided_after: int, **params: object) -> list[int]:
    """A one-packet message sent at 0 under a web retention of 6, decided (accepted) after
    ``decided_after`` heartbeats: the (m, k) packet numbers of the empty[dally]s that follow."""
    tx, _ = sender(**params)
    tx._link.retention = 6
    tx.add(1.0, b"x")
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    sent(tx._link)
    dallies = []
    for beat in range(1, 12):
        if beat == decided_after:
            tx.on_decided(0, MessageStatus.ACCEPTED, beat * HEARTBEAT - 0.01)
        tx.pump(beat * HEARTBEAT)
        for packet, _ in sent(tx._link):
            if packet.modifier is EmptyModifier.DALLY:
                dallies.append(packet.header.acceptance.packet_seq)
    return dallies


def test_rfc1301_3_2_3_a_message_is_padded_to_retention_packets_even_once_decided() -> None:
    """§3.2.3: "a message must consist of at least retention packets. If the client data does
    not require that many packets, empty[dally] packets must be appended": 1 data + 5 dallies
    for a retention of 6, all of them though the master accepted the message after two."""
    assert _dallies_of_a_one_packet_message(decided_after=2) == [1, 1, 1, 1, 1]


def test_rfc1301_3_2_3_message_packets_keeps_the_cheaper_padding_on_request() -> None:
    """``message_packets`` N (not 0): N packets, and no dally once the message is decided."""
    assert _dallies_of_a_one_packet_message(decided_after=20, message_packets=3) == [1, 1]
    assert _dallies_of_a_one_packet_message(decided_after=2, message_packets=3) == [1]
    # It overrides ``padding``.
    assert _dallies_of_a_one_packet_message(decided_after=2, padding=5, message_packets=3) == [1]


def test_rfc1301_3_2_3_padding_counts_packets_apart_from_retention() -> None:
    """``padding`` N (not 0): N packets whatever the retention (the lan profile's 3, §3.4.2's
    minimum retention), appended after the verdict too, as §3.2.3 pads."""
    assert _dallies_of_a_one_packet_message(decided_after=2, padding=3) == [1, 1]
    assert _dallies_of_a_one_packet_message(decided_after=20, padding=4) == [1, 1, 1]
    assert _dallies_of_a_one_packet_message(decided_after=2, padding=1) == []
    assert _dallies_of_a_one_packet_message(decided_after=2, padding=0) == [1] * 5  # retention


def test_naks_for_our_packets_are_served_and_others_denied() -> None:
    tx, _ = sender()
    tx._link.remember(P2, addr_of(P2))
    tx.add(1.0, b"x")
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    sent(tx._link)
    tx.serve_nak(P2, [PacketId(0, 0), PacketId(9, 0)], HEARTBEAT)
    out = sent(tx._link)
    deny = [p for p, _ in out if p.packet_type is PacketType.NAK]
    data = [p for p, _ in out if p.packet_type is PacketType.DATA]
    assert len(data) == 1 and data[0].header.acceptance.packet_seq == 0  # retransmitted
    assert len(deny) == 1 and deny[0].modifier is NakModifier.DENY
    assert isinstance(deny[0].body, NakList) and deny[0].body.packets == (PacketId(9, 0),)
    assert tx._link.counters["retransmissions"] == 1


def test_a_rejected_message_puts_its_payloads_back_first() -> None:
    tx, _ = sender()
    tx.add(1.0, b"a")
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    tx.add(2.0, b"b")
    tx.on_decided(0, MessageStatus.REJECTED, 0.5)
    assert list(tx.queue) == [(1.0, b"a"), (2.0, b"b")] and 0 not in tx.flight.own
    assert tx._link.counters["payloads_requeued"] == 1
    assert protocol(events(tx._link), "own_message_rejected")


def test_abandoning_the_web_requeues_what_is_undecided_and_starts_a_new_flight() -> None:
    tx, _ = sender()
    tx.add(1.0, b"a")
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    tx.add(2.0, b"b")
    old = tx.flight
    tx.abandon()
    assert tx.flight is not old and tx.flight == Flight()
    # Message 0 went out whole: its verdict is in doubt until we are back (issue 17).
    assert list(tx.queue) == [(2.0, b"b")] and tx.in_doubt == (0, [(1.0, b"a")])
    tx.settle_doubt()  # back, its verdict unknown (too old): sent again, first
    assert list(tx.queue) == [(1.0, b"a"), (2.0, b"b")] and tx.in_doubt is None


def test_tr3_4_a_message_in_doubt_found_accepted_on_return_is_not_sent_again() -> None:
    tx, _ = sender()
    tx.add(1.0, b"a")
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    tx.abandon()
    tx._link.web.book.decide(0, MessageStatus.ACCEPTED)  # learned from the join[confirm]
    tx.settle_doubt()
    assert list(tx.queue) == [] and tx.in_doubt is None


def test_abandoning_a_message_half_sent_puts_it_back_at_once() -> None:
    tx, _ = sender()
    tx._link.window = 1  # one packet per heartbeat: the message stays half sent
    tx.add(1.0, bytes(3000))
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    assert tx.flight.sending  # not whole: it cannot have been accepted
    tx.abandon()
    assert list(tx.queue) == [(1.0, bytes(3000))] and tx.in_doubt is None


def test_expired_messages_are_forgotten_after_retention_heartbeats() -> None:
    tx, _ = sender()
    tx.add(1.0, b"a")
    tx.want_token(0.0)
    tx.on_token_confirm(0, 0.0)
    tx.on_decided(0, MessageStatus.ACCEPTED, 1.0)
    tx._link.web.next_deliver = 1
    tx.expire_own(1.0 + 3 * HEARTBEAT)
    assert 0 in tx.flight.own  # §3.2.2: kept for retention heartbeats
    tx.expire_own(1.0 + 3 * HEARTBEAT + 0.01)
    assert 0 not in tx.flight.own


def test_tr3_4_the_boards_verdicts_settle_a_message_in_doubt_older_than_the_vector() -> None:
    from mtp.framing import decode_state, decode_verdicts, encode_state

    # The board for message 40 says: 39 accepted, 38 rejected, ... back to 20.
    verdicts = [n % 2 == 1 for n in range(39, 19, -1)]
    body = encode_state(40, b"board", verdicts)
    assert decode_state(body) == (40, b"board") and list(decode_verdicts(body)) == verdicts
    for doubt, requeued in ((21, False), (22, True), (5, True)):
        tx, _ = sender()
        tx.in_doubt = (doubt, [(1.0, b"a")])
        tx.board_verdicts(40, body)
        if doubt >= 20:  # within the verdicts: settled now
            assert tx.in_doubt is None and list(tx.queue) == ([(1.0, b"a")] if requeued else [])
        else:  # older: still in doubt (settle_doubt decides once ready)
            assert tx.in_doubt == (5, [(1.0, b"a")]) and list(tx.queue) == []
