"""RFC 1301 §3.1 (establishing a web: the master's probe), §3.1.1 (join[request]), §3.1.2
(join[confirm] and join[deny]) and TR 90-1141 §3.4 (joining with state: the board as message
s on subchannel 1)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

import pytest

from coreapi.boardstate import StateFormat
from mtp.core import Phase
from mtp.framing import STATE_SUBCHANNEL, decode_state, encode_state, split
from mtp.wire import (
    DataModifier,
    JoinData,
    JoinModifier,
    MemberClass,
    MessageStatus,
    MtpPacket,
    PacketType,
    TransportClass,
    TransportType,
)
from tests.mtp.core_harness import (
    HEARTBEAT,
    MASTER,
    P1,
    P2,
    WEB,
    Node,
    Sent,
    addr_of,
    batch,
    core_of,
    data,
    empty,
    founded_master,
    header,
    join_confirm,
    join_request,
    joined_member,
    mtp_session,
    record,
    run_until,
    token_request,
)
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    JoinProgress,
    Ready,
)

GROUP = "224.0.1.9:7000"  # the default group (params.py), named in the probe's failures
OTHER_MASTER = 0x99
P3 = 0xB3

ACCEPTED, PENDING, REJECTED = (
    MessageStatus.ACCEPTED,
    MessageStatus.PENDING,
    MessageStatus.REJECTED,
)


# -- private helpers ---------------------------------------------------------------------------


def _join_deny(master: int, joiner: int, body: JoinData) -> MtpPacket:
    return MtpPacket(header(PacketType.JOIN, JoinModifier.DENY, master, joiner), body)


def _web_values(**values: object) -> JoinData:
    """A join[deny]'s data part: the web's values (multicast id 0)."""
    return JoinData(
        values.get("member_class", MemberClass.PRODUCER),  # type: ignore[arg-type]
        TransportClass.RELIABLE,
        values.get("transport_type", TransportType.N_X_N),  # type: ignore[arg-type]
        int(values.get("min_throughput", 140)),  # type: ignore[call-overload]
        int(values.get("max_data_unit", 1400)),  # type: ignore[call-overload]
    )


def _board_packets(
    message: int,
    state: bytes,
    master_number: int | None = None,
    statuses: Mapping[int, MessageStatus] | None = None,
    unit: int = 1400,
    form: StateFormat = StateFormat.RAW,
    damage: Callable[[bytes], bytes] | None = None,
) -> list[MtpPacket]:
    """The master's board message: ``state`` as message ``message`` on subchannel 1, the
    sync flag on its first packet (TR §3.4; docs/mtp.md). Unpacked by default, as a master
    before issue 18 sent it (still taken): the tests here count its packets by its size."""
    number = message if master_number is None else master_number
    body = encode_state(number, state, form=form)
    parts = split(body if damage is None else damage(body), unit)
    packets = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        packets.append(
            MtpPacket(
                header(
                    PacketType.DATA,
                    DataModifier.EOM if last else DataModifier.DATA,
                    MASTER,
                    WEB,
                    record(message, index, statuses, sync=1 if index == 0 else 0),
                    subchannel=STATE_SUBCHANNEL,
                ),
                part,
            )
        )
    return packets


def _for(node: Node, sent: Sent) -> bool:
    return sent.dest is None or sent.dest == addr_of(node.member_id)


class _Lan:
    """Hand-driven nodes joined by a lossless, zero-delay network: every datagram one emits
    reaches the others it is for (multicast: all; unicast: the one at that address)."""

    def __init__(self, *nodes: Node) -> None:
        self.nodes = nodes
        self.marks = [len(n.sent) for n in nodes]

    def _forward(self) -> bool:
        moved = False
        for i, node in enumerate(self.nodes):
            new = node.sent[self.marks[i] :]
            self.marks[i] = len(node.sent)
            for sent in new:
                for other in self.nodes:
                    if other is not node and _for(other, sent) and not other.core.finished:
                        other.receive(sent.packet, max(other.now, sent.at))
                        moved = True
        return moved

    def run(self, until: float, step: float = HEARTBEAT / 4) -> None:
        t = max(n.now for n in self.nodes)
        for _ in range(int((until - t) / step) + 2):
            t = min(until, t + step)
            for node in self.nodes:
                node.run_until(t)
            for _ in range(50):
                if not self._forward():
                    break
            if t >= until:
                return


def _master(params: Mapping[str, object] | None = None) -> Node:
    return founded_master({"join_with_state": False, **(params or {})})


def _admit(master: Node, joiner: int, at: float, board: bytes = b"board") -> int:
    """``joiner`` joins ``master`` (which hands it ``board`` if it gives boards); returns s."""
    mark, asked = len(master.sent), len(master.requests())
    master.receive(join_request(joiner), at)
    (confirm,) = master.named("join[confirm]", mark)
    if len(master.requests()) > asked:
        master.provide(master.requests()[-1], board, at)
    return confirm.packet.header.acceptance.message_seq


# -- §3.1: the master's probe ------------------------------------------------------------------


@pytest.mark.parametrize("probes", [5, 2])
def test_s3_1_a_new_master_probes_with_join_requests_one_per_heartbeat_then_founds(
    probes: int,
) -> None:
    node = Node(MASTER, {"role": "master", "probe_count": probes})
    node.start(0.0)
    node.run_until(probes * HEARTBEAT - 0.001)
    assert not node.is_ready() and node.core.phase is Phase.PROBING
    assert node.core.web_id == 0
    node.run_until(probes * HEARTBEAT + 0.001)
    assert node.is_ready() and node.core.phase is Phase.READY
    node.run_until(5.0)
    probes_sent = node.named("join[request]")
    assert [round(s.at, 6) for s in probes_sent] == [round(k * HEARTBEAT, 6) for k in range(probes)]
    for sent in probes_sent:
        h = sent.packet.header
        assert sent.dest is None  # multicast, to the unknown TSAP
        assert (h.source, h.destination) == (MASTER, 0)
        assert h.acceptance.is_zero  # §3.1.1: zeros in all of the acceptance fields
        assert isinstance(sent.packet.body, JoinData)
        assert sent.packet.body.member_class is MemberClass.MASTER
        assert sent.packet.body.multicast_id == 0
    (founded,) = node.protocol_events("web_founded")
    web = node.core.web_id
    assert founded.fields["web"] == web != 0 and web != MASTER
    assert founded.at == pytest.approx(probes * HEARTBEAT)
    assert node.core.master_id == MASTER
    # §2.2.7: once founded, the master beats into its web (never to the unknown TSAP again).
    beats = node.named("empty[dally]")
    assert beats and all(b.packet.header.destination == web for b in beats)
    assert node.failures() == []


def test_s3_1_a_probing_master_answers_no_joiner() -> None:
    node = Node(MASTER, {"role": "master"})
    node.start(0.0)
    node.receive(join_request(P1), 0.1)
    assert node.named("join[confirm]") == [] and node.named("join[deny]") == []
    assert node.core.phase is Phase.PROBING


@pytest.mark.parametrize("answer", ["confirm", "deny"])
def test_s3_1_a_probing_master_that_gets_an_answer_aborts_and_never_founds(answer: str) -> None:
    node = Node(MASTER, {"role": "master"})
    node.start(0.0)
    node.run_until(0.3)
    if answer == "confirm":
        reply = join_confirm(OTHER_MASTER, MASTER, 7)
    else:
        reply = _join_deny(OTHER_MASTER, MASTER, _web_values(member_class=MemberClass.MASTER))
    node.receive(reply, 0.3)
    (reason,) = node.failures()
    assert GROUP in reason and f"{OTHER_MASTER:#x}" in reason
    assert "Not founding a second web" in reason
    if answer == "deny":
        assert "already has a master" in reason
    assert node.core.finished
    probes = len(node.named("join[request]"))
    node.run_until(10.0)
    assert len(node.sent) == probes  # silent from the abort on: no probe, no heartbeat
    assert node.protocol_events("web_founded") == [] and not node.is_ready()
    assert node.core.web_id == 0


def test_s3_1_two_masters_probing_at_once_the_higher_id_stands_down() -> None:
    low = Node(0x10, {"role": "master"})
    high = Node(0x20, {"role": "master"})
    low.start(0.0)
    high.start(0.05)
    lan = _Lan(low, high)
    lan.run(3.0)
    (reason,) = high.failures()
    assert "0x10" in reason and GROUP in reason and "stands down" in reason
    assert high.core.finished and not high.is_ready()
    assert low.is_ready() and low.core.phase is Phase.READY and low.failures() == []
    assert len(low.protocol_events("web_founded")) == 1
    assert high.protocol_events("web_founded") == []


def test_s3_1_a_probing_master_ignores_a_rival_with_a_higher_id() -> None:
    node = Node(0x10, {"role": "master"})
    node.start(0.0)
    node.receive(join_request(0x20, MemberClass.MASTER), 0.1)
    node.run_until(2.0)
    assert node.is_ready() and node.failures() == []


# -- §3.1.1: the joiner's join[request] --------------------------------------------------------


def test_s3_1_1_a_join_request_carries_the_joiners_class_and_wishes_to_the_unknown_tsap() -> None:
    node = Node(
        P1,
        {
            "role": "consumer",
            "transport_type": "1xn",
            "min_throughput": 100,
            "max_data_unit": 1000,
        },
    )
    node.start(0.0)
    (sent,) = node.sent
    h = sent.packet.header
    assert sent.name == "join[request]" and sent.dest is None
    assert (h.source, h.destination, h.subchannel) == (P1, 0, 0)
    assert h.acceptance.is_zero
    # The heartbeat, window and retention the client asks for (§3.1.1).
    assert (h.heartbeat, h.window, h.retention) == (200, 20, 3)
    assert sent.packet.body == JoinData(
        MemberClass.CONSUMER, TransportClass.RELIABLE, TransportType.ONE_X_N, 100, 1000, 0
    )


def test_s3_1_1_a_join_request_is_retried_every_heartbeat_from_the_same_id_until_answered() -> None:
    node = Node(P1, {"role": "producer", "join_with_state": False})
    node.start(0.0)
    node.run_until(1.05)
    tries = node.named("join[request]")
    assert [round(s.at, 6) for s in tries] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert {s.packet.header.source for s in tries} == {P1}
    assert len({s.raw for s in tries}) == 1  # the very same request each time
    node.receive(join_confirm(MASTER, P1, 0), 1.05)
    node.receive(empty(MASTER, 0), 1.2)  # the master's heartbeat keeps us in the web
    node.run_until(1.5)
    assert len(node.named("join[request]")) == len(tries)
    assert node.is_ready()


def test_s3_1_1_a_joiner_reports_one_failure_after_join_report_after_unanswered_tries() -> None:
    node = Node(P1, {"role": "producer", "join_report_after": 3})
    node.start(0.0)
    node.run_until(0.55)  # three requests: 0.0, 0.2, 0.4
    assert node.failures() == []
    node.run_until(0.65)  # the fourth
    (reason,) = node.failures()
    assert GROUP in reason and "3 join requests" in reason
    assert reason.startswith("no one hosts an mtp board on") and "still asking" in reason
    assert "--" not in reason  # no command-line advice in a reason an app shows
    node.run_until(4.05)
    assert len(node.failures()) == 1  # once
    assert len(node.named("join[request]")) == 21  # still trying: 0.0 .. 4.0
    assert node.core.phase is Phase.JOINING


# -- §3.1.2: join[confirm] -------------------------------------------------------------------


def test_s3_1_2_a_join_confirm_carries_the_webs_parameters_and_its_multicast_id() -> None:
    master = _master({"heartbeat": 0.16, "window": 18, "retention": 4})
    joiner = Node(P1, {"role": "producer", "join_with_state": False})
    joiner.start(2.0)
    (request,) = joiner.sent
    mark = len(master.sent)
    master.receive(request.packet, 2.0)
    (confirm,) = master.named("join[confirm]", mark)
    h = confirm.packet.header
    assert confirm.dest == addr_of(P1)  # unicast to the requester
    assert (h.source, h.destination) == (MASTER, P1)
    assert (h.heartbeat, h.window, h.retention) == (160, 18, 4)  # the web's, not the wish
    assert h.acceptance.message_seq == master.core.next_grant  # s: the next token
    body = confirm.packet.body
    assert isinstance(body, JoinData)
    assert body.multicast_id == master.core.web_id != 0
    assert body.max_data_unit == 1400
    assert master.counter("joins_confirmed") == 1 and P1 in master.core.members
    # The joiner takes the web's values as its own (§3.1.2) and the master's TSAP.
    joiner.receive(confirm.packet, 2.01)
    assert joiner.is_ready() and joiner.core.phase is Phase.READY
    assert joiner.core.web_id == master.core.web_id
    assert joiner.core.master_id == MASTER
    assert joiner.core.parameters == (0.16, 18, 4)


def test_s3_1_2_a_join_while_a_token_is_out_is_confirmed_only_once_its_message_is_decided() -> None:
    master = _master()
    web = master.core.web_id
    _admit(master, P1, 2.01)
    _admit(master, P2, 2.02)
    master.receive(token_request(P1, MASTER, 0), 2.03)
    (grant,) = master.named("token[confirm]")
    number = grant.packet.header.acceptance.message_seq
    mark = len(master.sent)
    master.receive(join_request(P3), 2.04)
    master.receive(data(P1, number, 0, b"x" * 1400, web=web), 2.05)
    # §3.1.2: the master must hold every token when it confirms; P1 still holds one.
    assert master.named("join[confirm]", mark) == []
    # TR §3.4: and while the joiner waits, no token is granted either.
    master.receive(token_request(P2, MASTER, 0), 2.06)
    assert master.named("token[confirm]", mark) == []
    master.receive(data(P1, number, 1, batch(b"end"), DataModifier.EOM, web=web), 2.07)
    assert master.core.status(number) is ACCEPTED
    (confirm,) = master.named("join[confirm]", mark)
    assert confirm.at == 2.07 and confirm.packet.header.destination == P3
    record_ = confirm.packet.header.acceptance
    assert record_.message_seq == number + 1
    assert record_.statuses[0] is ACCEPTED  # the decided message, seen from s
    # Then the waiting token request is served, after the confirm.
    (token,) = master.named("token[confirm]", mark)
    assert token.packet.header.destination == P2
    assert master.sent.index(token) > master.sent.index(confirm)


@pytest.mark.parametrize("with_state", [False, True])
def test_s3_1_2_a_retransmitted_join_request_gets_the_same_confirm_again(with_state: bool) -> None:
    master = founded_master({"join_with_state": with_state})
    mark = len(master.sent)
    master.receive(join_request(P1), 2.05)
    if with_state:
        (request,) = master.requests()
        master.provide(request, b"the board", 2.06)
    master.receive(join_request(P1), 2.25)  # its confirm was lost: the same request again
    first, again = master.named("join[confirm]", mark)
    assert again.packet == first.packet and again.dest == first.dest
    assert master.counter("joins_confirmed") == 1
    assert len(master.protocol_events("join_confirmed")) == 1
    assert len(master.requests()) == (1 if with_state else 0)  # one board, not two
    assert master.core.next_grant == (1 if with_state else 0)  # no second message s


# -- §3.1.2: join[deny] ----------------------------------------------------------------------


DENIALS = [
    # (joiner params, master params, master's reason, words of the joiner's failure)
    (
        {"transport_type": "1xn", "role": "consumer"},
        {},
        "type",
        ["the web is NxN", "asked for 1xN"],
    ),
    (
        {"transport_type": "1xn", "role": "producer"},
        {"transport_type": "1xn"},
        "producer",
        ["1xN", "only producer", "join as a consumer"],
    ),
    ({"max_data_unit": 1000}, {}, "unit", ["1400 bytes", "maximum of 1000"]),
    ({"min_throughput": 500}, {}, "throughput", ["at most 140 kB/s", "needs 500 kB/s"]),
]


@pytest.mark.parametrize(("wish", "web", "why", "words"), DENIALS, ids=[d[2] for d in DENIALS])
def test_s3_1_2_a_join_in_conflict_with_the_web_is_denied_and_reported_to_the_joiner(
    wish: dict[str, object], web: dict[str, object], why: str, words: list[str]
) -> None:
    master = _master(web)
    joiner = Node(P1, {"role": "producer", **wish})
    joiner.start(2.0)
    mark = len(master.sent)
    master.receive(joiner.sent[0].packet, 2.0)
    assert master.named("join[confirm]", mark) == []
    (deny,) = master.named("join[deny]", mark)
    assert deny.dest == addr_of(P1) and deny.packet.header.destination == P1
    # The deny's data part carries the web's values (docs/mtp.md), multicast id 0.
    body = deny.packet.body
    assert isinstance(body, JoinData)
    web_type = TransportType.ONE_X_N if web.get("transport_type") == "1xn" else TransportType.N_X_N
    assert (body.transport_type, body.min_throughput, body.max_data_unit, body.multicast_id) == (
        web_type,
        140,
        1400,
        0,
    )
    (event,) = master.protocol_events("join_denied")
    assert event.fields == {"joiner": P1, "reason": why}
    assert master.counter("joins_denied") == 1 and P1 not in master.core.members
    # The joiner's client hears why, readably, and the joiner stops.
    joiner.receive(deny.packet, 2.01)
    (reason,) = joiner.failures()
    assert f"{MASTER:#x}" in reason and "refused" in reason
    for word in words:
        assert word in reason, reason
    assert joiner.core.finished and not joiner.is_ready()
    tries = len(joiner.named("join[request]"))
    joiner.run_until(5.0)
    assert len(joiner.named("join[request]")) == tries


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        (join_request(P1, MemberClass.MASTER), "master"),
        (join_request(P1, transport_class=TransportClass.UNRELIABLE), "class"),
    ],
    ids=["master", "unreliable"],
)
def test_s3_1_2_a_second_master_or_an_unreliable_joiner_is_denied(
    request_: MtpPacket, why: str
) -> None:
    master = _master()
    mark = len(master.sent)
    master.receive(request_, 2.05)
    (deny,) = master.named("join[deny]", mark)
    assert deny.dest == addr_of(P1)
    assert isinstance(deny.packet.body, JoinData)
    assert deny.packet.body.transport_class is TransportClass.RELIABLE  # the web's
    assert master.protocol_events("join_denied")[0].fields["reason"] == why
    assert master.named("join[confirm]", mark) == [] and P1 not in master.core.members


def test_s3_1_2_a_consumer_is_admitted_to_a_1xn_web() -> None:
    master = _master({"transport_type": "1xn"})
    mark = len(master.sent)
    master.receive(
        join_request(P1, MemberClass.CONSUMER, transport_type=TransportType.ONE_X_N), 2.05
    )
    assert len(master.named("join[confirm]", mark)) == 1
    assert master.named("join[deny]", mark) == []


# -- TR §3.4: joining with state: the master's side ---------------------------------------------


def test_tr3_4_the_board_is_requested_only_after_every_message_before_s_is_delivered() -> None:
    master = founded_master()
    web = master.core.web_id
    _admit(master, P1, 2.01)
    master.receive(token_request(P1, MASTER, master.core.next_grant), 2.02)
    (grant,) = master.named("token[confirm]")
    number = grant.packet.header.acceptance.message_seq
    master.receive(data(P1, number, 0, batch(b"before")[:10], web=web), 2.03)
    asked = len(master.requests())
    mark = len(master.sent)
    master.receive(join_request(P2), 2.04)
    # The message before s is pending: no confirm, no board asked for yet.
    assert master.named("join[confirm]", mark) == [] and len(master.requests()) == asked
    master.receive(data(P1, number, 1, batch(b"before")[10:], DataModifier.EOM, web=web), 2.05)
    (confirm,) = master.named("join[confirm]", mark)
    s = confirm.packet.header.acceptance.message_seq
    assert s == number + 1
    events = master.events
    delivered = [i for i, e in enumerate(events) if isinstance(e, Delivered)]
    requested = [i for i, e in enumerate(events) if isinstance(e, BoardStateRequested)]
    assert [events[i].payload for i in delivered] == [b"before"]  # type: ignore[union-attr]
    assert len(requested) == asked + 1
    assert delivered[-1] < requested[-1]  # the board then holds everything before s
    # Message s is the board, granted to the master itself: a token asked for now is for a
    # later message, which the joiner delivers after the board (the join is confirmed).
    assert master.core.grants[s].owner == MASTER
    master.receive(token_request(P1, MASTER, s), 2.06)
    (token,) = master.named("token[confirm]", mark)
    assert token.packet.header.acceptance.message_seq == s + 1


def test_tr3_4_the_board_goes_out_as_message_s_on_subchannel_1_sync_on_its_first_packet() -> None:
    master = founded_master()
    mark = len(master.sent)
    master.receive(join_request(P1), 2.05)
    (confirm,) = master.named("join[confirm]", mark)
    s = confirm.packet.header.acceptance.message_seq
    (request,) = master.requests()
    # 3,072 bytes zlib cannot shrink, 3,087 packed: three packets of 1,400
    state = random.Random(1).randbytes(3072)
    master.provide(request, state, 2.06)
    board = [x for x in master.sent_after(mark) if x.packet.packet_type is PacketType.DATA]
    assert [x.name for x in board] == ["data[data]", "data[data]", "data[eom]"]
    for index, sent in enumerate(board):
        h = sent.packet.header
        assert sent.dest is None and h.destination == master.core.web_id
        assert h.subchannel == STATE_SUBCHANNEL
        assert (h.acceptance.message_seq, h.acceptance.packet_seq) == (s, index)
        assert h.acceptance.sync == (1 if index == 0 else 0)
    body = b"".join(x.packet.body for x in board)  # type: ignore[misc]
    assert decode_state(body) == (s, state)
    (sending,) = master.protocol_events("state_sending")
    assert sending.fields == {"message": s, "bytes": len(state), "sent": 3101, "packets": 3}
    counters = master.core.counters()
    assert (counters["state_bytes"], counters["state_bytes_sent"]) == (3072, 3101)
    assert counters["state_packets_sent"] == 3
    # The master holds every packet of its own message: s is accepted at once, and tokens
    # flow again.
    assert master.core.status(s) is ACCEPTED and s not in master.core.grants


# -- TR §3.4: joining with state: the joiner's side ---------------------------------------------


def test_tr3_4_a_joiner_gets_the_board_before_anything_newer_and_later_messages_after() -> None:
    s = 5
    node = Node(P2, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P2, s), 0.01)
    assert node.core.phase is Phase.SYNCING and not node.is_ready()
    # A newer message, complete and accepted, arrives before the board: it must wait.
    node.receive(data(P1, s + 1, 0, batch(b"newer"), DataModifier.EOM), 0.02)
    node.receive(empty(MASTER, s + 2, statuses={s: ACCEPTED, s + 1: ACCEPTED}), 0.03)
    assert node.deliveries() == [] and node.states_received() == []
    state = b"S" * 3000
    packets = _board_packets(s, state, statuses={s - 1: ACCEPTED})
    for at, packet in zip((0.04, 0.05, 0.06), packets, strict=True):
        node.receive(packet, at)
    progress = [(e.received, e.total) for e in node.events if isinstance(e, JoinProgress)]
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert node.states_received() == [state]
    order = [type(e) for e in node.events if isinstance(e, BoardStateReceived | Ready | Delivered)]
    assert order == [BoardStateReceived, Ready, Delivered]
    (later,) = node.deliveries()
    assert (later.payload, later.order_key, later.origin) == (b"newer", (s + 1, 0), P1)
    assert node.core.phase is Phase.READY and node.failures() == []


def test_tr3_4_a_packed_board_is_unpacked_for_the_joiner() -> None:
    state = b"stroke " * 3000  # 21,000 bytes: one packet, packed (coreapi/boardstate.py)
    node = Node(P2, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P2, 5), 0.01)
    (packet,) = _board_packets(5, state, form=StateFormat.ZLIB)
    node.receive(packet, 0.02)
    node.receive(empty(MASTER, 6, statuses={5: ACCEPTED}), 0.03)
    assert node.states_received() == [state] and node.core.phase is Phase.READY


def _length_fixed(body: bytes) -> bytes:
    """A board message whose header's length matches the bytes it holds (no verdicts)."""
    return body[:8] + (len(body) - 14).to_bytes(4, "big") + body[12:]


