"""Bad input to an MTP core is counted, never raised, and its memory stays bounded (RFC 1301
§2.2: the packet format; §2.2.6: the range a message number must lie in; §3.2.1-§3.2.2: one
producer, the token holder, per message, whose data packets carry at most the data unit and
end at data[eom]; §3.2.7: duplicates; §3.4.3: naks held until the master vouches for their
source). A master, a producer and a consumer, in each phase of their lives, are fed arbitrary
bytes and arbitrary valid packets from anyone, interleaved with their timers, and floods of
thousands of packets; nothing escapes, and every table stays under the caps at the top of
mtp/core.py."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from dataclasses import replace
from ipaddress import IPv4Address

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coreapi.seqnum import to_wire
from mtp.bounds import MAX_BOARD_MESSAGE
from mtp.core import (
    AHEAD,
    MtpCore,
    Phase,
)
from mtp.link import MAX_ADDRESSES
from mtp.master import MAX_MEMBERS
from mtp.messages import MAX_PACKETS_PER_MESSAGE
from mtp.receiver import MAX_INCOMING, MAX_INCOMING_BYTES
from mtp.sender import MAX_NAK_ENTRIES_OUT, MAX_RETX
from mtp.vouching import MAX_CACHE, MAX_HELD_NAKS
from mtp.wire import (
    MAX_NAK_ENTRIES,
    STATUS_COUNT,
    DataModifier,
    EmptyModifier,
    IsMemberModifier,
    JoinModifier,
    MemberClass,
    MemberConfirm,
    MessageStatus,
    MtpDecodeError,
    MtpPacket,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    Tsap,
    decode,
    encode,
)
from tests.fuzzing import mutated
from tests.mtp.core_harness import (
    C1,
    MASTER,
    P1,
    P2,
    WEB,
    Node,
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
from tests.mtp.strategies import packets
from whiteboard.sim.network import DEFAULT_MTU
from whiteboard.transport.events import BoardStateRequested
from whiteboard.transport.interface import Address

P3 = 0xB3
UNIT = 1400  # the data unit every member of ours uses (§3.1.1)
ACCEPTED_BEFORE = dict.fromkeys(range(-STATUS_COUNT, 0), MessageStatus.ACCEPTED)

# -- the cores under test, in each phase --------------------------------------------------------


def _serve_boards(node: Node, now: float) -> None:
    for request in node.requests():
        node.provide(request, b"the board", now)  # answered requests are ignored


def _master_probing() -> Node:
    node = Node(MASTER, {"role": "master"})
    node.start(0.0)
    return node


def _master_ready() -> Node:
    """A master with producers P1, P2 and consumer C1; P1 holds a token (§3.2.1)."""
    node = founded_master()
    now = node.now
    for ident, member_class in (
        (P1, MemberClass.PRODUCER),
        (P2, MemberClass.PRODUCER),
        (C1, MemberClass.CONSUMER),
    ):
        now += 0.01
        node.receive(join_request(ident, member_class), now)
        _serve_boards(node, now)
    node.receive(token_request(P1, MASTER, node.core.next_grant), now + 0.01)
    assert node.core.grants, "P1 got no token"
    return node


def _master_leaving() -> Node:
    """§3.3.2: a quitting master waiting for the token P1 holds."""
    node = _master_ready()
    node.leave(node.now + 0.01)
    return node


def _producer_joining() -> Node:
    node = Node(P1, {"role": "producer"})
    node.start(0.0)
    return node


def _producer_syncing() -> Node:
    """TR §3.4: joined at message 5, waiting for the board."""
    node = Node(P1, {"role": "producer"})
    node.start(0.0)
    node.receive(join_confirm(MASTER, P1, 5), 0.01)
    return node


def _producer_ready() -> Node:
    """Joined at message 5 and sending message 5 under a token (§3.2.2)."""
    node = joined_member(P1, message=5)
    node.send(b"a stroke" * 400, 0.02)
    node.receive(token_confirm(MASTER, P1, 5), 0.03)
    assert node.named("data[eom]"), node.sent
    return node


def _producer_leaving() -> Node:
    node = _producer_ready()
    node.leave(0.04)
    return node


def _consumer_joining() -> Node:
    node = Node(C1, {"role": "consumer"})
    node.start(0.0)
    return node


def _consumer_ready() -> Node:
    return joined_member(C1, role="consumer", message=5)


def _consumer_leaving() -> Node:
    node = _consumer_ready()
    node.leave(0.02)  # it holds nothing: straight to quit[request] (§3.3.1)
    return node


SETUPS: dict[str, tuple[Callable[[], Node], tuple[Phase, ...]]] = {
    "master-probing": (_master_probing, (Phase.PROBING,)),
    "master-ready": (_master_ready, (Phase.READY,)),
    "master-leaving": (_master_leaving, (Phase.LEAVING,)),
    "producer-joining": (_producer_joining, (Phase.JOINING,)),
    "producer-syncing": (_producer_syncing, (Phase.SYNCING,)),
    "producer-ready": (_producer_ready, (Phase.READY,)),
    "producer-leaving": (_producer_leaving, (Phase.LEAVING,)),
    "consumer-joining": (_consumer_joining, (Phase.JOINING,)),
    "consumer-ready": (_consumer_ready, (Phase.READY,)),
    "consumer-leaving": (_consumer_leaving, (Phase.LEAVING, Phase.QUITTING)),
}


def build(setup: str) -> Node:
    make, phases = SETUPS[setup]
    node = make()
    assert node.core.phase in phases, (setup, node.core.phase)
    return node


# -- driving a core with anything ---------------------------------------------------------------


def bounds(core: MtpCore) -> dict[str, tuple[int, int]]:
    """Each internal table's size and its cap (mtp/core.py, mtp/master_role.py, mtp/web.py)."""
    held = max((len(entries) for entries in core.web.held_naks.values()), default=0)
    role = core._master  # the master's part: only the master has one (mtp/master_role.py)
    return {
        "_incoming": (len(core._receiver.incoming), MAX_INCOMING),
        # The message delivery waits for is kept past the cap, within its own (mtp/bounds.py).
        "_incoming_bytes": (core._receiver.incoming_bytes - _first_size(core), MAX_INCOMING_BYTES),
        "largest message": (
            max((m.size for m in core._receiver.incoming.values()), default=0),
            MAX_BOARD_MESSAGE,
        ),
        "_addresses": (len(core._link.addresses), MAX_ADDRESSES),
        "_members": (len(core.web.members), MAX_MEMBERS),
        "_join_waiting": (len(role.join_waiting) if role else 0, MAX_MEMBERS),
        "_held_naks": (len(core.web.held_naks), MAX_HELD_NAKS),
        "one requester's held naks": (held, 4 * MAX_NAK_ENTRIES_OUT + MAX_NAK_ENTRIES),
        "_members_cache": (len(core._vouching.members_cache), MAX_CACHE),
        "_asked": (len(core.web.asked), MAX_CACHE),
        "reported": (len(core._link.reported), MAX_ADDRESSES),
        "identities": (len(core._link.identities), MAX_ADDRESSES),
        "_banished": (len(core._vouching.banished), MAX_CACHE),
        "_retx": (len(core._sender.flight.retx), MAX_RETX),
        "_grants": (len(core.grants), STATUS_COUNT),
        "_repair_cache": (len(role.repair_cache) if role else 0, core._p.repair_cache),
    }


