"""RFC 1301 §2.2.6 (the message acceptance record: statuses set by the master alone, the
12-element vector, the range check of control packets) and TR 90-1141 §3.2 (sequencing: a
member delivers accepted messages in message order, skips rejected ones, waits on pending
ones, and rejoins when it falls more than t = 12 messages behind)."""

from __future__ import annotations

from collections.abc import Mapping

from mtp.core import Phase
from mtp.messages import StatusBook
from mtp.wire import STATUS_COUNT, DataModifier, EmptyModifier, MessageStatus, MtpPacket
from tests.mtp.core_harness import (
    MASTER,
    P1,
    P2,
    WEB,
    Node,
    Sent,
    batch,
    data,
    empty,
    founded_master,
    join_request,
    joined_member,
    token_request,
)

C1, P3 = 0xC1, 0xB3
ACCEPTED, PENDING, REJECTED = (
    MessageStatus.ACCEPTED,
    MessageStatus.PENDING,
    MessageStatus.REJECTED,
)


# -- private helpers ---------------------------------------------------------------------------


def _consumer(message: int = 0) -> Node:
    """A consumer (it never sends a message) joined at ``message``, with no board."""
    return joined_member(C1, role="consumer", message=message)


def _whole(
    source: int,
    number: int,
    *payloads: bytes,
    web: int = WEB,
    statuses: Mapping[int, MessageStatus] | None = None,
) -> MtpPacket:
    """Message ``number`` in one data[eom]."""
    return data(source, number, 0, batch(*payloads), DataModifier.EOM, web, statuses)


def _master(members: int | list[int], params: Mapping[str, object] | None = None) -> Node:
    ids = list(range(0x100, 0x100 + members)) if isinstance(members, int) else members
    node = founded_master({"join_with_state": False, **(params or {})})
    for k, member in enumerate(ids):
        node.receive(join_request(member), 2.0 + k / 1000)
    assert set(node.core.members) == set(ids)
    return node


def _confirms_to(master: Node, member: int, since: int) -> list[Sent]:
    return [
        c for c in master.named("token[confirm]", since) if c.packet.header.destination == member
    ]


def _vector(sent: Sent) -> tuple[MessageStatus, ...]:
    return sent.packet.header.acceptance.statuses


# -- §2.2.6: only the master sets statuses; a decided status never changes --------------------


def test_s2_2_6_a_status_book_is_monotonic() -> None:
    book = StatusBook()
    assert book.status(3) is None
    assert book.decide(3, ACCEPTED)
    assert not book.decide(3, REJECTED)  # a conflicting verdict does not override
    assert book.status(3) is ACCEPTED and book.conflicts == 1
    assert book.decide(3, PENDING)  # pending undecides nothing
    assert book.status(3) is ACCEPTED
    # A later record (for message 5) that calls 3 rejected and 4 accepted: 4 is learned,
    # 3 keeps its verdict.
    vector = tuple(
        {4: ACCEPTED, 3: REJECTED}.get(5 - i, PENDING) for i in range(1, STATUS_COUNT + 1)
    )
    assert book.learn(5, vector) == [4]
    assert (book.status(3), book.status(4), book.conflicts) == (ACCEPTED, ACCEPTED, 2)
    assert book.vector(5)[:2] == (ACCEPTED, ACCEPTED)  # 4, 3
    assert book.vector(6)[0] is PENDING  # 5: undecided


def test_s2_2_6_numbers_below_zero_read_as_rejected_when_learned() -> None:
    # The master starts at 0 (§2.2.6): a record for message 2 speaks of 1, 0 and -1 ... -10.
    book = StatusBook()
    assert book.learn(2, (ACCEPTED, REJECTED) + (REJECTED,) * 10) == [1, 0]
    assert book.conflicts == 0
    assert book.learn(3, (PENDING, REJECTED, REJECTED, ACCEPTED) + (PENDING,) * 8) == []
    assert book.conflicts == 2  # 1 was accepted; -1 is rejected: both kept, both counted
    assert (book.status(1), book.status(0), book.status(-1)) == (ACCEPTED, REJECTED, REJECTED)


