"""Session health (whiteboard/app/health.py): members, their counters, and board agreement
decided from real boards' fingerprints."""

from __future__ import annotations

from whiteboard.app.health import Agreement, SessionHealth
from whiteboard.board import Board, OpId, Stroke
from whiteboard.presence import BoardFingerprint, Presence
from whiteboard.transport.interface import MemberState

ME, BOB, CY = 1, 2, 3


def stroke(author: int, counter: int, x: float = 0.0) -> Stroke:
    return Stroke(OpId(author, counter), (x, 0.0, x + 5.0, 5.0), 0xFF000000, 2.0)


class Replica:
    def __init__(self) -> None:
        self.board = Board()
        self.hashes = 0

    def fingerprint(self) -> BoardFingerprint:
        self.hashes += 1
        return BoardFingerprint.of(self.board)

    def counts(self) -> tuple[int, object]:
        return len(self.board), self.board.last_key


def presence_of(name: str, board: Board, nacks: int = 0) -> Presence:
    return Presence(name, 0xFF00FF00, BoardFingerprint.of(board), nacks, 0, 0)


def setup() -> tuple[Replica, SessionHealth]:
    mine = Replica()
    health = SessionHealth(ME, mine.fingerprint)
    health.member_changed(ME, MemberState.ACTIVE)
    health.member_changed(BOB, MemberState.ACTIVE)
    return mine, health


def test_the_same_ops_make_an_agreeing_board() -> None:
    mine, health = setup()
    theirs = Board()
    for board in (mine.board, theirs):
        board.apply((1,), stroke(BOB, 1))
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    assert health.agreeing() == [BOB] and health.differing() == []
    mine.board.apply((2,), stroke(CY, 1))
    health.board_moved()  # what we agreed on is gone
    assert health.agreeing() == []


def test_ops_in_flight_conclude_nothing_and_cost_no_hash() -> None:
    mine, health = setup()
    theirs = Board()
    theirs.apply((1,), stroke(BOB, 1))  # not here yet
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    health.check(mine.counts(), 2.0)
    assert mine.hashes == 0
    assert health.rows()[1].agreement is Agreement.UNKNOWN
    mine.board.apply((1,), stroke(BOB, 1))  # it arrives: the next check compares
    health.check(mine.counts(), 3.0)
    assert health.agreeing() == [BOB]


def test_a_replica_that_lost_an_op_for_good_is_found_once_the_session_rests() -> None:
    """Counts differ (an op never repaired): nothing is concluded while ops may be in flight,
    but the same difference, both boards unchanged for ``settle`` seconds and said again by the
    member, is a divergence. (Before issue 17 our own look ``settle`` seconds later sufficed:
    a member killed mid-drawing was then taken for a divergent one.)"""
    mine, health = setup()
    theirs = Board()
    for board in (mine.board, theirs):
        board.apply((1,), stroke(BOB, 1))
    theirs.apply((2,), stroke(BOB, 2))  # lost on its way to us, for good
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 10.0)
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 14.9)  # says it again
    assert health.differing() == []
    health.check(mine.counts(), 15.0)
    assert health.differing() == [BOB] and health.disagreements == 1
    # It arrives after all: the verdict is withdrawn, then agreement found.
    mine.board.apply((2,), stroke(BOB, 2))
    health.check(mine.counts(), 16.0)
    assert health.differing() == [] and health.agreeing() == [BOB]


def test_a_board_that_keeps_changing_is_never_called_different() -> None:
    mine, health = setup()
    theirs = Board()
    theirs.apply((1,), stroke(BOB, 1))
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    for second in range(1, 30):
        mine.board.apply((100 + second,), stroke(CY, second))  # ours moves every second
        health.check(mine.counts(), float(second))
    assert health.differing() == []


def test_equal_counts_with_different_content_is_a_divergence_after_settle() -> None:
    mine, health = setup()
    theirs = Board()
    mine.board.apply((1,), stroke(CY, 1, x=0.0))
    theirs.apply((1,), stroke(CY, 1, x=50.0))
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    assert health.differing() == []  # first look
    health.check(mine.counts(), 5.0)
    assert health.differing() == []  # bob has not said it again
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 5.0)
    assert health.differing() == [BOB] and health.disagreements == 1
    health.check(mine.counts(), 10.0)
    assert health.disagreements == 1  # counted once
    health.reset_agreement()
    assert health.differing() == []


