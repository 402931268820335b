"""Seeking a replay to any moment gives the board the live member had then: checked against
hashes taken from the live members while a simulated session ran, against the board hashes
the members announced in their presences, and against boards rebuilt by a live Replica."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.replay.recorded import LATE, PEERS, RecordedSession, reference_board, untied
from whiteboard.board import Board, OpId
from whiteboard.presence import decode_presence, is_presence
from whiteboard.replay import (
    Keyframes,
    OpStep,
    Replay,
    StateStep,
    board_after,
    load_timeline,
    without_members,
)
from whiteboard.replay.keyframes import MAX_KEYFRAMES
from whiteboard.replay.player import MAX_CHANGES, MAX_JUMP_OBJECTS
from whiteboard.sessionlog import DeliveredRecord, LocalOpRecord, read_log

EMPTY = Board().hash()


@pytest.mark.parametrize("peer", range(PEERS))
def test_seeking_to_a_live_moment_shows_the_board_the_member_had_then(
    recorded: RecordedSession, peer: int
) -> None:
    moments = untied(recorded, peer)
    assert len(moments) >= 20
    assert len({m.board_hash for m in moments}) >= 10  # the board moved between them
    records = read_log(recorded.logs[peer]).records
    assert any(isinstance(r, DeliveredRecord) and r.late for r in records)  # late ops too
    # Keyframes every 5 steps and the moments in random order: forward and backward seeks,
    # from keyframes and from the board shown.
    replay = Replay(load_timeline(recorded.logs[peer]), spacing=5)
    random.Random(peer).shuffle(moments)
    for moment in moments:
        replay.seek(moment.t_us)
        assert replay.board.hash() == moment.board_hash, moment


@pytest.mark.parametrize("peer", range(PEERS))
def test_the_final_frame_is_the_live_end_state(recorded: RecordedSession, peer: int) -> None:
    timeline = load_timeline(recorded.logs[peer])
    replay = Replay(timeline)
    replay.seek(timeline.end_us)
    live = recorded.final_boards[peer]
    assert replay.board.hash() == live.hash()
    assert replay.board.objects() == live.objects()
    assert replay.steps_applied == len(timeline.steps)


def test_presences_in_a_log_carry_the_hash_the_replay_gives(recorded: RecordedSession) -> None:
    """A member's presences (LOCAL_OP records) hold its board hash when it sent them."""
    checked = 0
    for peer in range(PEERS):
        log = read_log(recorded.logs[peer])
        delivered_at = {
            r.t_us
            for r in log.records
            if isinstance(r, DeliveredRecord) and not is_presence(r.payload)
        }
        replay = Replay(load_timeline(recorded.logs[peer]), spacing=3)
        for record in log.records:
            if not isinstance(record, LocalOpRecord) or not is_presence(record.payload):
                continue
            if record.t_us in delivered_at:
                continue  # an op delivered in the same microsecond: before or after it?
            replay.seek(record.t_us)
            assert replay.board.hash() == decode_presence(record.payload).board.board_hash
            checked += 1
    assert checked >= 40


def test_a_late_joiners_replay_starts_from_the_board_it_was_given(
    recorded: RecordedSession,
) -> None:
    timeline = load_timeline(recorded.logs[LATE])
    states = [step for step in timeline.steps if isinstance(step, StateStep)]
    assert len(states) == 1 and len(states[0].entries) > 20
    replay = Replay(timeline)
    replay.seek(states[0].t_us - 1)
    before = replay.board.hash()
    replay.seek(states[0].t_us)
    assert replay.board.hash() != before  # the given board appeared at once
    assert len(replay.board) >= len(states[0].entries)
    replay.seek(timeline.end_us)
    assert replay.board.hash() == recorded.final_hash(LATE)
    # Without the board it was given, its log alone would not make that board.
    ops_only = [step for step in timeline.steps if isinstance(step, OpStep)]
    assert board_after(ops_only, len(ops_only)).hash() != recorded.final_hash(LATE)