def _cut(body: bytes) -> bytes:
    return _length_fixed(body[:-40])


def _flipped(body: bytes) -> bytes:
    return body[:40] + bytes([body[40] ^ 0xFF]) + body[41:]


def _bomb(body: bytes) -> bytes:
    """The packed 4 MiB of zeros claimed as 1 MiB: it inflates past its claim."""
    return body[:14] + (1 << 20).to_bytes(4, "big") + body[18:]


@pytest.mark.parametrize(
    ("state", "damage", "reason"),
    [
        (random.Random(1).randbytes(2000), _cut, "cut short"),
        (random.Random(1).randbytes(2000), _flipped, "corrupt"),
        (bytes(4 << 20), _bomb, "inflates past"),
    ],
)
def test_tr3_4_a_packed_board_that_will_not_unpack_is_refused_counted_and_rejoined(
    state: bytes, damage: Callable[[bytes], bytes], reason: str
) -> None:
    node = Node(P2, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P2, 5), 0.01)
    for packet in _board_packets(5, state, form=StateFormat.ZLIB, damage=damage):
        node.receive(packet, 0.02)
    node.receive(empty(MASTER, 6, statuses={5: ACCEPTED}), 0.03)
    assert node.states_received() == []
    assert node.core.counters()["states_refused"] == 1
    (failure,) = node.failures()
    assert "board sent by the mtp master is unusable" in failure and reason in failure
    assert node.core.phase is Phase.JOINING  # it asks to join again, board and all