def test_s2_2_6_a_member_learns_statuses_from_any_packet_but_never_changes_one() -> None:
    node = _consumer()
    node.receive(_whole(P1, 0, b"zero"), 0.05)
    node.receive(_whole(P1, 1, b"one"), 0.06)
    # A producer's packet copies the master's verdicts (§2.2.6): they are believed.
    node.receive(_whole(P2, 2, b"two", statuses={0: ACCEPTED, 1: REJECTED}), 0.07)
    assert (node.core.status(0), node.core.status(1)) == (ACCEPTED, REJECTED)
    assert node.delivered_payloads() == [b"zero"]
    # A later packet that says otherwise does not override them.
    node.receive(empty(MASTER, 3, statuses={0: REJECTED, 1: ACCEPTED, 2: ACCEPTED}), 0.08)
    assert (node.core.status(0), node.core.status(1)) == (ACCEPTED, REJECTED)
    assert node.counter("status_conflicts") == 2
    assert node.delivered_payloads() == [b"zero", b"two"]  # 1 stays skipped; 0 is not undone


def test_s2_2_6_the_master_ignores_the_statuses_other_members_packets_carry() -> None:
    master = _master([P1, P2])
    web = master.core.web_id
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.receive(token_request(P2, MASTER, 0), 2.02)
    # P2's packet for message 1 claims message 0 rejected: only the master decides that.
    master.receive(_whole(P2, 1, b"one", web=web, statuses={0: REJECTED}), 2.03)
    assert master.core.status(0) is None and 0 in master.core.grants
    assert master.core.status(1) is ACCEPTED  # whole: the master's own verdict
    master.receive(_whole(P1, 0, b"zero", web=web), 2.04)
    assert master.core.status(0) is ACCEPTED
    assert master.delivered_payloads() == [b"zero", b"one"]


# -- §2.2.6: the vector shifts with every grant ------------------------------------------------


def test_s2_2_6_the_vector_shifts_by_one_with_every_grant() -> None:
    master = _master([P1, P2, P3], {"tokens": 3})
    web = master.core.web_id
    beats = []

    def beat(at: float) -> tuple[int, tuple[MessageStatus, ...]]:
        master.run_until(at)
        # the master's heartbeat: empty[dally], or empty[succession] (failover, mtp/failover.py)
        sent = [s for s in master.sent if s.name in ("empty[dally]", "empty[succession]")][-1]
        record = sent.packet.header.acceptance
        beats.append((record.message_seq, record.statuses))
        return beats[-1]

    m0, _ = beat(2.3)
    assert m0 == 0
    for k, member in enumerate((P1, P2, P3)):
        master.receive(token_request(member, MASTER, 0), 2.31 + k * 0.2)
        m, v = beat(2.41 + k * 0.2)
        # The master's heartbeat carries (next_grant, 0): one more message, and the vector
        # shifted right by one with the new message's pending status shifted in.
        assert m == k + 1 and v[0] is PENDING and v[1:] == beats[-2][1][:-1]
    master.receive(_whole(P2, 1, b"one", web=web), 3.0)
    m, v = beat(3.01)  # the verdict goes out at once
    assert m == 3 and v[:3] == (PENDING, ACCEPTED, PENDING)  # 2, 1, 0
    master.receive(token_request(P2, MASTER, 2), 3.05)  # P2 wants another: message 3
    m, v = beat(3.21)
    assert m == 4 and v[:4] == (PENDING, PENDING, ACCEPTED, PENDING)  # 3, 2, 1, 0


