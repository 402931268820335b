"""MTP failures and endings (RFC 1301 §3.2.1, §3.2.3, §3.2.5, §3.2.8, §3.3; TR 90-1141 §3.2):
a silent token holder is checked with isMember, then removed and its message rejected; a
member that hears nothing from the master abandons the web and rejoins; voluntary quits
(§3.3.1), the master's quit (§3.3.2), banishment (§3.2.8, §3.3.3) and the idle master's
hibernation (§3.2.3). Ends with a simulated session where a producer dies holding a token."""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Address
from itertools import pairwise

import pytest

from mtp.core import Phase
from mtp.wire import (
    DataModifier,
    EmptyModifier,
    IsMemberModifier,
    MemberConfirm,
    MessageStatus,
    MtpPacket,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    QuitModifier,
    Tsap,
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
    delivered_sequence,
    empty,
    founded_master,
    header,
    join_request,
    joined_member,
    mtp_session,
    record,
    run_until,
    start_all,
    token_confirm,
    token_request,
)
from whiteboard.transport.events import MemberChanged
from whiteboard.transport.interface import MemberState

STRANGER = 0x5E
EPS = 1e-6
RETENTION = 3  # the seed profile's (RFC 1301 §3.4.2)
HOLDER_SILENCE = 0.6  # the seed profile's holder_silence
ACCEPTED = {0: MessageStatus.ACCEPTED}
# The web ends with its master, as RFC 1301 §3.2.5 and §3.3.2 say (failover is an extension,
# tested in test_failover.py).
RFC_END: dict[str, object] = {"failover": False}


# -- private helpers ----------------------------------------------------------------------------


def _tsap(ident: int, host: str | None = None) -> Tsap:
    return Tsap(IPv4Address(host or addr_of(ident)[0]), 7000, ident)


def _is_member_confirm(source: int, destination: int, target: int) -> MtpPacket:
    return MtpPacket(
        header(PacketType.IS_MEMBER, IsMemberModifier.CONFIRM, source, destination, record(0)),
        MemberConfirm(_tsap(target), 0),
    )


def _is_member_request(source: int, destination: int, target: int) -> MtpPacket:
    return MtpPacket(
        header(PacketType.IS_MEMBER, IsMemberModifier.REQUEST, source, destination, record(0)),
        _tsap(target),
    )


def _quit(
    modifier: QuitModifier, source: int, destination: int, target: Tsap, message: int = 0
) -> MtpPacket:
    return MtpPacket(
        header(PacketType.QUIT, modifier, source, destination, record(message)), target
    )


def _nak(source: int, destination: int, *entries: tuple[int, int], message: int = 0) -> MtpPacket:
    body = NakList(tuple(PacketId(m, p) for m, p in entries))
    return MtpPacket(
        header(PacketType.NAK, NakModifier.REQUEST, source, destination, record(message)), body
    )


def _master(params: Mapping[str, object] | None = None, members: tuple[int, ...] = (P1,)) -> Node:
    """A founded master (no boards for joiners) with ``members`` joined."""
    node = founded_master({"join_with_state": False, **(params or {})})
    for member in members:
        node.receive(join_request(member), node.now + 0.01)
    assert set(members) <= set(node.core.members)
    return node


def _keep_alive(
    node: Node,
    until: float,
    message: int,
    statuses: Mapping[int, MessageStatus] | None = None,
) -> None:
    """Run a member's timers to ``until`` while the master's heartbeat empties (next message
    ``message``, ``statuses``) arrive every heartbeat, as §2.2.7 promises."""
    when = node.now
    for _ in range(10_000):
        if when + HEARTBEAT > until + EPS or node.core.finished:
            break
        when += HEARTBEAT
        node.run_until(when - EPS)
        node.receive(empty(MASTER, message, statuses=statuses), when)
    node.run_until(until)


def _left(node: Node, member: int) -> list[MemberChanged]:
    return [
        e
        for e in node.events
        if isinstance(e, MemberChanged) and e.member == member and e.state is MemberState.LEFT
    ]


def _gaps(sent: list[Sent]) -> list[float]:
    return [round(b.at - a.at, 6) for a, b in pairwise(sent)]


def _multicast_empties(node: Node, since: int = 0) -> list[Sent]:
    return [s for s in node.sent[since:] if s.packet.packet_type is PacketType.EMPTY]


# -- §3.2.1: a silent token holder --------------------------------------------------------------


def test_a_silent_token_holder_is_asked_is_member_each_heartbeat_retention_times() -> None:
    master = _master()
    granted_at = master.now + 0.01
    master.receive(token_request(P1, MASTER, 0), granted_at)
    assert [s.packet.header.acceptance.message_seq for s in master.named("token[confirm]")] == [0]
    mark = len(master.sent)
    master.run_until(granted_at + HOLDER_SILENCE + (RETENTION + 1) * HEARTBEAT + EPS)
    asks = master.named("isMember[request]", mark)
    # §3.2.1: "the master may attempt to confirm the state of the process (perhaps by sending
    # isMember[request])"; §3.2.5: retried every heartbeat, retention times; §3.4.3: the
    # target and the destination are the same when a process is asked to verify itself.
    assert len(asks) == RETENTION
    assert asks[0].at > granted_at + HOLDER_SILENCE
    assert _gaps(asks) == [HEARTBEAT] * (RETENTION - 1)
    for ask in asks:
        assert ask.dest == addr_of(P1)
        assert ask.packet.header.destination == P1
        assert isinstance(ask.packet.body, Tsap) and ask.packet.body.connection_id == P1
    assert master.counter("ismember_requests_sent") == RETENTION