def _first_size(core: MtpCore) -> int:
    first = core._receiver.incoming.get(core.web.next_deliver)
    return first.size if first is not None else 0


def assert_bounded(core: MtpCore) -> None:
    over = {name: size for name, size in bounds(core).items() if size[0] > size[1]}
    assert not over, f"(size, cap) over the cap: {over}"
    # The byte count is the sum of what the held fragments hold (else the cap means nothing).
    held = sum(message.size for message in core._receiver.incoming.values())
    assert core._receiver.incoming_bytes == held, (core._receiver.incoming_bytes, held)


class Driven:
    """A core fed by hand after its setup: it checks, after every input, what must always
    hold, and answers board requests as an application would."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.core = node.core
        self.now = node.now
        self.web = node.core.web_id or WEB
        self.sent = 0
        self.rewakes = 0

    def _drain(self) -> None:
        for _ in range(10):
            out = self.core.datagrams_to_send(self.now)
            for raw, _dest in out:
                # What a core sends always decodes and fits an Ethernet frame.
                assert len(raw) <= DEFAULT_MTU, len(raw)
                decode(raw)
            self.sent += len(out)
            requests = [
                e.request for e in self.node.upper.drain() if isinstance(e, BoardStateRequested)
            ]
            for request in requests:
                self.core.provide_board_state(request, b"the board", self.now)
            if not requests:
                return

    def receive(self, raw: bytes, addr: Address) -> None:
        core = self.core
        phase = core.phase
        before = core.counters()["malformed_dropped"]
        try:
            decode(raw)
            valid = True
        except MtpDecodeError:
            valid = False
        core.receive_datagram(raw, addr, self.now)
        counted = core.counters()["malformed_dropped"] - before
        if not valid:
            # A datagram that does not decode is counted once, unless the core has no
            # session to count it in (before start, after it finished).
            alive = phase not in (Phase.NEW, Phase.FINISHED)
            assert counted == (1 if alive else 0), (phase, counted, raw[:32])
        self._drain()
        assert_bounded(core)

    def packet(self, packet: MtpPacket, addr: Address | None = None) -> None:
        self.receive(encode(packet), addr or addr_of(packet.header.source))

    def timer(self, now: float) -> None:
        """handle_timer at ``now``: the next deadline is then None, or finite and not in the
        past; if it is ``now`` itself (a rejoin sets its tick to now, docs in the report),
        one more call at ``now`` moves it past ``now``."""
        self.now = max(self.now, now)
        for call in range(2):
            self.core.handle_timer(self.now)
            self._drain()
            deadline = self.core.get_timer()
            assert deadline is None or math.isfinite(deadline), deadline
            assert deadline is None or deadline >= self.now, (
                f"after handle_timer({self.now}) the core asks to be woken in the past, at "
                f"{deadline} ({self.core.phase})"
            )
            if deadline is None or deadline > self.now:
                break
            self.rewakes += 1
            assert call == 0, f"the core's timer is stuck at {self.now} ({self.core.phase})"
        assert_bounded(self.core)

    def next_number(self) -> int:
        """The next message number as this core sees it (§2.2.6)."""
        return self.core.next_grant


# -- floods ---------------------------------------------------------------------------------------

KNOWN = (MASTER, P1, P2, C1, P3)


def _source(rng: random.Random) -> int:
    return rng.choice(KNOWN) if rng.random() < 0.3 else rng.randrange(1, 2**32)


def data_flood(driven: Driven, rng: random.Random, count: int) -> list[MtpPacket]:
    """Data packets for many message and packet numbers, from many sources."""
    base = driven.next_number()
    out = []
    for _ in range(count):
        number = base + rng.randrange(-8, 3 * AHEAD)
        index = rng.randrange(64) if rng.random() < 0.7 else rng.randrange(2**16)
        modifier = rng.choice(list(DataModifier))
        body = bytes(rng.randrange(UNIT + 1))
        statuses = {number - i: rng.choice(list(MessageStatus)) for i in range(1, 13)}
        out.append(
            data(
                _source(rng),
                number,
                index,
                body,
                modifier,
                driven.web,
                statuses,
                rng.choice([0, 1]),
            )
        )
    return out


def nak_flood(driven: Driven, rng: random.Random, count: int) -> list[MtpPacket]:
    """nak[request]s to this core from many members it has never heard of (§3.4.3)."""
    me = driven.core.member_id
    base = driven.next_number()
    out = []
    for _ in range(count):
        entries = sorted(
            {PacketId(to_wire(base + rng.randrange(-8, 8)), rng.randrange(64)) for _ in range(4)}
        )
        out.append(
            MtpPacket(
                header(PacketType.NAK, NakModifier.REQUEST, _source(rng), me, record(base)),
                NakList(tuple(entries)),
            )
        )
    return out


def control_flood(driven: Driven, rng: random.Random, count: int) -> list[MtpPacket]:
    """Empties, joins, token requests and isMember confirms from many sources."""
    me = driven.core.member_id
    base = driven.next_number()
    out: list[MtpPacket] = []
    for _ in range(count):
        source = _source(rng)
        number = base + rng.randrange(-20, 30)
        kind = rng.randrange(4)
        if kind == 0:
            modifier = rng.choice(list(EmptyModifier))
            out.append(empty(source, number, modifier, rng.randrange(8), driven.web))
        elif kind == 1:
            out.append(join_request(source, rng.choice(list(MemberClass))))
        elif kind == 2:
            out.append(token_request(source, me, number))
        else:
            target = _source(rng)
            body = MemberConfirm(tsap_of(target), rng.randrange(2**32))
            out.append(
                MtpPacket(
                    header(
                        PacketType.IS_MEMBER, IsMemberModifier.CONFIRM, source, me, record(number)
                    ),
                    body,
                )
            )
    return out


def tsap_of(ident: int) -> Tsap:
    return Tsap(IPv4Address(addr_of(ident)[0]), 7000, ident)


FLOODS: dict[str, Callable[[Driven, random.Random, int], list[MtpPacket]]] = {
    "data": data_flood,
    "naks": nak_flood,
    "control": control_flood,
}


# -- the property -------------------------------------------------------------------------------


def _aim(draw: st.DataObject, driven: Driven, packet: MtpPacket) -> tuple[MtpPacket, Address]:
    """A valid packet made to matter: from the master or a member (or anyone), to this core
    or its web, numbered near this core's next message, or left as drawn."""
    h = packet.header
    source = draw.draw(st.sampled_from([*KNOWN, h.source]), label="source")
    join_request_packet = h.packet_type is PacketType.JOIN and h.modifier is JoinModifier.REQUEST
    destination = h.destination
    acceptance = h.acceptance
    if not join_request_packet:
        destination = draw.draw(
            st.sampled_from([driven.web, driven.core.member_id, h.destination]), label="to"
        )
        if draw.draw(st.booleans(), label="near"):
            offset = draw.draw(st.integers(-STATUS_COUNT - 4, 2 * AHEAD), label="offset")
            index = draw.draw(st.integers(0, 8), label="packet")
            acceptance = replace(
                acceptance, message_seq=to_wire(driven.next_number() + offset), packet_seq=index
            )
    aimed = MtpPacket(
        replace(h, source=source, destination=destination, acceptance=acceptance), packet.body
    )
    stranger = ("10.66.0.1", 7000)
    addr = draw.draw(st.sampled_from([addr_of(source), stranger]), label="addr")
    return aimed, addr


