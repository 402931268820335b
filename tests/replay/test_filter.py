"""Hiding a member: the board as if their ops had never arrived; highlighting: a hint."""

from __future__ import annotations

import random

import pytest

from tests.replay.recorded import LATE, RecordedSession, reference_board
from whiteboard.replay import MemberFilter, Replay, highlighted_objects, load_timeline


def busiest(recorded: RecordedSession, peer: int) -> int:
    """The member with most ops in ``peer``'s log, other than ``peer`` itself."""
    timeline = load_timeline(recorded.logs[peer])
    return max((m for m in timeline.members if not m.me), key=lambda m: m.ops).member


@pytest.mark.parametrize("peer", [0, LATE])
def test_hiding_a_member_removes_exactly_their_ops(recorded: RecordedSession, peer: int) -> None:
    log = recorded.logs[peer]
    timeline = load_timeline(log)
    hidden = busiest(recorded, peer)
    replay = Replay(timeline, spacing=6)
    rng = random.Random(peer)
    moments = sorted(rng.randint(timeline.start_us, timeline.end_us) for _ in range(8))
    moments.append(timeline.end_us)
    differed = 0
    for t in moments:
        replay.set_filter(MemberFilter())
        replay.seek(t)
        everyone = replay.board.hash()
        assert everyone == reference_board(log, t).hash()
        replay.set_filter(MemberFilter(hidden=frozenset({hidden})))
        assert replay.board.hash() == reference_board(log, t, frozenset({hidden})).hash()
        assert all(obj.id.author != hidden for obj in replay.board.objects())
        assert all(op.id.author != hidden for _, op in replay.board.log())
        differed += replay.board.hash() != everyone
    assert differed >= len(moments) // 2  # the member had drawn by then, mostly


def test_a_filter_holds_while_seeking_and_lifts_back_to_the_live_board(
    recorded: RecordedSession,
) -> None:
    timeline = load_timeline(recorded.logs[0])
    hidden = busiest(recorded, 0)
    replay = Replay(timeline, spacing=5)
    replay.set_filter(MemberFilter(hidden=frozenset({hidden})))
    replay.seek(timeline.end_us)
    without = frozenset({hidden})
    assert replay.board.hash() == reference_board(recorded.logs[0], timeline.end_us, without).hash()
    middle = (timeline.start_us + timeline.end_us) // 2
    replay.seek(middle)
    assert replay.board.hash() == reference_board(recorded.logs[0], middle, without).hash()
    replay.set_filter(MemberFilter())
    replay.seek(timeline.end_us)
    assert replay.board.hash() == recorded.final_hash(0)


def test_highlighting_changes_nothing_on_the_board_and_picks_the_members_objects(
    recorded: RecordedSession,
) -> None:
    timeline = load_timeline(recorded.logs[0])
    member = busiest(recorded, 0)
    replay = Replay(timeline)
    replay.seek(timeline.end_us)
    update = replay.set_filter(MemberFilter(highlighted=frozenset({member})))
    assert update == [] and replay.board.hash() == recorded.final_hash(0)
    picked = highlighted_objects(replay.board, {member})
    assert picked and all(obj.id.author == member for obj in picked)
    assert len(picked) == sum(obj.id.author == member for obj in replay.board.objects())
    assert highlighted_objects(replay.board, ()) == []
