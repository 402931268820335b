"""rmp/digest.py: a packet's Confirms digested once; only those that differ are read."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rmp.digest
from rmp.digest import DIGEST_FROM, digest, options_to_read
from rmp.wire import Confirm, Data, Nack, Remind, RmpPacket
from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import ScenarioConfig, run_scenario


def _packet(*options: object) -> RmpPacket:
    return RmpPacket(1, 0, tuple(options), b"x", source=99)  # type: ignore[arg-type]


def _confirms(count: int, seq: int = 7) -> list[Confirm]:
    return [Confirm(seq, source) for source in range(1, count + 1)]


def test_a_digest_splits_the_confirms_from_the_rest_in_order() -> None:
    confirms = _confirms(3)
    packet = _packet(Remind(2), *confirms, Nack(0, 4, 5), Data())
    summary = digest(packet)
    assert summary.on_wire == {1: 7, 2: 7, 3: 7}
    assert list(summary.confirms.values()) == confirms
    assert summary.place == {1: 0, 2: 1, 3: 2}
    assert summary.rest == (Remind(2), Nack(0, 4, 5), Data())
    assert summary.usable


def test_confirms_after_an_acting_option_or_twice_for_a_source_are_read_one_by_one() -> None:
    late = _packet(*_confirms(20), Nack(0, 4, 5), Confirm(3, 50), Data())
    twice = _packet(*_confirms(20), Confirm(9, 1), Data())
    for packet in (late, twice):
        assert not digest(packet).usable
        assert options_to_read(packet, {}, 1) is packet.options


def test_small_packets_are_read_as_they_are() -> None:
    packet = _packet(*_confirms(DIGEST_FROM - 2), Data())
    assert options_to_read(packet, {}, 1) is packet.options


@settings(max_examples=300, deadline=None)
@given(
    held=st.dictionaries(st.integers(1, 40), st.integers(0, 2**16 - 1), max_size=40),
    seqs=st.lists(st.integers(0, 2**16 - 1), min_size=DIGEST_FROM, max_size=40),
    agree=st.lists(st.booleans(), min_size=40, max_size=40),
    own=st.integers(1, 50),
)
def test_only_the_confirms_that_differ_are_read_and_in_their_order(
    held: dict[int, int], seqs: list[int], agree: list[bool], own: int
) -> None:
    """``own``, the reader's identifier, is never held; a Confirm of it, when the packet
    carries one (sources 1..n), is read like any other that differs."""
    held.pop(own, None)
    # Confirms for sources 1..n, some at the number held for that source.
    confirms = [
        Confirm(held[source] if agree[source - 1] and source in held else seq, source)
        for source, seq in enumerate(seqs, start=1)
    ]
    packet = _packet(Remind(0), *confirms, Nack(0, 1, 2), Data())
    before = dict(held)
    read = options_to_read(packet, held, own)
    assert held == before  # as it was (own is put in for one comparison only)
    expected = [c for c in confirms if held.get(c.source) != c.seq]
    assert list(read) == [*expected, Remind(0), Nack(0, 1, 2), Data()]


def test_a_confirm_of_the_readers_own_packets_is_read_and_the_rest_skipped() -> None:
    """The usual data packet: every Confirm at what the reader holds, but the one naming the
    reader's own last packet, which is read (how far its sender has got, §2.4)."""
    confirms = _confirms(30)
    held = {c.source: c.seq for c in confirms if c.source != 12}
    packet = _packet(*confirms, Data())
    assert list(options_to_read(packet, held, 12)) == [confirms[11], Data()]
    assert 12 not in held
    held[3] = 8  # and one that differs besides: both, in their order
    assert list(options_to_read(packet, held, 12)) == [confirms[2], confirms[11], Data()]


@pytest.mark.parametrize("loss", [0.0, 0.08])
def test_a_crowd_behaves_the_same_with_and_without_the_digest(
    loss: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digest is an optimisation and nothing else: 20 members, whose packets carry ~19
    Confirms each, give the very same result (every counter, latency and hash) read both
    ways, with and without loss."""
    config = ScenarioConfig(
        "rmp", peers=20, messages=200, seed=5, impairment=Impairment(loss=loss), settle_s=20.0
    )
    hits_before = rmp.digest.digest_once.hits
    with_digest = run_scenario(config)
    assert rmp.digest.digest_once.hits > hits_before  # the digest path was taken
    monkeypatch.setattr(rmp.digest, "DIGEST_FROM", 10**9)
    without = run_scenario(dataclasses.replace(config))
    for result in (with_digest, without):
        result.pop("wall_s")
    assert with_digest == without
    assert with_digest["complete"] and with_digest["converged"]