def test_s2_2_6_the_master_never_grants_m_while_m_minus_12_is_pending() -> None:
    members = list(range(0x100, 0x10D))  # 13 producers
    master = _master(members, {"tokens": 12})
    web = master.core.web_id
    mark = len(master.sent)
    for k, member in enumerate(members):
        master.receive(token_request(member, MASTER, 0), 2.02 + k / 1000)
    assert [c.packet.header.acceptance.message_seq for c in master.named("token[confirm]")] == (
        list(range(12))
    )
    # Messages 1..11 are accepted: only one token is out, yet granting message 12 would
    # shift message 0's pending status out of the vector.
    for number in range(1, 12):
        master.receive(_whole(members[number], number, b"m", web=web), 2.05)
    assert len(master.core.grants) == 1
    master.run_until(2.5)
    assert master.core.next_grant == 12
    assert _confirms_to(master, members[12], mark) == []
    master.receive(_whole(members[0], 0, b"m", web=web), 2.55)
    master.run_until(3.0)
    (grant,) = _confirms_to(master, members[12], mark)
    assert grant.packet.header.acceptance.message_seq == 12
    assert set(_vector(grant)) == {ACCEPTED}  # 11 .. 0, all decided
    # Our choice (MasterRole.may_shift_out): a decided status stays in the vector for a heartbeat,
    # and one of our heartbeats carries it before it is shifted out.
    assert grant.at >= 2.55 + 0.2
    told = [
        s
        for s in master.named("empty[dally]", mark)
        if s.at < grant.at
        and s.packet.header.acceptance.message_seq == 12
        and _vector(s)[11] is ACCEPTED
    ]
    assert told


# -- §2.2.6: the range check of control packets ------------------------------------------------


def test_s2_2_6_a_masters_heartbeat_older_than_m_minus_11_is_dropped_and_counted() -> None:
    node = _consumer(message=20)
    node.receive(empty(MASTER, 9, statuses={8: ACCEPTED}), 0.05)  # m - 11: in range
    assert node.core.status(8) is ACCEPTED
    assert node.counter("out_of_range_dropped") == 0
    node.receive(empty(MASTER, 8, statuses={7: ACCEPTED}), 0.06)  # m - 12: out
    assert node.core.status(7) is None
    assert node.counter("out_of_range_dropped") == 1
    assert node.core.next_grant == 20


def test_s2_2_6_a_masters_heartbeat_up_to_m_plus_13_is_in_range() -> None:
    node = _consumer(message=20)
    node.receive(empty(MASTER, 21, statuses={20: ACCEPTED}), 0.05)
    node.receive(empty(MASTER, 34, statuses={33: ACCEPTED}), 0.06)  # 21 + 13
    assert node.counter("out_of_range_dropped") == 0
    assert node.core.next_grant == 34 and node.core.status(33) is ACCEPTED
    assert node.failures() == []


def test_s2_2_6_a_masters_heartbeat_beyond_m_plus_13_is_counted_yet_believed() -> None:
    # Our choice (core._in_range): the master alone sets statuses, so its word stands; it
    # says how far behind we are.
    node = _consumer(message=20)
    node.receive(empty(MASTER, 21, statuses={20: ACCEPTED}), 0.05)
    node.receive(empty(MASTER, 35, statuses={34: ACCEPTED}), 0.06)  # 21 + 14
    assert node.counter("out_of_range_dropped") == 1
    assert node.core.next_grant == 35 and node.core.status(34) is ACCEPTED


def test_s2_2_6_a_producers_control_packet_beyond_m_plus_13_is_dropped_and_counted() -> None:
    # empty[dally] is a control packet (§3.2.3): its message number must lie within
    # m - 11 .. m + 13 of ours, or it is dropped. Believing it would move our idea of the
    # master's next message number 15 on, and so make us think we are 12 behind.
    node = _consumer(message=20)
    mark = len(node.sent)
    node.receive(empty(P2, 34, EmptyModifier.DALLY, packet=2), 0.05)  # 20 + 14
    assert node.counter("out_of_range_dropped") == 1
    assert node.core.next_grant == 20
    node.receive(empty(MASTER, 20), 0.15)
    node.run_until(0.45)
    assert node.failures() == [] and node.core.phase is Phase.READY
    assert node.named("join[request]", since=mark) == []


# -- TR §3.2: delivery in message order --------------------------------------------------------


