"""MTP's transport parameters (RFC 1301 §3.4 and its appendix; §3.1.1-§3.1.2 for their
negotiation at join; §2.2.7-§2.2.9 for the header fields that carry them): the seed profile
is the RFC's values and lan the documented default; every value is settable by name with
readable errors; the master's values are adopted at join and when it adjusts them (§3.4.1),
members' suggestions ride on token[request]; isMember answers are cached and aged (§3.4.3)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import fields
from ipaddress import IPv4Address
from itertools import pairwise

import pytest

from mtp import LAN, SEED, MtpParams, make_core
from mtp.params import PROFILES, params_from_mapping
from mtp.wire import (
    IsMemberModifier,
    MemberConfirm,
    MtpPacket,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    Tsap,
)
from tests.mtp.core_harness import (
    C1,
    HEARTBEAT,
    MASTER,
    P1,
    P2,
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
from whiteboard.transport.events import EventQueue

EPS = 1e-6


# -- private helpers ----------------------------------------------------------------------------


def _values(sent: Sent) -> tuple[int, int, int]:
    h = sent.packet.header
    return h.heartbeat, h.window, h.retention


def _with_values(packet: MtpPacket, heartbeat_ms: int, window: int, retention: int) -> MtpPacket:
    """``packet`` with other heartbeat, window and retention fields."""
    h = packet.header
    return MtpPacket(
        header(
            h.packet_type,
            h.modifier,
            h.source,
            h.destination,
            h.acceptance,
            heartbeat_ms=heartbeat_ms,
            window=window,
            retention=retention,
            subchannel=h.subchannel,
        ),
        packet.body,
    )


def _tsap(ident: int) -> Tsap:
    return Tsap(IPv4Address(addr_of(ident)[0]), 7000, ident)


def _nak(source: int, destination: int, *entries: tuple[int, int], message: int = 0) -> MtpPacket:
    body = NakList(tuple(PacketId(m, p) for m, p in entries))
    return MtpPacket(
        header(PacketType.NAK, NakModifier.REQUEST, source, destination, record(message)), body
    )


def _is_member_request(source: int, destination: int, target: int) -> MtpPacket:
    return MtpPacket(
        header(PacketType.IS_MEMBER, IsMemberModifier.REQUEST, source, destination, record(0)),
        _tsap(target),
    )


def _is_member_confirm(
    source: int, destination: int, target: int, credibility_ms: int
) -> MtpPacket:
    return MtpPacket(
        header(PacketType.IS_MEMBER, IsMemberModifier.CONFIRM, source, destination, record(0)),
        MemberConfirm(_tsap(target), credibility_ms),
    )


def _master(params: dict[str, object] | None = None, members: tuple[int, ...] = (P1,)) -> Node:
    node = founded_master({"join_with_state": False, **(params or {})})
    for member in members:
        node.receive(join_request(member), node.now + 0.01)
    return node


def _relay(source: Node, sent: Sent, to: Node, now: float) -> None:
    """Hand a datagram ``source`` sent to ``to``, from ``source``'s address."""
    to.receive(sent.raw, now, addr_of(source.member_id))


def _pair(master_params: dict[str, object] | None = None) -> tuple[Node, Node]:
    """A master and P1, joined through the master's own join[confirm] (its web id)."""
    master = _master(master_params, members=())
    member = Node(P1, {"role": "producer", "join_with_state": False})
    member.start(0.0)
    _relay(member, member.named("join[request]")[0], master, master.now + 0.01)
    _relay(master, master.named("join[confirm]")[0], member, 0.01)
    assert member.is_ready() and member.core.web_id == master.core.web_id
    return master, member


# -- §3.4.2 and the appendix: the profiles ------------------------------------------------------