ACTIONS = ("bytes", "mutated", "packet", "packet", "packet", "timer", "deadline", "flood")
FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("setup", list(SETUPS))
@FUZZ
@given(draw=st.data())
def test_arbitrary_bytes_and_valid_packets_from_anyone_are_counted_never_raised_and_bounded(
    setup: str, draw: st.DataObject
) -> None:
    """§2.2: bytes that do not decode are counted in malformed_dropped; any valid packet, from
    anyone, in any phase, is taken or dropped without an exception escaping receive_datagram
    or handle_timer; the timer stays finite and moves on; the tables stay under their caps."""
    driven = Driven(build(setup))
    for _ in range(draw.draw(st.integers(1, 30), label="steps")):
        action = draw.draw(st.sampled_from(ACTIONS), label="action")
        if action == "bytes":
            raw = draw.draw(st.binary(max_size=200), label="bytes")
            driven.receive(raw, draw.draw(st.sampled_from([addr_of(P1), addr_of(MASTER)])))
        elif action == "mutated":
            raw = draw.draw(mutated(packets().map(encode)), label="mutated")
            driven.receive(raw, addr_of(P2))
        elif action == "packet":
            packet, addr = _aim(draw, driven, draw.draw(packets(), label="packet"))
            driven.packet(packet, addr)
        elif action == "timer":
            step = draw.draw(st.sampled_from([0.0, 0.05, 0.2, 0.7, 3.5]), label="dt")
            driven.timer(driven.now + step)
        elif action == "deadline":
            deadline = driven.core.get_timer()
            driven.timer(driven.now if deadline is None else deadline)
        else:
            kind = draw.draw(st.sampled_from(sorted(FLOODS)), label="flood")
            rng = random.Random(draw.draw(st.integers(0, 2**16), label="seed"))
            for packet in FLOODS[kind](driven, rng, 120):
                driven.packet(packet)


