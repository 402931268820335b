"""RFC 1301 §3.2.2 (data transmission) and §3.2.3 (empty packets), as a producer does them:
windows of at most ``window`` data packets a heartbeat, data[eow] and data[eom], full packets,
empty[dally] padding of short messages and while the window is spent, the subchannel and sync
flag of the board message (§2.2.3, §2.2.6, TR 90-1141 §3.4), the web's current parameters in
every packet (§2.2.7-§2.2.9), and the framing of payloads into message bytes (ours, mtp/framing.py)
with the errors ``send`` raises."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping

import pytest

from mtp.bounds import MAX_MESSAGE
from mtp.core import MAX_PAYLOAD
from mtp.framing import RECORD_OVERHEAD, decode_state
from mtp.wire import (
    AcceptanceRecord,
    DataModifier,
    EmptyModifier,
    MessageStatus,
    MtpPacket,
    PacketType,
)
from tests.mtp.core_harness import (
    C1,
    HEARTBEAT,
    MASTER,
    P1,
    WEB,
    Node,
    Sent,
    addr_of,
    empty,
    founded_master,
    header,
    join_request,
    joined_member,
    record,
    token_confirm,
)

UNIT = 1400  # max_data_unit: the join[confirm] of the harness says 1400 bytes
WINDOW = 20  # the seed profile's window (RFC 1301 §3.4.2)
ACCEPTED = MessageStatus.ACCEPTED

# -- helpers ------------------------------------------------------------------------------------


def payload_for(packets: int, last: int = UNIT) -> int:
    """The size of one payload whose message is ``packets`` packets, the last ``last`` bytes."""
    return (packets - 1) * UNIT + last - RECORD_OVERHEAD


def data_sent(node: Node, since: int = 0, message: int | None = None) -> list[Sent]:
    return [
        s
        for s in node.sent[since:]
        if s.packet.packet_type is PacketType.DATA
        and (message is None or s.packet.header.acceptance.message_seq == message)
    ]


def ids(sent: list[Sent]) -> list[tuple[int, int]]:
    return [
        (s.packet.header.acceptance.message_seq, s.packet.header.acceptance.packet_seq)
        for s in sent
    ]


def master_beat(
    message: int,
    statuses: Mapping[int, MessageStatus] | None = None,
    heartbeat_ms: int = 200,
    window: int = WINDOW,
    retention: int = 3,
) -> MtpPacket:
    """The master's heartbeat empty[dally]: (next message number, 0) and its statuses."""
    return MtpPacket(
        header(
            PacketType.EMPTY,
            EmptyModifier.DALLY,
            MASTER,
            WEB,
            record(message, statuses=statuses),
            heartbeat_ms,
            window,
            retention,
        )
    )


def run_with_master(
    node: Node,
    until: float,
    message: int,
    statuses: Mapping[int, MessageStatus] | None = None,
    values: tuple[int, int, int] = (200, WINDOW, 3),
) -> None:
    """Run ``node``'s timers up to ``until`` while the master's heartbeat empties keep coming
    (else the member leaves after silence_limit, §3.2.5), carrying the web's ``values``
    (heartbeat in ms, window, retention) and the master's next message number."""
    heartbeat_ms, window, retention = values
    for _ in range(10_000):
        step = min(node.now + heartbeat_ms / 1000, until)
        node.run_until(step)
        if step >= until:
            return
        node.receive(master_beat(message, statuses, heartbeat_ms, window, retention), step)
    raise AssertionError("run_with_master did not reach its end")


def producer_with_token(payloads: list[bytes], confirm_at: float = 0.2) -> Node:
    """P1 joined at message 0, ``payloads`` sent, token 0 confirmed at ``confirm_at``."""
    node = joined_member(P1)
    for index, payload in enumerate(payloads):
        node.send(payload, 0.05 + index * 0.001)
    node.run_until(confirm_at)
    node.receive(token_confirm(MASTER, P1, 0), confirm_at)
    return node


def bursts(sent: list[Sent]) -> list[list[Sent]]:
    """Data packets grouped by the instant they were sent."""
    groups: dict[float, list[Sent]] = {}
    for s in sent:
        groups.setdefault(s.at, []).append(s)
    return [groups[at] for at in sorted(groups)]


# -- §3.2.2: windows, data[eow], data[eom] ------------------------------------------------------