def test_tr3_4_a_joiner_draws_at_the_instant_its_board_is_in() -> None:
    """Issue 18: nothing between the board and drawing. A stroke drawn while the board is on
    its way is held; the master's verdict that completes the board (its message s accepted)
    makes the member READY and asks for a transmit token for the stroke (§3.2.1) at that same
    instant. (RMP: test_core_join's test_s2_8_the_joiner_may_not_send_until_the_image_is_complete
    sends its early stroke at the instant of the last image part.)"""
    node = Node(P2, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P2, 5), 0.01)
    node.send(b"early", 0.015)
    for packet in _board_packets(5, random.Random(1).randbytes(2000), form=StateFormat.ZLIB):
        node.receive(packet, 0.02)
    mark = len(node.sent)
    assert node.named("token[request]") == [] and not node.is_ready()
    node.receive(empty(MASTER, 6, statuses={5: ACCEPTED}), 0.03)
    events = [type(e) for e in node.events if isinstance(e, BoardStateReceived | Ready)]
    assert events == [BoardStateReceived, Ready] and node.core.phase is Phase.READY
    (request,) = node.named("token[request]", since=mark)
    assert request.at == 0.03


def test_tr3_4_a_joiner_adopts_the_masters_unbounded_numbering_from_the_board() -> None:
    s_wire, s_master = 5, 3 * 65536 + 5  # the master has granted 196,613 tokens
    node = Node(P2, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P2, s_wire), 0.01)
    for packet in _board_packets(s_wire, b"board", master_number=s_master):
        node.receive(packet, 0.02)
    node.receive(empty(MASTER, s_wire + 1, statuses={s_wire: ACCEPTED}), 0.03)
    assert node.states_received() == [b"board"]
    node.receive(data(P1, s_wire + 1, 0, batch(b"next"), DataModifier.EOM), 0.04)
    node.receive(empty(MASTER, s_wire + 2, statuses={s_wire + 1: ACCEPTED}), 0.05)
    (delivered,) = node.deliveries()
    # Order keys are everyone's: the master's number, not the 16-bit one (framing.py).
    assert delivered.order_key == (s_master + 1, 0)


