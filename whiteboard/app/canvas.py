"""The board widget: shows a board through a pannable, zoomable view and turns the current
tool's gestures into ops.

It never applies its own ops: it hands them to ``on_local_op`` and the transport delivers them
back like anyone else's, so this board and every other one apply the same ops in the same
order. Until then a sent op is shown as *pending*: a drawing is painted over the board, a
move shows its objects moved and an erase hides them, so nothing blinks even on a transport
that delivers after a round trip. Which objects these are, and how each is shown, is the
Qt-free model's to say (:class:`~whiteboard.app.local_edits.LocalEdits`, which also holds the
objects a tool lifted); the widget keeps its layers in step with it.

What is shown is kept in three layers, so that a 10,000-stroke board stays fluid: the
*scene* (every shown object indexed by place), the *tiles* (the board rendered at the current
zoom, a pan is a few blits) and the *overlay* painted over them every frame (the objects
delivered in the last moments, pending drawings, lifted objects). They are kept in step with
the board and the edits in flight by :class:`~whiteboard.app.board_layers.BoardLayers`, whose
docstring has the details; the widget paints a frame from them, then the tool's preview, and
renders missing tiles between events.

Input: the left button uses the tool; the middle button, or the left with Space held, pans.
The wheel pans (trackpads scroll both ways; Shift turns a mouse wheel sideways) and
Ctrl+wheel zooms about the pointer, as in most drawing programs; a pinch zooms too. Keys
(when the canvas has focus): Ctrl+= and Ctrl+- zoom, Ctrl+0 shows 100%, Ctrl+9 or Shift+1
fits the content; Delete, Backspace, Escape and the arrow keys go to the tool.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QNativeGestureEvent,
    QPainter,
    QPaintEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from whiteboard.app.board_layers import MAX_DIRTY_RECTS, STEP_BUDGET_S, BoardLayers
from whiteboard.app.local_edits import LocalEdits, targets
from whiteboard.app.render import prepare_painting
from whiteboard.app.scene_index import Scene
from whiteboard.app.tiles import TILE, TileKey
from whiteboard.app.tools import (
    BaseTool,
    Pointer,
    SelectTool,
    TextTool,
    ToolKind,
    make_tool,
)
from whiteboard.app.tools.base import HIT_TOLERANCE
from whiteboard.app.undelivered import UNDELIVERED_TIP
from whiteboard.app.view import (
    ZOOM_STEP,
    Rect,
    View,
    board_transform,
    fit,
    rect_inflated,
    rect_union,
    wheel_zoom_factor,
)
from whiteboard.board import (
    MAX_OP_BYTES,
    Blob,
    Board,
    Change,
    DrawingOp,
    Op,
    OpId,
    OrderKey,
    Text,
)
from whiteboard.board.ops import Matrix

BACKGROUND = QColor(255, 255, 255)
DEFAULT_COLOUR = 0xFF000000
DEFAULT_WIDTH = 3.0
DEFAULT_FONT_SIZE = 24.0
LIVE_INTERVAL_MS = 50

# Rendering tiles inside one paint stops after this long: the rest is done between events.
FRAME_BUDGET_S = 0.006
# After a zoom step the old tiles are shown stretched for this long before rendering at the
# new scale starts: a wheel turn is many steps, and tiles for the scales in between would be
# thrown away.
ZOOM_SETTLE_S = 0.12
# A wheel notch (120 eighths of a degree) pans this many pixels.
WHEEL_PAN_PER_NOTCH = 60.0
# Widget pixels around a repainted rectangle: antialiasing and the selection's dashed box.
REFRESH_PAD = 6.0
# Tiles kept beyond those in view and the ring around them.
SPARE_TILES = 16

BoardSource = Callable[[], Board]
OpSink = Callable[[Op], object]  # what it returns (the window: whether it sent) is not used
GestureSink = Callable[[list[OpId]], None]

_CURSORS = {
    ToolKind.TEXT: Qt.CursorShape.IBeamCursor,
    ToolKind.SELECT: Qt.CursorShape.ArrowCursor,
}


class BoardCanvas(QWidget):
    """See the module docstring. Public state: ``tool``, ``colour``, ``pen_width``, ``fill``,
    ``font_size``, ``live_chunks``, ``live_interval_ms``, ``max_payload`` (``max_message``
    for images), ``on_local_op``, ``on_gesture``; ``view``, ``selection``."""

    tool_changed = Signal(object)  # the new ToolKind
    view_changed = Signal()  # zoom or pan: for a zoom indicator
    selection_changed = Signal()

    def __init__(
        self,
        board_source: BoardSource,
        next_op_id: Callable[[], OpId],
        on_local_op: OpSink | None = None,
        parent: QWidget | None = None,
    ) -> None:
        # Process-wide and needed before the first paint: the first canvas is the latest
        # moment (a no-op once the app or another canvas did it).
        prepare_painting()
        super().__init__(parent)
        # A callable rather than a Board: a replica replaces its board when it loads a state.
        self._board_source = board_source
        self._next_op_id = next_op_id
        self.on_local_op = on_local_op
        # Called with the ids of each finished gesture (a stroke's chunks, one erase...), so
        # the undo history can take it back as a whole.
        self.on_gesture: GestureSink | None = None
        # Ops are split so that each fits one payload of the transport.
        self.max_payload = MAX_OP_BYTES
        self.max_message = MAX_OP_BYTES
        self.colour = DEFAULT_COLOUR
        self.pen_width = DEFAULT_WIDTH  # not `width`: that is QWidget.width()
        self.fill = 0  # ARGB fill of rectangles and ellipses; 0 = none
        self.font_size = DEFAULT_FONT_SIZE
        # Send a stroke in chunks while it is drawn (a transport that delivers at once);
        # off, a stroke is sent on release.
        self.live_chunks = True
        self.live_interval_ms = LIVE_INTERVAL_MS
        self._read_only = False

        # Ops sent and not delivered back, lifted objects: what the user sees of them.
        self._edits = LocalEdits()
        self._selection: tuple[OpId, ...] = ()

        self._layers = BoardLayers(board_source, self._edits, BACKGROUND, self._refresh_all, self)
        # The same objects as the layers', for the view, the tools and painting a frame.
        self._scene = self._layers.scene
        self._tiles = self._layers.tiles
        self._view = View()
        self._settle_until = 0.0
        self._pan_from: QPointF | None = None
        self._pan_button = Qt.MouseButton.NoButton
        self._space = False
        self._pressed = False

        self._live_timer = QTimer(self)
        self._live_timer.timeout.connect(self.flush_live_chunk)
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.timeout.connect(self._render_step)

        self._tool: BaseTool = make_tool(ToolKind.PEN, self)
        # Every pixel is painted in paintEvent: Qt need not clear the background first.
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(200, 150)
        self._update_cursor()
        self._rebuild()

    # -- state ------------------------------------------------------------------------------

    @property
    def board(self) -> Board:
        return self._board_source()

    def sizeHint(self) -> QSize:
        return QSize(1000, 700)

    def set_read_only(self, read_only: bool) -> None:
        """Refuse drawing (before joining, while leaving); a gesture in progress is dropped.
        Panning and zooming still work."""
        self._read_only = read_only
        if read_only:
            self._tool.cancel()
            self._pressed = False
        self._update_cursor()

    def is_read_only(self) -> bool:
        return self._read_only

    @property
    def drawing(self) -> bool:
        """A gesture is in progress (a drag, or a label being typed)."""
        return self._tool.active

    @property
    def tool(self) -> ToolKind:
        return self._tool.kind

    @tool.setter
    def tool(self, kind: ToolKind) -> None:
        self.set_tool(kind)

    def set_tool(self, kind: ToolKind) -> None:
        """Choose the tool; what the previous one had in progress is finished or dropped
        (a label being typed is committed). Emits ``tool_changed``."""
        kind = ToolKind(kind)
        if kind is self._tool.kind:
            return
        self._pressed = False
        self._tool.deactivate()
        self._tool = make_tool(kind, self)
        self._update_cursor()
        self.update()
        self.tool_changed.emit(kind)

    @property
    def active_tool(self) -> BaseTool:
        return self._tool

    @property
    def selection(self) -> tuple[OpId, ...]:
        """The selected objects (select tool), in the order selected."""
        return self._selection

    def set_selection(self, ids: Sequence[OpId]) -> None:
        selection = tuple(dict.fromkeys(i for i in ids if i in self._scene))
        if selection == self._selection:
            return
        self._selection = selection
        # All of it: the handles lie around the selection's box, outside every object.
        self.update()
        self.selection_changed.emit()

    def select_all(self) -> None:
        """Select every object shown (switching to the select tool)."""
        self.set_tool(ToolKind.SELECT)
        self.set_selection([item.id for item in self._scene.items()])

    def edit_text(self, op_id: OpId) -> None:
        """Edit the text ``op_id`` in place, with the text tool; Enter goes back to select."""
        item = self._scene.get(op_id)
        if item is None or not isinstance(item.op, Text):
            return
        self.set_tool(ToolKind.TEXT)
        tool = self._tool
        if isinstance(tool, TextTool):
            tool.edit(item, back_to_select=True)

    def delete_selection(self) -> None:
        """Erase the selected objects (one gesture)."""
        if isinstance(self._tool, SelectTool):
            self._tool.erase_selection()

    def pending_ops(self) -> tuple[OpId, ...]:
        return self._edits.pending_ids()

    def pending(self, op_id: OpId) -> Op | None:
        """The op ``op_id`` if it was sent and not delivered back yet."""
        return self._edits.pending(op_id)

    @property
    def scene(self) -> Scene:
        """What is shown, for hit tests."""
        return self._scene

    # -- the view ---------------------------------------------------------------------------

    @property
    def view(self) -> View:
        return self._view

    @property
    def zoom(self) -> float:
        return self._view.scale

    def set_view(self, view: View) -> None:
        """Show the board through ``view`` (its offset is rounded to whole device pixels)."""
        view = view.snapped(self.devicePixelRatioF())
        if view == self._view:
            return
        if view.scale != self._view.scale:
            self._settle_until = time.monotonic() + ZOOM_SETTLE_S
        self._view = view
        self._tool.view_changed()
        self.update()
        self.view_changed.emit()

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        """Zoom by ``factor`` about ``anchor`` (widget coordinates; the centre if None)."""
        if anchor is None:
            anchor = QPointF(self.width_px() / 2.0, self.height_px() / 2.0)
        self.set_view(self._view.zoomed(factor, anchor.x(), anchor.y()))

    def zoom_in(self) -> None:
        self.zoom_by(ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom_by(1.0 / ZOOM_STEP)

    def zoom_reset(self) -> None:
        """100%, about the centre."""
        self.set_view(self._view.with_scale(1.0, self.width_px() / 2.0, self.height_px() / 2.0))

    def fit_to_content(self) -> None:
        """Show every object (at most at 100%); an empty board is shown from its origin."""
        self.set_view(fit(self._scene.content(), self.width_px(), self.height_px()))

    def visible_board_rect(self) -> QRectF:
        """The part of the board in view, in board coordinates (for "export what I see")."""
        x0, y0, x1, y1 = self._view.rect_to_board((0.0, 0.0, self.width_px(), self.height_px()))
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    def pan_by(self, dx: float, dy: float) -> None:
        self.set_view(self._view.panned(dx, dy))

    def width_px(self) -> float:
        return float(QWidget.width(self))

    def height_px(self) -> float:
        return float(QWidget.height(self))

    # -- ToolHost: what the tools use ---------------------------------------------------------

    def widget(self) -> QWidget:
        return self

    def next_op_id(self) -> OpId:
        return self._next_op_id()

    def send(self, op: Op) -> None:
        """Show ``op`` as pending and hand it to ``on_local_op``."""
        before = self._layers.capture(targets(op))
        self._edits.send(op)
        self._layers.apply(before)
        # Last: the transport may deliver it back (and call board_changed) before returning.
        if self.on_local_op is not None:
            self.on_local_op(op)

    def end_gesture(self, ids: Sequence[OpId]) -> None:
        if ids and self.on_gesture is not None:
            self.on_gesture(list(ids))

    def refresh(self, rect: Rect | None = None) -> None:
        """Repaint board rectangle ``rect`` of the widget (None: all of it)."""
        if rect is None:
            self.update()
            return
        x0, y0, x1, y1 = rect_inflated(self._view.rect_to_widget(rect), REFRESH_PAD)
        if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(y0 + y1)):
            self.update()
            return
        self.update(QRectF(x0, y0, x1 - x0, y1 - y0).toAlignedRect())

    def set_lifted(
        self,
        lifted: Mapping[OpId, float],
        dx: float = 0.0,
        dy: float = 0.0,
        matrix: Matrix | None = None,
    ) -> None:
        ids = set(self._edits.lifted) | set(lifted)
        before = self._layers.capture(ids)
        # Where each was shown and is shown now: lifted or not, in the tiles or over them
        # (an object that stays out of the tiles, a recent one, is no change to them).
        layers = self._layers
        rects = [r for item, _ in before.values() if item is not None for r in layers.rects(item)]
        self._edits.lift(lifted, dx, dy, matrix)
        layers.apply(before)
        scene = self._scene
        rects += [r for i in ids if (item := scene.get(i)) for r in layers.rects(item)]
        self._refresh_all(rects)

    def lifted_opacity(self, op_id: OpId) -> float | None:
        """The opacity a tool shows ``op_id`` at (0: hidden, a text being edited), None if
        no tool lifted it."""
        return self._edits.lifted.get(op_id)

    def start_live_timer(self) -> None:
        if self.live_chunks:
            self._live_timer.start(self.live_interval_ms)

    def stop_live_timer(self) -> None:
        self._live_timer.stop()

    def flush_live_chunk(self) -> None:
        """The live timer's slot: the tool sends what its gesture did since the last time
        (the pen's points, a resize's step)."""
        self._tool.flush_live_chunk()

    def cancel_gesture(self) -> None:
        self._pressed = False
        self._tool.cancel()

    def settle(self) -> None:
        """Send what the tool holds back (the arrow keys' nudge): before an undo or a redo,
        which must come after it."""
        self._tool.settle()

    # -- what is shown ------------------------------------------------------------------------

    def pending_blob(self, digest: bytes) -> bytes | None:
        """The bytes of an image this member sent and has not had delivered back."""
        return self._edits.pending_blob(digest)

    def forget_pending(self, op_id: OpId) -> None:
        """``op_id`` will never be delivered (sending it failed): stop showing it."""
        op = self._edits.pending(op_id)
        if op is None:
            return
        before = self._layers.capture(targets(op))
        self._edits.withdraw(op_id)
        self._layers.apply(before)

    def keep_undelivered(self) -> tuple[Op, ...]:
        """The session ended: keep the ops still pending, dimmed (whiteboard/app/undelivered.py);
        returns them, in the order sent."""
        kept = self._edits.keep_undelivered()
        if kept:
            self.update()
        return kept

    def waiting(self) -> tuple[Op, ...]:
        """The undelivered ops not sent again yet, in the order drawn."""
        return self._edits.waiting()

    def undelivered_count(self) -> int:
        """The undelivered ops (sent again or not) still shown dimmed."""
        return self._edits.undelivered_count

    def send_again(self, kept: OpId, op: Op | None) -> None:
        """Replace the undelivered op ``kept`` by ``op``, its re-issue in a new session, sent
        and shown dimmed until it is delivered back (None: the board has ``kept`` already)."""
        old = self._edits.pending(kept)
        ids = set(targets(old)) if old is not None else set()
        if op is not None:
            ids.update(targets(op))
        before = self._layers.capture(ids)
        self._edits.withdraw(kept)
        if op is not None:
            self._edits.send(op, undelivered=True)
        self._layers.apply(before)
        if op is not None and self.on_local_op is not None:
            self.on_local_op(op)

    def undelivered_at(self, position: QPointF) -> bool:
        """Whether an undelivered drawing is under ``position`` (widget coordinates)."""
        x, y = self._view.to_board(position.x(), position.y())
        item = self._scene.topmost_at(x, y, HIT_TOLERANCE / self._view.scale)
        return item is not None and self._edits.is_undelivered(item.id)

    def board_changed(self, change: Change | None = None) -> None:
        """The board changed (``change`` from Board.apply, or None for a whole new board)."""
        if change is None or self.board is not self._layers.shown_board:
            self._rebuild()
            return
        board = self.board
        blob = board.op(change.op_id) if change.op_id in board else None  # a replay's jump
        if isinstance(blob, Blob):  # is not on the board: not one of these
            self._edits.withdraw(change.op_id)
            self._layers.blob_arrived(blob.digest, change.changed)  # images showing them
            return
        pending = self._edits.pending(change.op_id)
        ids = set(change.affected)
        if pending is not None:
            ids.update(targets(pending))
        if not ids:
            if pending is not None:
                self._edits.withdraw(change.op_id)
            # Nothing visible changed (a duplicate, an undo of an op not here yet).
            return
        before = self._layers.capture(ids)
        if pending is not None:
            self._edits.withdraw(change.op_id)
        self._layers.apply(before)
        self._prune_selection()
        if not ids.isdisjoint(self._selection):
            self.update()  # the selection's box and handles moved with it

    def recent_count(self) -> int:
        """How many delivered objects wait above the tiles (see BoardLayers)."""
        return self._layers.recent_count()

    def prepare(self, drawings: Iterable[tuple[DrawingOp, OrderKey]]) -> None:
        """Get ready to show these drawings (a recording's, when its replay opens) where
        they were drawn: their bounds computed and indexed now (~5 us each) rather than on
        the first jump to a moment showing tens of thousands of them."""
        self._layers.prepare(drawings)

    def _rebuild(self) -> None:
        """Show the board as it is now, whatever changed (see BoardLayers.rebuild)."""
        self._layers.rebuild()
        self._prune_selection()
        self.update()

    def _prune_selection(self) -> None:
        if any(i not in self._scene for i in self._selection):
            self.set_selection(self._selection)

    def _refresh_all(self, rects: list[Rect]) -> None:
        if len(rects) > MAX_DIRTY_RECTS:
            # Qt would merge hundreds of rectangles into a region one by one.
            union: Rect | None = None
            for rect in rects:
                union = rect_union(union, rect)
            rects = [union] if union is not None else []
        for rect in rects:
            self.refresh(rect)

    # -- painting ---------------------------------------------------------------------------

    def _visible_keys(self, view: View) -> list[TileKey]:
        rect = view.rect_to_board((0.0, 0.0, self.width_px(), self.height_px()))
        return self._tiles.keys_for(rect)

    def _ring_keys(self, view: View) -> list[TileKey]:
        """The tiles just outside the view, rendered ahead of a pan."""
        pad = TILE / self.devicePixelRatioF()
        rect = view.rect_to_board((-pad, -pad, self.width_px() + pad, self.height_px() + pad))
        visible = set(self._visible_keys(view))
        return [k for k in self._tiles.keys_for(rect) if k not in visible]

    def _prepare_view(self) -> View:
        if self.board is not self._layers.shown_board:
            self._rebuild()
        dpr = self.devicePixelRatioF()
        view = self._view.snapped(dpr)
        self._view = view
        self._tiles.set_scale(view.scale, dpr)
        self._tiles.visible = set(self._visible_keys(view))
        return view

    def _settling(self) -> bool:
        return self._tiles.has_fallback and time.monotonic() < self._settle_until

    def paintEvent(self, event: QPaintEvent) -> None:
        view = self._prepare_view()
        exposed = QRectF(event.rect())
        exposed_board = view.rect_to_board(
            (exposed.left(), exposed.top(), exposed.right() + 1.0, exposed.bottom() + 1.0)
        )
        keys = self._tiles.keys_for(exposed_board)
        if not self._settling():
            self._tiles.render(keys, time.perf_counter() + FRAME_BUDGET_S)
        painter = QPainter(self)
        try:
            painter.setClipRect(exposed)
            self._tiles.paint(painter, view, keys)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            self._layers.paint_overlay(painter, view, exposed_board)
            painter.setTransform(board_transform(view))
            painter.setOpacity(1.0)
            self._tool.paint(painter, view)
        finally:
            painter.end()
        if not self._render_timer.isActive() and not self._tiles.is_complete(
            self._tiles.visible.union(self._ring_keys(view))
        ):
            self._schedule_render()

    def _schedule_render(self, delay_s: float = 0.0) -> None:
        self._render_timer.start(max(0, math.ceil(delay_s * 1000.0)))

    def _render_step(self) -> None:
        """Render tiles between events, a slice at a time: those in view first, then the ring
        around them."""
        if self._settling():
            self._schedule_render(self._settle_until - time.monotonic())
            return
        view = self._prepare_view()
        visible = self._tiles.visible
        deadline = time.perf_counter() + STEP_BUDGET_S
        if not self._tiles.is_complete(visible):
            self._tiles.render(sorted(visible), deadline)
            self.update()
            self._schedule_render()
            return
        ring = self._ring_keys(view)
        if not self._tiles.render(ring, deadline):
            self._schedule_render()
            return
        keep = visible.union(ring)
        self._tiles.evict(keep, len(keep) + SPARE_TILES)

    def finish_rendering(self) -> None:
        """Render every tile in view now, however long it takes (tests, benchmarks)."""
        self._settle_until = 0.0
        self._prepare_view()
        self._tiles.render(sorted(self._tiles.visible), math.inf)
        self.update()

    # -- input ------------------------------------------------------------------------------

    def _pointer(self, position: QPointF, modifiers: Qt.KeyboardModifier) -> Pointer:
        x, y = self._view.to_board(position.x(), position.y())
        shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        alt = bool(modifiers & Qt.KeyboardModifier.AltModifier)
        return Pointer(x, y, position.x(), position.y(), shift, alt)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (
            button == Qt.MouseButton.LeftButton and self._space
        ):
            self._pan_from = event.position()
            self._pan_button = button
            self.setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if button != Qt.MouseButton.LeftButton or self._read_only or self._pressed:
            super().mousePressEvent(event)
            return
        self._pressed = True
        self._tool.press(self._pointer(event.position(), event.modifiers()))
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._pan_from is not None:
            position = event.position()
            delta = position - self._pan_from
            self._pan_from = position
            self.pan_by(delta.x(), delta.y())
            event.accept()
            return
        # Tracked by our own flag, not event.buttons(): synthetic and some tablet events do
        # not always report the held button on moves.
        if not self._pressed:
            super().mouseMoveEvent(event)
            return
        self._tool.move(self._pointer(event.position(), event.modifiers()))
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        button = event.button()
        if self._pan_from is not None and button == self._pan_button:
            delta = event.position() - self._pan_from
            self._pan_from = None
            self.pan_by(delta.x(), delta.y())
            self._update_cursor()
            event.accept()
            return
        if button != Qt.MouseButton.LeftButton or not self._pressed:
            super().mouseReleaseEvent(event)
            return
        self._pressed = False
        self._tool.release(self._pointer(event.position(), event.modifiers()))
        event.accept()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._read_only or self._space:
            super().mouseDoubleClickEvent(event)
            return
        self._tool.double_click(self._pointer(event.position(), event.modifiers()))
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:
        angle = event.angleDelta()
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            delta = angle.y() or angle.x()
            if delta:
                self.zoom_by(wheel_zoom_factor(delta), event.position())
            event.accept()
            return
        pixels = event.pixelDelta()
        if not pixels.isNull():
            dx, dy = float(pixels.x()), float(pixels.y())
        else:
            dx = angle.x() / 120.0 * WHEEL_PAN_PER_NOTCH
            dy = angle.y() / 120.0 * WHEEL_PAN_PER_NOTCH
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and not dx:
            dx, dy = dy, 0.0  # a mouse wheel with Shift scrolls sideways
        if dx or dy:
            self.pan_by(dx, dy)
        event.accept()

    def event(self, event: QEvent) -> bool:
        if isinstance(event, QHelpEvent) and event.type() == QEvent.Type.ToolTip:
            if self.undelivered_at(QPointF(event.pos())):
                QToolTip.showText(event.globalPos(), UNDELIVERED_TIP, self)
                return True
            if not self.toolTip():  # off an undelivered drawing: its tip goes
                QToolTip.hideText()
                event.ignore()
                return True
        if (
            isinstance(event, QNativeGestureEvent)
            and event.gestureType() == Qt.NativeGestureType.ZoomNativeGesture
        ):
            self.zoom_by(1.0 + event.value(), event.position())
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        modifiers = event.modifiers()
        ctrl = bool(modifiers & Qt.KeyboardModifier.ControlModifier)
        shift = bool(modifiers & Qt.KeyboardModifier.ShiftModifier)
        if ctrl and key in (Qt.Key.Key_Equal, Qt.Key.Key_Plus):
            self.zoom_in()
        elif ctrl and key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_out()
        elif ctrl and key == Qt.Key.Key_0:
            self.zoom_reset()
        elif (
            (ctrl and key == Qt.Key.Key_9)
            or key == Qt.Key.Key_Exclam
            or (shift and key == Qt.Key.Key_1)
        ):
            self.fit_to_content()
        elif key == Qt.Key.Key_Space:
            if not event.isAutoRepeat():
                self._space = True
                self._update_cursor()
        elif key == Qt.Key.Key_Shift:
            self._tool.shift_changed(True)
        elif key == Qt.Key.Key_Escape and self._tool.active:
            self.cancel_gesture()
        elif self._read_only or not self._tool.key_press(event):
            super().keyPressEvent(event)
            return
        event.accept()

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            self._update_cursor()
        elif event.key() == Qt.Key.Key_Shift:
            self._tool.shift_changed(False)
        super().keyReleaseEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        # The Space release may go to another widget: do not stay in pan mode.
        if self._space:
            self._space = False
            self._update_cursor()
        super().focusOutEvent(event)

    def _update_cursor(self) -> None:
        if self._pan_from is not None:
            shape = Qt.CursorShape.ClosedHandCursor
        elif self._space:
            shape = Qt.CursorShape.OpenHandCursor
        elif self._read_only:
            shape = Qt.CursorShape.ArrowCursor
        else:
            shape = _CURSORS.get(self._tool.kind, Qt.CursorShape.CrossCursor)
        self.setCursor(shape)


__all__ = [
    "BACKGROUND",
    "DEFAULT_COLOUR",
    "DEFAULT_FONT_SIZE",
    "DEFAULT_WIDTH",
    "LIVE_INTERVAL_MS",
    "BoardCanvas",
    "ToolKind",
]
