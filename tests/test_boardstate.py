"""The board state as the cores carry it (coreapi/boardstate.py, issue 18): packed smaller for a
real board, and unpacked at a trust boundary: anything but a good stream is refused with a
StateFormatError that says why, and memory stays within the claimed length, whatever a stream
would inflate to."""

from __future__ import annotations

import random
import struct
import tracemalloc
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coreapi.boardstate import (
    DEFLATE_MAX_RATIO,
    StateFormat,
    StateFormatError,
    pack_state,
    unpack_state,
)
from tests.fuzzing import mutated
from whiteboard.board import Board
from whiteboard.board.synthetic import synthetic_stroke

LIMIT = 1 << 20
MIB = 1 << 20
FUZZ = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def stroke_board(strokes: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    board = Board()
    for i in range(strokes):
        board.apply((10 * (i + 1),), synthetic_stroke(1 + i % 5, i + 1, rng))
    return board.snapshot()


def bomb(inflated: int, claimed: int) -> bytes:
    """A packed state that claims ``claimed`` bytes and inflates to ``inflated`` zeros."""
    inflater = zlib.compressobj(9)
    chunk = bytes(MIB)
    stream = b"".join(inflater.compress(chunk) for _ in range(inflated // MIB))
    return struct.pack("!I", claimed) + stream + inflater.flush()


def test_a_board_of_strokes_packs_to_well_under_half_and_back() -> None:
    snapshot = stroke_board(1000)
    packed = pack_state(snapshot)
    assert len(packed) < 0.45 * len(snapshot), (len(packed), len(snapshot))
    assert unpack_state(StateFormat.ZLIB, packed, len(snapshot)) == snapshot
    assert Board.from_snapshot(unpack_state(StateFormat.ZLIB, packed, LIMIT)).hash() == (
        Board.from_snapshot(snapshot).hash()
    )


def test_an_unpacked_state_from_an_older_member_is_taken_as_is() -> None:
    assert unpack_state(StateFormat.RAW, b"board", LIMIT) == b"board"
    with pytest.raises(StateFormatError, match="over 4"):
        unpack_state(StateFormat.RAW, b"board", 4)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: p[:-10], "cut short"),
        (lambda p: p + b"extra", "after its end"),
        (lambda p: p[:4] + bytes([p[4] ^ 0xFF]) + p[5:], "corrupt"),
        (lambda p: p[:2], "shorter than its header"),
        (lambda p: struct.pack("!I", 999) + p[4:], "inflates past|not the 999"),
    ],
)
def test_a_damaged_state_is_refused_with_a_reason(damage: object, message: str) -> None:
    packed = pack_state(stroke_board(50))
    with pytest.raises(StateFormatError, match=message):
        unpack_state(StateFormat.ZLIB, damage(packed), LIMIT)  # type: ignore[operator]


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(StateFormatError, match="format 7"):
        unpack_state(7, pack_state(b"x"), LIMIT)


def test_a_claim_over_the_limit_is_refused_before_inflating() -> None:
    with pytest.raises(StateFormatError, match="over"):
        unpack_state(StateFormat.ZLIB, pack_state(bytes(2000)), 1000)


def test_a_claim_beyond_what_deflate_can_make_is_refused() -> None:
    packed = struct.pack("!I", 100 * DEFLATE_MAX_RATIO) + zlib.compress(b"x")
    with pytest.raises(StateFormatError, match="more than deflate can make"):
        unpack_state(StateFormat.ZLIB, packed, 1 << 30)


def test_a_decompression_bomb_is_cut_at_its_claim_without_allocating_what_it_holds() -> None:
    """64 MiB of zeros in ~64 KB, claiming 1 MiB: refused, and the unpacking never holds more
    than a few MiB (an unbounded zlib.decompress would allocate the 64)."""
    packed = bomb(64 * MIB, MIB)
    assert len(packed) < 100_000
    tracemalloc.start()
    try:
        with pytest.raises(StateFormatError, match="inflates past"):
            unpack_state(StateFormat.ZLIB, packed, 256 * MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB, f"unpacking a bomb peaked at {peak / MIB:.1f} MiB"


@FUZZ
@given(st.integers(0, 3), st.binary(max_size=300))
def test_arbitrary_bytes_unpack_or_raise_the_documented_error(form: int, data: bytes) -> None:
    try:
        state = unpack_state(form, data, 4096)
    except StateFormatError:
        return
    assert len(state) <= 4096


packed_states = st.binary(max_size=400).map(pack_state)


@FUZZ
@given(mutated(packed_states))
def test_mutated_packed_states_unpack_or_raise_the_documented_error(data: bytes) -> None:
    try:
        state = unpack_state(StateFormat.ZLIB, data, 4096)
    except StateFormatError:
        return
    assert len(state) <= 4096
