"""RFC 1301 §3.2.1 (transmit tokens: token[request], token[confirm], the master's FIFO, the
idle/pending/busy states, lost and duplicate confirms), §3.2.3 (an unneeded token comes back as
empty[cancel]) and TR 90-1141 §5.1 (several tokens outstanding at once)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from ipaddress import IPv4Address

import pytest

from mtp.master import TokenQueue
from mtp.wire import (
    DataModifier,
    EmptyModifier,
    MemberClass,
    MessageStatus,
    Tsap,
    TsapList,
)
from tests.mtp.core_harness import (
    MASTER,
    P1,
    P2,
    WEB,
    Node,
    Sent,
    addr_of,
    batch,
    data,
    empty,
    founded_master,
    join_confirm,
    join_request,
    joined_member,
    token_confirm,
    token_request,
)

P3, P4, P5, P6, P7 = 0xB3, 0xB4, 0xB5, 0xB6, 0xB7
C1 = 0xC1
ACCEPTED, PENDING, REJECTED = (
    MessageStatus.ACCEPTED,
    MessageStatus.PENDING,
    MessageStatus.REJECTED,
)


# -- private helpers ---------------------------------------------------------------------------


def _master(members: Iterable[int], params: Mapping[str, object] | None = None) -> Node:
    """A founded master (no boards to hand out) that admitted ``members`` as producers."""
    node = founded_master({"join_with_state": False, **(params or {})})
    for k, member in enumerate(members):
        node.receive(join_request(member), 2.0 + k / 1000)
    assert len(node.named("join[confirm]")) == len(node.core.members)
    return node


def _granted(node: Node, since: int = 0) -> list[tuple[int, int]]:
    """(owner, message) of every token[confirm] the master sent since ``since``."""
    return [
        (s.packet.header.destination, s.packet.header.acceptance.message_seq)
        for s in node.named("token[confirm]", since)
    ]


def _complete(master: Node, owner: int, number: int, at: float) -> None:
    """``owner`` sends message ``number`` whole: one data[eom]."""
    web = master.core.web_id
    master.receive(data(owner, number, 0, batch(b"m%d" % number), DataModifier.EOM, web=web), at)


def _beat(node: Node, until: float, message: int, step: float = 0.2) -> None:
    """Run a member to ``until`` while the master beats (empty[dally] at ``message``)."""
    t = node.now
    for _ in range(1000):
        t = min(until, t + step)
        node.run_until(t)
        node.receive(empty(MASTER, message), t)
        if t >= until:
            return


def _data_sent(node: Node, since: int = 0) -> list[Sent]:
    return [s for s in node.sent[since:] if s.name.startswith("data[")]


# -- §3.2.1: the producer's token[request] ---------------------------------------------------------


def test_s3_2_1_a_token_request_is_unicast_to_the_master_and_retried_every_heartbeat() -> None:
    master_addr = ("192.0.2.5", 7123)
    node = Node(P1, {"role": "producer", "join_with_state": False})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P1, 7), 0.01, addr=master_addr)
    node.send(b"stroke", 0.05)
    _beat(node, 0.85, 7)
    requests = node.named("token[request]")
    # Every heartbeat from the join at 0.01 (issue 17: the tick follows the web from there).
    assert [round(r.at, 6) for r in requests] == [0.05, 0.21, 0.41, 0.61, 0.81]
    for sent in requests:
        h = sent.packet.header
        assert sent.dest == master_addr  # the address the master's join[confirm] came from
        assert (h.source, h.destination) == (P1, MASTER)
        assert sent.packet.body is None
        assert h.acceptance.message_seq == 7  # our view of the master's next message
    assert node.counter("tokens_requested") == 1  # one request, retried
    node.receive(token_confirm(MASTER, P1, 7), 0.9)
    (sent,) = _data_sent(node)
    assert sent.packet.header.acceptance.message_seq == 7
    _beat(node, 2.0, 8)
    assert len(node.named("token[request]")) == len(requests)  # confirmed: no more retries


def test_s3_2_1_a_consumer_never_asks_for_a_token_and_is_never_granted_one() -> None:
    consumer = joined_member(C1, role="consumer")
    with pytest.raises(RuntimeError, match="consumer"):
        consumer.send(b"stroke", 0.05)
    assert consumer.named("token[request]") == []
    master = _master([P1])
    master.receive(join_request(C1, MemberClass.CONSUMER), 2.01)
    mark = len(master.sent)
    master.receive(token_request(C1, MASTER, 0), 2.02)
    assert _granted(master, mark) == [] and master.core.next_grant == 0


def test_s3_2_1_a_producer_asks_for_its_next_token_only_once_its_message_is_decided() -> None:
    # Our choice (Sender.want_token): one undecided message at a time keeps our payloads in
    # order even if one is rejected and sent again.
    node = joined_member(P1)
    node.send(b"first", 0.05)
    node.receive(token_confirm(MASTER, P1, 0), 0.06)
    node.send(b"second", 0.07)
    _beat(node, 0.9, 1)  # the master beats at 1, message 0 still pending
    assert len(node.named("token[request]")) == 1
    mark = len(node.sent)
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 0.95)
    (request,) = node.named("token[request]", mark)
    assert request.at == 0.95 and request.packet.header.acceptance.message_seq == 1


# -- §3.2.1: the master's queue ----------------------------------------------------------------


def test_s3_2_1_the_token_queue_is_fifo_and_keeps_the_first_of_duplicate_requests() -> None:
    queue = TokenQueue()
    assert [queue.add(m) for m in (P2, P3, P1, P3, P2)] == [True, True, True, False, False]
    assert list(queue) == [P2, P3, P1] and len(queue) == 3
    assert [queue.pop() for _ in range(3)] == [P2, P3, P1]
    assert not queue


def test_s3_2_1_the_master_grants_in_request_order_and_ignores_duplicate_requests() -> None:
    master = _master([P1, P2, P3], {"tokens": 1})
    mark = len(master.sent)
    master.receive(token_request(P2, MASTER, 0), 2.01)
    master.receive(token_request(P3, MASTER, 0), 2.02)
    master.receive(token_request(P1, MASTER, 0), 2.03)
    master.receive(token_request(P3, MASTER, 0), 2.04)  # retries: the first request stands
    master.receive(token_request(P1, MASTER, 0), 2.05)
    assert _granted(master, mark) == [(P2, 0)]  # one token (tokens = 1): the first asker
    _complete(master, P2, 0, 2.06)
    assert _granted(master, mark) == [(P2, 0), (P3, 1)]
    _complete(master, P3, 1, 2.07)
    master.receive(token_request(P3, MASTER, 0), 2.08)  # a late retry of its served request
    assert _granted(master, mark) == [(P2, 0), (P3, 1), (P1, 2)]
    _complete(master, P1, 2, 2.09)
    assert _granted(master, mark) == [(P2, 0), (P3, 1), (P1, 2)]  # P3 got one token, not two
    assert master.counter("tokens_granted") == 3 and master.core.next_grant == 3


# -- §3.2.1: idle, pending, busy ---------------------------------------------------------------


def test_s3_2_1_a_token_is_pending_until_its_owners_data_is_seen_then_busy_then_idle() -> None:
    master = _master([P1])
    web = master.core.web_id
    master.receive(token_request(P1, MASTER, 0), 2.01)
    grant = master.core.grants[0]
    assert (grant.owner, grant.busy) == (P1, False)  # pending
    assert master.core.status(0) is None
    master.receive(data(P1, 0, 0, b"x" * 1400, web=web), 2.03)
    assert master.core.grants[0].busy  # busy: the owner's data was seen
    master.receive(data(P1, 0, 1, batch(b"end"), DataModifier.EOM, web=web), 2.04)
    assert 0 not in master.core.grants  # idle: decided, the token is back
    assert master.core.status(0) is ACCEPTED


def test_s3_2_1_a_packet_from_a_member_without_the_token_does_not_take_its_message() -> None:
    # The master knows whom it granted message 0 to (§3.2.1: a token that is not idle has
    # "the TSAP of the process that owns" it): a stray empty[dally] for 0 from another member
    # proves nothing, and must not stop the owner's data from counting.
    master = _master([P1, P2])
    web = master.core.web_id
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.receive(empty(P2, 0, packet=1, web=web), 2.02)
    assert not master.core.grants[0].busy
    master.receive(data(P1, 0, 0, b"x" * 1400, web=web), 2.03)
    assert master.core.grants[0].busy
    master.receive(data(P1, 0, 1, batch(b"end"), DataModifier.EOM, web=web), 2.04)
    assert master.core.status(0) is ACCEPTED
    master.run_until(4.0)
    assert P1 in master.core.members and master.protocol_events("member_removed") == []


def test_s3_2_1_an_empty_dally_from_the_owner_also_makes_its_token_busy() -> None:
    master = _master([P1])
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.receive(empty(P1, 0, packet=0, web=master.core.web_id), 2.02)
    assert master.core.grants[0].busy
    mark = len(master.sent)
    master.run_until(2.5)
    assert master.named("token[confirm]", mark) == []  # busy: no confirm sent again


# -- §3.2.1: lost confirms -----------------------------------------------------------------------


def test_s3_2_1_the_master_sends_the_confirm_of_a_pending_token_again() -> None:
    master = _master([P1])
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.run_until(2.55)  # P1 stays silent: its confirm was lost
    confirms = master.named("token[confirm]", mark)
    assert len(confirms) >= 2
    assert {c.packet.header.acceptance.message_seq for c in confirms} == {0}
    assert {c.dest for c in confirms} == {addr_of(P1)}
    assert master.counter("token_confirms_resent") == len(confirms) - 1
    assert master.counter("tokens_granted") == 1 and master.core.next_grant == 1


def test_s3_2_1_a_retried_request_for_a_pending_token_gets_the_same_message_again() -> None:
    master = _master([P1])
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 0), 2.01)
    # A retry that crossed the confirm in the night (within a heartbeat): not answered.
    master.receive(token_request(P1, MASTER, 0), 2.05)
    assert _granted(master, mark) == [(P1, 0)]
    # A retry a heartbeat on: the confirm was lost; the pending token is assigned again.
    master.receive(token_request(P1, MASTER, 0), 2.21)
    master.receive(token_request(P1, MASTER, 0), 2.41)
    grants = _granted(master, mark)
    assert grants[-1] == (P1, 0) and set(grants) == {(P1, 0)} and len(grants) >= 2
    assert master.core.next_grant == 1 and list(master.core.grants) == [0]  # never a second
    assert master.counter("tokens_granted") == 1


def test_s3_2_1_a_retry_that_heard_the_web_past_the_grant_gets_the_confirm_at_once() -> None:
    # §3.2.1: "the master will respond to any process that has a token in pending state with
    # a reassignment of that token". A retry within a heartbeat of the grant that carries a
    # later message number (§2.2.6: the highest observed) was sent after the requester heard
    # the web past our confirm: it did not cross it; the confirm was lost.
    master = _master([P1, P2], {"tokens": 3})
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.receive(token_request(P2, MASTER, 0), 2.02)  # granted message 1
    assert _granted(master, mark) == [(P1, 0), (P2, 1)]
    master.receive(token_request(P1, MASTER, 0), 2.03)  # crossed the confirm: not answered
    assert _granted(master, mark) == [(P1, 0), (P2, 1)]
    master.receive(token_request(P1, MASTER, 2), 2.04)  # heard message 1's grant: lost
    assert _granted(master, mark) == [(P1, 0), (P2, 1), (P1, 0)]
    assert master.core.next_grant == 2 and master.counter("tokens_granted") == 2


def test_s3_2_1_a_retry_is_recognised_by_its_message_number_once_the_token_is_used() -> None:
    master = _master([P1], {"tokens": 3})
    web = master.core.web_id
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.receive(data(P1, 0, 0, b"x" * 1400, web=web), 2.02)  # busy
    # A retry sent before P1 saw its confirm carries message 0: the same request.
    master.receive(token_request(P1, MASTER, 0), 2.25)
    assert _granted(master, mark) == [(P1, 0)] and master.core.next_grant == 1
    # A request made after the confirm carries a later number: a new token.
    master.receive(token_request(P1, MASTER, 1), 2.26)
    assert _granted(master, mark) == [(P1, 0), (P1, 1)]


# -- §3.2.1: a duplicate token[confirm] is a nak -----------------------------------------------


def test_s3_2_1_a_duplicate_token_confirm_is_treated_as_a_nak() -> None:
    node = joined_member(P1)
    node.send(b"p" * 3000, 0.05)
    node.receive(token_confirm(MASTER, P1, 0), 0.06)
    first = _data_sent(node)
    assert [s.name for s in first] == ["data[data]", "data[data]", "data[eom]"]
    mark = len(node.sent)
    node.receive(token_confirm(MASTER, P1, 0), 0.1)  # the master missed our data
    again = _data_sent(node, mark)
    assert [(s.name, s.packet.body) for s in again] == [(s.name, s.packet.body) for s in first]
    assert [s.packet.header.acceptance.packet_seq for s in again] == [0, 1, 2]
    assert {s.packet.header.acceptance.message_seq for s in again} == {0}
    assert node.counter("duplicate_confirms") == 1
    assert node.counter("retransmissions") == 3
    assert node.counter("messages_sent") == 1  # not a second message
    assert node.named("empty[cancel]") == []


# -- §3.2.3: an unneeded token -----------------------------------------------------------------


def test_s3_2_3_an_unneeded_token_is_returned_with_empty_cancel() -> None:
    node = joined_member(P1)
    node.receive(token_confirm(MASTER, P1, 0), 0.05)  # nothing to send
    (cancel,) = node.named("empty[cancel]")
    h = cancel.packet.header
    assert cancel.dest is None and h.destination == WEB  # multicast, to the web
    assert (h.source, h.acceptance.message_seq) == (P1, 0)
    assert node.counter("cancels_sent") == 1
    assert _data_sent(node) == []


def test_s3_2_3_the_master_rejects_the_message_of_a_cancelled_token_and_grants_it_on() -> None:
    master = _master([P1, P2], {"tokens": 1})
    web = master.core.web_id
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 0), 2.01)
    master.receive(token_request(P2, MASTER, 0), 2.02)
    assert _granted(master, mark) == [(P1, 0)]
    # A cancel from a member that does not hold the token means nothing.
    master.receive(empty(P2, 0, EmptyModifier.CANCEL, web=web), 2.03)
    assert master.core.status(0) is None and 0 in master.core.grants
    master.receive(empty(P1, 0, EmptyModifier.CANCEL, web=web), 2.04)
    assert master.core.status(0) is REJECTED and 0 not in master.core.grants
    assert master.counter("messages_rejected") == 1
    (event,) = master.protocol_events("message_rejected")
    assert event.fields == {"message": 0, "owner": P1}
    # The web hears of it at once, and the token goes to the next in line.
    beats = [s for s in master.named("empty[dally]", mark) if s.at == 2.04]
    assert beats and beats[0].packet.header.acceptance.statuses[0] is REJECTED
    assert _granted(master, mark) == [(P1, 0), (P2, 1)]


# -- TR §5.1: several tokens at once --------------------------------------------------------------


@pytest.mark.parametrize("tokens", [1, 2, 3, 5])
def test_tr5_1_up_to_tokens_are_outstanding_at_once_and_no_more(tokens: int) -> None:
    members = [P1, P2, P3, P4, P5, P6, P7][: tokens + 2]
    master = _master(members, {"tokens": tokens})
    mark = len(master.sent)
    for k, member in enumerate(members):
        master.receive(token_request(member, MASTER, 0), 2.01 + k / 1000)
    assert _granted(master, mark) == [(m, n) for n, m in enumerate(members[:tokens])]
    assert len(master.core.grants) == tokens
    _complete(master, members[tokens - 1], tokens - 1, 2.05)
    assert _granted(master, mark)[tokens:] == [(members[tokens], tokens)]
    assert len(master.core.grants) == tokens


# -- §3.2.1 / §2.3.2: what a token[confirm] carries ----------------------------------------------


def test_s3_2_1_a_token_confirm_carries_the_webs_multicast_tsaps() -> None:
    master = _master([P1], {"group": "239.255.7.7:7123"})
    mark = len(master.sent)
    master.receive(token_request(P1, MASTER, 0), 2.01)
    (confirm,) = master.named("token[confirm]", mark)
    h = confirm.packet.header
    assert confirm.dest == addr_of(P1)  # unicast to the requester
    assert (h.source, h.destination) == (MASTER, P1)
    assert h.acceptance.message_seq == 0  # the message the token is for
    assert confirm.packet.body == TsapList(
        (Tsap(IPv4Address("239.255.7.7"), 7123, master.core.web_id),)
    )


def test_rfc1301_3_2_5_a_token_confirm_that_makes_the_member_rejoin_writes_nothing_after() -> None:
    # A syncing member (its board is message 0) is granted message 1; the confirm's vector
    # says the board was rejected, so the member abandons the web (TR §3.4, RFC 1301 §3.2.5).
    # The confirm belonged to the web it left: nothing of it may reach the new membership,
    # and no empty[cancel] may go out addressed to web 0.
    node = Node(P1, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P1, 0), 0.01)
    assert node.core.phase.value == "syncing"
    node.receive(token_confirm(MASTER, P1, 1, statuses={0: REJECTED}), 0.02)
    assert node.protocol_events("rejoin")
    assert node.core.phase.value == "joining"
    assert node.core.web.next == 0 and not node.core.web.known
    assert node.named("empty[cancel]") == []


def test_rfc1301_3_2_1_the_first_token_request_retry_waits_the_webs_heartbeat() -> None:
    # A lan member (its own heartbeat 50 ms) joins a web whose master runs 200 ms: its
    # token[request] is retried a web heartbeat after it was sent, not at the member's own
    # next 50 ms tick (§3.2.1: "at intervals approximately equal to the heartbeat").
    node = Node(P1, {"profile": "lan", "role": "producer", "join_with_state": False})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P1, 7), 0.01)  # the confirm says 200 ms
    assert node.core.parameters[0] == pytest.approx(0.2)
    node.send(b"stroke", 0.02)  # before the member's own next tick (0.05)
    _beat(node, 0.7, 7, step=0.05)
    requests = [round(r.at, 6) for r in node.named("token[request]")]
    assert requests == [0.02, 0.21, 0.41, 0.61]