def test_a_silent_holder_is_removed_its_message_rejected_and_its_token_reclaimed() -> None:
    master = _master({"tokens": 1}, members=(P1, P2))
    granted_at = master.now + 0.01
    master.receive(token_request(P1, MASTER, 0), granted_at)
    master.receive(token_request(P2, MASTER, 0), granted_at + 0.01)
    # One token, and P1 holds it: P2 waits (§3.2.1, TR §5.1).
    assert [s.packet.header.destination for s in master.named("token[confirm]")] == [P1]
    mark = len(master.sent)
    master.run_until(granted_at + HOLDER_SILENCE + (RETENTION + 2) * HEARTBEAT)
    # §3.2.1: "If the member does not respond it is removed from the active members of the
    # web, the message is marked as rejected, the token is assumed by the master."
    assert P1 not in master.core.members
    assert len(_left(master, P1)) == 1
    assert master.counter("members_removed") == 1
    assert master.protocol_events("member_removed")[0].fields["member"] == P1
    assert master.core.status(0) is MessageStatus.REJECTED
    assert master.counter("messages_rejected") == 1
    # The verdict goes out in the acceptance vector of the master's next multicast (§2.2.6).
    after = [
        s.packet.header.acceptance.status_of(0)
        for s in _multicast_empties(master, mark)
        if s.at > master.protocol_events("member_removed")[0].at - EPS
    ]
    assert after and set(after) == {MessageStatus.REJECTED}
    # The token came back: P2's waiting request is granted message 1.
    grants = master.named("token[confirm]", mark)
    to_p2 = [g for g in grants if g.packet.header.destination == P2]
    assert to_p2 and to_p2[0].packet.header.acceptance.message_seq == 1
    assert to_p2[0].dest == addr_of(P2)


def test_a_holder_silent_after_some_data_is_checked_and_its_partial_message_rejected() -> None:
    master = _master()
    master.receive(token_request(P1, MASTER, 0), master.now + 0.01)
    last_heard = master.now + 0.05
    master.receive(data(P1, 0, 0, b"x" * 100, web=master.core.web_id), last_heard)
    mark = len(master.sent)
    master.run_until(last_heard + HOLDER_SILENCE - 0.05)
    assert master.named("isMember[request]", mark) == []  # not silent long enough yet
    master.run_until(last_heard + HOLDER_SILENCE + (RETENTION + 2) * HEARTBEAT)
    asks = master.named("isMember[request]", mark)
    assert len(asks) == RETENTION and asks[0].at > last_heard + HOLDER_SILENCE
    assert master.core.status(0) is MessageStatus.REJECTED  # never completed
    assert P1 not in master.core.members and len(_left(master, P1)) == 1


def test_a_holder_that_answers_is_member_confirm_is_kept() -> None:
    master = _master()
    master.receive(token_request(P1, MASTER, 0), master.now + 0.01)
    web = master.core.web_id
    master.receive(data(P1, 0, 0, b"x" * 100, web=web), master.now + 0.04)
    mark = len(master.sent)
    master.run_until(master.now + HOLDER_SILENCE + HEARTBEAT + EPS)
    ask = master.named("isMember[request]", mark)
    assert len(ask) == 1
    # The holder answers for itself (§3.4.3: "It is assumed that every process can verify
    # itself"): it is alive, so it stays a member and keeps its token.
    master.receive(_is_member_confirm(P1, MASTER, P1), master.now + 0.01)
    master.run_until(master.now + RETENTION * HEARTBEAT)
    assert P1 in master.core.members
    assert master.counter("members_removed") == 0 and _left(master, P1) == []
    assert master.core.status(0) is None  # still pending: P1 may finish its message
    master.receive(
        data(P1, 0, 1, b"y", modifier=DataModifier.EOM, web=web),
        master.now + 0.01,
    )
    assert master.core.status(0) is MessageStatus.ACCEPTED
    assert P1 in master.core.members and _left(master, P1) == []


def test_a_holder_that_answers_but_never_uses_its_token_loses_the_message_not_membership() -> None:
    master = _master()
    master.receive(token_request(P1, MASTER, 0), master.now + 0.01)
    mark = len(master.sent)
    master.run_until(master.now + HOLDER_SILENCE + HEARTBEAT + EPS)
    ask = master.named("isMember[request]", mark)
    assert len(ask) == 1
    master.receive(_is_member_confirm(P1, MASTER, P1), master.now + 0.01)
    master.run_until(master.now + HOLDER_SILENCE + 2 * HEARTBEAT)
    # Alive but silent on its token again (core.py's choice): the message cannot complete and
    # is rejected, the member stays.
    assert master.core.status(0) is MessageStatus.REJECTED
    assert P1 in master.core.members and _left(master, P1) == []
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 1), master.now + 0.01)
    assert [
        s.packet.header.acceptance.message_seq for s in master.named("token[confirm]", mark)
    ] == [1]


