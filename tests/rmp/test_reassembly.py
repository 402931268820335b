"""The reassembler (rmp/reassembly.py, issue 20): a run of pieces becomes one payload, delivered
whole or not at all; malformed runs are refused once, counted, and never raise; memory is
bounded per source and in total."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmp.fragment import MAX_MESSAGE, MAX_PIECES, piece_problem, piece_size, split_message
from rmp.reassembly import MAX_DEAD_RUNS, Reassembler

A, B = 0xA1, 0xB2


class Told:
    """A reassembler and the failures it reported."""

    def __init__(self, per_source: int = MAX_MESSAGE, total: int = 32 << 20) -> None:
        self.reasons: list[str] = []
        self.r = Reassembler(self.reasons.append, per_source, total)

    def run(self, source: int, first: int, pieces: list[bytes]) -> list[bytes | None]:
        count = len(pieces)
        return [
            self.r.add(source, (first + i) & 0xFFFF, i, count, p) for i, p in enumerate(pieces)
        ]


def test_a_run_is_delivered_once_whole_on_its_last_piece() -> None:
    t = Told()
    payload = bytes(range(256)) * 20
    pieces = split_message(payload, 1000)
    assert len(pieces) == 6
    out = t.run(A, 10, pieces)
    assert out[:-1] == [None] * 5 and out[-1] == payload
    assert t.r.runs == {} and t.r.held == 0 and t.reasons == []
    assert t.r.messages_refused == 0


def test_runs_of_two_sources_interleave_and_wrap_the_sequence_space() -> None:
    t = Told()
    a, b = split_message(b"a" * 3000, 1000), split_message(b"b" * 2500, 1000)
    got = []
    for i in range(3):
        got.append(t.r.add(A, (0xFFFE + i) & 0xFFFF, i, 3, a[i]))
        got.append(t.r.add(B, 7 + i, i, 3, b[i]))
    assert got[-2:] == [b"a" * 3000, b"b" * 2500]
    assert t.reasons == []


def test_a_piece_out_of_order_refuses_the_run_once() -> None:
    t = Told()
    assert t.r.add(A, 100, 0, 4, b"x") is None
    assert t.r.add(A, 102, 2, 4, b"z") is None  # piece 1 missing (delivered at WI expiry)
    assert t.r.add(A, 103, 3, 4, b"w") is None
    assert t.r.add(A, 101, 1, 4, b"y") is None  # ... arriving late
    assert len(t.reasons) == 1 and "piece 2 came where piece 1 was due" in t.reasons[0]
    assert t.r.messages_refused == 1 and t.r.pieces_dropped == 4
    assert t.r.runs == {} and t.r.held == 0
    # The next run is taken as usual.
    assert t.run(A, 104, [b"1", b"2"])[-1] == b"12"


def test_a_count_that_changes_refuses_the_run() -> None:
    t = Told()
    t.r.add(A, 5, 0, 3, b"x")
    assert t.r.add(A, 6, 1, 4, b"y") is None
    assert "has 4 pieces, the run began with 3" in t.reasons[0]
    assert t.r.held == 0


def test_a_packet_that_is_not_a_piece_cuts_an_open_run() -> None:
    t = Told()
    t.r.add(A, 5, 0, 3, b"x")
    t.r.cut(A, 4)  # an older packet (delivered late): no harm to the run
    t.r.cut(B, 9)  # another source's
    assert t.r.runs and not t.reasons
    t.r.cut(A, 6)
    assert not t.r.runs and "not one of its pieces" in t.reasons[0]
    assert t.r.add(A, 7, 2, 3, b"z") is None  # its remaining piece: dropped, not told again
    assert len(t.reasons) == 1 and t.r.pieces_dropped == 2


def test_a_new_run_cuts_an_open_one() -> None:
    t = Told()
    t.r.add(A, 5, 0, 3, b"x")
    assert t.run(A, 6, [b"p", b"q"])[-1] == b"pq"
    assert len(t.reasons) == 1 and "cut by a piece of another message" in t.reasons[0]


def test_a_run_without_its_start_is_dropped_and_told_once() -> None:
    # A joiner whose image holds the first pieces as history, or a first piece given up.
    t = Told()
    assert [t.r.add(A, 50 + i, i, 6, b"x") for i in range(2, 6)] == [None] * 4
    assert len(t.reasons) == 1 and "first 2 piece(s)" in t.reasons[0]
    assert t.r.messages_refused == 1 and t.r.pieces_dropped == 4 and not t.r.runs


def test_a_given_up_piece_ends_its_run_but_not_a_later_packet() -> None:
    t = Told()
    t.r.add(A, 10, 0, 3, b"x")
    t.r.skipped(A, 20)  # beyond the run's last piece (12): not one of its pieces
    t.r.skipped(A, 9)
    assert t.r.runs and not t.reasons
    t.r.skipped(A, 11)
    assert not t.r.runs and "given up" in t.reasons[0]


def test_a_source_that_leaves_frees_its_run() -> None:
    t = Told()
    t.r.add(A, 10, 0, 3, b"x" * 100)
    t.r.forget(B)
    assert t.r.held == 100
    t.r.forget(A, "its member left")
    assert t.r.held == 0 and not t.r.runs and "its member left" in t.reasons[0]


def test_per_source_and_total_bounds() -> None:
    t = Told(per_source=250, total=400)
    t.r.add(A, 0, 0, 4, b"x" * 100)
    t.r.add(A, 1, 1, 4, b"x" * 100)
    assert t.r.add(A, 2, 2, 4, b"x" * 100) is None
    assert "exceeds 250 bytes" in t.reasons[0] and t.r.held == 0
    t.r.add(A, 10, 0, 3, b"a" * 200)
    t.r.add(B, 10, 0, 3, b"b" * 150)
    assert t.r.add(B, 11, 1, 3, b"b" * 100) is None  # 450 held would exceed 400
    assert "the most is 400" in t.reasons[1]
    assert t.r.held == 200 and set(t.r.runs) == {A}


def test_dead_runs_remembered_are_bounded() -> None:
    t = Told()
    for source in range(1, MAX_DEAD_RUNS + 50):
        t.r.add(source, 9, 3, 5, b"x")
    assert len(t.r._dead) == MAX_DEAD_RUNS


def test_the_wire_rules_of_a_piece() -> None:
    assert piece_problem(0, 2, False, 10) is None
    assert piece_problem(1, 2, True, 1) is None
    assert "not 2..4096" in str(piece_problem(0, 1, True, 10))
    assert "not 2..4096" in str(piece_problem(0, MAX_PIECES + 1, False, 10))
    assert "numbered from 0 to 2" in str(piece_problem(3, 3, False, 10))
    assert "S bit (1)" in str(piece_problem(0, 3, True, 10))
    assert "S bit (0)" in str(piece_problem(2, 3, False, 10))
    assert "empty data part" in str(piece_problem(0, 3, False, 0))


def test_pieces_fill_a_packet_and_the_largest_message_fits_the_piece_count() -> None:
    assert piece_size(1448) == 1404  # the default max_datagram, 1,472 less 24
    smallest = piece_size(1300 - 24)  # the smallest max_datagram allowed (rmp/params.py)
    assert len(split_message(bytes(MAX_MESSAGE), smallest)) <= MAX_PIECES
    assert len(split_message(bytes(1201), 1404)) == 2  # over max_payload: never one piece
    assert b"".join(split_message(bytes(range(256)) * 9, 700)) == bytes(range(256)) * 9


# -- fuzz: random piece sequences, as a peer (or a bad network) might make them ---------------

piece_steps = st.lists(
    st.tuples(
        st.sampled_from([A, B, 0xC3]),
        st.integers(0, 0xFFFF),  # seq
        st.integers(0, 40),  # index
        st.integers(0, 40),  # count
        st.integers(0, 3000),  # size
        st.sampled_from(["add", "add", "add", "cut", "skip", "forget"]),
    ),
    max_size=120,
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece_steps)
def test_random_piece_sequences_never_raise_and_stay_bounded(steps: list[tuple]) -> None:
    t = Told(per_source=20_000, total=30_000)
    for source, seq, index, count, size, action in steps:
        if action == "add":
            whole = t.r.add(source, seq, index, count, bytes(size))
            if whole is not None:
                assert index == count - 1 and len(whole) <= 20_000
        elif action == "cut":
            t.r.cut(source, seq)
        elif action == "skip":
            t.r.skipped(source, seq)
        else:
            t.r.forget(source)
        assert 0 <= t.r.held <= 30_000
        assert t.r.held == sum(run.size for run in t.r.runs.values())
        assert all(run.size <= 20_000 for run in t.r.runs.values())
    assert len(t.reasons) == t.r.messages_refused


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 30), st.integers(0, 0xFFFF), st.data())
def test_a_run_with_one_fault_is_never_delivered_in_part(count: int, first: int, data) -> None:
    """One piece dropped, repeated or swapped: the run is refused, or delivered whole and right."""
    t = Told()
    payload = bytes(i & 0xFF for i in range(count * 7))
    pieces = [((first + i) & 0xFFFF, i, payload[i * 7 : i * 7 + 7]) for i in range(count)]
    fault = data.draw(st.sampled_from(["drop", "repeat", "swap"]))
    at = data.draw(st.integers(0, count - 2))
    if fault == "drop":
        del pieces[at]
    elif fault == "repeat":
        pieces.insert(at, pieces[at])
    else:
        pieces[at], pieces[at + 1] = pieces[at + 1], pieces[at]
    out = [t.r.add(A, seq, i, count, p) for seq, i, p in pieces]
    delivered = [o for o in out if o is not None]
    assert delivered in ([], [payload])
    assert not delivered and t.r.messages_refused == 1 and len(t.reasons) == 1
    assert not t.r.runs and t.r.held == 0