def test_tr3_4_a_member_never_delivers_another_joiners_board() -> None:
    node = joined_member(P1, message=0)
    for packet in _board_packets(0, b"someone else's board " * 100):
        node.receive(packet, 0.05)
    node.receive(data(P2, 1, 0, batch(b"stroke"), DataModifier.EOM), 0.06)
    node.receive(empty(MASTER, 2, statuses={0: ACCEPTED, 1: ACCEPTED}), 0.07)
    assert node.delivered_payloads() == [b"stroke"]
    assert node.deliveries()[0].order_key == (1, 0)
    assert node.states_received() == [] and node.failures() == []
    assert node.core.next_deliver == 2


def test_tr3_4_a_member_missing_part_of_another_joiners_board_skips_it_without_a_nak() -> None:
    node = joined_member(P1, message=0)
    first, _, last = _board_packets(0, b"B" * 3000)
    node.receive(first, 0.05)  # the middle packet is lost
    node.receive(last, 0.06)
    node.receive(data(P2, 1, 0, batch(b"stroke"), DataModifier.EOM), 0.07)
    node.receive(empty(MASTER, 2, statuses={0: ACCEPTED, 1: ACCEPTED}), 0.08)
    node.receive(empty(MASTER, 2, statuses={0: ACCEPTED, 1: ACCEPTED}), 0.25)
    node.run_until(0.5)
    assert node.delivered_payloads() == [b"stroke"]
    assert node.named("nak[request]") == []  # not ours to repair
    assert node.states_received() == []


