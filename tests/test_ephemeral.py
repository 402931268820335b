"""The side channel's shared parts (coreapi/ephemeral.py): pacing, latest wins, bounds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coreapi.ephemeral import (
    FRESH_START_S,
    MAX_EPHEMERAL,
    RECEIVE_BURST,
    RECEIVE_RATE,
    SEND_BURST,
    SEND_RATE,
    EphemeralReceiver,
    EphemeralSender,
)


def test_a_burst_goes_out_at_once_then_the_rate_holds_and_the_latest_waits() -> None:
    sender = EphemeralSender()
    sent = [sender.offer(bytes([n]), 0.0) for n in range(20)]
    out = [o for o in sent if o is not None]
    assert len(out) == SEND_BURST  # the bucket starts full
    assert [o.seq for o in out] == list(range(1, int(SEND_BURST) + 1))
    # The rest wait one at a time, each newer one in place of the one before.
    assert sender.superseded == 20 - SEND_BURST - 1
    deadline = sender.deadline()
    assert deadline == pytest.approx(1.0 / SEND_RATE)
    assert sender.due(deadline - 1e-6) is None
    late = sender.due(deadline)
    assert late is not None and late.payload == bytes([19]) and late.seq == SEND_BURST + 1
    assert sender.deadline() is None and sender.due(10.0) is None


def test_over_a_second_a_flood_leaves_at_the_rate() -> None:
    sender = EphemeralSender()
    now, sent = 0.0, 0
    for _ in range(3_000):  # offered at 3,000 a second for a second
        if sender.offer(b"p", now) is not None:
            sent += 1
        now += 1 / 3_000
    assert sent <= SEND_BURST + SEND_RATE + 1
    assert sent >= SEND_RATE


def test_too_large_a_payload_is_the_callers_mistake() -> None:
    with pytest.raises(ValueError, match="exceeds the maximum of 512"):
        EphemeralSender().offer(b"x" * (MAX_EPHEMERAL + 1), 0.0)


def test_leaving_drops_what_waits() -> None:
    sender = EphemeralSender(rate=1.0, burst=1.0)
    assert sender.offer(b"a", 0.0) is not None
    assert sender.offer(b"b", 0.0) is None
    sender.drop_held()
    assert sender.deadline() is None and sender.due(5.0) is None


def test_the_latest_wins_and_older_ones_are_dropped() -> None:
    receiver = EphemeralReceiver()
    assert receiver.accept(7, 10, 0.0)
    assert not receiver.accept(7, 9, 0.01)  # overtaken on the way: stale
    assert not receiver.accept(7, 10, 0.02)  # a duplicate
    assert receiver.accept(7, 12, 0.03)  # a gap is fine: nothing is repaired
    assert receiver.accept(8, 3, 0.03)  # origins are apart
    assert (receiver.received, receiver.dropped) == (3, 2)


def test_numbers_wrap_modulo_2_16() -> None:
    receiver = EphemeralReceiver()
    assert receiver.accept(7, 65_535, 0.0)
    assert receiver.accept(7, 0, 0.01)
    assert receiver.accept(7, 1, 0.02)
    assert not receiver.accept(7, 65_534, 0.03)


def test_after_a_silence_an_origin_starts_afresh() -> None:
    """A member that restarted numbers from 1 again: taken once it was quiet a while."""
    receiver = EphemeralReceiver()
    assert receiver.accept(7, 30_000, 0.0)
    assert not receiver.accept(7, 1, 0.5)
    assert receiver.accept(7, 1, 0.5 + FRESH_START_S)


def test_what_one_origin_can_make_us_hand_up_is_bounded() -> None:
    receiver = EphemeralReceiver()
    taken = sum(receiver.accept(9, n, n / 10_000) for n in range(1, 10_001))  # 10,000 in 1 s
    assert taken <= RECEIVE_BURST + RECEIVE_RATE + 1
    assert receiver.dropped == 10_000 - taken


def test_the_origins_remembered_are_bounded() -> None:
    receiver = EphemeralReceiver(max_origins=4)
    for origin in range(1, 100):
        assert receiver.accept(origin, 5, 0.0)
    assert len(receiver._origins) == 4
    assert list(receiver._origins) == [96, 97, 98, 99]  # the most recently heard stay


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 2**16 - 1)), max_size=60))
def test_whatever_arrives_each_origin_hands_up_only_newer_numbers(
    arrivals: list[tuple[int, int]],
) -> None:
    receiver = EphemeralReceiver()
    last: dict[int, int] = {}
    for step, (origin, seq) in enumerate(arrivals):
        if receiver.accept(origin, seq, step * 0.001):
            if origin in last:
                assert 0 < (seq - last[origin]) % 2**16 < 2**15
            last[origin] = seq
    assert receiver.received + receiver.dropped == len(arrivals)