# -- §3.2.5: a member that hears nothing from the master ----------------------------------------


def test_a_member_hearing_nothing_from_the_master_past_its_silence_limit_rejoins() -> None:
    member = joined_member(P1)  # seed: max(silence_limit 0.6, 3 heartbeats of 0.2 s) = 0.6 s
    heard = 0.01
    mark = len(member.sent)
    member.run_until(heard + 0.6 - EPS)
    assert member.named("join[request]", mark) == [] and member.failures() == []
    member.run_until(heard + 0.6 + HEARTBEAT + EPS)
    # §3.2.5: "Any process not observing data or empty for more than retention heartbeat
    # intervals will assume to have failed or partitioned away and the transport will be
    # abandoned." We report it and join again.
    failures = member.failures()
    assert len(failures) == 1
    assert "no word from the mtp master" in failures[0] and "§3.2.5" in failures[0]
    rejoin = member.named("join[request]", mark)
    assert len(rejoin) == 1 and rejoin[0].at > heard + 0.6
    assert rejoin[0].dest is None and rejoin[0].packet.header.destination == 0
    assert member.core.phase is Phase.JOINING and member.counter("rejoins") == 1


def test_a_member_that_hears_the_master_every_heartbeat_stays() -> None:
    member = joined_member(P1)
    mark = len(member.sent)
    _keep_alive(member, 5.0, 0)
    assert member.named("join[request]", mark) == [] and member.failures() == []
    assert member.core.phase is Phase.READY


def _confirm_with(retention: int) -> MtpPacket:
    """A join[confirm] whose header gives the web's retention (§3.1.2: the member adopts it)."""
    from tests.mtp.core_harness import join_confirm

    plain = join_confirm(MASTER, P1, 0)
    h = plain.header
    return MtpPacket(
        header(
            h.packet_type, h.modifier, h.source, h.destination, h.acceptance, retention=retention
        ),
        plain.body,
    )


@pytest.mark.parametrize(
    ("silence_limit", "retention", "limit"),
    [
        (2.0, 3, 2.0),  # silence_limit is the larger
        (0.1, 5, 1.0),  # retention heartbeats of the web (5 x 0.2 s) are the larger
    ],
)
def test_the_silence_limit_is_the_larger_of_silence_limit_and_retention_heartbeats(
    silence_limit: float, retention: int, limit: float
) -> None:
    member = Node(
        P1, {"role": "producer", "join_with_state": False, "silence_limit": silence_limit}
    )
    member.start(0.0)
    heard = 0.01
    member.receive(_confirm_with(retention), heard)
    assert member.core.parameters[2] == retention
    mark = len(member.sent)
    member.run_until(heard + limit - EPS)
    assert member.named("join[request]", mark) == [] and member.failures() == []
    member.run_until(heard + limit + HEARTBEAT + EPS)
    assert len(member.named("join[request]", mark)) == 1
    assert member.counter("rejoins") == 1


# -- §3.3.1: voluntary quits ---------------------------------------------------------------------


def _leaving_producer() -> tuple[Node, float]:
    """P1 queues one payload, leaves, is granted message 0, sends it; the master accepts it.
    Returns the member and when it learned the acceptance."""
    member = joined_member(P1)
    member.send(b"last words", 0.05)
    member.leave(0.06)
    assert member.core.phase is Phase.LEAVING
    member.receive(token_confirm(MASTER, P1, 0), 0.1)
    _keep_alive(member, 0.5, 1)
    assert member.named("quit[request]") == []  # message 0 is undecided
    accepted_at = 0.7
    _keep_alive(member, accepted_at, 1, ACCEPTED)
    assert member.core.status(0) is MessageStatus.ACCEPTED
    return member, accepted_at


def test_a_leaving_member_first_sends_what_it_queued() -> None:
    member, _ = _leaving_producer()
    # §3.3: "No process should intentionally quit the web while it has retransmittable data
    # buffered": the payload queued before leave() went out under a token.
    assert len(member.named("token[request]")) >= 1
    sent = member.named("data[eom]")
    assert len(sent) == 1 and sent[0].packet.header.acceptance.message_seq == 0
    assert member.named("quit[request]") == []
    assert member.delivered_payloads() == [b"last words"]


def test_a_leaving_member_serves_naks_for_retention_heartbeats_before_quitting() -> None:
    member, accepted_at = _leaving_producer()
    mark = len(member.sent)
    # The master asks for packet 0 again (the master is always vouched for, §3.4.3).
    member.receive(_nak(MASTER, P1, (0, 0), message=1), accepted_at + 0.05)
    again = [s for s in member.sent_after(mark) if s.name == "data[eom]"]
    assert len(again) == 1 and again[0].dest is None
    _keep_alive(member, accepted_at + 3.0, 1, ACCEPTED)
    quits = member.named("quit[request]", mark)
    assert quits
    # Not before retention heartbeats after the message was decided (§3.2.2, §3.3).
    assert quits[0].at >= accepted_at + RETENTION * HEARTBEAT - EPS
    assert quits[0].at <= accepted_at + (RETENTION + 2) * HEARTBEAT + EPS