def test_rows_show_names_counters_and_states_with_me_first() -> None:
    mine, health = setup()
    health.member_changed(CY, MemberState.LEFT)
    health.presence(BOB, presence_of("bob", Board(), nacks=4), mine.counts(), 0.0)
    own = presence_of("ada", mine.board, nacks=1)
    rows = health.rows(own)
    assert [(r.name, r.me, r.state) for r in rows] == [
        ("ada", True, MemberState.ACTIVE),
        ("bob", False, MemberState.ACTIVE),
        (f"member {CY:08x}", False, MemberState.LEFT),
    ]
    assert rows[1].nacks_sent == 4 and rows[0].nacks_sent == 1
    assert health.present() == 2 and health.name_of(BOB) == "bob"


def test_a_member_killed_while_another_draws_is_never_called_different() -> None:
    """Issue 17: bob's last presence describes a board still receiving cy's strokes; then bob
    dies. Ours goes on, comes to rest, and bob's last word is never taken for a divergence: he
    never says it again. Once his presence is stale he is not compared at all."""
    mine, health = setup()
    health.member_changed(CY, MemberState.ACTIVE)
    theirs = Board()
    for counter in range(1, 4):
        for board in (mine.board, theirs):
            board.apply((counter,), stroke(CY, counter))
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    assert health.agreeing() == [BOB]
    for counter in range(4, 10):  # cy draws on; bob is gone
        mine.board.apply((counter,), stroke(CY, counter))
        health.board_moved()
        health.check(mine.counts(), float(counter))
    for second in range(10, 120):  # at rest, checked every second for two minutes
        health.check(mine.counts(), float(second))
        assert health.differing() == []
    assert health.disagreements == 0
    assert health.rows()[1].agreement is Agreement.NOT_COMPARED


def test_suspected_and_departed_members_are_not_compared() -> None:
    mine, health = setup()
    theirs = Board()
    theirs.apply((1,), stroke(BOB, 1))
    for second in (0.0, 6.0, 12.0):  # a real, confirmed difference...
        health.presence(BOB, presence_of("bob", theirs), mine.counts(), second)
    assert health.differing() == [BOB]
    health.member_changed(BOB, MemberState.SUSPECTED)  # ...but bob is not heard from any more
    assert health.differing() == [] and health.rows()[1].agreement is Agreement.NOT_COMPARED
    health.check(mine.counts(), 13.0)
    assert health.differing() == []
    health.member_changed(BOB, MemberState.ACTIVE)  # back: compared again, from scratch
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 14.0)
    assert health.differing() == []
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 20.0)
    assert health.differing() == [BOB]
    health.member_changed(BOB, MemberState.LEFT)
    assert health.differing() == []


def test_a_presence_about_a_point_we_passed_is_compared_with_our_board_then() -> None:
    """Fingerprints compared at a common point: bob's presence describes his board at 2 ops;
    ours has 3 by the time it arrives, but we kept our fingerprint at 2: like with like."""
    mine, health = setup()
    theirs = Board()
    for counter in (1, 2):
        for board in (mine.board, theirs):
            board.apply((counter,), stroke(CY, counter))
    health.passed(BoardFingerprint.of(mine.board))
    mine.board.apply((3,), stroke(CY, 3))  # in flight to bob
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    assert health.agreeing() == [BOB] and mine.hashes == 0
    health.board_moved()  # agreement at a common point outlives our board's moves
    assert health.agreeing() == [BOB]


