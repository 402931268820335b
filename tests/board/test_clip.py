"""The clipboard's objects (whiteboard/board/clip.py): what a copy carries, and what a paste
makes of it; the clip is untrusted (any application writes the clipboard) and fuzzed."""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.board.board_strategies import shapes, strokes, texts
from tests.fuzzing import mutated
from whiteboard.board import BoardObject, OpId, OpKind, Shape, Stroke, Text, encode_op
from whiteboard.board.clip import (
    CLIP_MAGIC,
    MAX_CLIP_OBJECTS,
    ClipError,
    bounds_of,
    decode_clip,
    encode_clip,
    placed,
    shown,
    text_that_fits,
)
from whiteboard.board.ops import MAX_COORD, Erase


def text_rect(op: Text) -> tuple[float, float, float, float]:
    """A stand-in measure: 10 units a character, one line of font_size."""
    return (op.x, op.y, op.x + 10.0 * len(op.text), op.y + op.font_size)


drawings = st.one_of(strokes(), shapes(), texts())
ids = iter(range(1, 10**9))


def new_ids() -> OpId:
    return OpId(99, next(ids))


def test_a_copy_carries_each_object_where_it_is_shown() -> None:
    stroke = Stroke(OpId(1, 1), (0.0, 0.0, 10.0, 5.0), 0xFF000000, 2.0)
    rect = Shape(OpId(1, 2), OpKind.RECT, 0.0, 0.0, 20.0, 20.0, 0xFF0000FF, 1.0)
    clip = encode_clip(shown([BoardObject(stroke, 3.0, 4.0), BoardObject(rect)]))
    assert decode_clip(clip) == [
        Stroke(OpId(1, 1), (3.0, 4.0, 13.0, 9.0), 0xFF000000, 2.0),
        rect,
    ]


def test_an_object_moved_past_the_edge_of_the_board_is_refused_not_raised() -> None:
    line = Shape(OpId(1, 1), OpKind.LINE, 0.0, 0.0, 100.0, 0.0, 1, 1.0)
    with pytest.raises(ClipError, match="beyond the edge of the board"):
        shown([BoardObject(line, MAX_COORD, 0.0)])  # a Move may take it there (|dx| <= 2e7)


def test_a_paste_makes_new_drawings_centred_where_asked() -> None:
    a = Shape(OpId(1, 1), OpKind.RECT, 0.0, 0.0, 10.0, 10.0, 1, 2.0)
    b = Text(OpId(1, 2), 20.0, 0.0, "hi", 1, 10.0)
    pasted = placed([a, b], (100.0, 200.0), new_ids, text_rect)
    assert [op.id.author for op in pasted] == [99, 99]
    assert len({op.id for op in pasted}) == 2
    x0, y0, x1, y1 = bounds_of(pasted, text_rect)
    assert ((x0 + x1) / 2, (y0 + y1) / 2) == (100.0, 200.0)
    assert isinstance(pasted[1], Text) and pasted[1].text == "hi"


def test_a_paste_near_the_edge_of_the_board_stays_on_it() -> None:
    line = Shape(OpId(1, 1), OpKind.LINE, 0.0, 0.0, 100.0, 0.0, 1, 1.0)
    [pasted] = placed([line], (MAX_COORD, 0.0), new_ids, text_rect)
    assert isinstance(pasted, Shape) and MAX_COORD - 1.0 < pasted.x2 <= MAX_COORD


def anchor(op: Stroke | Shape | Text) -> tuple[float, float]:
    if isinstance(op, Stroke):
        return op.points[0], op.points[1]
    if isinstance(op, Shape):
        return op.x1, op.y1
    return op.x, op.y


def style(op: Stroke | Shape | Text) -> tuple[object, ...]:
    if isinstance(op, Stroke):
        return (op.kind, len(op.points), op.colour, op.width, op.tool)
    if isinstance(op, Shape):
        return (op.kind, op.colour, op.width, op.fill)
    return (op.kind, op.text, op.colour, op.font_size)


