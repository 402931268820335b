"""Restyle and reorder the selection (issue 20, points 2 and 4), and the canvas's context
menu, which gathers what can be done to it.

With objects selected, a colour, width, fill or opacity picked in the tool bar is applied to
them as one Restyle (as well as to what is drawn next), and the Arrange menu brings them
forward or to the front, or sends them backward or to the back, as one Reorder. Each is one
undo step. Objects a restyle does not apply to keep what they have: a stroke has no fill, a
text's size is its font's.

A right-click on the board opens a menu of the Edit menu's selection actions and the Arrange
menu; on an object not selected, it selects that object first (with the select tool), as
desktop drawing programs do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.reorder import Placed, reorder_targets
from whiteboard.app.scene_index import Item
from whiteboard.app.strokes import Style, reorder_ops, restyle_ops
from whiteboard.app.tools import ToolKind
from whiteboard.app.tools.base import HIT_TOLERANCE
from whiteboard.board import Op, OpId, Shape, ZPlace

# Text, shortcuts, place, one step. Shift+] is "}" on most layouts: both are bound.
ARRANGE: tuple[tuple[str, tuple[str, ...], ZPlace, bool], ...] = (
    ("Bring to &front", ("Ctrl+Shift+]", "Ctrl+}"), ZPlace.FRONT, False),
    ("Bring f&orward", ("Ctrl+]",), ZPlace.FRONT, True),
    ("Send &backward", ("Ctrl+[",), ZPlace.BACK, True),
    ("Send to bac&k", ("Ctrl+Shift+[", "Ctrl+{"), ZPlace.BACK, False),
)


class SelectionEdits(QObject):
    """The restyle and arrange actions of one window's ``canvas``; ``tell`` says what went
    wrong, in words."""

    def __init__(self, window: QWidget, canvas: BoardCanvas, tell: Callable[[str], None]) -> None:
        super().__init__(window)
        self._canvas = canvas
        self._tell = tell
        self._edit_actions: list[QAction] = []
        self._anytime: list[QAction] = []
        self.actions: list[QAction] = []
        for text, keys, place, step in ARRANGE:
            action = QAction(text, window)
            action.setShortcuts([QKeySequence(key) for key in keys])
            action.triggered.connect(
                lambda _=False, place=place, step=step: self.reorder(place, step)
            )
            window.addAction(action)  # shortcuts work with the menu bar hidden too
            self.actions.append(action)

    def use_context_menu(
        self, edit_actions: Sequence[QAction], anytime: Sequence[QAction] = ()
    ) -> None:
        """Open a menu on a right-click on the canvas: ``edit_actions`` (cut, copy...) and
        the Arrange actions if something is selected, and ``anytime`` (paste) always."""
        self._edit_actions = list(edit_actions)
        self._anytime = list(anytime)
        canvas = self._canvas
        canvas.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        canvas.customContextMenuRequested.connect(self._open_menu)

    def context_menu(self, at: QPoint) -> QMenu | None:
        """The menu for a right-click at ``at`` (widget coordinates), the object there
        selected first if it was not; None for a member who cannot draw."""
        canvas = self._canvas
        if canvas.is_read_only():
            return None
        x, y = canvas.view.to_board(at.x(), at.y())
        item = canvas.scene.topmost_at(x, y, HIT_TOLERANCE / canvas.view.scale)
        if item is not None and item.id not in canvas.selection:
            canvas.set_tool(ToolKind.SELECT)
            canvas.set_selection([item.id])
        menu = QMenu(canvas)
        if canvas.selection:
            menu.addActions(self._edit_actions)
        menu.addActions(self._anytime)
        if canvas.selection:
            menu.addSeparator()
            menu.addActions(self.actions)
        return menu

    def _open_menu(self, at: QPoint) -> None:
        menu = self.context_menu(at)
        if menu is not None:
            menu.exec(self._canvas.mapToGlobal(at))
            menu.deleteLater()

    def _selection(self) -> tuple[OpId, ...]:
        canvas = self._canvas
        if canvas.is_read_only() or canvas.tool is not ToolKind.SELECT:
            return ()
        return canvas.selection

    def restyle(self, style: object) -> bool:
        """Apply ``style`` (a :class:`Style`) to the selection; whether anything was sent."""
        selection = self._selection()
        if not selection or not isinstance(style, Style):
            return False
        canvas = self._canvas
        batches = [(selection, style)]
        if style.colour is not None and style.fill is not None:
            # A new colour with its fill: the fill goes only to shapes that have one, so that
            # recolouring does not fill what was hollow.
            filled = tuple(i for i in selection if _has_fill(canvas.scene.get(i)))
            batches = [(selection, Style(colour=style.colour, opacity=style.opacity))]
            if filled:
                batches.append((filled, Style(fill=style.fill)))
        try:
            ops = [
                op
                for targets, fields in batches
                for op in restyle_ops(targets, fields, canvas.next_op_id, canvas.max_payload)
            ]
        except ValueError as exc:
            self._tell(f"Could not restyle the selection: {exc}")
            return False
        self._send(ops)
        return True

    def reorder(self, place: ZPlace, step: bool = False) -> bool:
        """Bring the selection to the front (one step forward, if ``step``) or send it to the
        back (one step backward); whether anything was sent."""
        selection = self._selection()
        if not selection:
            return False
        canvas = self._canvas
        canvas.settle()  # a nudge still settling goes first: the reorder names its objects
        shown = [Placed(item.id, item.order, item.rect) for item in canvas.scene.items()]
        targets = reorder_targets(shown, set(selection), place, step)
        if not targets:
            return False
        try:
            ops = reorder_ops(targets, place, canvas.next_op_id, canvas.max_payload)
        except ValueError as exc:
            self._tell(f"Could not reorder the selection: {exc}")
            return False
        self._send(ops)
        return True

    def _send(self, ops: Sequence[Op]) -> None:
        """As one action: one undo step."""
        canvas = self._canvas
        canvas.settle()
        for op in ops:
            canvas.send(op)
        canvas.end_gesture([op.id for op in ops])


def _has_fill(item: Item | None) -> bool:
    return item is not None and isinstance(item.op, Shape) and item.op.fill != 0


__all__ = ["ARRANGE", "SelectionEdits"]
