"""Op records validate and normalise themselves on construction."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whiteboard.board import (
    Clear,
    Erase,
    InvalidOpError,
    Move,
    OpId,
    OpKind,
    Redo,
    Shape,
    Stroke,
    Text,
    Tool,
    Undo,
)
from whiteboard.board.ops import MAX_COORD

ID = OpId(1, 1)


def test_opid_is_an_ordered_hashable_pair() -> None:
    assert OpId(1, 2) < OpId(1, 3) < OpId(2, 0)
    assert {OpId(1, 2): "x"}[OpId(1, 2)] == "x"
    assert OpId(1, 2) == (1, 2)
    assert str(OpId(4, 5)) == "4:5"


def test_numbers_are_normalised() -> None:
    stroke = Stroke((3, 4), [1, 2], 5, 3, 2)  # type: ignore[arg-type]
    assert type(stroke.id) is OpId and stroke.id == OpId(3, 4)
    assert stroke.points == (1.0, 2.0) and all(type(v) is float for v in stroke.points)
    assert type(stroke.width) is float
    assert stroke.tool is Tool.HIGHLIGHTER
    erase = Erase(ID, [(2, 3)])  # type: ignore[list-item]
    assert erase.targets == (OpId(2, 3),) and type(erase.targets[0]) is OpId
    assert Shape(ID, 3, 0, 0, 1, 1, 0, 1).kind is OpKind.RECT  # type: ignore[arg-type]
    assert Undo(ID, (1, 0)).target == OpId(1, 0)  # type: ignore[arg-type]


def test_kinds() -> None:
    assert [k.value for k in OpKind] == list(range(1, 18))
    assert Stroke(ID, (0.0, 0.0), 0, 1.0).kind is OpKind.STROKE
    assert Text(ID, 0, 0, "t", 0, 1).kind is OpKind.TEXT
    assert Erase(ID, (ID,)).kind is OpKind.ERASE
    assert Move(ID, (ID,), 0, 0).kind is OpKind.MOVE
    assert Clear(ID).kind is OpKind.CLEAR
    assert Undo(ID, ID).kind is OpKind.UNDO
    assert Redo(ID, ID).kind is OpKind.REDO


def test_records_are_frozen() -> None:
    stroke = Stroke(ID, (0.0, 0.0), 0, 1.0)
    with pytest.raises(AttributeError):
        stroke.width = 3.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (
            lambda: Stroke(ID, (0.0, 0.0), 0, -3),
            "op field 'width' must be a number > 0 and <= 500, got -3",
        ),
        (lambda: Stroke(ID, (0.0, math.nan), 0, 1.0), "'points[1]'"),
        (lambda: Stroke(ID, (0.0,) * 40_002, 0, 1.0), "1..20000 points"),
        (lambda: Stroke(ID, (0.0, 0.0), 0, 1.0, 0), "'tool'"),  # type: ignore[arg-type]
        (lambda: Stroke(OpId(0, 1), (0.0, 0.0), 0, 1.0), "'id.author'"),
        (lambda: Stroke(OpId(1, 2**63), (0.0, 0.0), 0, 1.0), "'id.counter'"),
        (lambda: Stroke((1, 2, 3), (0.0, 0.0), 0, 1.0), "'id' must be an OpId"),  # type: ignore[arg-type]
        (lambda: Shape(ID, OpKind.STROKE, 0, 0, 1, 1, 0, 1), "'kind'"),
        (lambda: Shape(ID, OpKind.LINE, 0, 0, 1, math.inf, 0, 1), "'y2'"),
        (lambda: Shape(ID, OpKind.LINE, 0, 0, 1, 1, 0, 1, fill=2**32), "'fill'"),
        (lambda: Text(ID, 0, 0, "", 0, 10), "'text'"),
        (lambda: Text(ID, 0, 0, "\ud800", 0, 10), "lone surrogates"),
        (lambda: Text(ID, 0, 0, "x", 0, 1001), "'font_size'"),
        (lambda: Text(ID, 1e8, 0, "x", 0, 10), "'x'"),
        (lambda: Erase(ID, ()), "'targets'"),
        (lambda: Erase(ID, (ID, ID)), "repeat"),
        (lambda: Erase(ID, ID), "'targets[0]'"),
        (lambda: Move(ID, (ID,), 0, 2.5e7), "'dy'"),
        (lambda: Move(ID, (ID,), False, 0), "'dx'"),
        (lambda: Undo(ID, 5), "'target'"),  # type: ignore[arg-type]
        (lambda: Redo(ID, (1, -1)), "'target.counter'"),  # type: ignore[arg-type]
    ],
)
def test_invalid_fields_are_refused_by_name(build: object, fragment: str) -> None:
    with pytest.raises(InvalidOpError) as caught:
        build()  # type: ignore[operator]
    assert fragment in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_huge_int_in_a_float_field_is_refused_not_overflowed() -> None:
    with pytest.raises(InvalidOpError, match="'width'"):
        Stroke(ID, (0.0, 0.0), 0, 10**400)


def test_board_package_is_qt_free() -> None:
    # The board is shared with headless tools (analytics, the simulator): no Qt, ever.
    code = "import sys, whiteboard.board; print(any(m.startswith('PySide6') for m in sys.modules))"
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert result.stdout.strip() == "False"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-MAX_COORD, MAX_COORD), min_size=1, max_size=40),
    st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, MAX_COORD * 2, -MAX_COORD * 2]),
    st.data(),
)
def test_a_bad_coordinate_anywhere_among_floats_is_refused(
    good: list[float], bad: float, data: st.DataObject
) -> None:
    # The fast path checks a tuple of floats by min, max and sum: wherever the bad value sits
    # (min and max may step over a NaN), the stroke is refused and says which coordinate.
    place = data.draw(st.integers(0, len(good)))
    points = [*good[:place], bad, *good[place:]]
    if len(points) % 2:
        points.append(0.0)
    with pytest.raises(InvalidOpError, match=rf"'points\[{place}\]'"):
        Stroke(ID, tuple(points), 0, 1.0)


# Values as they may come off the wire: of the types the codec writes, around the edges of
# each limit (so both sides of every bound are tried); and what a forger might send instead
# (other types, bool, NaN, odd counts).
def _around(*edges: int) -> st.SearchStrategy[int]:
    return st.sampled_from(edges).flatmap(lambda e: st.sampled_from([e - 1, e, e + 1]))


_authors = st.integers(1, 2**32 - 1)
_counters = st.integers(0, 2**63 - 1)
_colours = st.integers(0, 2**32 - 1)
_tools = st.integers(1, 3)
_widths = st.floats(min_value=0.0, max_value=500.0, exclude_min=True)
_points = st.lists(st.floats(min_value=-1e7, max_value=1e7), min_size=1, max_size=6).map(
    lambda xs: tuple(xs + xs)
)
_valid_values = st.tuples(_authors, _counters, _points, _colours, _widths, _tools)
# For each field in order, values of the codec's types on both sides of its limits.
_EDGES: tuple[tuple[object, ...], ...] = (
    (0, 1, 2**32 - 1, 2**32),
    (-1, 0, 2**63 - 1, 2**63),
    ((1.0,), (1.0, 2.0, 3.0), (1e7, -1e7), (1e7, 10000000.000000002), (math.nan, 1.0)),
    (-1, 0, 2**32 - 1, 2**32, True, 1.0),
    (0.0, -0.0, 5e-324, 500.0, 500.00000000000006, math.nan, math.inf, 1, 500, True),
    (0, 1, 3, 4, True, 1.0),
)
_forged = st.one_of(
    st.none(), st.booleans(), st.text(max_size=2), st.floats(allow_nan=True), st.integers()
)
_forged_points = st.one_of(
    st.lists(st.one_of(st.floats(), st.integers(), st.booleans()), max_size=5).map(tuple),
    st.lists(st.floats(), max_size=4),
    st.text(max_size=3),
)


def _same_stroke_or_refusal(
    author: object, counter: object, points: object, colour: object, width: object, tool: object
) -> None:
    """stroke_from_wire builds the codec's usual strokes without the dataclass's __init__
    (issue 18): whatever the values, it must give the same stroke, or the same refusal."""
    from whiteboard.board.ops import stroke_from_wire

    def outcome(build: object) -> object:
        try:
            stroke = build()  # type: ignore[operator]
        except InvalidOpError as error:
            return ("refused", str(error))
        fields = (stroke.id, stroke.points, stroke.colour, stroke.width, stroke.tool)
        return ("made", stroke, tuple(map(type, fields)), tuple(map(type, stroke.id)))

    via_wire = outcome(lambda: stroke_from_wire(author, counter, points, colour, width, tool))
    via_init = outcome(lambda: Stroke((author, counter), points, colour, width, tool))  # type: ignore[arg-type]
    if via_init[0] == "made" and via_wire[0] == "made":
        made = via_wire[1]
        assert isinstance(made, Stroke)
        assert made == via_init[1] and hash(made) == hash(via_init[1])
        assert via_wire[2:] == via_init[2:]
    else:
        assert via_wire == via_init


@settings(max_examples=300)
@given(_valid_values)
def test_a_stroke_from_the_wire_is_the_one_its_constructor_makes(
    values: tuple[object, ...],
) -> None:
    _same_stroke_or_refusal(*values)


@pytest.mark.parametrize(
    ("field", "edge"), [(field, edge) for field, edges in enumerate(_EDGES) for edge in edges]
)
def test_a_stroke_at_the_edge_of_a_limit_is_the_one_its_constructor_makes_or_refuses(
    field: int, edge: object
) -> None:
    """A valid stroke but for one field, on one side of its limit or of another type."""
    values: list[object] = [7, 9, (1.0, 2.0, 3.0, 4.0), 0xFF00FF00, 2.5, 2]
    values[field] = edge
    _same_stroke_or_refusal(*values)


@settings(max_examples=300)
@given(
    st.one_of(_authors, _forged),
    st.one_of(_counters, _forged),
    st.one_of(_points, _forged_points, _forged),
    st.one_of(_colours, _forged),
    st.one_of(_widths, _forged),
    st.one_of(_tools, _forged),
)
def test_a_forged_stroke_from_the_wire_is_refused_as_its_constructor_refuses_it(
    author: object, counter: object, points: object, colour: object, width: object, tool: object
) -> None:
    _same_stroke_or_refusal(author, counter, points, colour, width, tool)


def test_a_blob_is_named_by_the_sha256_of_its_bytes_and_must_be_an_image() -> None:
    import hashlib

    from whiteboard.board.ops import MAX_BLOB_BYTES, Blob, Image

    png = b"\x89PNG\r\n\x1a\n" + b"pixels"
    blob = Blob(ID, png)
    assert blob.kind is OpKind.BLOB and blob.digest == hashlib.sha256(png).digest()
    assert Blob(ID, b"\xff\xd8\xff\xe0jfif").digest  # a JPEG
    assert "data" not in repr(blob)  # a 2 MiB image must not end up in a log line
    for data, words in (
        (b"GIF89a....", "PNG or JPEG"),
        (b"", "1..3145728 bytes, got 0"),
        (b"\x89PNG\r\n\x1a\n" + bytes(MAX_BLOB_BYTES), "got 3145736"),
        ("text", "must be bytes"),
    ):
        with pytest.raises(InvalidOpError, match=words):
            Blob(ID, data)  # type: ignore[arg-type]
    image = Image(ID, blob.digest, 1, 2, 30, 40)
    assert (image.x, image.width, image.opacity, image.colour) == (1.0, 30.0, 255, 0xFF000000)
    for fields, words in (
        ({"digest": b"short"}, "32 bytes"),
        ({"width": 0}, "'width'"),
        ({"height": -1}, "'height'"),
        ({"opacity": 256}, "'opacity'"),
    ):
        values = {"digest": blob.digest, "x": 0, "y": 0, "width": 1, "height": 1} | fields
        with pytest.raises(InvalidOpError, match=words):
            Image(ID, **values)  # type: ignore[arg-type]
