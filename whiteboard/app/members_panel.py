"""The members panel: who is in the session, in what state, how their transport fares, and
whether their board agrees with ours (whiteboard/app/health.py decides; this only shows)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)
from PySide6.QtWidgets import QTableWidgetItem as Item

from whiteboard.app.health import Agreement, MemberRow
from whiteboard.app.view_code import VIEW_CODE_TIP
from whiteboard.security import SessionKey
from whiteboard.transport.interface import MemberState

COLUMNS = ("Member", "State", "NACKs", "Resent", "Late", "Board")
STATE_TIPS = {
    MemberState.JOINING: "Joining the session",
    MemberState.ACTIVE: "In the session, heard from lately",
    MemberState.SUSPECTED: "Not heard from for a while: the computer may be busy, or gone",
    MemberState.LEFT: "Left the session",
}
STATE_TEXT = {
    MemberState.JOINING: "joining",
    MemberState.ACTIVE: "active",
    # Short, so that the names keep their room; the cell's tooltip says it in full.
    MemberState.SUSPECTED: "silent",
    MemberState.LEFT: "left",
}
AGREEMENT_TEXT = {
    Agreement.UNKNOWN: "…",
    Agreement.AGREES: "same as yours",
    Agreement.DIFFERS: "differs",
    Agreement.NOT_COMPARED: "not compared",  # not heard from lately: its word is stale
}
TOOLTIPS = (
    'The member\'s name and colour ("joining…" until its name arrives)',
    "What the transport knows: joining, active, silent (not heard from for a while), or left",
    "NACKs: how many times the member asked the others to send again something it missed "
    "(a negative acknowledgement); a few are normal, many mean a lossy network at its end",
    "Resent: how many packets the member sent a second time because someone missed them",
    "Late: drawings that reached the member after newer ones and were put back in their "
    "place; the board is right, they only showed up late",
    "Whether the member's board is the same as yours, compared at a point both boards passed"
    " (… until they have); a member not heard from lately, or gone, is not compared",
)
NUMERIC_COLUMNS = (2, 3, 4)
# A member the transport knows but whose presence (name, colour) has not arrived yet: never
# a bare member id, which means nothing to a person (whiteboard/presence.py).
JOINING_NAME = "joining…"
NO_NAME = "(left before its name arrived)"
GREY = QColor(150, 150, 150)
PRIVATE_TEXT = (
    "Private session: only members who know its passphrase see and change this board."
)
PRIVATE_VIEWERS_TEXT = (
    "Private session: only members who know its passphrase see and change this board; "
    "people with its view code can watch."
)
VIEWING_TEXT = (
    "Private session, view only: you joined with its view code, so you see this board but "
    "nothing you draw would be shown to anyone."
)
OPEN_TEXT = "Open session: anyone on this network can see and change this board."


class MembersPanel(QDockWidget):
    # A member's row was double-clicked (not ours): the window follows its view.
    member_chosen = Signal(object)  # the member id (32 bits unsigned: not a C int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Members", parent)
        self.setObjectName("members")
        # The session state in full words (whiteboard/app/session_state.py), above the table.
        self.session = QLabel()
        self.session.setWordWrap(True)
        self.session.setContentsMargins(4, 2, 4, 2)
        # Whether the session is private (docs/security.md): who can see this board.
        self.privacy = QLabel()
        self.privacy.setWordWrap(True)
        self.privacy.setContentsMargins(4, 0, 4, 2)
        # A drawer of a private session hands out view codes from here (or the Session menu).
        self.view_code_button = QPushButton("Copy view code")
        self.view_code_button.setToolTip(VIEW_CODE_TIP)
        self.view_code_button.setVisible(False)
        self.table = member_table(0, COLUMNS, TOOLTIPS, self)
        # The counters are small numbers: a fixed width, the header's, leaves the room to names.
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        for column in NUMERIC_COLUMNS:
            width = max(metrics.horizontalAdvance(w) for w in (COLUMNS[column], "9,999")) + 10
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, width)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.session)
        layout.addWidget(self.privacy)
        layout.addWidget(self.view_code_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.table)
        self.setWidget(body)
        self._rows: list[MemberRow] = []
        self.table.cellDoubleClicked.connect(self._chosen)

    def _chosen(self, row: int, _column: int) -> None:
        if 0 <= row < len(self._rows) and not self._rows[row].me:
            self.member_chosen.emit(self._rows[row].member)

    def show_session(self, text: str) -> None:
        self.session.setText(text)

    def show_private(self, key: SessionKey | None) -> None:
        """Who can see this board: anyone (in clear), the passphrase's holders (and whom
        they give the view code), or, for a viewer, that it only watches."""
        if key is None:
            self.privacy.setText(OPEN_TEXT)
        elif not key.can_draw:
            self.privacy.setText(VIEWING_TEXT)
        else:
            self.privacy.setText(PRIVATE_VIEWERS_TEXT if key.viewers else PRIVATE_TEXT)
        self.view_code_button.setVisible(key is not None and key.can_draw and key.viewers)

    def show_rows(self, rows: list[MemberRow]) -> None:
        if rows == self._rows:
            return  # no flicker, no work, when nothing changed
        self._rows = list(rows)
        self.table.setRowCount(len(rows))
        for index, row in enumerate(rows):
            # A row without a colour has no presence yet (every presence has one).
            joining = row.colour is None and not row.me
            text = row.name
            if joining:
                text = NO_NAME if row.state is MemberState.LEFT else JOINING_NAME
            name = Item(f"{text} (you)" if row.me else text)
            if row.colour is not None:
                name.setIcon(_swatch(row.colour))
            follow = "" if row.me else "\nDouble-click to follow their view"
            name.setToolTip(f"{text}, member id {row.member:08x}{follow}")
            if joining:
                name.setForeground(GREY)
            state = Item(STATE_TEXT[row.state])
            state.setToolTip(STATE_TIPS[row.state])
            board = Item("—" if row.me else AGREEMENT_TEXT[row.agreement])
            if row.agreement is Agreement.DIFFERS:
                board.setForeground(QColor(198, 40, 40))
            cells = [
                name,
                state,
                _number(row.nacks_sent),
                _number(row.retransmissions),
                _number(row.late_delivered),
                board,
            ]
            if row.state is MemberState.LEFT:
                for cell in cells:
                    cell.setForeground(GREY)
            for column, cell in enumerate(cells):
                self.table.setItem(index, column, cell)

    def row_texts(self) -> list[list[str]]:
        """What the table shows, cell by cell (for tests and accessibility checks)."""
        texts = []
        for r in range(self.table.rowCount()):
            cells = [self.table.item(r, c) for c in range(self.table.columnCount())]
            texts.append([cell.text() if cell is not None else "" for cell in cells])
        return texts


def _number(value: int) -> Item:
    item = Item(f"{value:,}")
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def member_table(
    rows: int, columns: Sequence[str], tooltips: Sequence[str], parent: QWidget
) -> QTableWidget:
    """A read-only table of members, a row each: the name column stretches, the others fit
    their contents, and each column's header tells what it shows when hovered. It never
    scrolls sideways (which hid the names): a name too long for its column is cut with "…"
    and shown whole when hovered."""
    table = QTableWidget(rows, len(columns), parent)
    table.setHorizontalHeaderLabels(list(columns))
    for column, tip in enumerate(tooltips):
        item = table.horizontalHeaderItem(column)
        if item is not None:
            item.setToolTip(tip)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
    table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideRight)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    return table


def swatch(colour: QColor) -> QIcon:
    """A small square of ``colour``, a member's icon."""
    pixmap = QPixmap(16, 16)
    pixmap.fill(colour)
    return QIcon(pixmap)


def _swatch(argb: int) -> QIcon:
    return swatch(QColor.fromRgba(argb))


__all__ = ["MembersPanel", "member_table", "swatch"]