def test_tr3_2_members_deliver_accepted_messages_in_order_skip_rejected_and_wait_on_pending() -> (
    None
):
    node = _consumer()
    node.receive(_whole(P2, 2, b"two"), 0.05)  # out of order, all pending so far
    node.receive(_whole(P1, 0, b"zero-a", b"zero-b"), 0.06)
    node.receive(_whole(P1, 3, b"three"), 0.07)
    node.receive(_whole(P2, 1, b"one"), 0.08)
    assert node.deliveries() == []  # nothing is delivered while pending
    # 1 rejected and 2 accepted, but 0 is still pending: it holds back everything after it.
    node.receive(empty(MASTER, 4, statuses={1: REJECTED, 2: ACCEPTED}), 0.1)
    assert node.deliveries() == []
    node.receive(empty(MASTER, 4, statuses={0: ACCEPTED, 1: REJECTED, 2: ACCEPTED}), 0.2)
    assert [(d.order_key, d.origin, d.payload) for d in node.deliveries()] == [
        ((0, 0), P1, b"zero-a"),
        ((0, 1), P1, b"zero-b"),
        ((2, 0), P2, b"two"),
    ]
    assert node.core.next_deliver == 3  # 3 is pending: not delivered
    node.receive(empty(MASTER, 4, statuses={3: ACCEPTED}), 0.3)
    assert node.delivered_payloads() == [b"zero-a", b"zero-b", b"two", b"three"]
    assert b"one" not in node.delivered_payloads()
    assert node.counter("delivered") == 4


def test_tr3_2_an_accepted_message_not_yet_whole_holds_back_the_ones_after_it() -> None:
    payload = b"p" * 1400 + b"tail"  # one record whose bytes span two packets
    body = batch(payload)
    node = _consumer()
    node.receive(data(P1, 0, 0, body[:1400]), 0.05)  # packet 1 (the eom) is missing
    node.receive(_whole(P2, 1, b"one"), 0.06)
    node.receive(empty(MASTER, 2, statuses={0: ACCEPTED, 1: ACCEPTED}), 0.07)
    assert node.deliveries() == []
    node.receive(data(P1, 0, 1, body[1400:], DataModifier.EOM), 0.08)
    assert node.delivered_payloads() == [payload, b"one"]
    assert [d.order_key for d in node.deliveries()] == [(0, 0), (1, 0)]


# -- TR §3.2, §3.4: a member more than 12 messages behind rejoins --------------------------------


def test_tr3_2_a_member_twelve_messages_behind_waits() -> None:
    node = _consumer()
    node.receive(empty(MASTER, 12, statuses={n: ACCEPTED for n in range(1, 12)}), 0.05)
    node.run_until(0.1)
    assert node.core.phase is Phase.READY and node.failures() == []  # 0 still in the vector


def test_tr3_2_a_member_more_than_twelve_messages_behind_reports_a_failure_and_rejoins() -> None:
    node = _consumer()
    node.receive(empty(MASTER, 12, statuses={n: ACCEPTED for n in range(1, 12)}), 0.05)
    mark = len(node.sent)
    # Message 0 is shifted out without our learning its status: we cannot catch up.
    node.receive(empty(MASTER, 13, statuses={n: ACCEPTED for n in range(1, 13)}), 0.1)
    (reason,) = node.failures()
    assert "more than 12 messages behind" in reason and "message 0" in reason
    assert node.counter("rejoins") == 1
    assert len(node.protocol_events("rejoin")) == 1
    (request,) = node.named("join[request]", mark)
    assert request.at == 0.1 and request.dest is None
    assert node.core.phase is Phase.JOINING
    assert node.deliveries() == []  # nothing after the unknown message was delivered


def test_tr3_2_a_member_that_knows_its_next_messages_status_is_not_behind() -> None:
    node = _consumer()
    node.receive(empty(MASTER, 1, statuses={0: REJECTED}), 0.05)
    node.receive(_whole(P1, 1, b"one"), 0.06)
    node.receive(empty(MASTER, 13, statuses={n: ACCEPTED for n in range(1, 13)}), 0.1)
    assert node.failures() == [] and node.core.phase is Phase.READY
    assert node.delivered_payloads() == [b"one"]
