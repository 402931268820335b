"""The window's tool bar: tools with their shortcuts, colours (a palette and any other),
stroke width, fill and opacity. It sets the canvas's current tool and style, and tells
(``style_picked``) when the person picks a style, which then applies to the selection too
(whiteboard/app/selection_edits.py)."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import QColorDialog, QComboBox, QLabel, QToolBar, QWidget

from whiteboard.app.canvas import DEFAULT_COLOUR, DEFAULT_FONT_SIZE, DEFAULT_WIDTH, BoardCanvas
from whiteboard.app.strokes import Style
from whiteboard.app.tools import TextTool, ToolKind
from whiteboard.board import Shape, Stroke, Text
from whiteboard.board.edits import opacity_of

COLOURS: tuple[tuple[str, int], ...] = (
    ("Black", 0xFF000000),
    ("Red", 0xFFE53935),
    ("Blue", 0xFF1E88E5),
    ("Green", 0xFF43A047),
    ("Orange", 0xFFFB8C00),
    ("Purple", 0xFF8E24AA),
)
WIDTHS: tuple[float, ...] = (1.0, 3.0, 6.0, 12.0, 24.0)
OPACITIES: tuple[int, ...] = (255, 191, 128, 64)  # 100%, 75%, 50%, 25%: a colour's alpha
TEXT_SIZES: tuple[float, ...] = (12.0, 16.0, 24.0, 32.0, 48.0, 72.0)  # board units
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
    style_picked = Signal(object)  # a Style the person picked (not one set by the program)

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
        canvas.selection_changed.connect(self._selection_changed)
        self.addSeparator()

        colours = QActionGroup(self)
        colours.setExclusive(True)
        self.colour_actions: dict[int, QAction] = {}
        for index, (name, argb) in enumerate(COLOURS, start=1):
            action = _action(self, name, f"{name} ({index})", str(index))
            action.setIcon(swatch(argb))
            action.setCheckable(True)
            action.triggered.connect(lambda _=False, argb=argb: self._pick_colour(argb))
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
        self.width_box.activated.connect(
            lambda index: self._pick_width(float(self.width_box.itemData(index)))
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
        self.fill_action.triggered.connect(lambda _: self._pick(Style(fill=self.canvas.fill)))
        self.addAction(self.fill_action)
        self.addSeparator()
        self.addWidget(QLabel("Opacity ", self))
        self.opacity_box = QComboBox(self)
        self.opacity_box.setToolTip("Opacity of what is drawn next, and of the selection")
        for alpha in OPACITIES:
            self.opacity_box.addItem(_percent(alpha), alpha)
        self.opacity_box.activated.connect(
            lambda index: self._pick_opacity(int(self.opacity_box.itemData(index)))
        )
        self.addWidget(self.opacity_box)
        self.addSeparator()
        self.addWidget(QLabel("Text ", self))
        self.text_size_box = QComboBox(self)
        self.text_size_box.setToolTip("Size of the text typed next, and of selected texts")
        for size in TEXT_SIZES:
            self.text_size_box.addItem(f"{size:g}", size)
        self.text_size_box.setCurrentIndex(TEXT_SIZES.index(DEFAULT_FONT_SIZE))
        self.text_size_box.activated.connect(
            lambda index: self._pick_text_size(float(self.text_size_box.itemData(index)))
        )
        self.addWidget(self.text_size_box)
        self.set_colour(canvas.colour if canvas.colour else DEFAULT_COLOUR)
        self._tips: dict[QAction | QWidget, str] = {a: a.toolTip() for a in self.drawing_actions()}
        self._tips[self.width_box] = self.width_box.toolTip()
        self._tips[self.opacity_box] = self.opacity_box.toolTip()
        self._tips[self.text_size_box] = self.text_size_box.toolTip()

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
        """Draw in ``argb`` from now on: its colour, and its alpha as the opacity."""
        self.canvas.colour = argb
        self._show_colour(argb)
        if self.fill_action.isChecked():
            self.canvas.fill = _fill_of(argb)

    def _show_colour(self, argb: int) -> None:
        opaque = argb | 0xFF000000
        action = self.colour_actions.get(opaque)
        if action is None:
            action = self.custom_colour_action
            action.setIcon(swatch(opaque))
        action.setChecked(True)
        self._show_opacity(opacity_of(argb))

    def _selection_changed(self) -> None:
        """Show what the selected objects have in common (a colour, a width, a text size),
        or, with nothing selected, what is drawn next. Showing changes nothing: a pick does
        (and then applies to both)."""
        canvas = self.canvas
        ops = [item.op for i in canvas.selection if (item := canvas.scene.get(i)) is not None]
        if not ops:
            self._show(canvas.colour, canvas.pen_width, canvas.font_size)
            return
        colours = {op.colour for op in ops}
        widths = {op.width for op in ops if isinstance(op, Stroke | Shape)}
        sizes = {op.font_size for op in ops if isinstance(op, Text)}
        self._show(
            colours.pop() if len(colours) == 1 else None,
            widths.pop() if len(widths) == 1 else None,
            sizes.pop() if len(sizes) == 1 else None,
        )

    def _show(self, colour: int | None, width: float | None, size: float | None) -> None:
        boxes = (self.width_box, self.opacity_box, self.text_size_box)
        for box in boxes:
            box.blockSignals(True)
        try:
            if colour is not None:
                self._show_colour(colour)
            if width is not None and width in WIDTHS:
                self.width_box.setCurrentIndex(WIDTHS.index(width))
            if size is not None:
                _show_in(self.text_size_box, size, f"{size:g}")
        finally:
            for box in boxes:
                box.blockSignals(False)

    def ask_colour(self) -> None:
        chosen = QColorDialog.getColor(
            QColor.fromRgba(self.canvas.colour | 0xFF000000),
            self.parentWidget(),
            "Choose a colour",  # without alpha: the opacity box sets it
        )
        if chosen.isValid():
            self._pick_colour(chosen.rgba())
        else:
            self.set_colour(self.canvas.colour)  # cancelled: keep the check where it was

    def _pick(self, style: Style) -> None:
        self.style_picked.emit(style)  # restyles the selection, shown restyled at once
        if self.canvas.selection:
            self._selection_changed()

    def _pick_colour(self, rgb: int) -> None:
        """The person picked a colour: at the opacity shown."""
        self.set_colour((rgb & 0xFFFFFF) | (int(self.opacity_box.currentData()) << 24))
        fill = self.canvas.fill if self.fill_action.isChecked() else None
        self._pick(Style(colour=self.canvas.colour, fill=fill))

    def _pick_text_size(self, size: float) -> None:
        self.canvas.font_size = size
        tool = self.canvas.active_tool
        if isinstance(tool, TextTool) and tool.active:
            tool.set_font_size(size)  # the text being typed, or edited, too
        self._pick(Style(font_size=size))

    def _pick_opacity(self, alpha: int) -> None:
        self.set_colour((self.canvas.colour & 0xFFFFFF) | (alpha << 24))
        self._pick(Style(opacity=alpha))

    def _show_opacity(self, alpha: int) -> None:
        _show_in(self.opacity_box, alpha, _percent(alpha))

    def set_width(self, width: float) -> None:
        self.canvas.pen_width = width
        if width in WIDTHS:
            self.width_box.setCurrentIndex(WIDTHS.index(width))

    def _step_width(self, step: int) -> None:
        index = min(max(self.width_box.currentIndex() + step, 0), len(WIDTHS) - 1)
        self._pick_width(float(self.width_box.itemData(index)))

    def _pick_width(self, width: float) -> None:
        self.set_width(width)
        self._pick(Style(width=width))

    def _fill_toggled(self, on: bool) -> None:
        self.canvas.fill = _fill_of(self.canvas.colour) if on else 0


def _fill_of(argb: int) -> int:
    """A shape's fill: its colour, lighter (a third of its opacity), so outlines stay clear."""
    alpha = (argb >> 24) & 0xFF
    return ((alpha // 3) << 24) | (argb & 0xFFFFFF) or 0x01000000


def _show_in(box: QComboBox, value: float, label: str) -> None:
    """Show ``value`` in ``box``, added as ``label`` if none of its items holds it (a colour
    remembered with another alpha, a size a text edit or a file set)."""
    index = box.findData(value)
    if index < 0:
        box.addItem(label, value)
        index = box.count() - 1
    box.setCurrentIndex(index)


def _percent(alpha: int) -> str:
    return f"{round(alpha * 100 / 255)}%"


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
