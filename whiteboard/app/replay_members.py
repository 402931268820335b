"""The replay's members panel: who took part, how many ops each, and per member whether their
ops are shown and whether they are highlighted."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QDockWidget, QWidget
from PySide6.QtWidgets import QTableWidgetItem as Item

from whiteboard.app.members_panel import member_table, swatch
from whiteboard.replay.filter import MemberFilter
from whiteboard.replay.timeline import MemberInfo

COLUMNS = ("Member", "Ops", "Show", "Highlight")
SHOW, HIGHLIGHT = 2, 3
TOOLTIPS = (
    "Name and colour the member chose (from their presence)",
    "The member's ops in this recording",
    "Untick to see the board as if this member's ops had never arrived",
    "Tick to fade everything else and see this member's work",
)
UNKNOWN_COLOUR = QColor(200, 200, 200)


class ReplayMembers(QDockWidget):
    """Emits ``filter_changed(MemberFilter)`` when a box is ticked or unticked."""

    filter_changed = Signal(object)

    def __init__(self, members: tuple[MemberInfo, ...], parent: QWidget | None = None) -> None:
        super().__init__("Members", parent)
        self.setObjectName("replay-members")
        self.members = members
        self.table = member_table(len(members), COLUMNS, TOOLTIPS, self)
        for row, info in enumerate(members):
            # "recorder": whose log this is, whose view of the session is replayed.
            name = Item(f"{info.name} (recorder)" if info.me else info.name)
            name.setIcon(_swatch(info.colour))
            name.setToolTip(f"member id {info.member:08x}")
            ops = Item(f"{info.ops:,}")
            ops.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, 0, name)
            self.table.setItem(row, 1, ops)
            self.table.setItem(row, SHOW, _check(True, f"Show {info.name}'s ops"))
            self.table.setItem(row, HIGHLIGHT, _check(False, f"Highlight {info.name}'s ops"))
        self.table.itemChanged.connect(lambda _item: self.filter_changed.emit(self.member_filter()))
        self.setWidget(self.table)

    def member_filter(self) -> MemberFilter:
        hidden, highlighted = set(), set()
        for row, info in enumerate(self.members):
            if not self._checked(row, SHOW):
                hidden.add(info.member)
            if self._checked(row, HIGHLIGHT):
                highlighted.add(info.member)
        return MemberFilter(frozenset(hidden), frozenset(highlighted))

    def set_shown(self, member: int, shown: bool) -> None:
        self._set(member, SHOW, shown)

    def set_highlighted(self, member: int, highlighted: bool) -> None:
        self._set(member, HIGHLIGHT, highlighted)

    def _set(self, member: int, column: int, on: bool) -> None:
        row = next(i for i, info in enumerate(self.members) if info.member == member)
        item = self.table.item(row, column)
        if item is not None:
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _checked(self, row: int, column: int) -> bool:
        item = self.table.item(row, column)
        return item is not None and item.checkState() == Qt.CheckState.Checked


def _check(on: bool, tip: str) -> Item:
    item = Item()
    item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
    item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
    item.setToolTip(tip)
    return item


def _swatch(argb: int | None) -> QIcon:
    return swatch(UNKNOWN_COLOUR if argb is None else QColor.fromRgba(argb))


__all__ = ["ReplayMembers"]
