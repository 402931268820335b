"""The members panel shows what session health knows, cell by cell."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from whiteboard.app.health import Agreement, MemberRow
from whiteboard.app.members_panel import (
    COLUMNS,
    GREY,
    JOINING_NAME,
    NUMERIC_COLUMNS,
    TOOLTIPS,
    MembersPanel,
)
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig
from whiteboard.transport.interface import MemberState

UNKNOWN, AGREES = Agreement.UNKNOWN, Agreement.AGREES


def test_rows_show_names_states_counters_and_agreement(qtbot: QtBot) -> None:
    panel = MembersPanel()
    qtbot.addWidget(panel)
    panel.show_rows(
        [
            MemberRow(1, "ada", 0xFFE53935, MemberState.ACTIVE, 3, 0, 1, Agreement.UNKNOWN, True),
            MemberRow(2, "bob", 0xFF1E88E5, MemberState.SUSPECTED, 12, 1500, 0, Agreement.DIFFERS),
            MemberRow(3, "member 00000003", None, MemberState.LEFT, 0, 0, 0, Agreement.AGREES),
        ]
    )
    assert panel.row_texts() == [
        ["ada (you)", "active", "3", "0", "1", "—"],
        ["bob", "silent", "12", "1,500", "0", "differs"],
        ["(left before its name arrived)", "left", "0", "0", "0", "same as yours"],
    ]
    assert not panel.table.item(0, 0).icon().isNull()
    assert panel.table.item(2, 0).icon().isNull()  # no presence yet: no colour


def test_the_same_rows_again_change_nothing(qtbot: QtBot) -> None:
    panel = MembersPanel()
    qtbot.addWidget(panel)
    rows = [MemberRow(1, "ada", None, MemberState.ACTIVE, 0, 0, 0, Agreement.UNKNOWN, True)]
    panel.show_rows(rows)
    item = panel.table.item(0, 0)
    panel.show_rows(list(rows))
    assert panel.table.item(0, 0) is item


def test_a_member_without_a_presence_yet_is_joining_not_a_hex_id(qtbot: QtBot) -> None:
    panel = MembersPanel()
    qtbot.addWidget(panel)
    # What health gives for a member the transport reported, before its presence arrived.
    panel.show_rows(
        [MemberRow(0x7929DB00, "member 7929db00", None, MemberState.ACTIVE, 0, 0, 0, UNKNOWN)]
    )
    [[name, *_]] = panel.row_texts()
    assert name == JOINING_NAME
    assert panel.table.item(0, 0).foreground().color() == GREY
    # Its name the moment the presence arrives.
    panel.show_rows(
        [MemberRow(0x7929DB00, "bea", 0xFF1E88E5, MemberState.ACTIVE, 0, 0, 0, UNKNOWN)]
    )
    assert panel.row_texts()[0][0] == "bea"
    assert panel.table.item(0, 0).foreground().color() != GREY


def test_every_column_header_says_what_it_shows() -> None:
    panel_tips = dict(zip(COLUMNS, TOOLTIPS, strict=True))
    assert all(len(tip) > 20 for tip in panel_tips.values())
    assert "asked the others to send again" in panel_tips["NACKs"]


@pytest.mark.network
def test_names_have_room_and_nothing_scrolls_sideways(qtbot: QtBot, net: NetConfig) -> None:
    window = MainWindow("raw", net, {}, "Alexandra")
    qtbot.addWidget(window)
    window.resize(1200, 700)
    window.show()
    qtbot.waitExposed(window)
    table = window.members_panel.table
    window.members_panel.show_rows(
        [
            MemberRow(1, "Alexandra", 0xFFE53935, MemberState.ACTIVE, 12, 3, 1, UNKNOWN, True),
            MemberRow(2, "Bartholomew", 0xFF1E88E5, MemberState.SUSPECTED, 1, 2, 3, AGREES),
            MemberRow(3, "member 00000003", None, MemberState.JOINING, 0, 0, 0, UNKNOWN),
        ]
    )
    QApplication.processEvents()
    header = table.horizontalHeader()
    widths = [header.sectionSize(c) for c in range(table.columnCount())]
    # Every column within the panel: no part of the table is off to the side.
    assert sum(widths) <= table.viewport().width()
    assert not table.horizontalScrollBar().isVisible()
    # Names first, with the most room: "Bartholomew" whole, beside its swatch.
    assert COLUMNS[0] == "Member" and widths[0] == max(widths)
    assert widths[0] >= table.fontMetrics().horizontalAdvance("Bartholomew") + 30
    # The counters are compact: none wider than its header needs.
    for column in NUMERIC_COLUMNS:
        assert widths[column] <= header.fontMetrics().horizontalAdvance("99,999") + 12
    # Each header says what it counts, in plain words, when hovered.
    model = table.model()
    for column in range(table.columnCount()):
        tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert tip == TOOLTIPS[column]