def test_a_checkpoint_carried_in_the_presence_is_compared_at_that_point() -> None:
    mine, health = setup()
    theirs = Board()
    for counter in (1, 2):
        for board in (mine.board, theirs):
            board.apply((counter,), stroke(CY, counter))
    checkpoint = BoardFingerprint.of(theirs)
    health.passed(BoardFingerprint.of(mine.board), checkpoint=True)
    for counter in range(3, 100):  # many presence ticks of ours since: none pushes it out
        mine.board.apply((counter,), stroke(CY, counter))
        health.passed(BoardFingerprint.of(mine.board))
    theirs.apply((200,), stroke(BOB, 1))  # bob went on; his op is not here yet
    presence = Presence("bob", 0, BoardFingerprint.of(theirs), checkpoint=checkpoint)
    health.presence(BOB, presence, mine.counts(), 0.0)
    assert health.agreeing() == [BOB]


def test_a_common_point_never_proves_a_difference() -> None:
    """RR-2100 §3: with late inserts two replicas may reach the same count and greatest key
    with different ops; their hashes then differ while both will converge. Only a difference
    with our board as it is now, confirmed at rest, is believed."""
    mine, health = setup()
    theirs = Board()
    mine.board.apply((1,), stroke(CY, 1))
    mine.board.apply((3,), stroke(CY, 3))
    theirs.apply((2,), stroke(BOB, 1))
    theirs.apply((3,), stroke(CY, 3))
    health.passed(BoardFingerprint.of(mine.board))
    mine.board.apply((2,), stroke(BOB, 1))  # bob's op, late, in its place
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 0.0)
    health.check(mine.counts(), 10.0)
    assert health.differing() == [] and health.agreeing() == []
    theirs.apply((1,), stroke(CY, 1))  # cy's, late at bob: now equal
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 11.0)
    assert health.agreeing() == [BOB]


def test_a_member_whose_presence_went_stale_is_not_compared() -> None:
    mine, health = setup()
    health.presence(BOB, presence_of("bob", mine.board), mine.counts(), 0.0)
    assert health.agreeing() == [BOB]
    health.check(mine.counts(), 30.0)
    assert health.agreeing() == [BOB]
    health.check(mine.counts(), 30.5)
    assert health.agreeing() == [] and health.rows()[1].agreement is Agreement.NOT_COMPARED


def test_rr2100_2_3_a_member_still_repairing_is_not_called_different() -> None:
    """Bob waits for a lost packet of cy's (RR-2100 §2.3: NACKed until repaired, or given up
    after WI): his board lags ours while nobody draws, but his NACK count keeps rising, so
    the op is in flight, not lost. Once he stops asking and still lags, it is lost: reported."""
    mine, health = setup()
    mine.board.apply((1,), stroke(CY, 1))
    lagging = Board()
    for second in range(0, 30, 2):
        health.presence(BOB, presence_of("bob", lagging, nacks=second), mine.counts(), second)
        assert health.differing() == []
    for second in range(30, 40, 2):  # he gave up: no more NACKs, still without cy's op
        health.presence(BOB, presence_of("bob", lagging, nacks=30), mine.counts(), second)
    assert health.differing() == [BOB]


def test_while_we_are_repairing_a_difference_is_not_believed() -> None:
    nacks = [0]
    mine = Replica()
    health = SessionHealth(ME, mine.fingerprint, repairs=lambda: nacks[0])
    health.member_changed(BOB, MemberState.ACTIVE)
    ahead = Board()
    ahead.apply((1,), stroke(CY, 1))  # we lack it, and keep asking for it
    for second in range(0, 30, 2):
        nacks[0] = second
        health.presence(BOB, presence_of("bob", ahead), mine.counts(), second)
        assert health.differing() == []


def test_out_of_reach_nobody_is_active_and_nobody_compared() -> None:
    """Issue 17: an MTP member rejoining after its host died still listed the host as active
    and said the boards agreed. Reconnecting: the others are not heard from; ended: all left."""
    mine, health = setup()
    health.presence(BOB, presence_of("bob", mine.board), mine.counts(), 0.0)
    assert health.agreement_text()[0] == "✓ boards agree"
    health.out_of_reach(ended=False)
    assert [r.state for r in health.rows()] == [MemberState.ACTIVE, MemberState.SUSPECTED]
    assert health.agreement_text() == ("", "") and health.present() == 2
    health.out_of_reach(ended=True)
    assert [r.state for r in health.rows()] == [MemberState.LEFT, MemberState.LEFT]
    assert health.present() == 0
