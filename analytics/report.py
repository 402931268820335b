"""The ``report`` job: one self-contained HTML file about the board sessions, with plots
(docs/analytics.md, "Report").

The numbers are the ``metrics`` job's tables, computed here by :func:`analytics.metrics.compute`
(or read from a ``metrics`` run's output, with ``--metrics``, without starting Spark); only
the rows the report shows are brought to the driver. The HTML is made in plain Python: inline
SVG (:mod:`analytics.svg`), inline CSS, no scripts, every piece of text escaped, the final
boards of a ``replay`` run embedded as ``data:`` URIs, so that the one file works offline.
"""

from __future__ import annotations

import argparse
import base64
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from analytics import AnalyticsError
from analytics.svg import (
    Bar,
    Dot,
    Edge,
    Node,
    Panel,
    Series,
    bar_panels,
    colour_for,
    dots,
    graph,
    line_chart,
)
from whiteboard.board.files import describe_os_error, write_atomically

Row = Mapping[str, Any]
US = 1_000_000
# Board sessions shown in detail, the earliest first: the table across sessions has them all.
MAX_DETAILED = 50
# The tables the report reads, and for the per-session ones, their board-session column.
ACROSS = ("sessions", "participation", "turns", "simultaneity")
PER_SESSION = ("contribution", "network", "timeline", "interactions")
PLOTS = ("timeline", "contribution", "interactions", "network")  # per session, in order
REPLAY_TABLE = "frames.parquet"

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1320px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin: 1.4em 0 0.3em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e3e3e3; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.figures { color: #444; } .note { color: #666; font-size: 0.9em; }
img.board { border: 1px solid #ccc; max-width: 480px; display: block; }
svg.plot { display: block; max-width: 100%; height: auto; }
"""


@dataclass(frozen=True)
class ReportData:
    """What the report shows: rows of the metrics tables (per-session tables for the
    sessions shown in detail only) and the final boards of a replay run."""

    tables: Mapping[str, Sequence[Row]]
    total_sessions: int
    thumbnails: Mapping[str, bytes] = field(default_factory=dict)  # by board session
    source: str = ""  # what the report was made from, in words


# -- getting the numbers ---------------------------------------------------------------------


def collect_tables(tables: Mapping[str, Any], limit: int = MAX_DETAILED) -> tuple[dict, int]:
    """The rows the report needs from the metrics' DataFrames (:func:`compute`'s result):
    every board session's, and the per-member rows of the first ``limit`` sessions."""
    from pyspark.sql import functions as F

    collected: dict[str, list[Row]] = {
        name: [row.asDict() for row in tables[name].orderBy("board_session").collect()]
        for name in ACROSS
    }
    names = sorted(row["board_session"] for row in collected["sessions"])
    shown = names[:limit]
    for name in PER_SESSION:
        frame = tables[name].filter(F.col("board_session").isin(shown))
        collected[name] = [row.asDict() for row in frame.collect()]
    return collected, len(names)


def read_tables(folder: str, limit: int = MAX_DETAILED) -> tuple[dict, int]:
    """The same rows, from the Parquet tables a ``metrics`` run wrote in ``folder``."""
    collected: dict[str, list[Row]] = {}
    for name in (*ACROSS, *PER_SESSION):
        path = Path(folder) / name
        if not path.is_dir():
            raise AnalyticsError(
                f'"{folder}" has no {name} table: give the --out folder of a metrics run '
                "(of this version)"
            )
        try:
            collected[name] = pq.read_table(path).to_pylist()
        except (OSError, ValueError) as exc:
            raise AnalyticsError(f'the {name} table in "{folder}" cannot be read: {exc}') from None
    names = sorted(row["board_session"] for row in collected["sessions"])
    shown = set(names[:limit])
    for name in PER_SESSION:
        collected[name] = [row for row in collected[name] if row["board_session"] in shown]
    return collected, len(names)


def read_thumbnails(folder: str) -> dict[str, bytes]:
    """Each board session's final board, as PNG bytes, from a ``replay`` run's output."""
    table = Path(folder) / REPLAY_TABLE
    if not table.is_dir():
        raise AnalyticsError(
            f'"{folder}" has no {REPLAY_TABLE}: give the --out folder of a replay run'
        )
    try:
        rows = pq.read_table(table, columns=["board_session", "final", "png"]).to_pylist()
    except (OSError, ValueError) as exc:
        raise AnalyticsError(f'"{table}" cannot be read: {exc}') from None
    thumbnails: dict[str, bytes] = {}
    for row in rows:
        if row["final"] and row["png"]:
            try:
                thumbnails[row["board_session"]] = (Path(folder) / row["png"]).read_bytes()
            except OSError as exc:
                raise AnalyticsError(
                    f'the frame "{row["png"]}" of the replay in "{folder}" cannot be read: '
                    f"{describe_os_error(exc)}"
                ) from None
    return thumbnails


# -- the HTML --------------------------------------------------------------------------------


def render_report(data: ReportData, generated: datetime | None = None) -> str:
    """The whole report, one HTML document."""
    generated = generated or datetime.now(UTC)
    sessions = sorted(data.tables["sessions"], key=lambda r: r["board_session"])
    by_name = {name: _index(data.tables[name]) for name in ("participation", "turns")}
    by_name["simultaneity"] = _index(data.tables["simultaneity"])
    detailed = sessions[:MAX_DETAILED]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Whiteboard sessions report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Whiteboard sessions report</h1>",
        f'<p class="note">{_count(data.total_sessions, "board session")}'
        + (f" from {escape(data.source)}" if data.source else "")
        + f"; made {escape(generated.strftime('%Y-%m-%d %H:%M UTC'))}. Hover over a mark for "
        "its value. The metrics are defined in docs/analytics.md.</p>",
        "<h2>Across sessions</h2>",
        _sessions_table(sessions, by_name, len(detailed)),
        *_distributions(sessions, by_name),
    ]
    if len(sessions) > len(detailed):
        parts.append(
            f'<p class="note">The first {len(detailed)} board sessions are shown in detail '
            f"below; the table above lists all {len(sessions)}.</p>"
        )
    grouped = {name: _grouped(data.tables[name]) for name in PER_SESSION}
    for session in detailed:
        name = session["board_session"]
        parts.append(
            _session_section(
                session,
                {key: table.get(name, {}) for key, table in by_name.items()},
                {key: table.get(name, []) for key, table in grouped.items()},
                data.thumbnails.get(name),
            )
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _distributions(sessions: Sequence[Row], by_name: Mapping[str, Mapping[str, Row]]) -> list[str]:
    def values(table: str, column: str, scale: float = 1.0) -> list[Dot]:
        found = [by_name[table].get(s["board_session"], {}).get(column) for s in sessions]
        return [
            Dot(s["board_session"], None if v is None else v * scale)
            for s, v in zip(sessions, found, strict=True)
        ]

    return [
        dots(
            "dist-gini",
            "Participation Gini (0: everyone made as many ops)",
            values("participation", "gini"),
        ),
        dots("dist-handoffs", "Hand-offs per minute", values("turns", "handoffs_per_min")),
        dots(
            "dist-simultaneity",
            "Share of the drawing time with 2+ members active",
            values("simultaneity", "simultaneity", 100.0),
            unit="%",
        ),
    ]


def _sessions_table(
    sessions: Sequence[Row], by_name: Mapping[str, Mapping[str, Row]], detailed: int
) -> str:
    head = (
        "board session", "transport", "members", "ops", "minutes", "Gini", "hand-offs/min",
        "2+ active", "idle gaps", "co-edits",
    )  # fmt: skip
    rows = []
    for index, s in enumerate(sessions):
        name = s["board_session"]
        participation = by_name["participation"].get(name, {})
        turns = by_name["turns"].get(name, {})
        together = by_name["simultaneity"].get(name, {})
        label = escape(name)
        if index < detailed:
            label = f'<a href="#{_anchor(name)}">{label}</a>'
        cells = [
            label,
            escape(str(s["transport"])),
            _int(s["members"]),
            _int(s["ops"]),
            _fixed(None if s["op_span_s"] is None else s["op_span_s"] / 60, 1),
            _fixed(participation.get("gini"), 2),
            _fixed(turns.get("handoffs_per_min"), 2),
            _percent(together.get("simultaneity")),
            _int(s["idle_gaps"]),
            _int(s.get("co_edits")),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        '<table class="sessions"><thead><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _session_section(
    session: Row,
    figures: Mapping[str, Row],
    tables: Mapping[str, Sequence[Row]],
    thumbnail: bytes | None,
) -> str:
    name = session["board_session"]
    contribution = sorted(tables["contribution"], key=lambda r: (-(r["ops"] or 0), r["member"]))
    order = [row["member"] for row in contribution]
    for table in ("network", "timeline"):  # members only there (none, normally)
        order += sorted({r["member"] for r in tables[table]} - set(order))
    colours = {member: colour_for(i) for i, member in enumerate(order)}
    labels = _labels(tables)
    parts = [
        f'<section class="session" id="{_anchor(name)}">',
        f"<h2>{escape(name)}</h2>",
        f'<p class="figures">{escape(_figures(session, figures))}</p>',
    ]
    if thumbnail:
        encoded = base64.b64encode(thumbnail).decode("ascii")
        parts.append(
            f'<img class="board" src="data:image/png;base64,{encoded}" '
            f'alt="{escape(f"the board at the end of {name}", quote=True)}">'
        )
    parts.append("<h3>Activity: ops per minute</h3>")
    parts.append(_timeline_plot(name, tables["timeline"], order, colours, labels))
    parts.append("<h3>Contribution</h3>")
    parts.append(_contribution_plot(name, contribution, colours, labels))
    parts.append("<h3>Interactions: co-edits and edits of each other's work</h3>")
    parts.append(_interaction_plot(name, tables["interactions"], order, colours, labels))
    parts.append("<h3>Network health</h3>")
    parts.append(_network_plot(name, tables["network"], order, colours, labels))
    parts.append("</section>")
    return "\n".join(parts)


def _figures(session: Row, figures: Mapping[str, Row]) -> str:
    span = session["op_span_s"]
    together = figures["simultaneity"].get("simultaneity")
    return (
        f"{_count(session['members'], 'member')}, {_count(session['ops'], 'op')}"
        + ("" if span is None else f" over {span / 60:.1f} min")
        + f"; participation Gini {_fixed(figures['participation'].get('gini'), 2)}; "
        f"{_count(figures['turns'].get('turns'), 'turn')}, "
        f"{_fixed(figures['turns'].get('handoffs_per_min'), 2)} hand-offs/min; 2+ members "
        f"active {_percent(together)} of the drawing time; "
        f"{_count(session['idle_gaps'], 'idle gap')}"
    )


def _timeline_plot(
    name: str,
    rows: Sequence[Row],
    order: Sequence[int],
    colours: Mapping[int, str],
    labels: Mapping[int, str],
) -> str:
    per_member: dict[int, list[tuple[float, float]]] = {}
    for row in sorted(rows, key=lambda r: r["minute"]):
        per_member.setdefault(row["member"], []).append((float(row["minute"]), float(row["ops"])))
    series = [
        Series(labels[m], tuple(per_member[m]), colours[m], str(m))
        for m in order
        if m in per_member
    ]
    return line_chart("timeline", series, "minutes since the first op", "ops", name)


def _member_bars(
    rows: Sequence[Row],
    column: str,
    show: Any,
    colours: Mapping[int, str],
    labels: Mapping[int, str],
    scale: float = 1.0,
) -> tuple[Bar, ...]:
    """A bar per member row: its ``column`` divided by ``scale``, labelled ``show(value)``."""
    return tuple(
        Bar(
            labels[r["member"]],
            None if r[column] is None else r[column] / scale,
            show(r[column]),
            colours[r["member"]],
            str(r["member"]),
        )
        for r in rows
    )


def _contribution_plot(
    name: str, rows: Sequence[Row], colours: Mapping[int, str], labels: Mapping[int, str]
) -> str:
    def bars(column: str, show: Any) -> tuple[Bar, ...]:
        return _member_bars(rows, column, show, colours, labels)

    return bar_panels(
        "contribution",
        [
            Panel("ops", bars("ops", _int)),
            Panel("ink (board units)", bars("ink_length", lambda v: _fixed(v, 0))),
            Panel("active time (s)", bars("active_s", lambda v: _fixed(v, 1))),
        ],
        name,
    )


def _interaction_plot(
    name: str,
    rows: Sequence[Row],
    order: Sequence[int],
    colours: Mapping[int, str],
    labels: Mapping[int, str],
) -> str:
    nodes = [Node(str(m), labels[m], colours[m]) for m in order]
    edges = [
        Edge(
            str(r["member_a"]),
            str(r["member_b"]),
            float(r["weight"]),
            f"{labels.get(r['member_a'], r['member_a'])} and "
            f"{labels.get(r['member_b'], r['member_b'])}: weight {r['weight']} "
            f"({r['co_edits']} co-edits, {r['edits_a_to_b']} + {r['edits_b_to_a']} edits of "
            f"each other's work, {r['shared_cells']} shared cells)",
        )
        for r in sorted(rows, key=lambda r: (r["member_a"], r["member_b"]))
        if r["weight"]
    ]
    return graph("interactions", nodes, edges, name)


def _network_plot(
    name: str,
    rows: Sequence[Row],
    order: Sequence[int],
    colours: Mapping[int, str],
    labels: Mapping[int, str],
) -> str:
    ordered = sorted(rows, key=lambda r: order.index(r["member"]) if r["member"] in order else 0)

    def bars(column: str, show: Any, scale: float = 1.0) -> tuple[Bar, ...]:
        return _member_bars(ordered, column, show, colours, labels, scale)

    return bar_panels(
        "network",
        [
            Panel("NACKs sent", bars("nacks_sent", _int)),
            Panel("retransmissions", bars("retransmissions", _int)),
            Panel("late deliveries", bars("late_deliveries", _int)),
            Panel("join time (s)", bars("join_ms", _seconds_text, scale=1000.0)),
        ],
        name,
    )


# -- the command -----------------------------------------------------------------------------


def run_report(args: argparse.Namespace) -> int:
    """``python -m analytics report``: the options as analytics.__main__ parses them."""
    if args.metrics is not None and args.inputs:
        raise AnalyticsError("give session logs (or an export) or --metrics DIR, not both")
    if args.metrics is None and not args.inputs:
        raise AnalyticsError(
            "nothing to report on: give session logs (or an export), or --metrics DIR"
        )
    out = Path(args.out)
    if out.is_dir():
        raise AnalyticsError(f'"{out}" is a folder: --out is the HTML file to write')
    if not out.parent.is_dir():
        raise AnalyticsError(f'"{out.parent}" does not exist: make the folder first')
    started = time.monotonic()
    thumbnails = read_thumbnails(args.replay) if args.replay is not None else {}
    if args.metrics is not None:
        tables, total = read_tables(args.metrics)
        source = f"the metrics in {args.metrics}"
    else:
        tables, total = _compute(args, out.parent)
        source = ", ".join(args.inputs)
    data = ReportData(tables, total, thumbnails, source)
    html = render_report(data)
    try:
        write_atomically(out, html.encode("utf-8"))
    except OSError as exc:
        raise AnalyticsError(f'"{out}" could not be written: {describe_os_error(exc)}') from None
    shown = min(total, MAX_DETAILED)
    size_kib = len(html.encode("utf-8")) / 1024
    print(
        f"wrote {out} ({size_kib:,.0f} KiB): {_count(total, 'board session')}, "
        f"{shown} in detail with {len(PLOTS)} plots each"
        + (f", {len(thumbnails)} final boards" if thumbnails else "")
        + f", in {time.monotonic() - started:.1f} s"
    )
    return 0


def _compute(args: argparse.Namespace, beside: Path) -> tuple[dict, int]:
    from analytics.load import InputFormat, recording_unlock, resolve_format, spark_rows
    from analytics.metrics import MetricsConfig, compute

    config = MetricsConfig.of(args)
    fmt = resolve_format(args.inputs, InputFormat(args.format))
    # Logs are staged beside the report (a name Spark and people skip), removed at the end.
    staging = Path(tempfile.mkdtemp(prefix=".report-staging-", dir=beside))
    with spark_rows(
        args.inputs, fmt, staging, args.master, dict(args.conf), recording_unlock(args)
    ) as run:
        return collect_tables(compute(run.rows, config))


# -- small pieces ----------------------------------------------------------------------------


def _labels(tables: Mapping[str, Sequence[Row]]) -> dict[int, str]:
    """A member's label: their name, else their id in hex (as the logs show it)."""
    labels: dict[int, str] = {}
    for table in ("contribution", "network", "timeline"):
        for row in tables[table]:
            if row.get("name") and row["member"] not in labels:
                labels[row["member"]] = row["name"]
    for table in ("contribution", "network", "timeline"):
        for row in tables[table]:
            labels.setdefault(row["member"], f"{row['member']:08x}")
    return labels


def _index(rows: Sequence[Row]) -> dict[str, Row]:
    return {row["board_session"]: row for row in rows}


def _grouped(rows: Sequence[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row["board_session"], []).append(row)
    return grouped


def _anchor(board_session: str) -> str:
    return "s-" + "".join(c if c.isalnum() else "-" for c in board_session)


def _count(n: int | None, noun: str) -> str:
    n = n or 0
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _fixed(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _seconds_text(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f} s"


__all__ = [
    "MAX_DETAILED",
    "PLOTS",
    "ReportData",
    "collect_tables",
    "read_tables",
    "read_thumbnails",
    "render_report",
    "run_report",
]