@settings(max_examples=100, deadline=None)
@given(st.lists(drawings, min_size=1, max_size=6), st.floats(-1e6, 1e6), st.floats(-1e6, 1e6))
def test_any_copy_pastes_as_the_same_drawings_moved_together(
    ops: list[Stroke | Shape | Text], x: float, y: float
) -> None:
    copied = decode_clip(encode_clip(shown(BoardObject(op) for op in ops)))
    assert copied == ops
    try:
        pasted = placed(copied, (x, y), new_ids, text_rect)
    except ClipError:
        x0, y0, x1, y1 = bounds_of(ops, text_rect)  # only what is wider than the board
        assert max(x1 - x0, y1 - y0) > 2 * MAX_COORD
        return
    assert [style(op) for op in pasted] == [style(op) for op in ops]
    assert not {op.id for op in pasted} & {op.id for op in ops}
    moves = [
        (a[0] - b[0], a[1] - b[1])
        for a, b in zip(map(anchor, pasted), map(anchor, ops), strict=True)
    ]
    assert all(m == pytest.approx(moves[0], rel=1e-9, abs=1e-6) for m in moves)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"hello", "damaged"),
        (msgpack.packb(["something-else", 1, []]), "no whiteboard objects"),
        (msgpack.packb([CLIP_MAGIC, 2, []]), "newer whiteboard"),
        (msgpack.packb([CLIP_MAGIC, 1, [b"\x93\x01"]]), "object 1 on the clipboard is damaged"),
        (msgpack.packb([CLIP_MAGIC, 1, [encode_op(Erase(OpId(1, 1), (OpId(1, 2),)))]]),
         "not a drawing"),
        (msgpack.packb([CLIP_MAGIC, 1, [b""] * (MAX_CLIP_OBJECTS + 1)]), "damaged"),
    ],
)  # fmt: skip
def test_what_is_not_a_clip_of_ours_says_what_is_wrong(data: bytes, says: str) -> None:
    with pytest.raises(ClipError, match=says):
        decode_clip(data)


valid_clips = st.lists(drawings, max_size=4).map(
    lambda ops: encode_clip(shown(BoardObject(op) for op in ops))
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=200), mutated(valid_clips)))
def test_any_bytes_decode_as_drawings_or_a_clip_error(data: bytes) -> None:
    try:
        ops = decode_clip(data)
    except ClipError:
        return
    assert all(isinstance(op, Stroke | Shape | Text) for op in ops)


def test_the_longest_start_of_a_text_that_fits_is_found() -> None:
    def make(words: str) -> Text:
        return Text(OpId(1, 1), 0.0, 0.0, words or " ", 0, 10.0)

    text = "é" * 3000  # two bytes each in UTF-8
    cut = text_that_fits(text, make, 1000)
    assert len(encode_op(make(cut))) <= 1000 < len(encode_op(make(text[: len(cut) + 1])))
    assert text_that_fits("short", make, 1000) == "short"
    assert text_that_fits("short", make, 5) == ""


def test_a_turned_object_travels_as_drawn_with_its_transform_and_pastes_so() -> None:
    """A rotated rectangle is not a rectangle's corners: it is copied as drawn, followed by
    the transform placing it; a paste moves that transform, not the drawing, and the pasted
    pair shows the same shape, moved."""
    from whiteboard.board import Board, Transform

    square = Shape(OpId(1, 1), OpKind.RECT, 0.0, 0.0, 60.0, 30.0, 0xFF000000, 2.0)
    board = Board()
    board.apply((1,), square)
    board.apply((2,), Transform(OpId(1, 2), (square.id,), (0.0, 1.0, -1.0, 0.0, 100.0, 50.0)))
    copied = shown(board.objects())
    turn = (0.0, 1.0, -1.0, 0.0, 100.0, 50.0)
    assert copied == [square, Transform(copied[1].id, (square.id,), turn)]
    assert copied[1].id != square.id
    assert decode_clip(encode_clip(copied)) == copied
    assert bounds_of(copied, text_rect) == (69.0, 49.0, 101.0, 111.0)  # turned: 30 by 60
    pasted = placed(copied, (185.0, 80.0), new_ids, text_rect)  # 100 right of where it was
    drawing, transform = pasted
    assert isinstance(transform, Transform) and transform.targets == (drawing.id,)
    assert drawing == Shape(drawing.id, OpKind.RECT, 0.0, 0.0, 60.0, 30.0, 0xFF000000, 2.0)
    assert transform.matrix == (0.0, 1.0, -1.0, 0.0, 200.0, 50.0)
    # A transform naming nothing of the clip, or a second one, is refused.
    stray = Transform(OpId(1, 9), (OpId(5, 5),), (1.0, 0.0, 0.0, 1.0, 0.0, 0.0))
    # The picture of the selection (a board of the copied ops) shows it turned.
    picture = Board()
    for index, op in enumerate(copied, start=1):
        picture.apply((index,), op)
    assert picture.objects() == board.objects()
    for bad in ([stray], [*copied, copied[1]]):
        with pytest.raises(ClipError, match="places no drawing"):
            decode_clip(encode_clip(bad))
