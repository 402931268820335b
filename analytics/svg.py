"""Small SVG plots for the HTML report: horizontal bars, lines over time, a graph, dots on a
line. Each function returns one ``<svg>`` element as text, to be put inline in HTML.

Every piece of text is escaped here (member names are user input), and every mark carries
its value in ``data-*`` attributes and a ``<title>`` (the browser's tooltip), so that the
plot can be read exactly, by a person hovering or by a test. No scripts, no external files:
the report works offline and in any browser.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

# Colour-blind-safe (Okabe-Ito), then greys: a member keeps one colour in all of a session's
# plots.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
FONT = 'font-family="system-ui, sans-serif" font-size="12"'
LABEL_WIDTH = 150  # room for a member's name left of the bars, px
ROW_HEIGHT = 20
PANEL_WIDTH = 420


@dataclass(frozen=True)
class Bar:
    label: str  # who (a member's name)
    value: float | None  # None: unknown, drawn as "-"
    text: str  # the value as shown: "1,234", "3.5 min"
    colour: str = PALETTE[0]
    key: str = ""  # what data-key says (a member id), for whoever reads the plot


@dataclass(frozen=True)
class Panel:
    title: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[tuple[float, float], ...]  # (x, y)
    colour: str = PALETTE[0]
    key: str = ""


@dataclass(frozen=True)
class Node:
    key: str
    label: str
    colour: str = PALETTE[0]


@dataclass(frozen=True)
class Edge:
    a: str  # node keys
    b: str
    weight: float
    title: str  # what the tooltip says about it


@dataclass(frozen=True)
class Dot:
    label: str
    value: float | None  # None: unknown, left out


def colour_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def bar_panels(plot: str, panels: Sequence[Panel], session: str = "") -> str:
    """Panels of horizontal bars side by side, each scaled to its own largest value."""
    rows = max((len(p.bars) for p in panels), default=0)
    panel_h = 28 + rows * ROW_HEIGHT
    width = len(panels) * PANEL_WIDTH
    parts = [_open(plot, session, width, panel_h)]
    for index, panel in enumerate(panels):
        x0 = index * PANEL_WIDTH
        parts.append(_text(x0 + 4, 16, panel.title, 'font-weight="bold"'))
        largest = max((b.value for b in panel.bars if b.value is not None), default=0.0)
        room = PANEL_WIDTH - LABEL_WIDTH - 80
        for row, bar in enumerate(panel.bars):
            y = 28 + row * ROW_HEIGHT
            parts.append(
                _text(x0 + LABEL_WIDTH - 6, y + 14, _short(bar.label), 'text-anchor="end"')
            )
            length = 0.0 if not bar.value or largest <= 0 else room * bar.value / largest
            value = "" if bar.value is None else _number(bar.value)
            parts.append(
                f'<rect class="bar" x="{x0 + LABEL_WIDTH}" y="{y + 3}" width="{length:.2f}" '
                f'height="{ROW_HEIGHT - 6}" fill="{bar.colour}" '
                f'data-panel="{_attr(panel.title)}" data-label="{_attr(bar.label)}" '
                f'data-key="{_attr(bar.key)}" data-value="{value}">'
                f"<title>{escape(bar.label)}: {escape(bar.text)}</title></rect>"
            )
            parts.append(_text(x0 + LABEL_WIDTH + length + 4, y + 14, bar.text))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    plot: str, series: Sequence[Series], x_label: str, y_label: str, session: str = ""
) -> str:
    """Lines over a shared x axis (from 0), y from 0 to the largest value, with a legend."""
    width, height = 760, 260
    left, right, top, bottom = 50, 170, 20, 40
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    x_max = max(xs, default=1.0) or 1.0
    y_max = _nice(max(ys, default=1.0) or 1.0)
    inner_w, inner_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + inner_w * x / x_max

    def py(y: float) -> float:
        return top + inner_h * (1 - y / y_max)

    parts = [_open(plot, session, width, height)]
    parts.append(
        f'<line x1="{left}" y1="{top + inner_h}" x2="{left + inner_w}" y2="{top + inner_h}" '
        'stroke="#888"/>'
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + inner_h}" stroke="#888"/>'
    )
    for tick in (0.0, y_max / 2, y_max):
        parts.append(_text(left - 6, py(tick) + 4, _number(tick), 'text-anchor="end"'))
    for tick in _ticks(x_max):
        parts.append(_text(px(tick), top + inner_h + 16, _number(tick), 'text-anchor="middle"'))
    parts.append(_text(left + inner_w / 2, height - 6, x_label, 'text-anchor="middle"'))
    parts.append(
        _text(12, top + inner_h / 2, y_label, f'transform="rotate(-90 12 {top + inner_h / 2})" '
              'text-anchor="middle"')
    )  # fmt: skip
    for index, line in enumerate(series):
        points = " ".join(f"{px(x):.2f},{py(y):.2f}" for x, y in line.points)
        values = ",".join(_number(y) for _, y in line.points)
        parts.append(
            f'<polyline class="series" points="{points}" fill="none" stroke="{line.colour}" '
            f'stroke-width="2" data-label="{_attr(line.label)}" data-key="{_attr(line.key)}" '
            f'data-values="{values}"><title>{escape(line.label)}</title></polyline>'
        )
        legend_y = top + 14 + index * 16
        parts.append(
            f'<rect x="{width - right + 12}" y="{legend_y - 9}" width="10" height="10" '
            f'fill="{line.colour}"/>'
        )
        parts.append(_text(width - right + 26, legend_y, _short(line.label)))
    parts.append("</svg>")
    return "".join(parts)


def graph(plot: str, nodes: Sequence[Node], edges: Sequence[Edge], session: str = "") -> str:
    """Nodes on a circle, edges between them as wide as their weight (the widest 12 px)."""
    size = 360
    centre, radius = size / 2, size / 2 - 70
    places: dict[str, tuple[float, float]] = {}
    for index, node in enumerate(nodes):
        angle = -math.pi / 2 + 2 * math.pi * index / max(1, len(nodes))
        places[node.key] = (centre + radius * math.cos(angle), centre + radius * math.sin(angle))
    heaviest = max((e.weight for e in edges), default=0.0)
    parts = [_open(plot, session, size + 120, size)]
    for edge in edges:
        if edge.a not in places or edge.b not in places or edge.weight <= 0:
            continue
        (x1, y1), (x2, y2) = places[edge.a], places[edge.b]
        stroke = 1 + 11 * edge.weight / heaviest
        parts.append(
            f'<line class="edge" x1="{x1 + 60:.2f}" y1="{y1:.2f}" x2="{x2 + 60:.2f}" '
            f'y2="{y2:.2f}" stroke="#555" stroke-opacity="0.6" stroke-width="{stroke:.2f}" '
            f'data-a="{_attr(edge.a)}" data-b="{_attr(edge.b)}" '
            f'data-weight="{_number(edge.weight)}"><title>{escape(edge.title)}</title></line>'
        )
    for node in nodes:
        x, y = places[node.key]
        parts.append(
            f'<circle class="node" cx="{x + 60:.2f}" cy="{y:.2f}" r="14" fill="{node.colour}" '
            f'data-key="{_attr(node.key)}" data-label="{_attr(node.label)}">'
            f"<title>{escape(node.label)}</title></circle>"
        )
        below = 30 if y >= centre else -22
        parts.append(_text(x + 60, y + below, _short(node.label), 'text-anchor="middle"'))
    if not any(e.weight > 0 for e in edges):
        parts.append(_text(60 + centre, centre, "no interactions", 'text-anchor="middle"'))
    parts.append("</svg>")
    return "".join(parts)


def dots(plot: str, title: str, values: Sequence[Dot], unit: str = "") -> str:
    """One dot per value on a horizontal axis from 0 to the largest: a distribution small
    enough to see every item of (hover for which)."""
    width, height = 560, 90
    left, right = 30, 30
    known = [(d.label, d.value) for d in values if d.value is not None and math.isfinite(d.value)]
    top = _nice(max((value for _, value in known), default=1.0) or 1.0)
    inner = width - left - right
    parts = [_open(plot, "", width, height)]
    parts.append(_text(left, 16, title, 'font-weight="bold"'))
    parts.append(f'<line x1="{left}" y1="55" x2="{left + inner}" y2="55" stroke="#888"/>')
    for tick in (0.0, top / 2, top):
        parts.append(
            _text(left + inner * tick / top, 75, _number(tick) + unit, 'text-anchor="middle"')
        )
    stacked: dict[int, int] = {}
    for label, value in known:
        x = left + inner * value / top
        level = stacked[round(x / 6)] = stacked.get(round(x / 6), -1) + 1  # equal ones stack up
        parts.append(
            f'<circle class="dot" cx="{x:.2f}" cy="{48 - 7 * level}" r="4" fill="#0072B2" '
            f'fill-opacity="0.7" data-label="{_attr(label)}" data-value="{_number(value)}">'
            f"<title>{escape(label)}: {_number(value)}{escape(unit)}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


# -- pieces ----------------------------------------------------------------------------------


def _open(plot: str, session: str, width: float, height: float) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="{_attr(plot)}" '
        f'data-session="{_attr(session)}" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" {FONT}>'
    )


def _text(x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text x="{x:.2f}" y="{y:.2f}" {extra}>{escape(text)}</text>'


def _attr(text: str) -> str:
    return escape(text, quote=True)


def _short(label: str, limit: int = 22) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _number(value: float) -> str:
    """Exact enough to read back, short enough to show: integers as integers."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"


def _nice(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at least ``value``: an axis end."""
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 2.5, 5, 10) if step * power >= value)


def _ticks(top: float) -> list[float]:
    step = max(1.0, _nice(top / 5))  # whole units (minutes): no tick at half a minute
    return [i * step for i in range(int(top / step) + 1)]


__all__ = [
    "PALETTE",
    "Bar",
    "Dot",
    "Edge",
    "Node",
    "Panel",
    "Series",
    "bar_panels",
    "colour_for",
    "dots",
    "graph",
    "line_chart",
]