# -- TR §3.4: a whole simulated session ------------------------------------------------------


def test_tr3_4_a_late_joiner_gets_the_board_and_agrees_with_everyone() -> None:
    session, recorder = mtp_session(3, seed=11)
    session.start(0)
    run_until(session, lambda: session.peers[0].ready, 10.0)
    session.start(1)
    run_until(session, lambda: session.peers[1].ready, 10.0)
    for k in range(8):
        session.draw(k % 2)
    run_until(session, lambda: all(len(session.peers[i].replica.board) == 8 for i in (0, 1)), 30.0)
    joined_at = session.network.now
    session.start(2)
    run_until(session, lambda: session.peers[2].ready, 30.0)
    late = session.peers[2]
    # Ready with the board: all eight strokes, none of them delivered as a message.
    assert len(late.replica.board) == 8
    assert core_of(session, 2).counters()["delivered"] == 0
    hashes = session.hashes()
    assert hashes[2] == hashes[0] == hashes[1]
    boards = [
        w
        for w in recorder.sent_by(0)
        if w.at >= joined_at
        and w.packet.packet_type is PacketType.DATA
        and w.packet.header.subchannel == STATE_SUBCHANNEL
    ]
    assert boards and boards[0].packet.header.acceptance.sync == 1
    assert boards[0].packet.header.acceptance.packet_seq == 0
    # Later strokes reach everyone, the late joiner's too.
    session.draw(2)
    session.draw(1)
    run_until(session, lambda: all(len(p.replica.board) == 10 for p in session.peers), 30.0)
    assert session.converged()
    assert core_of(session, 2).counters()["delivered"] == 2
    assert all(p.failures == [] for p in session.peers)