def test_the_seed_profile_is_the_rfcs_values() -> None:
    seed = params_from_mapping({"profile": "seed"})
    assert seed == SEED
    # §3.4.2: "Heartbeat (minimum) = 160 - 200 milliseconds", "Window (maximum) = 17 - 20
    # packets per heartbeat", "Retention (minimum) = 3" (5 for internet cases).
    assert (seed.heartbeat, seed.heartbeat_min, seed.heartbeat_max) == (0.2, 0.16, 0.2)
    assert (seed.window, seed.window_min, seed.window_max) == (20, 17, 20)
    assert (seed.retention, seed.retention_min, seed.retention_max) == (3, 3, 5)
    assert seed.heartbeat_min <= seed.heartbeat <= seed.heartbeat_max
    assert seed.window_min <= seed.window <= seed.window_max
    assert seed.retention_min <= seed.retention <= seed.retention_max
    # §3.2.5: abandon the web after retention heartbeats of silence (0.6 s).
    assert seed.silence_limit == pytest.approx(seed.retention * seed.heartbeat)
    # §3.4.2: "The (theoretical) throughput with these parameters in effect is 180 kilobytes
    # per second" (our data unit is 1400 bytes, not a full Ethernet frame).
    assert seed.throughput_kbps == 140
    assert Node(P1).core.parameters == (0.2, 20, 3)  # the harness runs the seed profile
    # §3.2.3: "a message must consist of at least retention packets", as written.
    assert (seed.padding, seed.message_packets) == (0, 0)


def test_the_lan_profile_is_the_documented_default() -> None:
    lan = params_from_mapping({})
    assert lan == LAN == params_from_mapping({"profile": "lan"})
    assert (lan.heartbeat, lan.window, lan.retention) == (0.05, 256, 20)
    assert (lan.silence_limit, lan.holder_silence) == (3.0, 2.0)
    assert lan.heartbeat_min <= lan.heartbeat <= lan.heartbeat_max
    assert lan.window_min <= lan.window <= lan.window_max
    assert lan.retention_min <= lan.retention <= lan.retention_max
    assert set(PROFILES) == {"seed", "lan"}
    core = make_core(P1, EventQueue(clock=lambda: 0.0), random.Random(0), {})
    assert core.parameters == (0.05, 256, 20)
    # §3.2.3's padding at the RFC's retention (§3.4.2's minimum, 3), not lan's 20 (issue 18).
    assert (lan.padding, lan.message_packets) == (3, 0)


_OTHER: dict[str, Callable[[object], object]] = {
    "role": lambda v: "consumer",
    "transport_type": lambda v: "1xn",
    "group": lambda v: "239.1.2.3:7001",
    "heartbeat_min": lambda v: v * 0.5,  # type: ignore[operator]
    "window_min": lambda v: v - 1,  # type: ignore[operator]
    "retention_min": lambda v: v - 1,  # type: ignore[operator]
    "max_data_unit": lambda v: v - 1,  # type: ignore[operator]
    "reorder_wait": lambda v: v + 0.002,  # type: ignore[operator]  (0 in seed)
}