def test_a_long_message_goes_out_in_windows_of_at_most_window_packets_a_heartbeat() -> None:
    # 60 kB: 43 packets of 1400 bytes, window 20 (§3.2.2: "no more than the current value of
    # window data packets will be transmitted by a single process during a heartbeat").
    node = producer_with_token([bytes(60_000)])
    run_with_master(node, 1.5, 1)
    sent = data_sent(node)
    assert ids(sent) == [(0, p) for p in range(43)]  # each packet once, in order
    groups = bursts(sent)
    assert [len(g) for g in groups] == [20, 20, 3]
    starts = [g[0].at for g in groups]
    assert [b - a for a, b in itertools.pairwise(starts)] == pytest.approx([HEARTBEAT, HEARTBEAT])
    assert all(s.dest is None for s in sent)  # multicast into the web


def test_no_heartbeat_long_interval_carries_more_than_window_data_packets() -> None:
    # The TR's definition of window: "the maximum number of data packets a producer can send
    # during any heartbeat"; §3.4.2: a receiver is only required to take window back-to-back
    # packets. The token arrives late in the producer's heartbeat: the first window goes out
    # at once, and the second may not follow it within the same heartbeat-long interval.
    node = producer_with_token([bytes(60_000)], confirm_at=0.19)
    run_with_master(node, 1.5, 1)
    times = [s.at for s in data_sent(node)]
    assert len(times) == 43
    worst = max(sum(1 for t in times if start <= t < start + HEARTBEAT - 1e-9) for start in times)
    assert worst <= WINDOW, f"{worst} data packets within one heartbeat: {Counter(times)}"


def test_each_window_ends_with_data_eow_and_the_message_with_data_eom() -> None:
    node = producer_with_token([bytes(60_000)])
    run_with_master(node, 1.5, 1)
    names = {s.packet.header.acceptance.packet_seq: s.name for s in data_sent(node)}
    assert names[19] == names[39] == "data[eow]"
    assert names[42] == "data[eom]"  # §3.2.2: eom implies the end of the window too
    assert {p for p, name in names.items() if name != "data[data]"} == {19, 39, 42}


def test_a_message_whose_last_packet_ends_a_window_marks_it_data_eom_not_data_eow() -> None:
    node = producer_with_token([bytes(payload_for(WINDOW))])
    run_with_master(node, 0.6, 1)
    sent = data_sent(node)
    assert len(sent) == WINDOW and len(bursts(sent)) == 1
    assert [s.name for s in sent] == ["data[data]"] * (WINDOW - 1) + ["data[eom]"]


@pytest.mark.parametrize(
    ("packets", "last"),
    [(1, RECORD_OVERHEAD), (1, UNIT), (2, 700), (3, UNIT), (43, 1212), (21, 13)],
)
def test_every_data_packet_is_full_except_the_data_eom(packets: int, last: int) -> None:
    # §3.2.2: "The only packets that will be transmitted containing less than maximum capacity
    # will be data[eom] or those containing client subchannel transitions."
    node = producer_with_token([bytes(payload_for(packets, last))])
    run_with_master(node, 1.5, 1)
    sizes = [len(s.packet.body) for s in data_sent(node)]  # type: ignore[arg-type]
    assert sizes == [UNIT] * (packets - 1) + [last]
    assert data_sent(node)[-1].name == "data[eom]"


def test_the_producer_asks_for_its_next_token_only_after_its_data_eom() -> None:
    # Two 60 kB payloads do not fit one message (ours: a message carries at most four windows'
    # worth of payloads): the second waits for a second token. §3.2.2: data[eom] surrenders
    # the token; core.py: a producer has one undecided message at a time.
    node = producer_with_token([bytes(60_000), b"\x01" * 60_000])
    confirm = node.sent.index(data_sent(node)[0])
    run_with_master(node, 1.0, 1)  # message 0 stays pending meanwhile
    (eom,) = [s for s in node.sent if s.name == "data[eom]"]
    assert node.named("token[request]", since=confirm) == []
    assert node.counter("messages_sent") == 1 and node.counter("queued") == 1
    # The master accepts message 0: now the producer asks for the next token, once.
    mark = len(node.sent)
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 1.05)
    (request,) = node.named("token[request]", since=mark)
    assert request.at > eom.at and request.dest == addr_of(MASTER)
    assert request.packet.header.destination == MASTER


# -- §3.2.3: empty[dally] -------------------------------------------------------------------------


