"""The members panel shows what session health knows, cell by cell."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from whiteboard.app.health import Agreement, MemberRow
from whiteboard.app.members_panel import MembersPanel
from whiteboard.transport.interface import MemberState


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
        ["bob", "not heard from", "12", "1,500", "0", "differs"],
        ["member 00000003", "left", "0", "0", "0", "same as yours"],
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