def _another_value(name: str, value: object) -> object:
    if name in _OTHER:
        return _OTHER[name](value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    assert isinstance(value, float)
    return value * 1.5


@pytest.mark.parametrize("name", [f.name for f in fields(MtpParams)])
@pytest.mark.parametrize("profile", ["seed", "lan"])
def test_every_parameter_is_settable_by_name(profile: str, name: str) -> None:
    base = PROFILES[profile]
    value = _another_value(name, getattr(base, name))
    params = params_from_mapping({"profile": profile, name: value})
    assert getattr(params, name) == value != getattr(base, name)
    # Moving a value alone moves its bounds (and the hibernation heartbeat) with it.
    followers = {f"{name}_min", f"{name}_max", "hibernate_heartbeat"}
    for other in fields(MtpParams):
        if other.name != name and other.name not in followers:
            assert getattr(params, other.name) == getattr(base, other.name), other.name


def test_moving_a_value_moves_its_bounds_with_it() -> None:
    params = params_from_mapping({"profile": "seed", "window": 24, "heartbeat": 0.1})
    assert (params.window_min, params.window, params.window_max) == (17, 24, 24)
    assert (params.heartbeat_min, params.heartbeat, params.heartbeat_max) == (0.1, 0.1, 0.2)


def test_parameters_take_textual_booleans_and_whole_floats() -> None:
    assert params_from_mapping({"nak_dally": "yes"}).nak_dally is True
    assert params_from_mapping({"join_with_state": "false"}).join_with_state is False
    assert params_from_mapping({"nak_dally": 1}).nak_dally is True
    whole = params_from_mapping({"profile": "seed", "tokens": 5.0})
    assert whole.tokens == 5 and isinstance(whole.tokens, int)
    assert params_from_mapping({"silence_limit": 4}).silence_limit == 4.0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"profile": "wan"}, r"unknown mtp profile 'wan'; choose one of seed, lan"),
        ({"windw": 20}, r"unknown mtp parameter 'windw'"),
        ({"window": "20"}, r"mtp parameter window must be a number, got '20'"),
        ({"window": True}, r"mtp parameter window must be a number, got True"),
        ({"window": 20.5}, r"mtp parameter window must be a whole number, got 20\.5"),
        ({"nak_dally": "maybe"}, r"mtp parameter nak_dally must be true or false, got 'maybe'"),
        ({"role": "boss"}, r"mtp role must be one of master, producer, consumer, got 'boss'"),
        ({"transport_type": "mesh"}, r"mtp transport_type must be one of nxn, 1xn, got 'mesh'"),
        ({"window": 0}, r"mtp parameter window must be positive, got 0"),
        ({"silence_limit": -1.0}, r"mtp parameter silence_limit must be positive, got -1\.0"),
        (
            {"profile": "seed", "heartbeat_min": 0.3},
            r"heartbeat_min <= heartbeat <= heartbeat_max, got 0\.3 <= 0\.2 <= 0\.2",
        ),
        ({"profile": "seed", "window_max": 10}, r"window_min <= window <= window_max"),
        ({"profile": "seed", "retention_min": 4}, r"retention_min <= retention <= retention_max"),
        ({"heartbeat": 100.0}, r"heartbeat must be from 0\.01 to 60 seconds"),
        ({"window": 2000}, r"window must be at most 1024 packets"),
        ({"retention": 300}, r"retention must be at most 255 heartbeats"),
        ({"tokens": 13}, r"tokens must be from 1 to 12: .*RFC 1301 §2\.2\.6"),
        ({"tokens": 0}, r"mtp parameter tokens must be positive, got 0"),
        ({"max_data_unit": 1500}, r"max_data_unit must be from 128 to 1400 bytes"),
        # Issue 20: a 4 MiB message must fit 65,536 packets (§2.2.6's 16-bit number).
        ({"max_data_unit": 127}, r"max_data_unit must be from 128 .* 65,536 packets"),
        ({"min_throughput": 70000}, r"min_throughput must fit 16 bits"),
        ({"message_packets": 65}, r"message_packets must be at most 64"),
        ({"padding": 65}, r"padding must be at most 64"),
        ({"padding": 2.5}, r"mtp parameter padding must be a whole number, got 2\.5"),
        ({"hibernate_heartbeat": 0.01}, r"hibernate_heartbeat must not be below heartbeat"),
        ({"profile": "lan", "reorder_wait": 0.05}, r"reorder_wait must not exceed heartbeat_min"),
        ({"reorder_wait": -0.01}, r"mtp parameter reorder_wait must be positive, got -0\.01"),
        ({"group": "239.1.1.1"}, r"group must be host:port, like 239\.255\.0\.1:7000"),
        ({"group": "239.1.1.1:70000"}, r"group must be host:port"),
    ],
)
def test_bad_parameters_raise_readable_value_errors(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        params_from_mapping(params)
    # The same through the factory the transport registry calls.
    with pytest.raises(ValueError, match=message):
        make_core(P1, EventQueue(clock=lambda: 0.0), random.Random(0), params)


# -- §3.1.1, §3.1.2, §3.4.1: negotiation at join ------------------------------------------------


def test_a_join_request_carries_the_values_the_joiner_wishes() -> None:
    node = Node(P1, {"role": "producer", "heartbeat": 0.18, "window": 18, "retention": 4})
    node.start(0.0)
    # §3.1.1: "The heartbeat, window and retention parameters are filled in as requested by
    # the transport provider's client."
    assert _values(node.named("join[request]")[0]) == (180, 18, 4)


def test_join_confirm_carries_the_masters_values_and_the_joiner_adopts_them() -> None:
    master = _master({"heartbeat": 0.18, "window": 18, "retention": 4}, members=())
    member = Node(P1, {"role": "producer", "join_with_state": False})
    member.start(0.0)
    assert member.core.parameters == (0.2, 20, 3)
    assert (
        member.core.web_id == 0
    )  # not known before the join[confirm] (§2.3.1)  # its own, until a master says otherwise
    # Its wishes (200/20/3) do not move the master (§3.4.1: "the master will respond with
    # the web's current operating values").
    _relay(member, member.named("join[request]")[0], master, master.now + 0.01)
    confirm = master.named("join[confirm]")[0]
    assert _values(confirm) == (180, 18, 4)
    assert master.core.parameters == (0.18, 18, 4)
    # §3.1.2: "Otherwise the parameters must be accepted as the current operating values."
    _relay(master, confirm, member, 0.01)
    assert member.is_ready()
    assert member.core.parameters == (0.18, 18, 4)
    assert member.counter("parameter_changes") == 1
    # Its packets now carry the web's values (§3.2.2: "Every packet transmitted always
    # contains the latest heartbeat, window and retention information").
    member.send(b"stroke", 0.02)
    assert _values(member.named("token[request]")[0]) == (180, 18, 4)


def test_a_member_runs_the_adopted_heartbeat() -> None:
    member = Node(P1, {"role": "producer", "join_with_state": False})
    member.start(0.0)
    member.receive(_with_values(join_confirm(MASTER, P1, 0), 160, 17, 5), 0.01)
    member.send(b"stroke", 0.02)
    member.run_until(0.5)
    retries = member.named("token[request]")
    assert len(retries) >= 3
    assert {round(b.at - a.at, 6) for a, b in pairwise(retries[1:])} == {0.16}


# -- §3.4.1: the master adjusts the web's values ------------------------------------------------


def test_the_master_adjusts_its_values_within_bounds_and_announces_them() -> None:
    master, member = _pair()
    at = master.now + 0.01
    master.core.adjust_parameters(at, heartbeat=0.16, window=17, retention=5)
    master.tick(at)  # collect what adjust_parameters emitted
    assert master.core.parameters == (0.16, 17, 5)
    assert master.counter("parameter_changes") == 1
    changed = master.protocol_events("parameters_changed")
    assert changed and changed[0].fields == {"heartbeat_ms": 160, "window": 17, "retention": 5}
    announce = [s for s in master.sent if s.at == at]
    assert announce and announce[0].name == "empty[dally]" and _values(announce[0]) == (160, 17, 5)
    master.run_until(at + 1.0)
    empties = [s for s in master.sent if s.at > at and s.packet.packet_type is PacketType.EMPTY]
    assert {_values(s) for s in empties} == {(160, 17, 5)}
    assert {round(b.at - a.at, 6) for a, b in pairwise(empties)} == {0.16}
    # Members adopt the master's values from its packets (§2.2.7-§2.2.9).
    _relay(master, announce[0], member, 0.05)
    assert member.core.parameters == (0.16, 17, 5)


def test_adjusting_one_value_leaves_the_others() -> None:
    master = _master()
    master.core.adjust_parameters(master.now, window=18)
    assert master.core.parameters == (0.2, 18, 3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"heartbeat": 0.1}, r"heartbeat 0\.1 s is outside 0\.16\.\.0\.2"),
        ({"heartbeat": 0.25}, r"heartbeat 0\.25 s is outside"),
        ({"window": 16}, r"window 16 is outside 17\.\.20"),
        ({"window": 21}, r"window 21 is outside 17\.\.20"),
        ({"retention": 2}, r"retention 2 is outside 3\.\.5"),
        ({"retention": 6}, r"retention 6 is outside 3\.\.5"),
    ],
)
def test_the_master_refuses_values_outside_its_bounds(
    change: dict[str, float], message: str
) -> None:
    master = _master()
    mark = len(master.sent)
    with pytest.raises(ValueError, match=message):
        master.core.adjust_parameters(master.now, **change)  # type: ignore[arg-type]
    assert master.core.parameters == (0.2, 20, 3)
    assert master.counter("parameter_changes") == 0
    master.tick(master.now)
    assert all(_values(s) == (200, 20, 3) for s in master.sent_after(mark))