def test_a_leaving_member_unicasts_quit_request_each_heartbeat_until_confirmed() -> None:
    member, _ = _leaving_producer()
    mark = len(member.sent)
    for _ in range(20):
        if member.named("quit[request]", mark):
            break
        _keep_alive(member, member.now + HEARTBEAT, 1, ACCEPTED)
    _keep_alive(member, member.now + HEARTBEAT, 1, ACCEPTED)
    quits = member.named("quit[request]", mark)
    assert len(quits) == 2
    assert _gaps(quits) == [HEARTBEAT]
    for quit_ in quits:
        # §3.3.1: "Voluntary quit[requests] are unicast to the master's TSAP", the target
        # naming the member itself.
        assert quit_.dest == addr_of(MASTER)
        assert quit_.packet.header.destination == MASTER
        assert isinstance(quit_.packet.body, Tsap) and quit_.packet.body.connection_id == P1
    assert not member.core.finished
    member.receive(_quit(QuitModifier.CONFIRM, MASTER, P1, _tsap(P1), 1), member.now + 0.01)
    assert member.core.finished
    assert len(_left(member, P1)) == 1 and member.failures() == []
    mark = len(member.sent)
    member.run_until(member.now + 2.0)
    assert member.sent_after(mark) == [] and member.core.get_timer() is None


def test_a_leaving_member_gives_up_after_retention_unanswered_quit_requests() -> None:
    member, accepted_at = _leaving_producer()
    mark = len(member.sent)
    _keep_alive(member, accepted_at + 4.0, 1, ACCEPTED)
    quits = member.named("quit[request]", mark)
    # §3.3.1: retransmitted "until the confirmation is received from the master or as many
    # times as the web's value of retention".
    assert len(quits) == RETENTION
    assert _gaps(quits) == [HEARTBEAT] * (RETENTION - 1)
    assert member.core.finished and len(_left(member, P1)) == 1


def test_a_member_holding_nothing_quits_at_once() -> None:
    member = joined_member(P1)
    member.leave(0.1)
    quits = member.named("quit[request]")
    assert len(quits) == 1 and quits[0].at == 0.1  # nothing retransmittable to serve first


def test_the_master_confirms_a_voluntary_quit_and_reports_the_member_left() -> None:
    master = _master(members=(P1, P2))
    at = master.now + 0.01
    master.receive(_quit(QuitModifier.REQUEST, P1, MASTER, _tsap(P1)), at)
    confirms = master.named("quit[confirm]")
    assert len(confirms) == 1
    confirm = confirms[0]
    # §3.3.1: "it responds with a quit[confirm] packet"; §2.2.2: "Quit[confirm] are always
    # unicast".
    assert confirm.dest == addr_of(P1) and confirm.packet.header.destination == P1
    assert isinstance(confirm.packet.body, Tsap) and confirm.packet.body.connection_id == P1
    assert P1 not in master.core.members and P2 in master.core.members
    assert len(_left(master, P1)) == 1 and master.counter("members_removed") == 1
    # Its retransmission (our confirm was lost) is confirmed again, not reported again
    # (§3.3.3: "the consumer did not see the termination reply and retransmitted").
    master.receive(_quit(QuitModifier.REQUEST, P1, MASTER, _tsap(P1)), at + 0.05)
    assert len(master.named("quit[confirm]")) == 2
    assert len(_left(master, P1)) == 1 and master.counter("members_removed") == 1
    assert master.named("quit[request]") == []  # a quit[request] is never banished


# -- §3.3.2: the master quits --------------------------------------------------------------------


def test_a_quitting_master_grants_no_more_tokens_and_waits_for_the_holder() -> None:
    master = _master(members=(P1, P2))
    web = master.core.web_id
    master.receive(token_request(P1, MASTER, 0), master.now + 0.01)
    master.receive(data(P1, 0, 0, b"a" * 100, web=web), master.now + 0.02)
    master.leave(master.now + 0.01)
    mark = len(master.sent)
    master.receive(token_request(P2, MASTER, 1), master.now + 0.01)
    master.run_until(master.now + 2 * HEARTBEAT)
    # §3.3.2: "The master will retain all transmit tokens and refuse to assign them."
    assert master.named("token[confirm]", mark) == []
    assert master.named("quit[request]", mark) == []  # P1's token is still out
    master.receive(data(P1, 0, 1, b"b", modifier=DataModifier.EOM, web=web), master.now + 0.01)
    assert master.core.status(0) is MessageStatus.ACCEPTED
    # "Once the tokens are acquired, the master will multicast a quit[request]".
    quits = master.named("quit[request]", mark)
    assert len(quits) == 1 and quits[0].dest is None
    master.run_until(master.now + 2 * HEARTBEAT)
    assert master.named("token[confirm]", mark) == []


