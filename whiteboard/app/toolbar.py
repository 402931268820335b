"""The window's tool bar: tools with their shortcuts, colours (a palette and any other),
stroke width and fill. It only sets the canvas's current tool and style."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize
from PySide6.QtGui import QAction, QActionGroup, QColor, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import QColorDialog, QComboBox, QToolBar, QWidget

from whiteboard.app.canvas import DEFAULT_COLOUR, DEFAULT_WIDTH, BoardCanvas
from whiteboard.app.tools import ToolKind

COLOURS: tuple[tuple[str, int], ...] = (
    ("Black", 0xFF000000),
    ("Red", 0xFFE53935),
    ("Blue", 0xFF1E88E5),
    ("Green", 0xFF43A047),
    ("Orange", 0xFFFB8C00),
    ("Purple", 0xFF8E24AA),
)
WIDTHS: tuple[float, ...] = (1.0, 3.0, 6.0, 12.0, 24.0)
# Tool, label, shortcut: one letter each, as in most drawing programs.
TOOLS: tuple[tuple[ToolKind, str, str], ...] = (
    (ToolKind.SELECT, "Select and move", "V"),
    (ToolKind.PEN, "Pen", "P"),
    (ToolKind.HIGHLIGHTER, "Highlighter", "H"),
    (ToolKind.LINE, "Line", "L"),
    (ToolKind.ARROW, "Arrow", "A"),
    (ToolKind.RECT, "Rectangle", "R"),
    (ToolKind.ELLIPSE, "Ellipse", "O"),
    (ToolKind.TEXT, "Text", "T"),
    (ToolKind.ERASER, "Eraser", "E"),
    (ToolKind.LASER, "Laser pointer: a trail everyone sees fade", "K"),
)
TOOL_GLYPHS = {
    ToolKind.SELECT: "⬚",
    ToolKind.PEN: "✎",
    ToolKind.HIGHLIGHTER: "▌",
    ToolKind.LINE: "╱",  # noqa: RUF001 (the glyph is the point)
    ToolKind.ARROW: "➚",
    ToolKind.RECT: "▭",
    ToolKind.ELLIPSE: "◯",
    ToolKind.TEXT: "T",
    ToolKind.ERASER: "⌫",
    ToolKind.LASER: "✦",
}


class DrawingToolbar(QToolBar):
    def __init__(self, canvas: BoardCanvas, parent: QWidget) -> None:
        super().__init__("Tools", parent)
        self.setObjectName("tools")
        self.setIconSize(QSize(20, 20))
        self.canvas = canvas
        self.tool_actions: dict[ToolKind, QAction] = {}
        tools = QActionGroup(self)
        tools.setExclusive(True)
        for kind, label, key in TOOLS:
            action = _action(self, f"{TOOL_GLYPHS[kind]}", f"{label} ({key})", key)
            action.setCheckable(True)
            action.triggered.connect(lambda _=False, kind=kind: canvas.set_tool(kind))
            tools.addAction(action)
            self.addAction(action)
            self.tool_actions[kind] = action
        self.tool_actions[canvas.tool].setChecked(True)
        canvas.tool_changed.connect(self._tool_changed)
        self.addSeparator()

        colours = QActionGroup(self)
        colours.setExclusive(True)
        self.colour_actions: dict[int, QAction] = {}
        for index, (name, argb) in enumerate(COLOURS, start=1):
            action = _action(self, name, f"{name} ({index})", str(index))
            action.setIcon(swatch(argb))
            action.setCheckable(True)
            action.triggered.connect(lambda _=False, argb=argb: self.set_colour(argb))
            colours.addAction(action)
            self.addAction(action)
            self.colour_actions[argb] = action
        self.custom_colour_action = _action(self, "Other colour…", "Other colour… (C)", "C")
        self.custom_colour_action.setCheckable(True)
        self.custom_colour_action.triggered.connect(self.ask_colour)
        colours.addAction(self.custom_colour_action)
        self.addAction(self.custom_colour_action)
        self.addSeparator()

        self.width_box = QComboBox(self)
        self.width_box.setToolTip("Stroke width ([ and ] step it)")
        for width in WIDTHS:
            self.width_box.addItem(f"{width:g} px", width)
        self.width_box.setCurrentIndex(WIDTHS.index(DEFAULT_WIDTH))
        self.width_box.currentIndexChanged.connect(
            lambda index: self.set_width(float(self.width_box.itemData(index)))
        )
        self.addWidget(self.width_box)
        thinner = _action(self, "Thinner", "Thinner ([)", "[")
        thinner.triggered.connect(lambda: self._step_width(-1))
        thicker = _action(self, "Thicker", "Thicker (])", "]")
        thicker.triggered.connect(lambda: self._step_width(+1))
        parent.addActions([thinner, thicker])
        self.fill_action = _action(self, "Fill", "Fill shapes with the colour (F)", "F")
        self.fill_action.setCheckable(True)
        self.fill_action.toggled.connect(self._fill_toggled)
        self.addAction(self.fill_action)
        self.set_colour(canvas.colour if canvas.colour else DEFAULT_COLOUR)
        self._tips: dict[QAction | QWidget, str] = {a: a.toolTip() for a in self.drawing_actions()}
        self._tips[self.width_box] = self.width_box.toolTip()

    def drawing_actions(self) -> list[QAction]:
        """What draws or styles a drawing: of no use to a member who cannot send."""
        return [
            *self.tool_actions.values(),
            *self.colour_actions.values(),
            self.custom_colour_action,
            self.fill_action,
        ]

    def set_drawing_enabled(self, enabled: bool, reason: str = "") -> None:
        """Enable or disable every drawing tool; disabled ones say ``reason`` when hovered,
        so a viewer learns why nothing draws instead of drawing in vain."""
        for item, tip in self._tips.items():
            item.setEnabled(enabled)
            item.setToolTip(tip if enabled or not reason else f"{tip}: {reason}")

    def _tool_changed(self, kind: object) -> None:
        action = self.tool_actions.get(kind) if isinstance(kind, ToolKind) else None
        if action is not None:
            action.setChecked(True)

    def set_colour(self, argb: int) -> None:
        self.canvas.colour = argb
        action = self.colour_actions.get(argb)
        if action is None:
            action = self.custom_colour_action
            action.setIcon(swatch(argb))
        action.setChecked(True)
        if self.fill_action.isChecked():
            self.canvas.fill = _fill_of(argb)

    def ask_colour(self) -> None:
        chosen = QColorDialog.getColor(
            QColor.fromRgba(self.canvas.colour),
            self.parentWidget(),
            "Choose a colour",
            QColorDialog.ColorDialogOption.ShowAlphaChannel,
        )
        if chosen.isValid():
            self.set_colour(chosen.rgba())
        else:
            self.set_colour(self.canvas.colour)  # cancelled: keep the check where it was

    def set_width(self, width: float) -> None:
        self.canvas.pen_width = width
        if width in WIDTHS:
            self.width_box.setCurrentIndex(WIDTHS.index(width))

    def _step_width(self, step: int) -> None:
        index = min(max(self.width_box.currentIndex() + step, 0), len(WIDTHS) - 1)
        self.width_box.setCurrentIndex(index)

    def _fill_toggled(self, on: bool) -> None:
        self.canvas.fill = _fill_of(self.canvas.colour) if on else 0


def _fill_of(argb: int) -> int:
    """A shape's fill: its colour, lighter (a third of its opacity), so outlines stay clear."""
    alpha = (argb >> 24) & 0xFF
    return ((alpha // 3) << 24) | (argb & 0xFFFFFF) or 0x01000000


def _action(owner: QObject, text: str, tip: str, key: str) -> QAction:
    action = QAction(text, owner)
    action.setToolTip(tip)
    action.setShortcut(QKeySequence(key))
    return action


def swatch(argb: int) -> QIcon:
    pixmap = QPixmap(32, 32)  # scaled down by the toolbar: sharp at 2x too
    pixmap.fill(QColor.fromRgba(argb))
    return QIcon(pixmap)


__all__ = ["COLOURS", "TOOLS", "WIDTHS", "DrawingToolbar", "swatch"]