# -- §3.4.1: members suggest ---------------------------------------------------------------------


def test_a_token_request_that_crossed_the_masters_change_does_not_undo_it() -> None:
    master, member = _pair()
    # P1 asks for a token carrying the values it knows (§3.2.2: every packet carries them);
    # it has suggested nothing.
    member.send(b"stroke", 0.02)
    request = member.named("token[request]")[0]
    assert _values(request) == (200, 20, 3)
    at = master.now + 0.01
    master.core.adjust_parameters(at, heartbeat=0.16, window=17, retention=5)
    master.tick(at)
    # The request was in flight while the master changed the values: it is no suggestion.
    _relay(member, request, master, at + 0.001)
    assert master.core.parameters == (0.16, 17, 5)
    assert master.counter("parameter_changes") == 1


def test_a_members_adjustment_is_a_suggestion_carried_in_its_token_request() -> None:
    member = joined_member(P1)
    mark = len(member.sent)
    member.core.adjust_parameters(0.02, heartbeat=0.16, window=17, retention=5)
    member.tick(0.02)
    assert member.core.parameters == (0.2, 20, 3)  # only the master sets them
    assert member.sent_after(mark) == []  # nothing goes out by itself
    member.send(b"stroke", 0.03)
    member.run_until(0.5)
    requests = member.named("token[request]")
    assert len(requests) >= 2
    assert {_values(r) for r in requests} == {(160, 17, 5)}  # the retries too
    member.receive(token_confirm(MASTER, P1, 0), 0.55)
    # Granted: the suggestion has had its chance; what it sends now carries the web's values.
    assert {_values(s) for s in member.sent if s.at >= 0.55} == {(200, 20, 3)}


