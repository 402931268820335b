"""Synthetic ops: deterministic, plausible, one datagram each."""

from __future__ import annotations

import random
from collections import Counter

from whiteboard.board import (
    Shape,
    Stroke,
    Text,
    decode_op,
    encode_op,
    synthetic_op,
    synthetic_stroke,
)


def test_strokes_are_deterministic_plausible_and_small() -> None:
    first = [synthetic_stroke(7, i, random.Random(i)) for i in range(300)]
    again = [synthetic_stroke(7, i, random.Random(i)) for i in range(300)]
    assert first == again
    rng = random.Random(5)
    for counter in range(2000):
        stroke = synthetic_stroke(3, counter, rng)
        assert stroke.id == (3, counter)
        assert 8 <= len(stroke.points) // 2 <= 40
        assert all(0.0 <= x <= 2000.0 for x in stroke.points[0::2])
        assert all(0.0 <= y <= 1500.0 for y in stroke.points[1::2])
        assert 1.0 <= stroke.width <= 8.0
        data = encode_op(stroke)
        assert len(data) < 1000
        assert decode_op(data) == stroke


def test_worst_case_synthetic_stroke_fits_a_datagram() -> None:
    # 40 points at the largest author and counter: the bound does not depend on luck.
    rng = random.Random(0)
    stroke = next(
        s
        for s in (synthetic_stroke(2**32 - 1, 2**63 - 1, rng) for _ in range(10_000))
        if len(s.points) == 80
    )
    assert len(encode_op(stroke)) < 1000


def test_ops_are_mostly_strokes_with_some_shapes() -> None:
    rng = random.Random(11)
    ops = [synthetic_op(1, i, rng) for i in range(1000)]
    kinds = Counter(type(op) for op in ops)
    assert kinds[Stroke] > 700 and kinds[Shape] > 50 and kinds[Text] > 0
    assert all(len(encode_op(op)) < 1000 for op in ops)
    rng_a, rng_b = random.Random(3), random.Random(3)
    assert [synthetic_op(2, i, rng_a) for i in range(50)] == [
        synthetic_op(2, i, rng_b) for i in range(50)
    ]
