"""Synthetic ops for load tests, demos and benchmarks.

Deterministic for a given ``random.Random`` state, so two processes seeded alike draw the same
board. A synthetic stroke encodes to well under 1,000 bytes: one datagram.
"""

from __future__ import annotations

import math
import random

from whiteboard.board.ops import Op, OpId, OpKind, Shape, Stroke, Text, Tool

AREA_WIDTH = 2000.0
AREA_HEIGHT = 1500.0
MIN_STROKE_POINTS = 8
MAX_STROKE_POINTS = 40

PALETTE: tuple[int, ...] = (
    0xFF000000,  # black
    0xFFE53935,  # red
    0xFF1E88E5,  # blue
    0xFF43A047,  # green
    0xFFFB8C00,  # orange
    0xFF8E24AA,  # purple
)
_FILLS: tuple[int, ...] = (0, 0, 0, 0x401E88E5, 0x40FB8C00)
_WORDS: tuple[str, ...] = ("idea", "todo", "why?", "ship it", "v2", "bug", "ok", "later")
_SHAPES: tuple[OpKind, ...] = (OpKind.LINE, OpKind.RECT, OpKind.ELLIPSE, OpKind.ARROW)


def _clamp(value: float, high: float) -> float:
    return min(max(value, 0.0), high)


def synthetic_stroke(author: int, counter: int, rng: random.Random) -> Stroke:
    """A plausible freehand stroke: a smooth random walk of 8-40 points in a 2000x1500 area."""
    count = rng.randint(MIN_STROKE_POINTS, MAX_STROKE_POINTS)
    x = rng.uniform(0.0, AREA_WIDTH)
    y = rng.uniform(0.0, AREA_HEIGHT)
    heading = rng.uniform(0.0, 2.0 * math.pi)
    points: list[float] = []
    for _ in range(count):
        points.append(round(x, 2))
        points.append(round(y, 2))
        # A pen turns gradually: a heading that drifts gives curves rather than zigzags.
        heading += rng.gauss(0.0, 0.35)
        step = rng.uniform(4.0, 24.0)
        x = _clamp(x + step * math.cos(heading), AREA_WIDTH)
        y = _clamp(y + step * math.sin(heading), AREA_HEIGHT)
    tool = rng.choices((Tool.PEN, Tool.HIGHLIGHTER, Tool.MARKER), weights=(8, 1, 1))[0]
    return Stroke(
        id=OpId(author, counter),
        points=tuple(points),
        colour=rng.choice(PALETTE),
        width=rng.randint(2, 16) / 2.0,  # 1.0 to 8.0 in half steps
        tool=tool,
    )


def synthetic_shape(author: int, counter: int, rng: random.Random) -> Shape:
    """A line, rectangle, ellipse or arrow of up to 400x300 inside the area."""
    x1 = rng.uniform(0.0, AREA_WIDTH)
    y1 = rng.uniform(0.0, AREA_HEIGHT)
    return Shape(
        id=OpId(author, counter),
        kind=rng.choice(_SHAPES),
        x1=round(x1, 2),
        y1=round(y1, 2),
        x2=round(_clamp(x1 + rng.uniform(-400.0, 400.0), AREA_WIDTH), 2),
        y2=round(_clamp(y1 + rng.uniform(-300.0, 300.0), AREA_HEIGHT), 2),
        colour=rng.choice(PALETTE),
        width=rng.randint(2, 16) / 2.0,
        fill=rng.choice(_FILLS),
    )


def synthetic_text(author: int, counter: int, rng: random.Random) -> Text:
    """A short label somewhere in the area."""
    return Text(
        id=OpId(author, counter),
        x=round(rng.uniform(0.0, AREA_WIDTH), 2),
        y=round(rng.uniform(0.0, AREA_HEIGHT), 2),
        text=rng.choice(_WORDS),
        colour=rng.choice(PALETTE),
        font_size=float(rng.choice((12, 16, 24, 32))),
    )


def synthetic_op(author: int, counter: int, rng: random.Random) -> Op:
    """Mostly strokes (85%), some shapes (12%) and a few text labels (3%)."""
    roll = rng.random()
    if roll < 0.85:
        return synthetic_stroke(author, counter, rng)
    if roll < 0.97:
        return synthetic_shape(author, counter, rng)
    return synthetic_text(author, counter, rng)