@pytest.mark.parametrize(("packets", "dallies"), [(1, 2), (2, 1), (3, 0), (5, 0)])
def test_a_short_message_is_padded_with_one_empty_dally_a_heartbeat(
    packets: int, dallies: int
) -> None:
    # §3.2.3: "a message must consist of at least retention packets. If the client data does
    # not require that many packets, empty[dally] packets must be appended" (message_packets,
    # 3 in the seed profile). Each carries (m, k), k one past the last packet (core.py).
    node = producer_with_token([bytes(payload_for(packets, 100))])
    run_with_master(node, 2.0, 1)  # message 0 stays pending
    (eom,) = [s for s in node.sent if s.name == "data[eom]"]
    padding = [s for s in node.named("empty[dally]") if s.packet.header.source == P1]
    assert len(padding) == dallies
    assert node.counter("dallies_sent") == dallies
    for s in padding:
        assert s.dest is None  # multicast
        assert s.packet.header.destination == WEB
        assert (s.packet.header.acceptance.message_seq, s.packet.header.acceptance.packet_seq) == (
            0,
            packets,
        )
    times = [eom.at] + [s.at for s in padding]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    if gaps:  # the first half a heartbeat after the data (sender.py), then one a heartbeat
        assert gaps[0] == pytest.approx(HEARTBEAT / 2), times
    assert all(g >= HEARTBEAT - 1e-9 for g in gaps[1:]), times
    assert all(g <= 2 * HEARTBEAT + 1e-9 for g in gaps), times  # yet every heartbeat


def test_a_token_confirmed_when_the_window_is_spent_is_held_with_an_empty_dally() -> None:
    # §3.2.3: "something must be transmitted during a heartbeat or the master may think the
    # process owning a transmit token has failed". Message 0 spends the whole window; token 1
    # arrives in the same heartbeat: no data may go, so empty[dally] (1, 0) goes at once.
    node = producer_with_token([bytes(payload_for(WINDOW))], confirm_at=0.06)
    assert len(data_sent(node)) == WINDOW
    node.send(b"\x02" * 5000, 0.065)  # message 0 is undecided: no token asked for yet
    assert [s.at for s in node.named("token[request]")] == [0.05]
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 0.07)
    assert [s.at for s in node.named("token[request]")][-1] == 0.07
    mark = len(node.sent)
    node.receive(token_confirm(MASTER, P1, 1, statuses={0: ACCEPTED}), 0.08)
    (dally,) = node.sent_after(mark)
    assert dally.name == "empty[dally]" and dally.dest is None
    acceptance = dally.packet.header.acceptance
    assert (acceptance.message_seq, acceptance.packet_seq) == (1, 0)
    assert data_sent(node, since=mark) == []
    # Then message 1 goes out, in the next heartbeat.
    run_with_master(node, 0.5, 2, statuses={0: ACCEPTED})
    later = data_sent(node, since=mark, message=1)
    assert ids(later) == [(1, p) for p in range(4)]
    assert later[0].at > 0.08


def test_a_producer_holding_a_token_sends_something_every_heartbeat() -> None:
    # §3.2.3 and §3.2.5: from the confirm until its message counts message_packets packets,
    # every heartbeat carries a data packet or an empty[dally] from the holder.
    node = producer_with_token([bytes(60_000)], confirm_at=0.2)
    node.send(b"x" * 10, 0.3)
    run_with_master(node, 1.0, 1)
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 1.0)
    node.receive(token_confirm(MASTER, P1, 1, statuses={0: ACCEPTED}), 1.01)
    run_with_master(node, 2.0, 2, statuses={0: ACCEPTED})
    for number, confirmed_at, count in ((0, 0.2, 43), (1, 1.01, 3)):
        # Message 0: 43 data packets; message 1: data[eom] then two empty[dally] (§3.2.3).
        times = [
            s.at
            for s in node.sent
            if s.packet.header.source == P1
            and s.packet.packet_type in (PacketType.DATA, PacketType.EMPTY)
            and s.packet.header.acceptance.message_seq == number
        ]
        assert len(times) == count and times[0] == confirmed_at, times
        gaps = [b - a for a, b in itertools.pairwise(sorted(set(times)))]
        assert max(gaps) <= HEARTBEAT + 1e-9, times


# -- §2.2.3, §2.2.6, TR §3.4: subchannel and sync flag --------------------------------------------


