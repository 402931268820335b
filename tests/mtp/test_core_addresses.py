"""MTP's transport addresses (RFC 1301 §2.3, with §2.2.4-§2.2.5 for the connection id fields):
the unknown TSAP for joining (§2.3.1), the web's multicast connection id chosen by the master
and given in join[confirm], the destination of every data and empty packet and listed in
token[confirm] (§2.3.2), and members' own TSAPs, learned from their packets, for everything
unicast (§2.3.3). A member ignores another web's packets and packets for another member;
TSAPs in quit and isMember name their member by connection id; the master's repairs of
others' messages (an extension, core.py) keep the producer as source without teaching
members a wrong address for it."""

from __future__ import annotations

import random
from ipaddress import IPv4Address

from mtp import make_core
from mtp.core import Phase
from mtp.wire import (
    DataModifier,
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
    TsapList,
)
from tests.mtp.core_harness import (
    C1,
    MASTER,
    P1,
    P2,
    SEED_PROFILE,
    WEB,
    Node,
    Sent,
    addr_of,
    batch,
    data,
    empty,
    founded_master,
    header,
    join_confirm,
    join_request,
    joined_member,
    record,
    token_confirm,
    token_request,
)
from whiteboard.transport.interface import Address

OTHER_WEB = 0x0BAD
EPS = 1e-6


# -- private helpers ----------------------------------------------------------------------------


def _tsap(ident: int, host: str | None = None, port: int = 7000) -> Tsap:
    return Tsap(IPv4Address(host or addr_of(ident)[0]), port, ident)


def _nak(source: int, destination: int, *entries: tuple[int, int], message: int = 0) -> MtpPacket:
    body = NakList(tuple(PacketId(m, p) for m, p in entries))
    return MtpPacket(
        header(PacketType.NAK, NakModifier.REQUEST, source, destination, record(message)), body
    )


def _is_member_request(source: int, destination: int, target: Tsap) -> MtpPacket:
    return MtpPacket(
        header(PacketType.IS_MEMBER, IsMemberModifier.REQUEST, source, destination, record(0)),
        target,
    )


def _quit_request(source: int, destination: int, target: Tsap) -> MtpPacket:
    return MtpPacket(
        header(PacketType.QUIT, QuitModifier.REQUEST, source, destination, record(0)), target
    )


def _master(params: dict[str, object] | None = None) -> Node:
    return founded_master({"join_with_state": False, **(params or {})})


def _unicast(sent: list[Sent]) -> set[tuple[Address | None, int]]:
    return {(s.dest, s.packet.header.destination) for s in sent}


class _Rigged(random.Random):
    """A random source whose first ``randrange`` answers are fixed."""

    def __init__(self, answers: list[int]) -> None:
        super().__init__(0)
        self.answers = list(answers)

    def randrange(self, *args: int, **kwargs: int) -> int:  # type: ignore[override]
        if self.answers:
            return self.answers.pop(0)
        return super().randrange(*args, **kwargs)


# -- §2.3.1: the unknown TSAP and the web's id --------------------------------------------------


def test_a_joiner_sends_join_request_to_the_unknown_tsap() -> None:
    node = Node(P1, {"role": "producer"})
    node.start(0.0)
    join = node.named("join[request]")
    assert len(join) == 1
    # §2.3.1: a joiner knows neither the web's multicast TSAP nor the master's: it uses the
    # multicast NSAP and the unknown connection id (0x00000000), from its own TSAP.
    assert join[0].dest is None
    assert join[0].packet.header.destination == 0
    assert join[0].packet.header.source == P1
    assert node.core.web_id == 0


def test_the_master_chooses_a_random_non_zero_web_id_that_is_not_its_own() -> None:
    webs = []
    for seed in range(6):
        node = Node(MASTER, {"role": "master"}, seed=seed)
        node.start(0.0)
        node.run_until(2.0)
        web = node.core.web_id
        assert 0 < web < 2**32 and web != MASTER
        assert node.protocol_events("web_founded")[0].fields == {"web": web, "first": 0}
        assert {s.packet.header.destination for s in node.named("empty[dally]")} == {web}
        webs.append(web)
    assert len(set(webs)) == len(webs)  # chosen at random, not fixed


def test_the_master_draws_again_when_the_draw_is_its_own_id() -> None:
    node = Node(MASTER, {"role": "master"})
    node.core = make_core(
        MASTER, node.upper, _Rigged([MASTER, 0x5EB]), {**SEED_PROFILE, "role": "master"}
    )
    node.start(0.0)
    node.run_until(2.0)
    assert node.core.web_id == 0x5EB