def test_a_member_cannot_suggest_values_outside_its_bounds() -> None:
    member = joined_member(P1)
    with pytest.raises(ValueError, match=r"window 30 is outside 17\.\.20"):
        member.core.adjust_parameters(0.02, window=30)
    member.send(b"stroke", 0.03)
    assert _values(member.named("token[request]")[0]) == (200, 20, 3)


def test_the_master_adopts_a_suggestion_within_its_bounds() -> None:
    master, member = _pair()
    member.core.adjust_parameters(0.02, heartbeat=0.16, window=17, retention=5)
    member.send(b"stroke", 0.03)
    _relay(member, member.named("token[request]")[0], master, master.now + 0.01)
    assert master.core.parameters == (0.16, 17, 5)
    assert master.counter("parameter_changes") == 1
    grant = master.named("token[confirm]")
    assert len(grant) == 1 and _values(grant[0]) == (160, 17, 5)
    _relay(master, grant[0], member, 0.1)
    assert member.core.parameters == (0.16, 17, 5)


@pytest.mark.parametrize(
    "values", [(100, 20, 3), (200, 25, 3), (200, 20, 9), (160, 17, 2)], ids=str
)
def test_the_master_ignores_a_suggestion_outside_its_bounds(values: tuple[int, int, int]) -> None:
    master = _master()
    request = _with_values(token_request(P1, MASTER, 0), *values)
    master.receive(request, master.now + 0.01)
    assert master.core.parameters == (0.2, 20, 3)
    assert master.counter("parameter_changes") == 0
    grant = master.named("token[confirm]")
    assert len(grant) == 1 and _values(grant[0]) == (200, 20, 3)  # still granted


