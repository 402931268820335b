"""The wire codec: exact round trips, and nothing but OpDecodeError on bad bytes."""

from __future__ import annotations

import math
import struct

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.board.board_strategies import any_op, ops_by_kind
from whiteboard.board import (
    MAX_OP_BYTES,
    Clear,
    Erase,
    Move,
    OpDecodeError,
    OpId,
    OpKind,
    Redo,
    Shape,
    Stroke,
    Text,
    Tool,
    Undo,
    decode_op,
    encode_op,
)
from whiteboard.board.codec import op_to_wire

FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_bits(a: object, b: object) -> bool:
    """Field-by-field equality that also tells -0.0 from 0.0 (== does not)."""
    return msgpack.packb(op_to_wire(a)) == msgpack.packb(op_to_wire(b))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(ops_by_kind))
def test_round_trip_of_every_kind(kind: str) -> None:
    @settings(max_examples=60, deadline=None)
    @given(ops_by_kind[kind])
    def check(op: object) -> None:
        data = encode_op(op)  # type: ignore[arg-type]
        decoded = decode_op(data)
        assert decoded == op
        assert type(decoded) is type(op)
        assert _same_bits(decoded, op)
        assert encode_op(decoded) == data

    check()


def test_wire_layout_is_the_documented_array() -> None:
    op = Stroke(OpId(7, 3), (1.5, 2.0, 3.0, 4.0), 0xFF112233, 2.0, Tool.MARKER)
    assert msgpack.unpackb(encode_op(op)) == [1, 7, 3, [1.5, 2.0, 3.0, 4.0], 0xFF112233, 2.0, 3]
    # Floats are float64 on the wire (0xcb), even those with an integral value.
    assert encode_op(op).count(b"\xcb") == 5
    shape = Shape(OpId(1, 2), OpKind.ARROW, 0, 1, 2, 3, 5, 1.0, 9)
    assert msgpack.unpackb(encode_op(shape)) == [5, 1, 2, 0.0, 1.0, 2.0, 3.0, 5, 1.0, 9]
    text = Text(OpId(1, 2), 10, 20, "hi", 1, 12)
    assert msgpack.unpackb(encode_op(text)) == [6, 1, 2, 10.0, 20.0, "hi", 1, 12.0]
    erase = Erase(OpId(1, 2), (OpId(3, 4), OpId(5, 6)))
    assert msgpack.unpackb(encode_op(erase)) == [7, 1, 2, [3, 4, 5, 6]]
    move = Move(OpId(1, 2), (OpId(3, 4),), -1.5, 2)
    assert msgpack.unpackb(encode_op(move)) == [8, 1, 2, [3, 4], -1.5, 2.0]
    assert msgpack.unpackb(encode_op(Clear(OpId(1, 2)))) == [9, 1, 2]
    assert msgpack.unpackb(encode_op(Undo(OpId(1, 2), OpId(1, 1)))) == [10, 1, 2, 1, 1]
    assert msgpack.unpackb(encode_op(Redo(OpId(1, 2), OpId(1, 1)))) == [11, 1, 2, 1, 1]


def test_largest_ops_fit_the_limit_and_round_trip() -> None:
    big_stroke = Stroke(OpId(2**32 - 1, 2**63 - 1), (-1e7 / 3,) * 40_000, 2**32 - 1, 500.0)
    big_erase = Erase(OpId(1, 1), tuple(OpId(2**32 - 1, 2**63 - 1 - i) for i in range(10_000)))
    big_text = Text(OpId(1, 1), 0.0, 0.0, "\U0001f600" * 10_000, 0, 1000.0)
    for op in (big_stroke, big_erase, big_text):
        data = encode_op(op)
        assert len(data) <= MAX_OP_BYTES
        assert decode_op(data) == op