def test_the_board_message_goes_on_subchannel_1_with_the_sync_flag_on_its_first_packet() -> None:
    master = founded_master()  # joiners get the board as message s (TR §3.4)
    mark = len(master.sent)
    master.receive(join_request(P1), 2.1)
    (request,) = master.requests()
    (confirm,) = master.named("join[confirm]", since=mark)
    s = confirm.packet.header.acceptance.message_seq
    # 5120 bytes zlib cannot shrink, packed to 5135 (coreapi/boardstate.py): 4 packets with
    # the 14-byte state header (no verdicts: nothing accepted yet)
    state = random.Random(1).randbytes(5120)
    master.provide(request, state, 2.15)
    master.run_until(3.0)
    board = data_sent(master, since=mark)
    assert ids(board) == [(s, p) for p in range(4)]
    assert [x.packet.header.subchannel for x in board] == [1, 1, 1, 1]
    assert [x.packet.header.acceptance.sync for x in board] == [1, 0, 0, 0]
    assert board[-1].name == "data[eom]"
    assert [len(x.packet.body) for x in board] == [UNIT, UNIT, UNIT, 5149 - 3 * UNIT]  # type: ignore[arg-type]
    body = b"".join(x.packet.body for x in board)  # type: ignore[misc]
    assert decode_state(body) == (s, state)
    # Control packets carry subchannel 0 and sync 0 (§2.2.3, §2.2.6).
    control = [x for x in master.sent if x.packet.packet_type is not PacketType.DATA]
    assert control and all(
        x.packet.header.subchannel == 0 and x.packet.header.acceptance.sync == 0 for x in control
    )


def test_payload_messages_go_on_subchannel_0_without_the_sync_flag() -> None:
    node = producer_with_token([bytes(60_000)])
    run_with_master(node, 1.0, 1)
    sent = data_sent(node)
    assert len(sent) == 43
    assert {(s.packet.header.subchannel, s.packet.header.acceptance.sync) for s in sent} == {(0, 0)}
    assert all(s.packet.header.acceptance.sync == 0 for s in node.sent)


# -- §2.2.7-§2.2.9, §3.2.2: the web's current parameters in every packet --------------------------


def test_every_packet_carries_the_current_heartbeat_window_and_retention() -> None:
    # §3.2.2: "Every packet transmitted always contains the latest heartbeat, window and
    # retention information." The master changes them (§3.4.1) mid-message.
    node = producer_with_token([bytes(60_000)], confirm_at=0.2)
    assert len(data_sent(node)) == WINDOW
    before = list(node.sent)
    node.receive(master_beat(1, heartbeat_ms=160, window=17, retention=4), 0.3)
    assert node.core.parameters == (0.16, 17, 4)
    run_with_master(node, 1.5, 1, values=(160, 17, 4))
    after = [s for s in node.sent[len(before) :] if s.packet.header.source == P1]
    assert {
        (s.packet.header.heartbeat, s.packet.header.window, s.packet.header.retention)
        for s in before
        if s.at > 0.01
    } == {(200, 20, 3)}
    assert after and {
        (s.packet.header.heartbeat, s.packet.header.window, s.packet.header.retention)
        for s in after
    } == {(160, 17, 4)}
    # and the new window is the one used: 23 packets left go as 17 + 6.
    assert [len(g) for g in bursts(data_sent(node)[WINDOW:])] == [17, 6]


# -- framing (mtp/framing.py): payloads in, the same payloads out -------------------------------


def _consume(packets: list[Sent], accepted: int) -> Node:
    """A consumer that hears ``packets`` from P1, then the master accepting 0..accepted-1."""
    consumer = joined_member(C1, role="consumer")
    for s in packets:
        consumer.receive(s.raw, s.at, addr_of(P1))
    consumer.receive(
        empty(MASTER, accepted, statuses=dict.fromkeys(range(accepted), ACCEPTED)),
        packets[-1].at + 0.01,
    )
    return consumer


def test_payloads_batched_in_one_message_are_delivered_in_send_order() -> None:
    rng = random.Random(7)
    payloads = [b"first", b"", rng.randbytes(3000), b"\x00" * 1388, b"last"]
    node = joined_member(P1)
    for index, payload in enumerate(payloads):
        node.send(payload, 0.05 + index * 0.01)
    assert len(node.named("token[request]")) == 1  # one token for all of them
    node.receive(token_confirm(MASTER, P1, 0), 0.2)
    run_with_master(node, 1.0, 1)
    assert node.counter("messages_sent") == 1
    sent = data_sent(node)
    consumer = _consume(sent, 1)
    delivered = consumer.deliveries()
    assert [d.payload for d in delivered] == payloads
    assert [d.order_key for d in delivered] == [(0, i) for i in range(len(payloads))]
    assert {d.origin for d in delivered} == {P1}
    assert [d.timestamp for d in delivered] == pytest.approx([0.05 + i * 0.01 for i in range(5)])
    # The producer delivers its own message once the master accepts it, with the same keys.
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 1.05)
    own = node.deliveries()
    assert [(d.order_key, d.payload, d.origin) for d in own] == [
        (d.order_key, d.payload, d.origin) for d in delivered
    ]


