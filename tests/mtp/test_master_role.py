"""mtp/master_role.py alone: the master's grants (RFC 1301 §3.2.1, TR 90-1141 §5.1), its
admission of joiners (§3.1.2, TR §3.4), its decisions (§2.2.6) and its watch over token
holders (§3.2.1), driven with no MtpCore."""

from __future__ import annotations

from mtp.link import Phase
from mtp.master import Member
from mtp.master_role import MasterRole
from mtp.web import Web
from mtp.wire import (
    STATUS_COUNT,
    EmptyModifier,
    IsMemberModifier,
    JoinData,
    JoinModifier,
    MemberClass,
    MessageStatus,
    PacketType,
    TokenModifier,
    TransportClass,
    TransportType,
)
from tests.mtp.core_harness import C1, MASTER, P1, P2, WEB, addr_of, token_request
from tests.mtp.parts_harness import FakeHost, events, make_link, protocol, sent

HEARTBEAT = 0.2


def master(*members: tuple[int, MemberClass], **params: object) -> tuple[MasterRole, FakeHost]:
    link = make_link(MASTER, role="master", **params)
    link.web = Web(WEB, MASTER)
    for ident, member_class in members:
        link.web.members[ident] = Member(ident, addr_of(ident), member_class, 0.0, 0, 0.0)
        link.remember(ident, addr_of(ident))
    host = FakeHost()
    return MasterRole(link, host), host


def wish(member_class: MemberClass = MemberClass.PRODUCER) -> JoinData:
    return JoinData(member_class, TransportClass.RELIABLE, TransportType.N_X_N, 0, 1400)


def test_a_member_asking_for_a_token_is_granted_the_next_message() -> None:
    role, _ = master((P1, MemberClass.PRODUCER))
    role.on_token_request(token_request(P1, MASTER, 0).header, 0.0)
    [(packet, to)] = sent(role._link)
    assert packet.packet_type is PacketType.TOKEN and packet.modifier is TokenModifier.CONFIRM
    assert to == addr_of(P1) and packet.header.acceptance.message_seq == 0
    assert list(role.grants) == [0] and role.grants[0].owner == P1 and role._link.web.next == 1
    assert protocol(events(role._link), "token_granted")


def test_consumers_and_strangers_get_no_token() -> None:
    role, _ = master((C1, MemberClass.CONSUMER))
    role.on_token_request(token_request(C1, MASTER, 0).header, 0.0)
    role.on_token_request(token_request(P2, MASTER, 0).header, 0.0)
    assert not role.grants and sent(role._link) == []


def test_no_more_than_tokens_grants_are_out_at_once() -> None:
    """TR §5.1: at most ``tokens`` transmit tokens outstanding."""
    members = [(0xB0 + i, MemberClass.PRODUCER) for i in range(5)]
    role, _ = master(*members, tokens=3)
    for ident, _ in members:
        role.on_token_request(token_request(ident, MASTER, 0).header, 0.0)
    assert len(role.grants) == 3 and len(role.tokens) == 2
    role.decide(0, MessageStatus.ACCEPTED, 0.0)
    assert sorted(role.grants) == [1, 2, 3] and len(role.tokens) == 1  # the next one went out


def test_the_master_grants_itself_through_its_host() -> None:
    role, host = master()
    role.tokens.add(MASTER)
    role.grant_tokens(0.0)
    assert host.named("take_own_token") == [("take_own_token", 0)]
    assert role.grants[0].busy


def test_a_decision_is_recorded_announced_and_passed_on() -> None:
    role, host = master((P1, MemberClass.PRODUCER))
    role.on_token_request(token_request(P1, MASTER, 0).header, 0.0)
    sent(role._link)
    role.decide(0, MessageStatus.REJECTED, 0.1)
    assert role._link.web.book.status(0) is MessageStatus.REJECTED and not role.grants
    assert ("on_decided", 0, MessageStatus.REJECTED) in host.calls and host.named("deliver")
    assert role._link.counters["messages_rejected"] == 1
    # Announced at once, in an empty carrying the new status (§2.2.6), not at the next beat.
    [(packet, to)] = sent(role._link)
    assert packet.modifier is EmptyModifier.DALLY and to is None and not role.announce
    assert packet.header.acceptance.statuses[0] is MessageStatus.REJECTED
    role.decide(0, MessageStatus.REJECTED, 0.2)
    assert sent(role._link) == [] and role._link.counters["messages_rejected"] == 1