def test_join_confirm_gives_the_web_id_from_the_masters_tsap() -> None:
    master = _master()
    joiner_addr = ("192.0.2.11", 40001)
    master.receive(join_request(P1), master.now + 0.01, joiner_addr)
    confirm = master.named("join[confirm]")
    assert len(confirm) == 1
    body = confirm[0].packet.body
    # §2.3.1: "The join[confirm] message will be sourced from the master's TSAP and will
    # include the multicast transport connection identifier in the data field."
    assert confirm[0].packet.header.source == MASTER
    assert body is not None and body.multicast_id == master.core.web_id  # type: ignore[union-attr]
    assert confirm[0].dest == joiner_addr and confirm[0].packet.header.destination == P1
    member = Node(P1, {"role": "producer", "join_with_state": False})
    member.start(0.0)
    member.receive(confirm[0].raw, 0.01, addr_of(MASTER))
    assert member.is_ready()
    assert member.core.web_id == master.core.web_id
    assert member.core.master_id == MASTER


# -- §2.3.2: the web's multicast TSAP -----------------------------------------------------------


def test_a_producers_data_and_empties_are_multicast_to_the_web_id() -> None:
    member = joined_member(P1)
    member.send(b"stroke", 0.02)
    member.receive(token_confirm(MASTER, P1, 0), 0.05)
    member.run_until(0.5)
    member.receive(token_confirm(MASTER, P1, 1), 0.55)  # unneeded: empty[cancel] (§3.2.3)
    multicast = [
        s for s in member.sent if s.packet.packet_type in (PacketType.DATA, PacketType.EMPTY)
    ]
    names = {s.name for s in multicast}
    assert {"data[eom]", "empty[dally]", "empty[cancel]"} <= names
    # §2.3.2: "The multicast TSAP is used as the target for all messages that are destined
    # to the entire web, such as data and empty."
    assert _unicast(multicast) == {(None, WEB)}


def test_the_masters_data_and_heartbeats_are_multicast_to_its_web_id() -> None:
    master = _master()
    master.send(b"stroke", master.now + 0.01)
    master.run_until(master.now + 1.0)
    multicast = [
        s for s in master.sent if s.packet.packet_type in (PacketType.DATA, PacketType.EMPTY)
    ]
    assert {"data[eom]", "empty[dally]"} <= {s.name for s in multicast}
    assert _unicast(multicast) == {(None, master.core.web_id)}


def test_token_confirm_lists_the_webs_group_tsap() -> None:
    master = _master({"group": "239.1.2.3:7123"})
    master.receive(join_request(P1), master.now + 0.01)
    master.receive(token_request(P1, MASTER, 0), master.now + 0.01)
    grant = master.named("token[confirm]")
    assert len(grant) == 1
    # §2.3.2: the list of multicast TSAPs "is supplied in the data field of token[confirm]
    # packets"; one network here, so one TSAP: the group NSAP and the web's connection id.
    assert grant[0].packet.body == TsapList(
        (Tsap(IPv4Address("239.1.2.3"), 7123, master.core.web_id),)
    )
    master.leave(master.now + 0.01)
    master.receive(data(P1, 0, 0, batch(b"x"), DataModifier.EOM, master.core.web_id), master.now)
    quits = master.named("quit[request]")
    assert quits and quits[0].packet.body == Tsap(
        IPv4Address("239.1.2.3"), 7123, master.core.web_id
    )


# -- §2.3.3: member TSAPs, for everything unicast -----------------------------------------------


def test_the_master_unicasts_replies_to_the_address_a_member_speaks_from() -> None:
    master = _master()
    home: Address = ("192.0.2.11", 40001)
    at = master.now + 0.01
    master.receive(join_request(P1), at, home)
    master.receive(token_request(P1, MASTER, 0), at + 0.01, home)
    master.receive(_is_member_request(P1, MASTER, _tsap(P2)), at + 0.02, home)
    master.receive(_nak(P1, MASTER, (9, 0)), at + 0.03, home)  # nothing the master has
    master.receive(_quit_request(P1, MASTER, _tsap(P1, "0.0.0.0")), at + 0.04, home)
    replies = [s for s in master.sent if s.at >= at and s.dest is not None]
    assert [s.name for s in replies] == [
        "join[confirm]",
        "token[confirm]",
        "isMember[deny]",
        "nak[deny]",
        "quit[confirm]",
    ]
    assert _unicast(replies) == {(home, P1)}


