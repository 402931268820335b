"""The pointer payload (whiteboard/pointer.py): round trip, and anything else refused cleanly."""

from __future__ import annotations

import contextlib

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from whiteboard.pointer import (
    MAX_POINTER_BYTES,
    PointerDecodeError,
    PointerKind,
    PointerPosition,
    PointerStats,
    SharedView,
    decode_pointer,
    decode_side,
    encode_pointer,
    encode_view,
    is_pointer,
)
from whiteboard.presence import encode_presence, is_presence

coords = st.floats(min_value=-1e7, max_value=1e7)


@given(
    coords,
    coords,
    st.booleans(),
    st.integers(0, 2**63 - 1),
    st.sampled_from([PointerKind.POINTER, PointerKind.LASER]),
)
def test_round_trip(x: float, y: float, visible: bool, sent_us: int, kind: PointerKind) -> None:
    position = PointerPosition(x, y, visible, sent_us, kind)
    data = encode_pointer(position)
    assert len(data) <= MAX_POINTER_BYTES and is_pointer(data)
    assert decode_pointer(data) == position


@given(st.binary(max_size=80))
def test_arbitrary_bytes_raise_only_pointer_decode_error(data: bytes) -> None:
    with contextlib.suppress(PointerDecodeError):
        decode_pointer(data)


_any = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(),
    st.text(max_size=3),
    st.binary(max_size=3),
)


@given(st.integers(0, 6), _any)
def test_a_field_replaced_decodes_or_fails_cleanly(index: int, value: object) -> None:
    item: list[object] = ["wb-pointer", 1, 1, 10.0, 20.0, True, 5]
    item[index] = value
    try:
        position = decode_pointer(msgpack.packb(item))
    except PointerDecodeError:
        return
    assert -1e7 <= position.x <= 1e7 and -1e7 <= position.y <= 1e7


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (["wb-pointer", 2, 1, 1.0, 1.0, True, 0], "version 2"),
        (["wb-pointer", 1, 4, 1.0, 1.0, True, 0], "kind 4"),  # a later version's kind
        (["wb-pointer", 1, 1, float("nan"), 1.0, True, 0], "within"),
        (["wb-pointer", 1, 1, 2e7, 1.0, True, 0], "within"),
        (["wb-pointer", 1, 1, 1.0, 1.0, 1, 0], "visible must be a bool"),
        (["wb-pointer", 1, 1, 1.0, 1.0, True, -1], "sent_us"),
        (["wb-presence", 1, 1, 1.0, 1.0, True, 0], "array"),
    ],
)
def test_what_is_wrong_is_said(item: list[object], message: str) -> None:
    with pytest.raises(PointerDecodeError, match=message):
        decode_pointer(msgpack.packb(item))


def test_a_pointer_is_not_a_presence_nor_the_reverse() -> None:
    pointer = encode_pointer(PointerPosition(1.0, 2.0, True, 3))
    assert not is_presence(pointer)
    from whiteboard.presence import BoardFingerprint, Presence

    presence = encode_presence(Presence("ann", 0xFF112233, BoardFingerprint(0, None, "0" * 64)))
    assert not is_pointer(presence)


@given(coords, coords, st.floats(0.001, 1e6), st.floats(0.001, 1e6), st.booleans(),
       st.integers(0, 2**63 - 1))  # fmt: skip
def test_a_view_round_trips_and_is_told_from_a_pointer(
    x0: float, y0: float, w: float, h: float, asks: bool, sent_us: int
) -> None:
    x1, y1 = min(x0 + w, 1e7), min(y0 + h, 1e7)
    if not (x0 < x1 and y0 < y1):
        return
    view = SharedView(x0, y0, x1, y1, asks, sent_us)
    data = encode_view(view)
    assert len(data) <= MAX_POINTER_BYTES and is_pointer(data) is False
    assert decode_side(data) == view
    pointer = PointerPosition(x0, y0, True, sent_us)
    assert decode_side(encode_pointer(pointer)) == pointer
    with pytest.raises(PointerDecodeError):
        decode_pointer(data)  # a view is no pointer


@given(st.integers(0, 8), _any)
def test_a_view_with_a_field_replaced_decodes_or_fails_cleanly(index: int, value: object) -> None:
    item: list[object] = ["wb-pointer", 1, 3, 1.0, 2.0, 30.0, 40.0, False, 5]
    item[index] = value
    try:
        view = decode_side(msgpack.packb(item))
    except PointerDecodeError:
        return
    if isinstance(view, SharedView):
        assert view.x0 < view.x1 and view.y0 < view.y1


@given(st.binary(max_size=80))
def test_decode_side_raises_only_pointer_decode_error(data: bytes) -> None:
    with contextlib.suppress(PointerDecodeError):
        decode_side(data)


def test_a_headless_member_counts_pointers_and_takes_an_apps_view_for_no_error() -> None:
    stats = PointerStats()
    stats.take(7, encode_pointer(PointerPosition(1.0, 2.0, True, 1_000)), 3_000)
    stats.take(7, encode_view(SharedView(0.0, 0.0, 9.0, 9.0, False, 0)), 3_000)
    stats.take(7, b"not a pointer", 3_000)
    report = stats.report()
    assert report["cursors_received"] == {"00000007": 1}
    assert report["cursor_latency_ms"] == {"p50": 2.0, "p90": 2.0}
    assert report["cursors_rejected"] == 1