def test_the_master_takes_suggestions_only_from_token_requests() -> None:
    master = _master()
    at = master.now + 0.01
    master.receive(_with_values(_nak(P1, MASTER, (0, 0)), 160, 17, 5), at)
    master.receive(_with_values(_is_member_request(P1, MASTER, P1), 160, 17, 5), at + 0.01)
    master.receive(_with_values(join_request(P2), 160, 17, 5), at + 0.02)
    assert master.core.parameters == (0.2, 20, 3)
    assert master.counter("parameter_changes") == 0


# -- §2.2.7-§2.2.9: whose values a member runs ---------------------------------------------------


def _from_peer(kind: str) -> MtpPacket:
    if kind == "data":
        return data(P2, 0, 0, batch(b"x"), statuses=None)
    if kind == "empty[dally]":
        return empty(P2, 0)
    if kind == "nak[request]":
        return _nak(P2, P1, (0, 0))
    assert kind == "isMember[request]"
    return _is_member_request(P2, P1, P1)


@pytest.mark.parametrize("kind", ["data", "empty[dally]", "nak[request]", "isMember[request]"])
def test_members_never_adopt_values_from_a_packet_not_from_the_master(kind: str) -> None:
    member = joined_member(P1)
    member.receive(_with_values(_from_peer(kind), 160, 17, 5), 0.05)
    assert member.core.parameters == (0.2, 20, 3)
    assert member.counter("parameter_changes") == 0


def _from_master(kind: str) -> MtpPacket:
    if kind == "empty[dally]":
        return empty(MASTER, 0)
    if kind == "token[confirm]":
        return token_confirm(MASTER, P1, 0)
    assert kind == "data"
    return data(MASTER, 0, 0, batch(b"x"))


@pytest.mark.parametrize("kind", ["empty[dally]", "token[confirm]", "data"])
def test_members_adopt_the_masters_values_from_any_of_its_packets(kind: str) -> None:
    member = joined_member(P1)
    member.receive(_with_values(_from_master(kind), 180, 18, 4), 0.05)
    assert member.core.parameters == (0.18, 18, 4)
    assert member.counter("parameter_changes") == 1


# -- §3.4.3: caching member information ---------------------------------------------------------

CACHE_AGE = 2.0


def _producer_with_a_message() -> Node:
    """P1 sent message 0 (one packet, still undecided: it keeps it for naks)."""
    member = joined_member(P1, params={"member_cache_age": CACHE_AGE})
    member.send(b"stroke", 0.02)
    member.receive(token_confirm(MASTER, P1, 0), 0.05)
    assert len(member.named("data[eom]")) == 1
    return member


def _alive_until(node: Node, until: float) -> None:
    """Run to ``until`` hearing the master's heartbeat (message 1 next, message 0 pending)."""
    when = node.now
    for _ in range(1_000):
        if when + HEARTBEAT > until:
            break
        when += HEARTBEAT
        node.run_until(when - EPS)
        node.receive(empty(MASTER, 1), when)
    node.run_until(until)


def _repairs(node: Node, since: int) -> list[Sent]:
    return [s for s in node.sent_after(since) if s.packet.packet_type is PacketType.DATA]


