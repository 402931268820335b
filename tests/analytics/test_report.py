"""``python -m analytics report``: the HTML file, its plots and their values, against the
hand-built logs of report_logs.py (whose answers are worked out there)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from analytics.__main__ import EXIT_OK, EXIT_PROBLEM, main
from analytics.report import PLOTS
from tests.analytics.report_logs import (
    ANN,
    ANN_NAME,
    BOARD_A,
    BOARD_B,
    BOB,
    BOB_NAME,
    EVE_NAME,
    write_report_logs,
)


@dataclass
class Plot:
    """One <svg class="plot"> and the marks in it, with their data-* attributes."""

    attrs: dict[str, str]
    marks: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def of(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.marks if t == tag and a.get("class") == cls]

    def bars(self, panel: str, value: str = "data-value") -> dict[str, str]:
        return {
            a["data-label"]: a[value] for a in self.of("rect", "bar") if a["data-panel"] == panel
        }


class ReportParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.plots: list[Plot] = []
        self.tags: list[str] = []
        self.text: list[str] = []
        self.images: list[dict[str, str]] = []
        self._open: Plot | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.tags.append(tag)
        if tag == "svg":
            self._open = Plot(values)
            self.plots.append(self._open)
        elif self._open is not None:
            self._open.marks.append((tag, values))
        if tag == "img":
            self.images.append(values)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._open = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(path: Path) -> ReportParser:
    parser = ReportParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


@pytest.fixture(scope="module")
def report_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report-logs")
    write_report_logs(folder)
    return folder


def test_the_report_plots_each_sessions_numbers(
    spark: SparkSession, report_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(report_logs), "--out", str(out)]) == EXIT_OK
    assert f"wrote {out}" in capsys.readouterr().out
    html = parse(out)

    # One SVG per plot per board session, and the distributions across sessions.
    found = sorted((p.attrs["data-plot"], p.attrs["data-session"]) for p in html.plots)
    per_session = sorted((plot, board) for plot in PLOTS for board in (BOARD_A, BOARD_B))
    across = [("dist-gini", ""), ("dist-handoffs", ""), ("dist-simultaneity", "")]
    assert found == sorted(per_session + across)
    plots = {(p.attrs["data-plot"], p.attrs["data-session"]): p for p in html.plots}

    timeline = plots["timeline", BOARD_A].of("polyline", "series")
    assert {s["data-label"]: s["data-values"] for s in timeline} == {
        ANN_NAME: "2,0,1",
        BOB_NAME: "0,2,0",
    }
    contribution = plots["contribution", BOARD_A]
    assert contribution.bars("ops") == {ANN_NAME: "3", BOB_NAME: "2"}
    assert contribution.bars("ink (board units)") == {ANN_NAME: "16", BOB_NAME: "2"}
    assert contribution.bars("active time (s)") == {ANN_NAME: "10", BOB_NAME: "5"}
    widths = contribution.bars("ops", "width")
    assert float(widths[ANN_NAME]) / float(widths[BOB_NAME]) == pytest.approx(3 / 2, rel=1e-3)

    graph = plots["interactions", BOARD_A]
    assert {n["data-key"]: n["data-label"] for n in graph.of("circle", "node")} == {
        str(ANN): ANN_NAME,
        str(BOB): BOB_NAME,
    }
    edges = [(e["data-a"], e["data-b"], e["data-weight"]) for e in graph.of("line", "edge")]
    assert edges == [(str(ANN), str(BOB), "1")]
    assert plots["interactions", BOARD_B].of("line", "edge") == []

    network = plots["network", BOARD_A]
    assert network.bars("NACKs sent") == {ANN_NAME: "3", BOB_NAME: "0"}
    assert network.bars("retransmissions") == {ANN_NAME: "2", BOB_NAME: "4"}
    assert network.bars("late deliveries") == {ANN_NAME: "1", BOB_NAME: "0"}
    assert network.bars("join time (s)") == {ANN_NAME: "1.5", BOB_NAME: "3"}
    assert plots["contribution", BOARD_B].bars("ops") == {EVE_NAME: "2"}
    assert plots["network", BOARD_B].bars("join time (s)") == {EVE_NAME: "1"}

    gini = {d["data-label"]: d["data-value"] for d in plots["dist-gini", ""].of("circle", "dot")}
    assert gini == {BOARD_A: "0.1", BOARD_B: "0"}  # A: ops 2 and 3, 2*(2+6)/(2*5) - 3/2

    # Member names are text, never markup: no script element, the name shown as written.
    assert "script" not in html.tags
    assert "<script>" not in out.read_text(encoding="utf-8")
    text = "".join(html.text)
    assert BOB_NAME in text and ANN_NAME in text
    assert html.images == []  # no --replay: no final boards


def test_the_report_needs_something_to_report_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "r.html")
    assert main(["report", "--out", out]) == EXIT_PROBLEM
    assert "nothing to report on" in capsys.readouterr().err
    assert main(["report", "--metrics", str(tmp_path), "--out", out]) == EXIT_PROBLEM
    assert "has no sessions table" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "no" / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err
