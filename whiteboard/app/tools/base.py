"""What every tool shares: the kinds, the pointer event a tool sees, the canvas services a
tool may use (:class:`ToolHost`), and the base class.

A tool turns one gesture (press, moves, release; or a click and some typing) into ops. It
never applies them: it hands them to the host, which sends them and shows them as pending
until the transport delivers them back, exactly as for the pen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from PySide6.QtGui import QKeyEvent, QPainter
from PySide6.QtWidgets import QWidget

from whiteboard.app.scene_index import Scene
from whiteboard.app.view import Rect, View
from whiteboard.board import Op, OpId
from whiteboard.board.ops import Matrix


class ToolKind(Enum):
    PEN = "pen"
    HIGHLIGHTER = "highlighter"
    LINE = "line"
    RECT = "rect"
    ELLIPSE = "ellipse"
    ARROW = "arrow"
    TEXT = "text"
    ERASER = "eraser"
    SELECT = "select"
    LASER = "laser"  # points, fading; never an op (whiteboard/app/pointers.py)


# How near, in widget pixels, the pointer must be to an object to hit it: the same on screen
# whatever the zoom.
HIT_TOLERANCE = 4.0
# A press that moves less than this (widget pixels) before its release is a click.
CLICK_SLOP = 3.0


@dataclass(frozen=True, slots=True)
class Pointer:
    """Where the pointer is, on the board and in the widget, and the modifiers held."""

    x: float
    y: float
    wx: float
    wy: float
    shift: bool = False
    alt: bool = False


class ToolHost(Protocol):
    """The canvas as a tool sees it."""

    colour: int
    pen_width: float
    fill: int
    font_size: float
    live_chunks: bool
    max_payload: int

    @property
    def view(self) -> View: ...

    @property
    def scene(self) -> Scene:
        """What is shown (board objects at their shown offsets, pending drawings), for hit
        tests."""
        ...

    @property
    def selection(self) -> tuple[OpId, ...]: ...

    def widget(self) -> QWidget: ...

    def next_op_id(self) -> OpId: ...

    def send(self, op: Op) -> None:
        """Send ``op`` and show it as pending until it is delivered."""

    def end_gesture(self, ids: Sequence[OpId]) -> None:
        """The ops of one gesture, to be undone together."""

    def refresh(self, rect: Rect | None = None) -> None:
        """Repaint a board rectangle of the preview (None: all of it)."""

    def set_lifted(
        self,
        lifted: Mapping[OpId, float],
        dx: float = 0.0,
        dy: float = 0.0,
        matrix: Matrix | None = None,
    ) -> None:
        """Show these objects above the board with an opacity each, moved by (dx, dy) or
        mapped by ``matrix``, until the next call (an empty mapping puts them back)."""

    def set_selection(self, ids: Sequence[OpId]) -> None: ...

    def set_tool(self, kind: ToolKind) -> None: ...

    def edit_text(self, op_id: OpId) -> None:
        """Edit the text ``op_id`` in place with the text tool (from the select tool)."""

    def start_live_timer(self) -> None: ...

    def stop_live_timer(self) -> None: ...


class BaseTool:
    """A tool that does nothing: subclasses override what their gesture needs."""

    def __init__(self, host: ToolHost, kind: ToolKind) -> None:
        self.host = host
        self.kind = kind

    @property
    def active(self) -> bool:
        """A gesture is in progress (a drag, or text being typed)."""
        return False

    def press(self, pointer: Pointer) -> None:
        pass

    def move(self, pointer: Pointer) -> None:
        pass

    def release(self, pointer: Pointer) -> None:
        pass

    def double_click(self, pointer: Pointer) -> None:
        pass

    def flush_live_chunk(self) -> None:
        """The live timer (started by the tool): send what the gesture did since."""

    def key_press(self, event: QKeyEvent) -> bool:
        """A key the canvas did not use; True if the tool did."""
        return False

    def shift_changed(self, shift: bool) -> None:
        """Shift was pressed or released during a gesture."""

    def paint(self, painter: QPainter, view: View) -> None:
        """Paint the preview. The painter maps board coordinates (see ``view``) and is
        restored by the caller."""

    def cancel(self) -> None:
        """Drop the gesture in progress without sending anything more."""

    def deactivate(self) -> None:
        """Another tool was chosen: finish or drop what is in progress."""
        self.cancel()

    def settle(self) -> None:
        """Send now what the tool holds back to send as one op (the arrow keys' nudge)."""

    def view_changed(self) -> None:
        """The view was panned or zoomed."""