def test_a_quitting_master_finishes_its_own_queue_first() -> None:
    master = _master()
    big = bytes(range(256)) * 234  # 59,904 bytes: 43 packets, three windows of 20
    master.send(big, master.now + 0.01)
    master.leave(master.now)
    master.run_until(master.now + 10 * HEARTBEAT)
    quits = master.named("quit[request]")
    assert quits
    first_quit_at = quits[0].at
    data_packets = [s for s in master.sent if s.packet.packet_type is PacketType.DATA]
    assert len({s.packet.header.acceptance.packet_seq for s in data_packets}) == 43
    assert data_packets[-1].name == "data[eom]"
    assert data_packets[-1].at <= first_quit_at
    assert master.core.status(0) is MessageStatus.ACCEPTED
    assert [d.payload for d in master.deliveries()] == [big]


def test_a_quitting_master_multicasts_quit_request_each_heartbeat_until_all_confirm() -> None:
    master = _master(members=(P1, P2))
    web = master.core.web_id
    master.leave(master.now + 0.01)
    quits = master.named("quit[request]")
    assert len(quits) == 1
    quit_ = quits[0]
    # §2.3.2: "The master's decision to abandon the transport (quit) is also sent to the
    # multicast transport address": the target and destination are the web's id.
    assert quit_.dest is None and quit_.packet.header.destination == web
    assert isinstance(quit_.packet.body, Tsap) and quit_.packet.body.connection_id == web
    master.receive(_quit(QuitModifier.CONFIRM, P1, MASTER, _tsap(P1)), master.now + 0.02)
    master.run_until(master.now + HEARTBEAT)
    quits = master.named("quit[request]")
    # The first goes out at once, the next on the master's heartbeat.
    assert len(quits) == 2 and 0 < _gaps(quits)[0] <= HEARTBEAT
    assert not master.core.finished  # P2 has not confirmed
    master.receive(_quit(QuitModifier.CONFIRM, P2, MASTER, _tsap(P2)), master.now + 0.02)
    master.run_until(master.now + HEARTBEAT)
    assert master.core.finished
    assert len(master.named("quit[request]")) == 2
    assert len(_left(master, P1)) == 1 and len(_left(master, P2)) == 1
    assert len(_left(master, MASTER)) == 1


def test_a_quitting_master_finishes_after_retention_rounds_bring_no_confirm() -> None:
    master = _master(members=(P1, P2))
    master.leave(master.now + 0.01)
    master.run_until(master.now + (RETENTION + 3) * HEARTBEAT)
    quits = master.named("quit[request]")
    # §2.2.2: "multicast at regular heartbeat intervals until there are no responses to
    # retention requests"; §3.3.2: "it may assume every member has terminated".
    assert len(quits) == RETENTION
    gaps = _gaps(quits)
    assert 0 < gaps[0] <= HEARTBEAT and gaps[1:] == [HEARTBEAT] * (RETENTION - 2)
    assert master.core.finished and len(_left(master, MASTER)) == 1


def test_a_member_confirms_the_masters_quit_reports_it_and_finishes() -> None:
    member = joined_member(P1, params=RFC_END)
    member.send(b"one", 0.05)
    member.send(b"two", 0.06)  # both wait for a token that never comes
    master_quit = _quit(QuitModifier.REQUEST, MASTER, WEB, _tsap(WEB, "224.0.1.9"))
    member.receive(master_quit, 0.1)
    confirms = member.named("quit[confirm]")
    assert len(confirms) == 1
    assert confirms[0].dest == addr_of(MASTER) and confirms[0].packet.header.destination == MASTER
    assert member.failures() == ["the mtp master closed the web; 2 payloads not sent in this web"]
    assert len(_left(member, MASTER)) == 1
    assert member.core.finished


def test_a_member_delivers_what_the_masters_quit_accepts_before_finishing() -> None:
    """§3.3.2 with §2.2.6: the quit carries the master's statuses like every packet; a
    message held whole whose acceptance only the quit brings is delivered, not lost."""
    member = joined_member(P1, params=RFC_END)
    member.receive(data(P2, 0, 0, batch(b"last words"), DataModifier.EOM), 0.05)
    assert member.deliveries() == []  # pending
    master_quit = MtpPacket(
        header(PacketType.QUIT, QuitModifier.REQUEST, MASTER, WEB, record(1, statuses=ACCEPTED)),
        _tsap(WEB, "224.0.1.9"),
    )
    member.receive(master_quit, 0.1)
    assert member.delivered_payloads() == [b"last words"]
    assert member.failures() == ["the mtp master closed the web"]
    assert member.core.finished


def test_a_quit_request_for_the_web_from_anyone_but_the_master_is_ignored() -> None:
    member = joined_member(P1)
    member.receive(_quit(QuitModifier.REQUEST, P2, WEB, _tsap(WEB)), 0.1)
    assert member.named("quit[confirm]") == [] and member.failures() == []
    assert member.core.phase is Phase.READY


# -- §3.2.8, §3.3.3: banishment ------------------------------------------------------------------