def _syncing_with_a_silent_master(until: float, board_packet_at: float | None = None) -> Node:
    """A joiner confirmed at message 0 (its board, TR §3.4) by a master that beats every
    heartbeat (so the member stays in the web) but, unless ``board_packet_at``, never sends
    the board."""
    node = Node(P1, {"role": "producer"})  # seed: state_timeout 30 s, retention 3 x 0.2 s
    node.start(0.0)
    node.receive(join_confirm(MASTER, P1, 0), 0.01)
    t = 0.01
    for _ in range(1000):
        t = min(until, t + HEARTBEAT)
        node.run_until(t)
        if node.core.phase is Phase.FINISHED:
            break
        node.receive(empty(MASTER, 0), t)
        if board_packet_at is not None and board_packet_at <= t:
            board_packet_at = None
            node.receive(data(MASTER, 0, 0, b"\0" * 1400, subchannel=STATE_SUBCHANNEL), t)
        if t >= until:
            break
    return node


def test_tr3_4_a_joiner_whose_master_sends_no_board_says_so_and_stops() -> None:
    # TR §3.4: a master that never sends the board (one without the TR's join with state)
    # left the joiner syncing for ever, reporting nothing. Past the master's own state_timeout
    # plus retention heartbeats with nothing of message s, it says why, and stops.
    node = _syncing_with_a_silent_master(until=30.5)
    assert node.core.phase is Phase.SYNCING and node.failures() == []
    node = _syncing_with_a_silent_master(until=31.5)
    assert node.core.phase is Phase.FINISHED
    (reason,) = node.failures()
    assert "sent no board" in reason and "TR 90-1141 §3.4" in reason and "--" not in reason