def test_a_pending_status_is_never_shifted_out_of_the_vector() -> None:
    """§2.2.6: message m - 12 must be decided before message m is granted."""
    members = [(0xB0 + i, MemberClass.PRODUCER) for i in range(STATUS_COUNT + 1)]
    role, _ = master(*members, tokens=12)
    role._link.web.next = STATUS_COUNT
    role._link.web.book.decide(STATUS_COUNT - 1, MessageStatus.ACCEPTED)
    assert not role.may_shift_out(0, 10.0)  # message 0 undecided
    role._link.web.book.decide(0, MessageStatus.ACCEPTED)
    assert role.may_shift_out(0, 10.0)


def test_a_joiner_is_confirmed_and_gets_the_board_as_message_s() -> None:
    role, host = master()
    role.on_join_request(P1, wish(), addr_of(P1), 0.0)
    [(packet, to)] = sent(role._link)
    assert packet.packet_type is PacketType.JOIN and packet.modifier is JoinModifier.CONFIRM
    assert to == addr_of(P1) and packet.header.acceptance.message_seq == 0
    assert P1 in role._link.web.members and 0 in role.grants  # s = 0, the master's own
    assert protocol(events(role._link), "join_confirmed")
    role.provide_board_state(1, b"board", 0.1)
    assert host.named("send_own_state") == [("send_own_state", 0)]


def test_a_joiner_asking_to_be_master_is_denied() -> None:
    role, _ = master()
    role.on_join_request(P1, wish(MemberClass.MASTER), addr_of(P1), 0.0)
    [(packet, _)] = sent(role._link)
    assert packet.modifier is JoinModifier.DENY and P1 not in role._link.web.members
    [denied] = protocol(events(role._link), "join_denied")
    assert denied.fields["reason"] == "master"


def test_a_silent_token_holder_is_checked_then_removed() -> None:
    """§3.2.1: isMember[request] to a holder silent past holder_silence; removed (and its
    message rejected) when it never answers."""
    role, _ = master((P1, MemberClass.PRODUCER), holder_silence=0.5)
    role.on_token_request(token_request(P1, MASTER, 0).header, 0.0)
    role.grants[0].busy = True
    sent(role._link)
    role.tick(0.6)
    checks = [p for p, _ in sent(role._link) if p.packet_type is PacketType.IS_MEMBER]
    assert [p.modifier for p in checks] == [IsMemberModifier.REQUEST]
    for beat in range(1, 4):
        role.tick(0.6 + beat * HEARTBEAT)
    assert P1 not in role._link.web.members
    assert role._link.web.book.status(0) is MessageStatus.REJECTED
    assert protocol(events(role._link), "member_removed")


def test_strangers_are_refused_but_their_data_and_quits_pass() -> None:
    role, _ = master((P1, MemberClass.PRODUCER))
    assert role.heard_from(P1, PacketType.EMPTY, EmptyModifier.DALLY, 3.0)
    assert role._link.web.members[P1].last_heard == 3.0
    assert not role.heard_from(P2, PacketType.EMPTY, EmptyModifier.DALLY, 3.0)
    assert role.heard_from(P2, PacketType.DATA, None, 3.0)


def test_a_leaving_master_keeps_only_its_own_token_requests() -> None:
    role, _ = master((P1, MemberClass.PRODUCER))
    role.tokens.add(P1)
    role.tokens.add(MASTER)
    role.join_waiting[P2] = (addr_of(P2), wish())
    role.leave()
    assert list(role.tokens) == [MASTER] and not role.join_waiting


def test_the_idle_master_hibernates() -> None:
    """§3.2.3: after hibernate_after idle heartbeats its empties say hibernate."""
    role, host = master(hibernate_after=2)
    host.phase = Phase.READY
    for beat in range(3):
        role.tick(beat * HEARTBEAT)
    assert role.hibernating and protocol(events(role._link), "hibernate")
    [*_, (last, _)] = sent(role._link)
    assert last.modifier is EmptyModifier.HIBERNATE
    role.wake(1.0)
    assert not role.hibernating and host.named("restart_tick")