def test_ints_on_the_wire_are_accepted_for_float_fields() -> None:
    # Another encoder may write 3 for 3.0; the decoded op is normalised to floats.
    data = msgpack.packb([3, 1, 1, 0, 0, 10, 10, 0, 3, 0])
    op = decode_op(data)
    assert isinstance(op, Shape)
    assert type(op.width) is float and op.width == 3.0
    assert type(op.x2) is float


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_op_decode_error(data: bytes) -> None:
    try:
        op = decode_op(data)
    except OpDecodeError as error:
        assert str(error)
    else:
        assert decode_op(encode_op(op)) == op


_msgpack_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=20,
)


@FUZZ
@given(_msgpack_values)
def test_arbitrary_msgpack_raises_only_op_decode_error(value: object) -> None:
    try:
        decode_op(msgpack.packb(value))
    except OpDecodeError as error:
        assert str(error)


@FUZZ
@given(any_op, st.data())
def test_op_with_one_field_replaced_decodes_or_fails_cleanly(
    op: object, data: st.DataObject
) -> None:
    wire = op_to_wire(op)  # type: ignore[arg-type]
    index = data.draw(st.integers(0, len(wire) - 1))
    wire[index] = data.draw(_msgpack_values)
    try:
        decoded = decode_op(msgpack.packb(wire))
    except OpDecodeError as error:
        assert str(error)
    else:
        assert decode_op(encode_op(decoded)) == decoded


@FUZZ
@given(any_op, st.data())
def test_corrupted_encodings_raise_only_op_decode_error(op: object, data: st.DataObject) -> None:
    encoded = bytearray(encode_op(op))  # type: ignore[arg-type]
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(encoded) - 1))
        encoded[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(encoded)))
    for candidate in (bytes(encoded), bytes(encoded[:cut]), bytes(encoded) + b"\x00"):
        try:
            decode_op(candidate)
        except OpDecodeError as error:
            assert str(error)


def _stroke_wire(**changes: object) -> list[object]:
    wire: dict[str, object] = {
        "kind": 1,
        "author": 4,
        "counter": 9,
        "points": [1.0, 2.0, 3.0, 4.0],
        "colour": 0xFF000000,
        "width": 2.0,
        "tool": 1,
    }
    wire.update(changes)
    return list(wire.values())


