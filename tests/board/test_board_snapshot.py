"""Snapshots: the full ordered log, loadable by a joiner that then keeps converging."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.board.board_strategies import board_of, reference_objects, scenarios, shown
from whiteboard.board import Board, Clear, OpId, SnapshotError, Stroke, Undo
from whiteboard.board.codec import op_to_wire

SNAPSHOTS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def stroke(author: int, counter: int) -> Stroke:
    return Stroke(OpId(author, counter), (1.0, 2.0, 3.0, 4.5), 0xFF000000, 2.0)


def test_empty_board_round_trip() -> None:
    board = Board.from_snapshot(Board().snapshot())
    assert len(board) == 0 and board.hash() == Board().hash()


def test_snapshot_layout() -> None:
    board = Board()
    board.apply((2, 1), Clear(OpId(1, 2)))
    board.apply((1, 5), stroke(1, 1))
    assert msgpack.unpackb(board.snapshot()) == [
        "whiteboard-board",
        1,
        [[[1, 5], [1, 1, 1, [1.0, 2.0, 3.0, 4.5], 0xFF000000, 2.0, 1]], [[2, 1], [9, 1, 2]]],
    ]


@SNAPSHOTS
@given(scenarios())
def test_round_trip_keeps_log_state_and_hash(log: list) -> None:
    board = board_of(log)
    loaded = Board.from_snapshot(board.snapshot())
    assert loaded.log() == board.log()
    assert loaded.objects() == board.objects()
    assert loaded.hash() == board.hash()
    assert len(loaded) == len(board) and loaded.last_key == board.last_key
    assert loaded.snapshot() == board.snapshot()


@SNAPSHOTS
@given(st.data())
def test_joiner_from_snapshot_converges_with_a_replica_that_never_snapshotted(
    data: st.DataObject,
) -> None:
    log = data.draw(scenarios())
    arrival = data.draw(st.permutations(log))
    cut = data.draw(st.integers(0, len(arrival)))
    veteran = board_of(arrival)
    # The joiner gets a snapshot of what one peer had, then the rest, including ops whose keys
    # fall before the snapshot point (late inserts below it) and some it already has.
    joiner = Board.from_snapshot(board_of(arrival[:cut]).snapshot())
    overlap = data.draw(st.integers(0, cut))
    for key, op in arrival[cut - overlap :]:
        joiner.apply(key, op)
    assert joiner.hash() == veteran.hash()
    assert joiner.objects() == veteran.objects()
    assert shown(joiner.objects()) == shown(reference_objects(log))
    assert joiner.log() == veteran.log()


def test_joiner_can_undo_before_the_snapshot_point() -> None:
    board = Board()
    board.apply((1,), stroke(1, 1))
    board.apply((2,), Clear(OpId(2, 1)))
    joiner = Board.from_snapshot(board.snapshot())
    assert joiner.objects() == []
    change = joiner.apply((3,), Undo(OpId(2, 2), OpId(2, 1)))
    assert change.added == (OpId(1, 1),)


def _message(data: bytes) -> str:
    with pytest.raises(SnapshotError) as caught:
        Board.from_snapshot(data)
    return str(caught.value)


def _snapshot(*entries: object, magic: object = "whiteboard-board", version: object = 1) -> bytes:
    return msgpack.packb([magic, version, list(entries)])


GOOD = op_to_wire(stroke(1, 1))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", ["empty"]),
        (b"\xc1", ["not valid msgpack"]),
        (msgpack.packb([1, 2, 3]), ["not a board snapshot"]),
        (msgpack.packb({"a": 1}), ["not a board snapshot"]),
        (_snapshot(magic="whiteboard-bored"), ["not a board snapshot"]),
        (_snapshot(version=2), ["unsupported snapshot version 2", "reads 1"]),
        (_snapshot(version="1"), ["version must be an int"]),
        (msgpack.packb(["whiteboard-board", 1, 5]), ["log must be an array"]),
        (_snapshot([[1], GOOD], [2]), ["snapshot entry 1", "[order_key, op, proof?]"]),
        (_snapshot([[1], GOOD, 7]), ["snapshot entry 0", "proof must be bytes"]),
        (_snapshot([[1], GOOD, bytes(257)]), ["entry 0", "proof of 257 bytes"]),
        (_snapshot([[1.5], GOOD]), ["snapshot entry 0", "order key"]),
        (_snapshot([[], GOOD]), ["snapshot entry 0", "order key"]),
        (_snapshot([[1], GOOD], [[2], [1, 1, 2, [0.0, 0.0], 0, -3.0, 1]]), ["entry 1", "'width'"]),
        (_snapshot([[1], [42, 1, 1]]), ["entry 0", "'kind'"]),
        (_snapshot([[2], GOOD], [[1], [9, 1, 2]]), ["entry 1", "out of order"]),
        (_snapshot([[1], GOOD], [[2], GOOD]), ["entry 1", "repeats op id 1:1"]),
        (_snapshot() + b"\x00", ["not valid msgpack"]),
    ],
)
def test_corrupt_snapshots_say_what_is_wrong(data: bytes, expected: list[str]) -> None:
    message = _message(data)
    for fragment in expected:
        assert fragment in message, (fragment, message)


def test_from_snapshot_rejects_non_bytes() -> None:
    with pytest.raises(SnapshotError, match="must be bytes"):
        Board.from_snapshot(None)  # type: ignore[arg-type]


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes_raise_only_snapshot_error(data: bytes) -> None:
    try:
        Board.from_snapshot(data)
    except SnapshotError as error:
        assert str(error)


@FUZZ
@given(scenarios(max_ops=8), st.data())
def test_damaged_snapshots_raise_only_snapshot_error(log: list, data: st.DataObject) -> None:
    snapshot = bytearray(board_of(log).snapshot())
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(snapshot) - 1))
        snapshot[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(snapshot)))
    for candidate in (bytes(snapshot), bytes(snapshot[:cut])):
        try:
            board = Board.from_snapshot(candidate)
        except SnapshotError as error:
            assert str(error)
        else:
            # A flip that still parses (a coordinate, a colour) is a valid, different log.
            assert Board.from_snapshot(board.snapshot()).hash() == board.hash()