def _from_stranger(kind: str, web: int) -> MtpPacket:
    if kind == "token[request]":
        return token_request(STRANGER, MASTER, 0)
    if kind == "nak[request]":
        return _nak(STRANGER, MASTER, (0, 0))
    if kind == "isMember[request]":
        return _is_member_request(STRANGER, MASTER, P1)
    if kind == "empty[dally]":
        return empty(STRANGER, 0, web=web)
    assert kind == "quit[confirm]"
    return _quit(QuitModifier.CONFIRM, STRANGER, MASTER, _tsap(STRANGER))


@pytest.mark.parametrize(
    "kind", ["token[request]", "nak[request]", "isMember[request]", "empty[dally]", "quit[confirm]"]
)
def test_the_master_asks_a_source_it_does_not_know_to_quit(kind: str) -> None:
    master = _master()
    at = master.now + 0.01
    stranger_addr = ("192.0.2.94", 4094)
    master.receive(_from_stranger(kind, master.core.web_id), at, stranger_addr)
    # §3.3.3: "If the master receives any message other than a join[request] from a member
    # that it does not recognize, it should transmit a quit[request] with that process as a
    # target"; §3.2.8: unicast to the offender.
    banish = master.named("quit[request]")
    assert len(banish) == 1
    assert banish[0].dest == stranger_addr
    assert banish[0].packet.header.destination == STRANGER
    assert isinstance(banish[0].packet.body, Tsap)
    assert banish[0].packet.body.connection_id == STRANGER
    assert master.counter("banishments_sent") == 1
    assert STRANGER not in master.core.members
    assert master.named("token[confirm]") == [] and master.named("isMember[confirm]") == []


def test_banishment_is_sent_at_most_once_per_heartbeat_per_source() -> None:
    master = _master()
    at = master.now + 0.01
    for k in range(5):
        master.receive(token_request(STRANGER, MASTER, 0), at + k * 0.03)
    assert len(master.named("quit[request]")) == 1
    master.receive(token_request(STRANGER, MASTER, 0), at + HEARTBEAT + 0.01)
    assert len(master.named("quit[request]")) == 2
    # Another offender has its own allowance.
    master.receive(token_request(STRANGER + 1, MASTER, 0), at + HEARTBEAT + 0.02)
    assert [q.packet.header.destination for q in master.named("quit[request]")] == [
        STRANGER,
        STRANGER,
        STRANGER + 1,
    ]
    assert master.counter("banishments_sent") == 3


def test_the_master_does_not_banish_a_join_request_data_or_a_quit_request() -> None:
    master = _master()
    web = master.core.web_id
    at = master.now + 0.01
    master.receive(data(STRANGER, 0, 0, b"x", web=web), at)
    master.receive(_quit(QuitModifier.REQUEST, STRANGER, MASTER, _tsap(STRANGER)), at + 0.01)
    assert [c.packet.header.destination for c in master.named("quit[confirm]")] == [STRANGER]
    master.receive(join_request(STRANGER), at + 0.02)
    assert [c.packet.header.destination for c in master.named("join[confirm]")][-1] == STRANGER
    assert master.named("quit[request]") == [] and master.counter("banishments_sent") == 0


def test_a_removed_holder_that_speaks_again_is_asked_to_quit() -> None:
    master = _master()
    master.receive(token_request(P1, MASTER, 0), master.now + 0.01)
    master.run_until(master.now + HOLDER_SILENCE + (RETENTION + 2) * HEARTBEAT)
    assert P1 not in master.core.members
    # It was only partitioned away, and asks for a token again: the master no longer knows
    # it (§3.3.3: "unannounced and rejected consumers").
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 1), master.now + 0.01)
    banish = master.named("quit[request]", mark)
    assert len(banish) == 1 and banish[0].dest == addr_of(P1)
    assert banish[0].packet.header.destination == P1
    assert master.named("token[confirm]", mark) == []


def test_a_banished_member_confirms_reports_and_rejoins() -> None:
    member = joined_member(P1)
    mark = len(member.sent)
    member.receive(_quit(QuitModifier.REQUEST, MASTER, P1, _tsap(P1)), 0.1)
    confirms = member.named("quit[confirm]", mark)
    # §3.2.8: a member with "truly correct social behavior" responds willingly.
    assert len(confirms) == 1
    assert confirms[0].dest == addr_of(MASTER) and confirms[0].packet.header.destination == MASTER
    assert len(member.failures()) == 1 and "asked this member to leave" in member.failures()[0]
    joins = member.named("join[request]", mark)
    assert len(joins) == 1 and joins[0].at == 0.1 and joins[0].dest is None
    assert member.core.phase is Phase.JOINING and member.counter("rejoins") == 1


def test_a_quit_request_naming_another_member_is_ignored() -> None:
    member = joined_member(P1)
    member.receive(_quit(QuitModifier.REQUEST, MASTER, P1, _tsap(P2)), 0.1)
    assert member.named("quit[confirm]") == [] and member.failures() == []
    assert member.core.phase is Phase.READY


# -- §3.2.3: hibernation -------------------------------------------------------------------------