def _message(value: object) -> str:
    data = value if isinstance(value, bytes) else msgpack.packb(value)
    with pytest.raises(OpDecodeError) as caught:
        decode_op(data)
    return str(caught.value)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (_stroke_wire(width=-3), ["'width'", "> 0 and <= 500", "-3"]),
        (_stroke_wire(width=0.0), ["'width'", "> 0"]),
        (_stroke_wire(width=501.0), ["'width'", "500"]),
        (_stroke_wire(width="2"), ["'width'", "str"]),
        (_stroke_wire(width=math.nan), ["'width'", "nan"]),
        (_stroke_wire(colour=True), ["'colour'", "bool"]),
        (_stroke_wire(colour=2**32), ["'colour'", "4294967295"]),
        (_stroke_wire(colour=-1), ["'colour'"]),
        (_stroke_wire(tool=4), ["'tool'", "1..3"]),
        (_stroke_wire(tool=1.0), ["'tool'", "float"]),
        (_stroke_wire(author=0), ["'id.author'", "1..4294967295"]),
        (_stroke_wire(author=2**32), ["'id.author'"]),
        (_stroke_wire(author=False), ["'id.author'", "bool"]),
        (_stroke_wire(counter=2**63), ["'id.counter'"]),
        (_stroke_wire(counter=-1), ["'id.counter'"]),
        (_stroke_wire(points=[]), ["'points'", "got 0 numbers"]),
        (_stroke_wire(points=[1.0, 2.0, 3.0]), ["'points'", "even"]),
        (_stroke_wire(points=[0.0] * 40_002), ["'points'", "20000"]),
        (_stroke_wire(points=[1.0, 2.0, math.inf, 4.0]), ["'points[2]'", "1e7", "inf"]),
        (_stroke_wire(points=[1.0, 2.0e7]), ["'points[1]'", "1e7"]),
        (_stroke_wire(points=[1.0, None]), ["'points[1]'", "NoneType"]),
        (_stroke_wire(points=5), ["'points'", "int"]),
        (_stroke_wire(kind=42), ["'kind'", "42"]),
        (_stroke_wire(kind=0), ["'kind'"]),
        (_stroke_wire(kind=True), ["'kind'", "bool"]),
        (_stroke_wire()[:-1], ["STROKE", "7 items", "got 6"]),
        ([3, 1, 1, 0.0, 0.0, 1.0, math.nan, 0, 1.0, 0], ["'y2'", "nan"]),
        ([3, 1, 1, 0.0, 0.0, 1.0, 1.0, 0, 1.0, -5], ["'fill'"]),
        ([6, 1, 1, 0.0, 0.0, "", 0, 12.0], ["'text'", "0 characters"]),
        ([6, 1, 1, 0.0, 0.0, "x" * 10_001, 0, 12.0], ["'text'", "10001"]),
        ([6, 1, 1, 0.0, 0.0, "x", 0, 0.0], ["'font_size'", "> 0 and <= 1000"]),
        ([6, 1, 1, 0.0, 0.0, "x", 0, 1e300], ["'font_size'"]),
        ([7, 1, 1, []], ["'targets'", "got 0 numbers"]),
        ([7, 1, 1, [1, 2, 3]], ["'targets'", "got 3 numbers"]),
        ([7, 1, 1, [0, 2]], ["'targets[0].author'"]),
        ([7, 1, 1, [1, 2, 1, 2]], ["'targets'", "repeat"]),
        ([7, 1, 1, list(range(1, 20_003))], ["'targets'", "10000"]),
        ([8, 1, 1, [1, 2], 3e7, 0.0], ["'dx'", "2e7"]),
        ([8, 1, 1, [1, 2], 0.0, -math.inf], ["'dy'"]),
        ([9, 1, 1, 5], ["CLEAR", "3 items"]),
        ([10, 1, 1, 0, 5], ["'target.author'"]),
        ([11, 1, 1, 1, "5"], ["'target.counter'", "str"]),
        ({"kind": 1}, ["msgpack array"]),
        ([1, 2], ["msgpack array", "2 items"]),
        (b"\xc1", ["not valid msgpack"]),
        (b"", ["not valid msgpack"]),
        (msgpack.packb([9, 1, 1]) + b"\x00", ["trailing bytes"]),
        (msgpack.packb([9, 1, 1])[:-1], ["not valid msgpack"]),
        # A bin where an int belongs (bins pass msgpack since images' bytes travel as bins).
        (b"\x93\x09\x01\xc4\x01x", ["id.counter", "must be an int", "got bytes"]),
        (b"\x93\x09\x01\xa2\xff\xfe", ["not valid msgpack"]),  # a str that is not UTF-8
        (b"\xdd\xff\xff\xff\xff", ["not valid msgpack"]),  # a 4-billion-item array
        (b"\x00" * (MAX_OP_BYTES + 1), ["limit", str(MAX_OP_BYTES)]),
    ],
)
def test_malformed_ops_say_what_is_wrong(wire: object, expected: list[str]) -> None:
    message = _message(wire)
    for fragment in expected:
        assert fragment in message, (fragment, message)


def test_decode_rejects_non_bytes_with_op_decode_error() -> None:
    with pytest.raises(OpDecodeError, match="must be bytes"):
        decode_op("not bytes")  # type: ignore[arg-type]


def test_decode_accepts_bytearray_and_memoryview() -> None:
    op = Clear(OpId(1, 2))
    data = encode_op(op)
    assert decode_op(bytearray(data)) == op
    assert decode_op(memoryview(data)) == op


def test_float32_on_the_wire_is_a_number() -> None:
    data = (
        b"\x98\x06\x01\x01"
        + b"\xca"
        + struct.pack(">f", 1.5)
        + b"\x00\xa1x\x00\xcb"
        + struct.pack(">d", 12.0)
    )
    op = decode_op(data)
    assert isinstance(op, Text) and op.x == 1.5


def test_encode_rejects_non_ops() -> None:
    with pytest.raises(TypeError):
        encode_op("stroke")  # type: ignore[arg-type]
