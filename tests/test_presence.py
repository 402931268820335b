"""Presence payloads (whiteboard/presence.py): round trips, telling them from ops, hostile
bytes, and the replica keeping them apart from the board."""

from __future__ import annotations

import contextlib
import itertools
import math

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.board.board_strategies import any_op
from whiteboard.board import Board, Op, OpId, Stroke, encode_op
from whiteboard.presence import (
    MAX_NAME,
    MEMBER_COLOURS,
    BoardFingerprint,
    Presence,
    PresenceDecodeError,
    PresenceSchedule,
    decode_presence,
    default_colour,
    encode_presence,
    is_checkpoint,
    is_presence,
    yields_colour,
)
from whiteboard.replica import MAX_PRESENCES, Replica
from whiteboard.transport.events import Delivered


class NoState:
    def provide_board_state(self, request: int, state: bytes) -> None:
        raise AssertionError("no board state was asked for")


def delivered(origin: int, payload: bytes, key: tuple[int, ...] = (1,)) -> Delivered:
    return Delivered(origin, key, 0.0, payload, False, 0.0)


def stroke(author: int, counter: int) -> Stroke:
    return Stroke(OpId(author, counter), (1.0, 2.0, 3.0, 4.0), 0xFF000000, 2.0)


def board_with(*ops: Op) -> Board:
    board = Board()
    for key, op in enumerate(ops, start=1):
        board.apply((key,), op)
    return board


FINGERPRINTS = st.builds(
    BoardFingerprint,
    ops=st.integers(0, 2**63 - 1),
    last_key=st.none()
    | st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=16).map(tuple),
    board_hash=st.binary(min_size=32, max_size=32).map(bytes.hex),
)

PRESENCES = st.builds(
    Presence,
    name=st.text(min_size=1, max_size=MAX_NAME),
    colour=st.integers(0, 0xFFFFFFFF),
    board=FINGERPRINTS,
    nacks_sent=st.integers(0, 2**63 - 1),
    retransmissions=st.integers(0, 2**63 - 1),
    late_delivered=st.integers(0, 2**63 - 1),
    checkpoint=st.none() | FINGERPRINTS,
    colour_chosen=st.booleans(),
)


@given(PRESENCES)
def test_every_presence_round_trips_and_is_told_from_ops(presence: Presence) -> None:
    payload = encode_presence(presence)
    assert is_presence(payload)
    assert decode_presence(payload) == presence


@given(any_op)
def test_no_op_is_taken_for_a_presence(op: Op) -> None:
    assert not is_presence(encode_op(op))


@given(st.binary(max_size=600))
def test_arbitrary_bytes_raise_only_presence_decode_error(data: bytes) -> None:
    with contextlib.suppress(PresenceDecodeError):
        decode_presence(data)


@given(PRESENCES, st.data())
def test_corrupted_presences_decode_or_fail_cleanly(
    presence: Presence, data: st.DataObject
) -> None:
    payload = bytearray(encode_presence(presence))
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(payload) - 1))
        payload[index] = data.draw(st.integers(0, 255))
    with contextlib.suppress(PresenceDecodeError):
        decode_presence(bytes(payload))


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (["wb-presence", 3, "a", 0, 0, [], bytes(32), 0, 0, 0], "unsupported presence version 3"),
        (["wb-presence", 2, "a", 0, 0, [], bytes(32), 0, 0, 0], "not a presence array of version"),
        (
            ["wb-presence", 2, "a", 0, 0, [], bytes(32), 0, 0, 0, [1], False],
            "checkpoint must be nil",
        ),
        (["wb-presence", 1, "", 0, 0, [], bytes(32), 0, 0, 0], "name must be 1-40 characters"),
        (["wb-presence", 1, "a", 0, 0, [], bytes(31), 0, 0, 0], "wrong type"),
        (["wb-presence", 1, "a", -1, 0, [], bytes(32), 0, 0, 0], "colour must be a 32-bit"),
        (["wb-presence", 1, "a", 0, 0, [1.5], bytes(32), 0, 0, 0], "last key must be an array"),
        (["wb-presence", 1, "a", 0, True, [], bytes(32), 0, 0, 0], "counters must be ints"),
        (["wb-presence", 1, "a", 0, 0, [], bytes(32), 0, 0], "not a presence array"),
    ],
)
def test_malformed_presences_say_what_is_wrong(item: list[object], message: str) -> None:
    with pytest.raises(PresenceDecodeError, match=message):
        decode_presence(msgpack.packb(item, use_bin_type=True))


def test_a_version_1_presence_still_decodes_without_a_checkpoint() -> None:
    item = ["wb-presence", 1, "ada", 0xFF336699, 1, [7], bytes(32), 2, 3, 4]
    presence = decode_presence(msgpack.packb(item, use_bin_type=True))
    assert presence == Presence("ada", 0xFF336699, BoardFingerprint(1, (7,), "00" * 32), 2, 3, 4)
    assert presence.checkpoint is None