@pytest.mark.parametrize("peer", [0, LATE])
def test_keyframes_give_the_board_replayed_from_the_start(
    recorded: RecordedSession, peer: int
) -> None:
    steps = load_timeline(recorded.logs[peer]).steps
    keyframes = Keyframes(steps, spacing=7)
    counts = list(range(len(steps) + 1))
    random.Random(3).shuffle(counts)
    for count in counts:
        assert keyframes.board_after(count).hash() == board_after(steps, count).hash()
    built = keyframes.counts
    assert all(b - a <= 7 for a, b in itertools.pairwise(built))
    # A keyframe right after a board given on joining: no seek rebuilds around it again.
    given = [i + 1 for i, step in enumerate(steps) if isinstance(step, StateStep)]
    assert set(given) <= set(built) and bool(given) == (peer == LATE)


def test_a_seek_reports_exactly_what_changed_on_screen(recorded: RecordedSession) -> None:
    """The canvas is told the difference rather than shown a new board: it must be exact;
    or, past a few objects or steps, told to show the board afresh."""
    timeline = load_timeline(recorded.logs[0])
    replay = Replay(timeline, spacing=4)
    times = timeline.times
    rng = random.Random(8)
    told_changes = redraws = 0
    for k in range(120):
        if k % 2:  # far, anywhere
            target = rng.randint(timeline.start_us, timeline.end_us)
        else:  # near: a few changes on
            target = times[min(len(times) - 1, replay.steps_applied + rng.randint(0, 3))]
        before = {obj.id: obj for obj in replay.board.objects()}
        applied = replay.steps_applied
        update = replay.seek(target)
        after = {obj.id: obj for obj in replay.board.objects()}
        differ = {i for i in before.keys() | after.keys() if before.get(i) != after.get(i)}
        if update is None:
            redraws += 1
            moved = abs(replay.steps_applied - applied)
            assert len(differ) > MAX_JUMP_OBJECTS or moved > MAX_CHANGES
        else:
            told_changes += 1
            told: set[OpId] = set()
            for change in update:
                told.update(change.affected)
            assert told == differ
    assert told_changes > 30 and redraws > 10


def test_every_seek_gives_what_a_live_replica_made_of_the_log(recorded: RecordedSession) -> None:
    timeline = load_timeline(recorded.logs[LATE])
    replay = Replay(timeline, spacing=6)
    rng = random.Random(5)
    for t in [timeline.start_us, timeline.end_us] + [
        rng.randint(timeline.start_us, timeline.end_us) for _ in range(15)
    ]:
        replay.seek(t)
        assert replay.board.hash() == reference_board(recorded.logs[LATE], t).hash()


def test_before_the_first_op_the_board_is_empty(recorded: RecordedSession) -> None:
    timeline = load_timeline(recorded.logs[0])
    replay = Replay(timeline)
    replay.seek(timeline.end_us)
    replay.seek(timeline.start_us - 10_000_000)  # clamped to the start
    assert replay.position_us == timeline.start_us
    assert replay.board.hash() == EMPTY and replay.steps_applied == 0


def test_keyframes_are_few_however_long_the_log(recorded: RecordedSession) -> None:
    """Memory: a long log keeps at most MAX_KEYFRAMES boards (plus one per board given on
    joining), never one per op."""
    steps = load_timeline(recorded.logs[0]).steps
    long = [s for _ in range(200) for s in steps]  # 24,000 steps (repeats are duplicates)
    keyframes = Keyframes(long)
    keyframes.build()
    assert len(keyframes.counts) <= MAX_KEYFRAMES + 1
    assert keyframes.spacing >= len(long) // MAX_KEYFRAMES


def test_hiding_nobody_keeps_every_step(recorded: RecordedSession) -> None:
    steps = load_timeline(recorded.logs[0]).steps
    assert without_members(steps, frozenset()) == list(steps)