def test_tr3_4_a_joiner_receiving_its_board_slowly_keeps_waiting() -> None:
    node = _syncing_with_a_silent_master(until=40.0, board_packet_at=20.0)
    assert node.core.phase is Phase.SYNCING and node.failures() == []


def test_rfc1301_3_1_1_a_join_request_after_the_member_spoke_is_a_new_instantiation() -> None:
    # §3.1.1: a restarted process asks under the same id (the app's), within retention
    # heartbeats of its first join. The master used to take it for a retry and send the old
    # join[confirm], whose board was long gone: the member waited for it for ever. Having
    # heard from the member since its confirm, the master knows the confirm arrived: the
    # request is a new instantiation's, admitted afresh at a new message s.
    master = founded_master()
    mark = len(master.sent)
    first = _admit(master, P1, 2.05)
    master.receive(token_request(P1, MASTER, first + 1), 2.1)  # it spoke: it had the confirm
    master.run_until(2.2)
    again = _admit(master, P1, 2.25)  # well within retention heartbeats (0.6 s)
    assert again > first
    assert master.counter("joins_confirmed") == 2
    assert len(master.named("join[confirm]", mark)) == 2


def test_tr3_2_a_joiner_that_falls_12_messages_behind_its_board_rejoins() -> None:
    # TR §3.2, §2.2.6: a joiner waiting for its board (message s) that hears the master 13
    # messages on, with no verdict on s, can never learn it: it rejoins, as a member does.
    node = Node(P1, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P1, 0), 0.01)
    assert node.core.phase is Phase.SYNCING
    node.receive(empty(MASTER, 13), 0.2)
    (reason,) = node.failures()
    assert "fell more than 12 messages behind" in reason
    assert node.counter("rejoins") == 1 and node.core.phase is Phase.JOINING