@pytest.mark.parametrize("size", [0, 1, 1387, 1388, 1389, 2788, 59_999, MAX_PAYLOAD])
def test_a_payload_round_trips_exactly_whatever_its_size(size: int) -> None:
    payload = random.Random(size).randbytes(size)
    node = producer_with_token([payload])
    run_with_master(node, 1.5, 1)
    sent = data_sent(node)
    assert len(sent) == -(-(size + RECORD_OVERHEAD) // UNIT)
    consumer = _consume(sent, 1)
    assert consumer.delivered_payloads() == [payload]
    assert [d.order_key for d in consumer.deliveries()] == [(0, 0)]


def test_messages_of_one_producer_are_delivered_in_message_order() -> None:
    node = joined_member(P1)
    node.send(b"one", 0.05)
    node.receive(token_confirm(MASTER, P1, 0), 0.1)
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 0.3)
    node.send(b"two", 0.31)
    node.send(b"three", 0.32)
    node.receive(token_confirm(MASTER, P1, 1, statuses={0: ACCEPTED}), 0.4)
    run_with_master(node, 1.2, 2, statuses={0: ACCEPTED})
    consumer = _consume(data_sent(node), 2)
    assert [(d.order_key, d.payload) for d in consumer.deliveries()] == [
        ((0, 0), b"one"),
        ((1, 0), b"two"),
        ((1, 1), b"three"),
    ]


# -- what send() refuses ------------------------------------------------------------------------


def test_a_consumer_refuses_to_send() -> None:
    node = joined_member(C1, role="consumer")
    with pytest.raises(RuntimeError, match="consumer"):
        node.send(b"stroke", 0.1)
    run_with_master(node, 1.0, 0)
    assert node.named("token[request]") == [] and data_sent(node) == []
    assert node.counter("sent") == 0


def test_send_before_start_raises() -> None:
    node = Node(P1, {"role": "producer", "join_with_state": False})
    with pytest.raises(RuntimeError, match="not in a session"):
        node.send(b"stroke", 0.0)
    assert node.sent == [] and node.counter("sent") == 0


def test_send_after_leave_raises() -> None:
    node = joined_member(P1)
    node.leave(0.1)
    with pytest.raises(RuntimeError, match="not in a session"):
        node.send(b"stroke", 0.2)
    assert node.counter("sent") == 0 and node.named("token[request]") == []


def test_a_payload_above_max_message_raises_value_error() -> None:
    """Issue 20: send takes up to max_message (4 MiB) bytes; one more is a ValueError."""
    node = joined_member(P1)
    assert node.core.max_message == MAX_MESSAGE == 4 << 20 and node.core.max_payload == 60_000
    with pytest.raises(ValueError, match=f"{MAX_MESSAGE + 1} bytes exceeds .*max_message"):
        node.send(bytes(MAX_MESSAGE + 1), 0.1)
    assert node.counter("sent") == 0 and node.named("token[request]") == []
    node.send(bytes(MAX_MESSAGE), 0.2)  # the limit itself is fine
    assert node.counter("sent") == 1 and len(node.named("token[request]")) == 1


def test_data_packets_carry_the_statuses_the_master_announced() -> None:
    # §2.2.6: every packet carries the statuses of the 12 messages before its own; only the
    # master sets them, the others copy what they learned (undecided ones read pending).
    node = joined_member(P1, message=20)
    node.receive(empty(MASTER, 22, statuses={20: MessageStatus.REJECTED, 21: ACCEPTED}), 0.05)
    node.send(b"x", 0.06)
    node.receive(token_confirm(MASTER, P1, 22), 0.07)
    (packet,) = data_sent(node)
    acceptance: AcceptanceRecord = packet.packet.header.acceptance
    assert (acceptance.message_seq, acceptance.packet_seq) == (22, 0)
    assert acceptance.statuses == (ACCEPTED, MessageStatus.REJECTED) + (MessageStatus.PENDING,) * 10
    assert packet.packet.header.modifier is DataModifier.EOM
    assert packet.packet.body[RECORD_OVERHEAD:] == b"x"  # type: ignore[index]