def test_a_member_unicasts_to_the_master_where_its_join_confirm_came_from() -> None:
    member = Node(P1, {"role": "producer", "join_with_state": False})
    member.start(0.0)
    master_home: Address = ("192.0.2.1", 5555)
    member.receive(join_confirm(MASTER, P1, 0), 0.01, master_home)
    member.send(b"stroke", 0.02)
    member.receive(_nak(C1, P1, (0, 0)), 0.03)  # from a stranger: ask the master (§3.4.3)
    member.leave(0.04)
    unicast = [s for s in member.sent if s.dest is not None]
    assert {"token[request]", "isMember[request]"} <= {s.name for s in unicast}
    assert _unicast(unicast) == {(master_home, MASTER)}


def test_a_consumer_naks_a_producer_at_the_address_its_data_came_from() -> None:
    consumer = joined_member(C1, role="consumer")
    producer_home: Address = ("192.0.2.22", 6000)
    consumer.receive(data(P2, 0, 0, b"a" * 10), 0.02, producer_home)
    consumer.receive(data(P2, 0, 2, b"c" * 10, DataModifier.EOM), 0.03, producer_home)
    consumer.run_until(0.1)
    naks = consumer.named("nak[request]")
    assert naks
    assert _unicast(naks) == {(producer_home, P2)}
    assert naks[0].packet.body == NakList((PacketId(0, 1),))


def test_a_producer_multicasts_repairs_and_unicasts_denials() -> None:
    member = joined_member(P1)
    member.send(b"stroke", 0.02)
    member.receive(token_confirm(MASTER, P1, 0), 0.05)
    mark = len(member.sent)
    member.receive(_nak(MASTER, P1, (0, 0), (0, 1), message=1), 0.1)
    sent = member.sent_after(mark)
    repairs = [s for s in sent if s.packet.packet_type is PacketType.DATA]
    # §3.2.6: "those packets will be multicast to the entire web".
    assert len(repairs) == 1 and _unicast(repairs) == {(None, WEB)}
    member.receive(_nak(MASTER, P1, (5, 0), message=1), 0.11)
    denials = member.named("nak[deny]", mark)
    # §2.2.2: "Naks of any form are always unicast."
    assert len(denials) == 1 and _unicast(denials) == {(addr_of(MASTER), MASTER)}


# -- §2.2.5: a member keeps to its web and its own connection id ---------------------------------


def test_a_member_drops_another_webs_data() -> None:
    member = joined_member(C1, role="consumer")
    foreign = data(P2, 0, 0, batch(b"elsewhere"), DataModifier.EOM, web=OTHER_WEB)
    member.receive(foreign, 0.02)
    assert member.counter("foreign_dropped") == 1
    member.receive(empty(MASTER, 1, statuses={0: MessageStatus.ACCEPTED}), 0.03)
    assert member.delivered_payloads() == []  # message 0 of our web is still missing
    member.receive(data(P2, 0, 0, batch(b"here"), DataModifier.EOM), 0.04)
    assert member.delivered_payloads() == [b"here"]


def test_another_webs_master_does_not_keep_a_member_in_its_web() -> None:
    member = joined_member(P1)
    for when in (0.2, 0.4, 0.6):
        member.run_until(when - EPS)
        member.receive(empty(MASTER, 0, web=OTHER_WEB), when)
    assert member.counter("foreign_dropped") == 3 and member.counter("rejoins") == 0
    member.run_until(0.81 + EPS)  # its tick runs on the web's heartbeat from the join at 0.01
    # Not heard from its own master for more than the silence limit (§3.2.5).
    assert member.counter("rejoins") == 1 and len(member.named("join[request]")) == 2


def test_a_member_drops_unicast_packets_for_another_connection_id() -> None:
    member = joined_member(P1)
    member.send(b"stroke", 0.02)
    mark = len(member.sent)
    member.receive(token_confirm(MASTER, P2, 0), 0.03)  # P2's token
    member.receive(_nak(MASTER, P2, (0, 0), message=1), 0.04)
    member.receive(_quit_request(MASTER, P2, _tsap(P1)), 0.05)
    assert member.counter("foreign_dropped") == 3
    assert [s for s in member.sent_after(mark) if s.packet.packet_type is PacketType.DATA] == []
    assert member.named("quit[confirm]") == [] and member.counter("rejoins") == 0


def test_a_joiner_ignores_a_join_confirm_for_someone_else() -> None:
    node = Node(P1, {"role": "producer", "join_with_state": False})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P2, 0), 0.01)
    assert not node.is_ready() and node.core.web_id == 0
    assert node.counter("foreign_dropped") == 1


