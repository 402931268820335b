"""The station list and the depth virtual queue (RR-2100 §2.1, §2.5), and ``Members`` (who is
heard, named, suspected, forgotten), driven alone: no core, no packets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coreapi import MemberState
from rmp.members import Members
from rmp.stations import MAX_STATIONS, Missing, StationList
from tests.rmp.core_harness import A, B, C, D, J, addr_of
from tests.rmp.parts import Context
from whiteboard.transport.events import Failure, MemberChanged


def depths(stations: StationList) -> dict[int, int]:
    return {s.ident: s.depth for s in stations}


def queue(*others: int) -> StationList:
    """Our list as a joiner builds it: ``others`` heard in this order, then joined (§2.5)."""
    stations = StationList(J)
    for ident in others:
        assert stations.add(ident, 0, 0.0) is not None
    stations.joined()
    return stations


def test_s2_5_a_new_station_goes_to_the_back_of_the_queue() -> None:
    stations = StationList(J)
    for ident in (A, B, C):
        stations.add(ident, 0, 0.0)
    assert depths(stations) == {A: 1, B: 2, C: 3} and stations.depth == 0


def test_s2_5_on_joining_our_depth_is_the_number_of_stations_plus_one() -> None:
    assert queue(A, B, C).depth == 4
    assert queue().depth == 1


def test_s2_5_a_station_added_after_joining_goes_behind_us() -> None:
    stations = queue(A, B)
    stations.add(C, 0, 1.0)
    assert depths(stations)[C] == stations.depth + 1 == 4


def test_s2_5_the_emitter_goes_to_the_front_and_those_before_it_move_back() -> None:
    stations = queue(A, B, C)  # A 1, B 2, C 3, us 4
    stations.emitted(C)
    assert depths(stations) == {A: 2, B: 3, C: 0}
    assert stations.depth == 4  # we were behind C: unmoved


def test_s2_5_our_depth_grows_when_a_station_behind_us_emits() -> None:
    stations = queue(A, B)  # A 1, B 2, us 3
    stations.add(C, 0, 1.0)  # C 4, behind us
    stations.emitted(C)
    assert stations.depth == 4 and depths(stations) == {A: 2, B: 3, C: 0}


def test_s2_5_when_we_emit_we_are_at_depth_zero_and_everyone_moves_back() -> None:
    stations = queue(A, B, C)
    stations.emitted(J)
    assert stations.depth == 0 and depths(stations) == {A: 2, B: 3, C: 4}


def test_s2_5_an_unknown_emitter_changes_nothing() -> None:
    stations = queue(A, B)
    stations.emitted(D)
    assert stations.depth == 3 and depths(stations) == {A: 1, B: 2}


def test_the_station_list_is_bounded() -> None:
    stations = StationList(J)
    for ident in range(1, MAX_STATIONS + 1):
        assert stations.add(ident, 0, 0.0) is not None
    assert stations.add(MAX_STATIONS + 1, 0, 0.0) is None and len(stations) == MAX_STATIONS


def test_removing_a_station_leaves_the_others_in_order() -> None:
    stations = queue(A, B, C)
    stations.remove(B)
    assert B not in stations and [s.ident for s in stations] == [A, C]


# -- Members --------------------------------------------------------------------------------


def members(**params: object) -> tuple[Context, Members, list[int]]:
    ctx = Context(J, **params)
    forgotten: list[int] = []
    return ctx, Members(ctx.shared, forgotten.append), forgotten


def test_a_station_heard_is_added_and_reported_with_its_address() -> None:
    ctx, part, _ = members()
    station = part.heard(A, 1.0, addr_of(A))
    assert station is not None and station.address == addr_of(A) and station.last_heard == 1.0
    assert ctx.shared.stations.get(A) is station
    assert ctx.drain() == [MemberChanged(A, MemberState.ACTIVE)]


def test_a_joining_station_is_reported_joining_then_active_when_heard_again() -> None:
    ctx, part, _ = members()
    part.heard(A, 1.0, addr_of(A), joining=True)
    again = part.heard(A, 2.0, None)
    assert again is not None and again.address == addr_of(A) and again.last_heard == 2.0
    assert ctx.drain() == [
        MemberChanged(A, MemberState.JOINING),
        MemberChanged(A, MemberState.ACTIVE),
    ]


def test_a_station_named_by_another_is_known_without_an_address() -> None:
    _, part, _ = members()
    station = part.known(B, 1.0)
    assert station is not None and station.address is None
    assert part.known(B, 5.0) is station and station.last_heard == 1.0  # named, not heard


def test_a_full_list_refuses_a_station_and_counts_it() -> None:
    ctx, part, _ = members()
    for ident in range(1, MAX_STATIONS + 1):
        ctx.shared.stations.add(ident, 0, 0.0)
    assert part.heard(0xFFFF, 1.0, None) is None
    assert ctx.shared.counters["members_refused"] == 1


def test_a_silent_station_is_suspected_then_forgotten() -> None:
    ctx, part, forgotten = members(suspect_after=20.0, forget_after=60.0)
    part.heard(A, 0.0, addr_of(A))
    assert list(part.deadlines()) == [20.0]
    part.watch(19.9)
    station = ctx.shared.stations.get(A)
    assert station is not None and station.state is MemberState.ACTIVE
    part.watch(20.0)
    assert station.state is MemberState.SUSPECTED
    assert list(part.deadlines()) == [60.0]
    part.watch(60.0)
    assert A not in ctx.shared.stations and forgotten == [A]
    assert ctx.drain()[-2:] == [
        MemberChanged(A, MemberState.SUSPECTED),
        MemberChanged(A, MemberState.LEFT),
    ]


# -- the queue kept in order is the §2.5 rule applied to every station ------------------------


class NaiveDepths:
    """§2.5 as written: every emission walks every station (the rule the ordered queue keeps)."""

    def __init__(self) -> None:
        self.own = 0
        self.others: dict[int, int] = {}

    def add(self, ident: int) -> None:
        self.others[ident] = max([self.own, *self.others.values()]) + 1

    def emitted(self, ident: int) -> None:
        if ident != J and ident not in self.others:
            return
        sender = self.own if ident == J else self.others[ident]
        self.others = {i: d + 1 if i != ident and d < sender else d for i, d in self.others.items()}
        if ident != J and sender > self.own:
            self.own += 1
        if ident == J:
            self.own = 0
        else:
            self.others[ident] = 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "emit", "remove", "join"]), st.integers(0, 9)),
        max_size=80,
    )
)
def test_s2_5_the_ordered_queue_gives_the_depths_of_the_rule(
    steps: list[tuple[str, int]],
) -> None:
    stations, naive = StationList(J), NaiveDepths()
    for action, n in steps:
        ident = J if n == 0 else A + n
        if action == "add" and ident != J and ident not in stations:
            stations.add(ident, 0, 0.0)
            naive.add(ident)
        elif action == "emit":
            stations.emitted(ident)
            naive.emitted(ident)
        elif action == "remove" and ident != J:
            stations.remove(ident)
            naive.others.pop(ident, None)
        elif action == "join":
            stations.joined()
            naive.own = len(naive.others) + 1
        assert (stations.depth, depths(stations)) == (naive.own, naive.others)
        assert stations.at_front() == all(d >= naive.own for d in naive.others.values())


def test_the_proven_stations_are_those_taken_in_sequence_and_still_listed() -> None:
    stations = queue(A, B, C)
    for ident in (A, C):
        station = stations.get(ident)
        assert station is not None
        station.accepted_any = True
    assert sorted(s.ident for s in stations.proven()) == [A, C]
    stations.remove(C)
    assert [s.ident for s in stations.proven()] == [A]


@pytest.mark.parametrize(("delivered", "announced"), [(set(), False), ({4, 6}, True)])
def test_a_stranger_forgotten_with_packets_missing_is_announced_if_any_were_delivered(
    delivered: set[int], announced: bool
) -> None:
    """Campaign seed 405 (issue 18): a station whose first packets all were lost to us, its
    later ones delivered at WI expiry (§2.3), crashed; forgotten, its missing packets were only
    counted, as a phantom's are, and two members' boards differed with neither told."""
    ctx, part, _ = members(suspect_after=20.0, forget_after=60.0)
    station = part.heard(A, 0.0, addr_of(A))
    assert station is not None and station.stranger  # none of it taken in sequence
    station.missing = {seq: Missing(0.0, 1.0) for seq in (1, 2, 3, 5)}
    station.delivered_ahead = delivered
    part.watch(60.0)
    assert ctx.shared.counters["packets_given_up"] == 4
    failures = [e for e in ctx.drain() if isinstance(e, Failure)]
    assert len(failures) == (1 if announced else 0), failures