@pytest.mark.parametrize("hibernate_after", [4, 10])
def test_an_idle_master_hibernates_after_hibernate_after_idle_heartbeats(
    hibernate_after: int,
) -> None:
    master = founded_master({"hibernate_after": hibernate_after, "hibernate_heartbeat": 1.0})
    founded_at = master.protocol_events("web_founded")[0].at
    master.run_until(founded_at + hibernate_after * HEARTBEAT + 4.5)
    empties = _multicast_empties(master)
    first = next(i for i, s in enumerate(empties) if s.name == "empty[hibernate]")
    dallies = empties[:first]
    assert {s.name for s in dallies} == {"empty[dally]"}
    assert _gaps(dallies) == [HEARTBEAT] * (len(dallies) - 1)
    assert hibernate_after - 1 <= len(dallies) <= hibernate_after
    hibernating = empties[first:]
    # §3.2.3: "In that mode the master will increase the value of the transport parameter
    # heartbeat": the packet's heartbeat field carries the slower rate, and it is the rate.
    assert {s.name for s in hibernating} == {"empty[hibernate]"}
    assert {s.packet.header.heartbeat for s in hibernating} == {1000}
    assert _gaps(hibernating) == [1.0] * (len(hibernating) - 1)
    assert len(hibernating) >= 4
    assert master.core.hibernating and master.counter("hibernations") == 1
    assert master.core.parameters == (HEARTBEAT, 20, 3)  # the web's heartbeat is unchanged


def _hibernating_master(members: tuple[int, ...] = ()) -> Node:
    master = _master(members=members)
    master.run_until(master.now + 12 * HEARTBEAT + 1.0)
    assert master.core.hibernating
    assert master.sent[-1].name == "empty[hibernate]"
    return master


# The awake master's heartbeat packet: empty[dally], or empty[succession] when it names its
# successors (failover, an extension: mtp/failover.py).
HEARTBEAT_KINDS = {"empty[dally]", "empty[succession]"}


def _assert_awake(master: Node, mark: int, woke_at: float) -> None:
    empties = _multicast_empties(master, mark)
    assert empties and empties[0].name == "empty[dally]" and empties[0].at == woke_at
    assert not master.core.hibernating
    master.run_until(woke_at + 3 * HEARTBEAT + EPS)
    empties = _multicast_empties(master, mark)
    assert len(empties) >= 4 and {s.name for s in empties[:4]} <= HEARTBEAT_KINDS
    assert _gaps(empties[:4]) == [HEARTBEAT] * 3
    assert {s.packet.header.heartbeat for s in empties[:4]} == {200}


def test_a_token_request_wakes_a_hibernating_master() -> None:
    master = _hibernating_master(members=(P1,))
    mark = len(master.sent)
    at = master.now + 0.3
    master.run_until(at)
    master.receive(token_request(P1, MASTER, 0), at)
    assert master.named("token[confirm]", mark)
    assert master.protocol_events("wake")
    _assert_awake(master, mark, at)


def test_a_join_request_wakes_a_hibernating_master() -> None:
    master = _hibernating_master()
    mark = len(master.sent)
    at = master.now + 0.3
    master.run_until(at)
    master.receive(join_request(P1), at)
    assert master.named("join[confirm]", mark)
    _assert_awake(master, mark, at)


def test_the_master_drawing_wakes_itself() -> None:
    """§3.2.3: hibernation is for an idle web; the master's own strokes end it as a member's
    token request does, so its message goes out at the web's heartbeat, not the hibernating one."""
    master = _hibernating_master(members=(P1,))
    mark = len(master.sent)
    at = master.now + 0.3
    master.run_until(at)
    master.send(b"a stroke", at)
    assert master.protocol_events("wake")
    assert not master.core.hibernating
    data = [s for s in master.sent[mark:] if s.packet.packet_type is PacketType.DATA]
    assert data and data[0].at == at
    master.run_until(at + 3 * HEARTBEAT + EPS)
    beats = [s for s in master.sent[mark:] if s.dest is None]
    assert "empty[hibernate]" not in {s.name for s in beats}
    assert max(_gaps(beats)) <= HEARTBEAT + EPS, _gaps(beats)


def test_members_keep_the_webs_heartbeat_but_widen_their_silence_limit_when_hibernating() -> None:
    member = joined_member(P1)
    heard = 0.1
    member.receive(empty(MASTER, 0, EmptyModifier.HIBERNATE, heartbeat_ms=1000), heard)
    # §3.2.3: "the packet's heartbeat field should not be used for resource computation".
    assert member.core.parameters == (HEARTBEAT, 20, 3)
    assert member.counter("parameter_changes") == 0
    # The member's own heartbeat is unchanged: its token[request] retries stay 0.2 s apart.
    member.send(b"x", 0.15)
    mark = len(member.sent)
    member.run_until(heard + 3 * RETENTION * HEARTBEAT)  # past the usual 0.6 s limit
    retries = member.named("token[request]", mark)
    assert len(retries) >= 3 and set(_gaps(retries)) == {HEARTBEAT}
    assert member.named("join[request]", mark) == [] and member.failures() == []
    # The limit is retention hibernation heartbeats: 3 x 1 s.
    member.run_until(heard + 3.0 - EPS)
    assert member.named("join[request]", mark) == []
    member.run_until(heard + 3.0 + HEARTBEAT + EPS)
    assert len(member.named("join[request]", mark)) == 1