# -- TSAPs in quit and isMember name connection ids (docs/mtp.md) -------------------------------


def test_a_member_matches_a_quit_target_by_connection_id_not_address() -> None:
    member = joined_member(P1)
    member.receive(_quit_request(MASTER, P1, _tsap(P1, "203.0.113.9", 9)), 0.05)
    confirms = member.named("quit[confirm]")
    assert len(confirms) == 1 and member.counter("rejoins") == 1
    body = confirms[0].packet.body
    assert isinstance(body, Tsap) and body.connection_id == P1


def test_the_master_matches_quit_and_is_member_targets_by_connection_id() -> None:
    master = _master()
    at = master.now + 0.01
    master.receive(join_request(P1), at)
    master.receive(join_request(C1), at)
    # A TSAP with an address the master never saw for C1: the connection id names it.
    master.receive(_is_member_request(P1, MASTER, _tsap(C1, "198.51.100.7", 1)), at + 0.01)
    confirm = master.named("isMember[confirm]")
    assert len(confirm) == 1
    body = confirm[0].packet.body
    assert isinstance(body, MemberConfirm) and body.target.connection_id == C1
    assert (str(body.target.address), body.target.port) == addr_of(C1)  # as the master knows it
    # A member's own TSAP, as a sans-I/O core writes it (no address): still its quit.
    master.receive(_quit_request(P1, MASTER, _tsap(P1, "0.0.0.0")), at + 0.02)
    assert [s.packet.header.destination for s in master.named("quit[confirm]")] == [P1]
    assert P1 not in master.core.members


def test_a_member_names_itself_by_connection_id_when_it_answers_is_member() -> None:
    member = joined_member(P1)
    member.receive(_is_member_request(MASTER, P1, _tsap(P1, "0.0.0.0")), 0.05)
    confirm = member.named("isMember[confirm]")
    assert len(confirm) == 1 and _unicast(confirm) == {(addr_of(MASTER), MASTER)}
    body = confirm[0].packet.body
    assert isinstance(body, MemberConfirm) and body.target.connection_id == P1


# -- the master's repairs of others' messages (extension, core.py; §3.2.6) ----------------------


def test_the_masters_repair_keeps_the_producer_as_source_and_is_multicast() -> None:
    master = _master()
    web = master.core.web_id
    at = master.now + 0.01
    master.receive(join_request(P1), at)
    master.receive(join_request(P2), at)
    master.receive(token_request(P2, MASTER, 0), at + 0.01)
    master.receive(data(P2, 0, 0, batch(b"x"), DataModifier.EOM, web=web), at + 0.02)
    assert master.core.status(0) is MessageStatus.ACCEPTED
    mark = len(master.sent)
    master.receive(_nak(P1, MASTER, (0, 0), message=1), at + 0.05)
    repairs = [s for s in master.sent_after(mark) if s.packet.packet_type is PacketType.DATA]
    # §3.2.6: "All will contain the original client information ... and message and packet
    # sequence number."
    assert len(repairs) == 1
    assert repairs[0].packet.header.source == P2
    assert _unicast(repairs) == {(None, web)}
    assert master.counter("relays") == 1


def test_a_relay_from_the_masters_address_does_not_move_the_producers_address() -> None:
    consumer = joined_member(C1, role="consumer")
    producer_home: Address = ("192.0.2.22", 6000)
    consumer.receive(data(P2, 0, 0, b"a" * 10), 0.02, producer_home)
    # Packet 2 arrives as the master's repair: source P2, from the master's address.
    consumer.receive(data(P2, 0, 2, b"c" * 10), 0.03, addr_of(MASTER))
    consumer.run_until(0.3)
    naks = consumer.named("nak[request]")
    assert naks and _unicast(naks) == {(producer_home, P2)}


def test_a_producer_heard_only_through_relays_is_not_given_the_masters_address() -> None:
    consumer = joined_member(C1, role="consumer")
    consumer.receive(data(P2, 0, 1, b"b" * 10), 0.02, addr_of(MASTER))
    consumer.run_until(0.3)
    # Whatever it asks, it never asks P2 at the master's address.
    assert all(s.packet.header.destination != P2 for s in consumer.named("nak[request]"))
    consumer.receive(empty(MASTER, 1, statuses={0: MessageStatus.ACCEPTED}), 0.35)
    consumer.run_until(0.6)
    naks = consumer.named("nak[request]")
    # Accepted, and its producer unknown: the master, which keeps accepted messages, is asked.
    assert naks and _unicast(naks) == {(addr_of(MASTER), MASTER)}
    assert consumer.core.phase is Phase.READY