def test_checkpoints_are_the_same_counts_everywhere_and_thin_out_as_the_board_grows() -> None:
    points = [ops for ops in range(0, 70_000) if is_checkpoint(ops)]
    assert points[:5] == [256, 512, 768, 1024, 1536]
    assert 0 not in points and 65_536 in points
    # Past 1,024 ops, two checkpoints each time the board doubles: hashing the board at each
    # stays a bounded share of the work of applying its ops.
    assert all(b - a <= max(256, a // 2) for a, b in itertools.pairwise(points))
    assert sum(1 for ops in points if 32_768 <= ops < 65_536) == 2


def test_the_fingerprint_compares_boards_only_when_they_applied_the_same_ops() -> None:
    a, b = stroke(1, 1), stroke(2, 1)
    one = BoardFingerprint.of(board_with(a))
    two = BoardFingerprint.of(board_with(a, b))
    assert not one.comparable(two)  # b is still on its way to the first
    same = BoardFingerprint.of(board_with(a, b))
    assert two.comparable(same) and two.board_hash == same.board_hash
    assert BoardFingerprint.of(Board()).last_key is None


def test_the_replica_keeps_presences_off_the_board() -> None:
    replica = Replica()
    presence = Presence("ada", 0xFF336699, BoardFingerprint.of(Board()), 2, 5, 1)
    got = replica.handle(delivered(7, encode_presence(presence)), NoState())
    assert got == presence and replica.presence == {7: presence}
    assert len(replica.board) == 0 and replica.stats.rejected == 0
    assert replica.stats.presences == 1
    # An op still goes to the board.
    replica.handle(delivered(7, encode_op(stroke(7, 1)), (2,)), NoState())
    assert len(replica.board) == 1


def test_a_bad_presence_is_counted_and_described_not_raised() -> None:
    replica = Replica()
    bad = msgpack.packb(["wb-presence", 1, "", 0, 0, [], bytes(32), 0, 0, 0], use_bin_type=True)
    assert replica.handle(delivered(9, bad), NoState()) is None
    assert replica.stats.rejected == 1 and replica.presence == {}
    assert "presence from member 00000009 is unusable" in replica.last_rejection


def test_presences_of_more_members_than_the_cap_are_not_kept() -> None:
    replica = Replica()
    payload = encode_presence(Presence("x", 0, BoardFingerprint.of(Board())))
    for origin in range(1, MAX_PRESENCES + 50):
        replica.handle(delivered(origin, payload), NoState())
    assert len(replica.presence) == MAX_PRESENCES


# -- default colours and when to send ------------------------------------------------------------


def _cielab(argb: int) -> tuple[float, float, float]:
    """sRGB (D65) to CIELAB, as CIE 15 gives it."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear((argb >> shift) & 0xFF) for shift in (16, 8, 0))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def test_default_colours_are_twelve_that_tell_people_apart() -> None:
    assert len(set(MEMBER_COLOURS)) == len(MEMBER_COLOURS) >= 12
    lab = [_cielab(c) for c in MEMBER_COLOURS]
    # CIE76 delta E: about 2 is just noticeable, 30 is a plainly different colour.
    closest = min(math.dist(a, b) for a, b in itertools.combinations(lab, 2))
    assert closest >= 30
    # Each stands out on the white board (L*=100, a*=b*=0).
    assert min(math.dist(c, (100.0, 0.0, 0.0)) for c in lab) >= 50
    assert all(c >> 24 == 0xFF for c in MEMBER_COLOURS)  # opaque


def test_default_colour_comes_from_the_member_id_and_skips_colours_in_use() -> None:
    assert default_colour(0x7929DB00) == MEMBER_COLOURS[0x7929DB00 % len(MEMBER_COLOURS)]
    # Members joining one after another, each hearing the others first, never share one.
    taken: list[int] = []
    for member in (5, 5 + 12, 5 + 24, 7, 100, 3, 2**31, 9, 11, 0, 1, 4):
        colour = default_colour(member, taken)
        assert colour not in taken
        taken.append(colour)
    assert set(taken) == set(MEMBER_COLOURS)
    # With every colour taken, its own place's.
    assert default_colour(5, MEMBER_COLOURS) == MEMBER_COLOURS[5]


def test_of_two_members_with_one_colour_exactly_one_moves() -> None:
    assert yields_colour(9, 4) != yields_colour(4, 9)


def test_a_presence_is_due_at_once_then_on_change_then_when_idle() -> None:
    board = BoardFingerprint(0, None, "0" * 64)
    ada = Presence("ada", MEMBER_COLOURS[0], board)
    schedule = PresenceSchedule(idle_s=10.0)
    assert schedule.is_due(ada, 0.0)  # the first payload on becoming ready
    schedule.sent(ada, 0.0)
    assert not schedule.is_due(ada, 2.0)
    assert schedule.is_due(Presence("ada", MEMBER_COLOURS[1], board), 2.0)  # colour changed
    assert schedule.is_due(Presence("ada", MEMBER_COLOURS[0], board, nacks_sent=1), 2.0)
    assert schedule.is_due(ada, 10.0)  # idle, but newcomers must learn names
    schedule.due = True  # a newcomer was seen
    assert schedule.is_due(ada, 3.0)


def test_a_chosen_colour_travels_with_the_presence_and_older_presences_read_as_defaults() -> None:
    board = BoardFingerprint(0, None, "0" * 64)
    chosen = Presence("cy", 0xFF123456, board, colour_chosen=True)
    assert decode_presence(encode_presence(chosen)).colour_chosen
    older = msgpack.packb(
        ["wb-presence", 1, "ann", MEMBER_COLOURS[0], 0, [], bytes(32), 0, 0, 0], use_bin_type=True
    )
    assert decode_presence(older).colour_chosen is False
    not_a_bool = ["wb-presence", 2, "ann", MEMBER_COLOURS[0], 0, [], bytes(32), 0, 0, 0, None]
    with pytest.raises(PresenceDecodeError, match="colour_chosen must be a bool"):
        decode_presence(msgpack.packb([*not_a_bool, "yes"], use_bin_type=True))
    # A default colour always moves off a chosen one.
    assert yields_colour(1, 9, other_chose=True)
