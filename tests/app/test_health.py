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
    but the same difference, both boards unchanged for ``settle`` seconds, is a divergence."""
    mine, health = setup()
    theirs = Board()
    for board in (mine.board, theirs):
        board.apply((1,), stroke(BOB, 1))
    theirs.apply((2,), stroke(BOB, 2))  # lost on its way to us, for good
    health.presence(BOB, presence_of("bob", theirs), mine.counts(), 10.0)
    health.check(mine.counts(), 14.9)
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