def test_a_dally_after_hibernation_narrows_the_silence_limit_again() -> None:
    member = joined_member(P1)
    member.receive(empty(MASTER, 0, EmptyModifier.HIBERNATE, heartbeat_ms=1000), 0.1)
    heard = 0.5
    member.receive(empty(MASTER, 0), heard)
    mark = len(member.sent)
    member.run_until(heard + 0.6 + HEARTBEAT + EPS)
    assert len(member.named("join[request]", mark)) == 1


# -- a producer dies holding a token (simulated) ------------------------------------------------


def test_a_producer_crashing_with_a_token_has_its_message_rejected_and_boards_converge() -> None:
    session, recorder = mtp_session(4, seed=11)
    start_all(session)
    victim = session.peers[1].member_id
    # The victim's data never reaches anyone: the master sees a token holder fall silent.
    recorder.drop(
        lambda sender, receiver, packet: sender == 1 and packet.packet_type is PacketType.DATA
    )
    doomed = session.draw(1)
    run_until(
        session,
        lambda: any(w.sender == 1 for w in recorder.named("data[eom]")),
        5.0,
    )
    grant = [w for w in recorder.named("token[confirm]") if w.packet.header.destination == victim][
        -1
    ]
    number = grant.packet.header.acceptance.message_seq
    session.crash(1)
    survivors = [0, 2, 3]
    drawn = [session.draw(i) for i in (2, 3, 0, 2)]
    master = core_of(session, 0)
    run_until(
        session,
        lambda: (
            master.status(number) is MessageStatus.REJECTED
            and all({p for _, p in delivered_sequence(session, i)} >= set(drawn) for i in survivors)
        ),
        30.0,
    )
    run_until(session, session.converged, 10.0)
    session.network.run(until=session.network.now + 2.0)  # and it stays out
    # §3.2.1: removed, its message rejected; every survivor agrees and none delivered it.
    assert victim not in master.members
    assert master.counters()["members_removed"] == 1
    hashes = {session.peers[i].replica.board.hash() for i in survivors}
    assert len(hashes) == 1
    for index in survivors:
        payloads = [p for _, p in delivered_sequence(session, index)]
        assert doomed not in payloads
        assert len(payloads) == len(set(payloads))
        assert set(drawn) <= set(payloads)
        assert core_of(session, index).status(number) is MessageStatus.REJECTED


def test_a_member_that_leaves_a_simulated_web_is_confirmed_and_the_rest_go_on() -> None:
    session, recorder = mtp_session(4, seed=5)
    start_all(session)
    leaver = session.peers[2].member_id
    farewell = session.draw(2)
    session.leave(2)  # its stroke is queued: it goes out before the quit (§3.3)
    master = core_of(session, 0)
    run_until(session, lambda: leaver not in master.members, 10.0)
    assert session.peers[0].members[leaver] == "left"
    assert master.counters()["members_removed"] == 1
    # §3.3.1: unicast quit[request] to the master, quit[confirm] back.
    asked = [w for w in recorder.sent_by(2, "quit[request]") if w.dest is not None]
    assert asked and asked[0].packet.header.destination == session.peers[0].member_id
    confirmed = [
        w for w in recorder.named("quit[confirm]") if w.packet.header.destination == leaver
    ]
    assert confirmed and confirmed[0].sender == 0
    stayers = [0, 1, 3]
    later = [session.draw(i) for i in stayers]
    run_until(
        session,
        lambda: all(
            {p for _, p in delivered_sequence(session, i)} >= {farewell, *later} for i in stayers
        ),
        10.0,
    )
    assert len({session.peers[i].replica.board.hash() for i in stayers}) == 1
    assert all(session.peers[i].failures == [] for i in stayers)


def test_a_master_that_closes_a_simulated_web_ends_every_member() -> None:
    session, recorder = mtp_session(3, seed=6, params=RFC_END)
    start_all(session)
    strokes = [session.draw(i) for i in (0, 1, 2)]
    run_until(
        session,
        lambda: all(
            {p for _, p in delivered_sequence(session, i)} >= set(strokes) for i in (0, 1, 2)
        ),
        10.0,
    )
    session.leave(0)
    run_until(
        session,
        lambda: all(
            p.station.driver is None or p.station.driver.core.finished for p in session.peers
        ),
        10.0,
    )
    # §3.3.2: multicast quit[request] naming the web; every member confirms and ends.
    quits = recorder.sent_by(0, "quit[request]")
    assert quits and all(q.dest is None for q in quits)
    for index in (1, 2):
        assert session.peers[index].failures == ["the mtp master closed the web"]
        confirm = recorder.sent_by(index, "quit[confirm]")
        assert len(confirm) == 1 and confirm[0].dest is not None
    assert len({session.peers[i].replica.board.hash() for i in (0, 1, 2)}) == 1