@pytest.mark.parametrize("credibility_ms", [0, 1000])
def test_a_producer_believes_the_masters_is_member_confirm_for_the_cache_age_less_its_age(
    credibility_ms: int,
) -> None:
    member = _producer_with_a_message()
    mark = len(member.sent)
    member.receive(_nak(C1, P1, (0, 0)), 0.1)
    # An unknown requester: the producer asks the master first (§3.4.3: "when all else
    # fails, from responses solicited from the web's master by use of the isMember[request]").
    asks = member.named("isMember[request]", mark)
    assert len(asks) == 1 and _repairs(member, mark) == []
    assert asks[0].dest == addr_of(MASTER) and asks[0].packet.header.destination == MASTER
    assert isinstance(asks[0].packet.body, Tsap) and asks[0].packet.body.connection_id == C1
    confirmed_at = 0.12
    member.receive(_is_member_confirm(MASTER, P1, C1, credibility_ms), confirmed_at)
    repaired = _repairs(member, mark)
    assert len(repaired) == 1 and repaired[0].packet.header.acceptance.packet_seq == 0
    believed_until = confirmed_at + CACHE_AGE - credibility_ms / 1000.0
    # Within the credibility window its naks are served without asking.
    _alive_until(member, believed_until - 0.1)
    mark = len(member.sent)
    member.receive(_nak(C1, P1, (0, 0)), member.now + EPS)
    assert len(_repairs(member, mark)) == 1
    assert member.named("isMember[request]", mark) == []
    # Once aged out (§3.4.3: "when sufficiently old, discarded"), the producer asks again.
    _alive_until(member, believed_until + 0.1)
    mark = len(member.sent)
    member.receive(_nak(C1, P1, (0, 0)), member.now + EPS)
    assert _repairs(member, mark) == []
    assert len(member.named("isMember[request]", mark)) == 1


def test_a_stale_is_member_confirm_is_not_cached() -> None:
    member = _producer_with_a_message()
    member.receive(_nak(C1, P1, (0, 0)), 0.1)
    member.receive(_is_member_confirm(MASTER, P1, C1, int(CACHE_AGE * 1000) + 1), 0.12)
    mark = len(member.sent)
    member.receive(_nak(C1, P1, (0, 0)), 0.15)
    assert _repairs(member, mark) == []
    assert len(member.named("isMember[request]", mark)) == 1


def test_the_master_answers_is_member_with_the_age_of_what_it_knows() -> None:
    master = _master(members=(P1, C1))
    heard_c1 = master.now + 0.01
    master.receive(_nak(C1, MASTER, (0, 0)), heard_c1)  # a packet from C1
    asked = heard_c1 + 0.5
    master.receive(_is_member_request(P1, MASTER, C1), asked)
    confirms = master.named("isMember[confirm]")
    assert len(confirms) == 1
    body = confirms[0].packet.body
    assert isinstance(body, MemberConfirm)
    # §3.4.3: "the time (in milliseconds) since the information was confirmed from a reliable
    # source".
    assert body.target.connection_id == C1 and body.credibility_ms == 500
    assert confirms[0].dest == addr_of(P1) and confirms[0].packet.header.destination == P1
    master.receive(_is_member_request(P1, MASTER, P2), asked + 0.01)
    denies = master.named("isMember[deny]")
    assert len(denies) == 1
    assert isinstance(denies[0].packet.body, Tsap) and denies[0].packet.body.connection_id == P2


def test_a_member_that_cannot_vouch_for_a_target_answers_is_member_deny() -> None:
    member = joined_member(P1)
    member.receive(_is_member_request(P2, P1, C1), 0.05)
    # §2.2.2: "If the member receiving the isMember[request] cannot confirm the target's
    # membership in the web, it responds with a isMember[deny]" (unicast, like every form).
    denies = member.named("isMember[deny]")
    assert len(denies) == 1
    assert denies[0].dest == addr_of(P2) and denies[0].packet.header.destination == P2
    assert isinstance(denies[0].packet.body, Tsap) and denies[0].packet.body.connection_id == C1
    assert member.named("isMember[confirm]") == []