# -- thousands of hostile packets ---------------------------------------------------------------


def _raw_data(source: int, web: int, number: int, index: int, body: bytes) -> bytes:
    """A data packet's bytes, fast: the header is packed directly (RFC 1301 Figure 1)."""
    return (
        struct.pack(
            "!BBBBIIIHHIHH",
            1,
            PacketType.DATA,
            DataModifier.DATA,
            0,
            source,
            web,
            0x555555,  # twelve pending statuses (§2.2.6)
            to_wire(number),
            index,
            200,
            20,
            3,
        )
        + body
    )


def test_data_for_many_messages_from_many_producers_fills_at_most_the_byte_cap() -> None:
    """§3.2.4: fragments are held for reassembly, but never more than MAX_INCOMING messages
    and MAX_INCOMING_BYTES bytes (besides the message delivery waits for, mtp/bounds.py):
    past that, packets are dropped and counted."""
    driven = Driven(_consumer_ready())
    core = driven.core
    base = core.next_deliver
    body = bytes(UNIT)
    messages = 200
    sent = 0
    for index in range(MAX_INCOMING_BYTES // UNIT // messages + 5):
        for offset in range(messages):
            number = base + offset
            raw = _raw_data(0x1000 + offset, WEB, number, index, body)
            core.receive_datagram(raw, addr_of(0x1000 + offset), 0.5)
            sent += 1
        core.datagrams_to_send(0.5)
    counters = core.counters()
    print(
        f"\n{sent} data packets of {UNIT} bytes: {len(core._receiver.incoming)} messages and "
        f"{core._receiver.incoming_bytes} bytes held; {counters['oversize_dropped']} dropped"
    )
    assert_bounded(core)
    assert core._receiver.incoming_bytes > MAX_INCOMING_BYTES - UNIT  # the cap was reached...
    assert (
        counters["oversize_dropped"] == sent - core._receiver.incoming_bytes // UNIT
    )  # ...then counted
    driven.timer(0.6)  # the naks and the rejoin that follow are bounded too


def test_more_messages_than_max_incoming_are_dropped_and_counted() -> None:
    """§2.2.6: a fragment per message number, climbing ahead of the web as fast as the range
    lets it: at most MAX_INCOMING are held; the rest are counted as out of range."""
    driven = Driven(_consumer_ready())
    core = driven.core
    base = core.next_deliver
    for offset in range(2 * MAX_INCOMING):
        raw = _raw_data(P2, WEB, base + offset, 0, b"x")
        core.receive_datagram(raw, addr_of(P2), 0.5)
    core.datagrams_to_send(0.5)
    assert_bounded(core)
    assert len(core._receiver.incoming) == MAX_INCOMING
    assert core.counters()["out_of_range_dropped"] == MAX_INCOMING


def test_naks_from_thousands_of_unknown_members_hold_at_most_max_held_naks() -> None:
    """§3.4.3: a producer serves naks only from members the master vouches for; it holds the
    others' naks while it asks, but for at most MAX_HELD_NAKS requesters."""
    driven = Driven(_producer_ready())
    core = driven.core
    asked = core.counters()["ismember_requests_sent"]
    out: list[str] = []
    for i in range(2000):
        nak = MtpPacket(
            header(PacketType.NAK, NakModifier.REQUEST, 0x10000 + i, P1, record(5)),
            NakList((PacketId(5, 0),)),
        )
        core.receive_datagram(encode(nak), addr_of(0x10000 + i), 0.05)
        out.extend(decode(raw).name for raw, _ in core.datagrams_to_send(0.05))
    asks = core.counters()["ismember_requests_sent"] - asked
    print(
        f"\n2000 naks from strangers: {len(core.web.held_naks)} requesters held, "
        f"{len(core.web.asked)} being asked about, {asks} isMember[request]s sent"
    )
    # Nothing is served to a stranger: it is only asked about (§3.4.3).
    assert set(out) <= {"isMember[request]"}, set(out)
    assert core.counters()["retransmissions"] == 0
    assert len(core.web.held_naks) <= MAX_HELD_NAKS, (
        f"{len(core.web.held_naks)} requesters held (cap {MAX_HELD_NAKS})"
    )
    assert_bounded(core)


def test_is_member_answers_for_thousands_of_members_keep_the_cache_bounded() -> None:
    """§3.4.3: the isMember cache holds at most MAX_CACHE members."""
    driven = Driven(_producer_ready())
    core = driven.core
    for i in range(MAX_CACHE + 500):
        target = 0x20000 + i
        confirm = MtpPacket(
            header(PacketType.IS_MEMBER, IsMemberModifier.CONFIRM, MASTER, P1, record(5)),
            MemberConfirm(tsap_of(target), 0),
        )
        core.receive_datagram(encode(confirm), addr_of(MASTER), 0.05)
    core.datagrams_to_send(0.05)
    assert 0 < len(core._vouching.members_cache) <= MAX_CACHE
    assert_bounded(core)


def test_thousands_of_strangers_and_joiners_keep_the_masters_tables_within_their_caps() -> None:
    """§3.3.3: the master banishes strangers (quit[request]) without keeping more than
    MAX_CACHE of them; §3.1.2: it admits at most MAX_MEMBERS members and denies the rest
    ("full"); its address book stays under MAX_ADDRESSES."""
    node = founded_master({"join_with_state": False})
    driven = Driven(node)
    core = driven.core
    web = core.web_id
    now = node.now + 0.01
    for i in range(MAX_ADDRESSES + 500):
        stranger = 0x30000 + i
        core.receive_datagram(encode(empty(stranger, 0, web=web)), addr_of(stranger), now)
    core.datagrams_to_send(now)
    banished = core.counters()["banishments_sent"]
    assert banished == MAX_ADDRESSES + 500, banished
    assert len(core._vouching.banished) <= MAX_CACHE
    for i in range(MAX_MEMBERS + 100):
        joiner = 0x40000 + i
        core.receive_datagram(encode(join_request(joiner)), addr_of(joiner), now)
    core.datagrams_to_send(now)
    counters = core.counters()
    print(
        f"\n{MAX_ADDRESSES + 500} strangers and {MAX_MEMBERS + 100} joiners: "
        f"{len(core.web.members)} members, {counters['joins_denied']} joins denied, "
        f"{len(core._link.addresses)} addresses, {len(core._vouching.banished)} banished remembered"
    )
    assert len(core.web.members) == MAX_MEMBERS
    assert counters["joins_denied"] == 100
    assert len(core._link.addresses) <= MAX_ADDRESSES, (
        f"{len(core._link.addresses)} addresses kept (cap {MAX_ADDRESSES})"
    )
    assert_bounded(core)


def test_the_status_book_stays_bounded_over_a_long_web() -> None:
    """§2.2.6: only the last 12 statuses matter (a member further behind rejoins), so a member
    that has delivered 2,000 messages keeps a few dozen, not 2,000."""
    node = _consumer_ready()
    core = node.core
    base = core.next_deliver
    for offset in range(2000):
        number = base + offset
        statuses = {number - i: MessageStatus.ACCEPTED for i in range(1, STATUS_COUNT + 1)}
        packet = data(P2, number, 0, batch(b"s%d" % offset), DataModifier.EOM, statuses=statuses)
        core.receive_datagram(encode(packet), addr_of(P2), 0.05)
        core.datagrams_to_send(0.05)
    assert core.next_deliver == base + 1999, core.next_deliver  # all but the last decided
    assert core.counters()["delivered"] == 1999
    assert len(core.web.book) <= 4 * STATUS_COUNT + STATUS_COUNT, (
        f"the status book holds {len(core.web.book)} statuses after 2,000 messages"
    )


# -- hand-built cases ---------------------------------------------------------------------------


def test_a_data_packet_over_1400_bytes_of_client_data_is_dropped_and_counted() -> None:
    """§3.1.1: the web's data unit is 1,400 bytes; a member of ours never sends more in one
    packet, so a bigger one is malformed: dropped, counted, nothing held."""
    node = _consumer_ready()
    node.receive(data(P2, 5, 0, bytes(UNIT + 1)), 0.05)
    assert node.counter("malformed_dropped") == 1
    assert 5 not in node.core._receiver.incoming and node.core._receiver.incoming_bytes == 0
    node.receive(data(P2, 5, 0, bytes(UNIT)), 0.06)  # exactly the unit: taken
    assert node.counter("malformed_dropped") == 1
    assert node.core._receiver.incoming[5].packets == {0: bytes(UNIT)}


def test_a_data_packet_for_a_message_far_ahead_of_the_web_is_dropped_as_out_of_range() -> None:
    """§2.2.6: a number well past the master's (as this member last heard it) names no
    message that can exist; it is dropped and counted, and moves nothing."""
    node = _consumer_ready()
    core = node.core
    view = core.next_grant
    node.receive(data(P2, view + AHEAD, 0, batch(b"far")), 0.05)
    node.receive(data(P2, view + 1000, 0, batch(b"farther")), 0.06)
    assert node.counter("out_of_range_dropped") == 2
    assert core._receiver.incoming == {} and core.next_grant == view
    node.receive(data(P2, view + AHEAD - 1, 0, batch(b"near")), 0.07)  # the last in range
    assert list(core._receiver.incoming) == [view + AHEAD - 1]


def test_the_master_drops_data_for_a_message_it_has_not_granted() -> None:
    """§2.2.6: only the master hands out message numbers; data numbered at or past its next
    grant is out of range."""
    node = _master_ready()
    core = node.core
    ahead = core.next_grant
    node.receive(data(P1, ahead, 0, batch(b"ungranted"), DataModifier.EOM, core.web_id), 3.0)
    assert node.counter("out_of_range_dropped") == 1
    assert ahead not in core._receiver.incoming and core.status(ahead) is None


def test_a_second_producer_claiming_a_message_number_is_ignored() -> None:
    """§3.2.1: one token, one producer per message. Once P2's packets name message 5, P3's
    packets for 5 are dropped and counted, and message 5 is P2's alone."""
    node = _consumer_ready()
    node.receive(data(P2, 5, 0, batch(b"P2's")[:10]), 0.05)
    node.receive(data(P3, 5, 1, b"P3 forged the end", DataModifier.EOM), 0.06)
    assert node.counter("malformed_dropped") == 1
    message = node.core._receiver.incoming[5]
    assert message.source == P2 and message.last is None and set(message.packets) == {0}
    node.receive(data(P2, 5, 1, batch(b"P2's")[10:], DataModifier.EOM), 0.07)
    node.receive(empty(MASTER, 6, EmptyModifier.DALLY, statuses={5: MessageStatus.ACCEPTED}), 0.08)
    assert [(e.origin, e.payload) for e in node.deliveries()] == [(P2, b"P2's")]


def test_the_master_takes_a_message_only_from_the_member_it_granted_the_token_to() -> None:
    """§3.2.1, §2.2.6: the master knows who holds the token for each message; data for it from
    any other member is not that message, and can never make the master accept it."""
    node = _master_ready()
    core = node.core
    (number,) = core.grants
    assert core.grants[number].owner == P1
    node.receive(data(P2, number, 0, batch(b"forged"), DataModifier.EOM, core.web_id), 3.0)
    assert core.status(number) is None, "the master accepted P2's data for P1's token"
    node.receive(data(P1, number, 0, batch(b"real"), DataModifier.EOM, core.web_id), 3.01)
    assert core.status(number) is MessageStatus.ACCEPTED
    assert [(e.origin, e.payload) for e in node.deliveries()][-1:] == [(P1, b"real")]


def test_a_packet_numbered_past_data_eom_is_dropped() -> None:
    """§3.2.2: data[eom] is the last packet of a message; a packet numbered past it (or a
    data[eom] below a packet already seen) is malformed: dropped and counted."""
    node = _consumer_ready()
    whole = batch(b"exactly two packets" * 100)
    first, second = whole[:UNIT], whole[UNIT:]
    node.receive(data(P2, 5, 1, second, DataModifier.EOM), 0.05)
    node.receive(data(P2, 5, 2, b"past the end"), 0.06)
    node.receive(data(P2, 5, 7, b"far past the end", DataModifier.EOM), 0.07)
    assert node.counter("malformed_dropped") == 2
    message = node.core._receiver.incoming[5]
    assert message.last == 1 and set(message.packets) == {1}
    node.receive(data(P2, 5, 0, first), 0.08)
    node.receive(empty(MASTER, 6, EmptyModifier.DALLY, statuses={5: MessageStatus.ACCEPTED}), 0.09)
    assert node.delivered_payloads() == [b"exactly two packets" * 100]

    later = _consumer_ready()
    later.receive(data(P2, 5, 3, b"packet 3"), 0.05)
    later.receive(data(P2, 5, 1, b"an end below packet 3", DataModifier.EOM), 0.06)
    assert later.counter("malformed_dropped") == 1
    assert later.core._receiver.incoming[5].last is None


def test_the_last_packet_number_the_wire_carries_is_taken() -> None:
    """A message spans up to MAX_PACKETS_PER_MESSAGE packets: every number the 16-bit packet
    sequence number carries (§2.2.6); what one producer makes a member hold is bounded in
    bytes (tests/mtp/test_large_messages.py)."""
    node = _consumer_ready()
    node.receive(data(P2, 5, MAX_PACKETS_PER_MESSAGE - 1, b"the last"), 0.05)
    assert node.counter("malformed_dropped") == 0
    assert node.core._receiver.incoming[5].advertised == MAX_PACKETS_PER_MESSAGE - 1


def test_duplicates_are_dropped_and_counted_not_held_twice() -> None:
    """§3.2.7: the consumer must be prepared to ignore duplicate packets."""
    node = _consumer_ready()
    packet = data(P2, 5, 0, bytes(700))
    for i in range(5):
        node.receive(packet, 0.05 + i / 100)
    assert node.counter("duplicates_dropped") == 4
    assert node.core._receiver.incoming_bytes == 700


def test_bytes_that_do_not_decode_are_counted_in_every_phase() -> None:
    """§2.2.1: version 1 only; anything that does not decode is counted, not raised."""
    for name in SETUPS:
        driven = Driven(build(name))
        for raw in (b"", b"\x02" + bytes(27), b"\x01\x09" + bytes(26), bytes(range(40))):
            driven.receive(raw, addr_of(P2))  # Driven.receive checks the count
        assert driven.core.counters()["malformed_dropped"] == 4, name


def test_a_core_woken_late_moves_its_timer_past_now() -> None:
    """Timers are called at or after their deadline (interface.py); a core woken seconds
    late, in any phase, asks to be woken again after ``now``, not before."""
    for name in SETUPS:
        driven = Driven(build(name))
        for late in (0.0, 0.3, 5.0, 60.0):
            deadline = driven.core.get_timer()
            driven.timer((driven.now if deadline is None else deadline) + late)


def test_a_data_packet_that_makes_a_member_rejoin_leaves_no_fragment_behind() -> None:
    """§3.2.5: a data packet whose statuses show the joiner fell behind makes it rejoin; the
    packet itself is not kept (a JOINING core has no web), so no nak deadline is left to wake
    the core in the past. (Found by the fuzz test above: seed 229, a joiner still syncing.)"""
    driven = Driven(build("producer-syncing"))
    core = driven.core
    for packet in FLOODS["data"](driven, random.Random(229), 120):
        driven.packet(packet)
    assert core.phase is Phase.JOINING, core.phase
    assert core.counters()["rejoins"] == 1
    assert not core._receiver.incoming, sorted(core._receiver.incoming)
    driven.timer(driven.now + 0.05)  # asserts the timer moved past now
