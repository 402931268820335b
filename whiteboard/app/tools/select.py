"""Selecting and moving objects.

A click selects the topmost object under the pointer (Shift+click adds or removes it); a
drag from an empty place selects the objects wholly inside the rectangle; a drag from a
selected object moves the selection, shown moving while dragging and sent as Move ops: on a
transport that delivers at once (RMP) the step since the last one every live interval, so
that others watch it move, else one on release; one undo step either way. The arrow keys
nudge the selection by one board unit (Shift: ten), shown at once and sent as one Move op
once the keys rest (``NUDGE_SETTLE_MS``): a held key repeats about
thirty times a second, and each repeat an op of its own would be as many datagrams, MTP
tokens and undo steps. Delete or Backspace erases the selection; Escape drops a drag, or else
the selection.

Handles on the box around the selection resize and turn it (whiteboard/app/handles.py),
shown while dragged and sent as Transform ops: on a transport that delivers at once (RMP)
every live interval, as the pen sends a stroke, so that others watch it; else on release.
Each op is the step since the last one, so that together they make the drag's map.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from enum import Enum, auto

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QKeyEvent, QPainter, QPen, QPolygonF

from whiteboard.app.handles import (
    HANDLE_PX,
    IDENTITY,
    Handle,
    handle_at,
    handle_points,
    inverse,
    mapped_corners,
    resize_matrix,
    rotate_matrix,
    then,
)
from whiteboard.app.strokes import erase_ops, move_ops, transform_ops
from whiteboard.app.tools.base import (
    CLICK_SLOP,
    HIT_TOLERANCE,
    BaseTool,
    Pointer,
    ToolHost,
    ToolKind,
)
from whiteboard.app.view import (
    Rect,
    View,
    rect_from_points,
    rect_inflated,
    rect_translated,
    rect_union,
)
from whiteboard.board import Op, OpId, Text

SELECTION_COLOUR = QColor(30, 136, 229)
MARQUEE_FILL = QColor(30, 136, 229, 40)
NUDGE_STEP = 1.0  # board units an arrow key moves the selection
NUDGE_STEP_SHIFT = 10.0  # ... with Shift held
NUDGE_SETTLE_MS = 500  # a run of nudges goes as one Move op this long after the last
_ARROWS: dict[int, tuple[float, float]] = {  # by key code: QKeyEvent.key() is an int
    Qt.Key.Key_Left.value: (-1.0, 0.0),
    Qt.Key.Key_Right.value: (1.0, 0.0),
    Qt.Key.Key_Up.value: (0.0, -1.0),
    Qt.Key.Key_Down.value: (0.0, 1.0),
}


class _Mode(Enum):
    IDLE = auto()
    PRESSED = auto()  # on a selected object: a click, or the start of a move
    MOVING = auto()
    MARQUEE = auto()
    TRANSFORMING = auto()  # a handle dragged: resizing or turning


class SelectTool(BaseTool):
    def __init__(self, host: ToolHost, kind: ToolKind = ToolKind.SELECT) -> None:
        super().__init__(host, kind)
        self._mode = _Mode.IDLE
        self._anchor = (0.0, 0.0)
        self._anchor_widget = (0.0, 0.0)
        self._current = (0.0, 0.0)
        self._additive = False
        self._handle: Handle | None = None
        self._box: Rect | None = None  # the selection's box when a handle was grabbed
        self._matrix = IDENTITY  # what the handle's drag does so far
        self._sent = IDENTITY  # ... of which the Transform ops sent so far do this much
        self._sent_ids: list[OpId] = []
        self._moved = (0.0, 0.0)  # how far the Move ops sent during this drag took it
        self._nudge = (0.0, 0.0)  # the arrow keys' move not sent yet, in board units
        self._nudged_ids: tuple[OpId, ...] = ()  # ... of the selection as it was then
        self._nudge_timer = QTimer(host.widget())
        self._nudge_timer.setSingleShot(True)
        self._nudge_timer.setInterval(NUDGE_SETTLE_MS)
        self._nudge_timer.timeout.connect(self.commit_nudge)

    @property
    def active(self) -> bool:
        return self._mode is not _Mode.IDLE

    @property
    def offset(self) -> tuple[float, float]:
        """How far the selection is being dragged or nudged, in board units."""
        if self._mode is not _Mode.MOVING:
            return self._nudge
        return (self._current[0] - self._anchor[0], self._current[1] - self._anchor[1])

    def press(self, pointer: Pointer) -> None:
        self.commit_nudge()
        host = self.host
        self._anchor = self._current = (pointer.x, pointer.y)
        self._anchor_widget = (pointer.wx, pointer.wy)
        self._additive = pointer.shift
        box = self.selection_box()
        handle = None if box is None else handle_at(box, pointer.x, pointer.y, host.view.scale)
        if handle is not None:
            self._mode, self._handle, self._box = _Mode.TRANSFORMING, handle, box
            self._matrix = self._sent = IDENTITY
            self._sent_ids = []
            host.start_live_timer()
            return
        item = host.scene.topmost_at(pointer.x, pointer.y, HIT_TOLERANCE / host.view.scale)
        selection = host.selection
        if item is None:
            if not pointer.shift:
                host.set_selection(())
            self._mode = _Mode.MARQUEE
        elif pointer.shift:
            if item.id in selection:
                host.set_selection(tuple(i for i in selection if i != item.id))
            else:
                host.set_selection((*selection, item.id))
            self._mode = _Mode.IDLE
        else:
            if item.id not in selection:
                host.set_selection((item.id,))
            self._mode = _Mode.PRESSED

    def move(self, pointer: Pointer) -> None:
        if self._mode is _Mode.IDLE:
            return
        if self._mode is _Mode.TRANSFORMING:
            self._transform_to(pointer)
            return
        before = self._marquee_rect()
        self._current = (pointer.x, pointer.y)
        if self._mode is _Mode.PRESSED:
            ax, ay = self._anchor_widget
            if math.hypot(pointer.wx - ax, pointer.wy - ay) < CLICK_SLOP:
                return
            self._mode = _Mode.MOVING
            self._moved, self._sent_ids = (0.0, 0.0), []
            self.host.start_live_timer()
        if self._mode is _Mode.MOVING:
            dx, dy = self._unsent()
            self.host.set_lifted(dict.fromkeys(self.host.selection, 1.0), dx, dy)
        else:
            self.host.refresh(before)
            self.host.refresh(self._marquee_rect())

    def double_click(self, pointer: Pointer) -> None:
        """On a text: edit it in place."""
        host = self.host
        item = host.scene.topmost_at(pointer.x, pointer.y, HIT_TOLERANCE / host.view.scale)
        if item is not None and isinstance(item.op, Text):
            host.edit_text(item.id)

    def release(self, pointer: Pointer) -> None:
        if self._mode is _Mode.IDLE:
            return
        self.move(pointer)
        host = self.host
        if self._mode is _Mode.TRANSFORMING:
            self._send_transform()
            self._mode = _Mode.IDLE
            return
        if self._mode is _Mode.MOVING:
            self._end_move()
        elif self._mode is _Mode.MARQUEE:
            rect = self._marquee_rect()
            assert rect is not None
            found = [item.id for item in host.scene.enclosed_by(rect)]
            if self._additive:
                found = list(dict.fromkeys([*host.selection, *found]))
            host.set_selection(found)
            host.refresh(rect)
        self._mode = _Mode.IDLE

    def cancel(self) -> None:
        self.commit_nudge()  # a nudge is done as it is shown: what is dropped is a drag
        if self._mode is _Mode.TRANSFORMING:
            # What went out live is taken back by one more step, to where it all began.
            self._matrix = IDENTITY
            self._send_transform()
        elif self._mode is _Mode.MOVING:
            # What went out live is taken back by one more step, to where it began.
            self._current = self._anchor
            self._end_move()
        elif self._mode is _Mode.MARQUEE:
            self.host.refresh(self._marquee_rect())
        self._mode = _Mode.IDLE

    def deactivate(self) -> None:
        self.cancel()
        self.host.set_selection(())

    def key_press(self, event: QKeyEvent) -> bool:
        key = event.key()
        if key in _ARROWS:
            return self._nudged(_ARROWS[key], event)
        self.commit_nudge()
        if key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.erase_selection()
            return True
        if key == Qt.Key.Key_Escape:
            if self._mode is not _Mode.IDLE:
                self.cancel()
            else:
                self.host.set_selection(())
            return True
        return False

    def _nudged(self, direction: tuple[float, float], event: QKeyEvent) -> bool:
        host = self.host
        if not host.selection or self._mode is not _Mode.IDLE:
            return False  # nothing to nudge, or a drag in progress: the key is not ours
        if host.selection != self._nudged_ids:
            self.commit_nudge()  # the selection changed since (Ctrl+A, or erased by others)
            self._nudged_ids = host.selection
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        step = NUDGE_STEP_SHIFT if shift else NUDGE_STEP
        self._nudge = (self._nudge[0] + direction[0] * step, self._nudge[1] + direction[1] * step)
        host.set_lifted(dict.fromkeys(self._nudged_ids, 1.0), *self._nudge)
        self._nudge_timer.start()
        return True

    def settle(self) -> None:
        self.commit_nudge()

    def commit_nudge(self) -> None:
        """Send the arrow keys' move now, as one op (and one undo step)."""
        self._nudge_timer.stop()
        dx, dy = self._nudge
        if not (dx or dy):
            return
        self._nudge = (0.0, 0.0)
        host = self.host
        targets = [i for i in self._nudged_ids if host.scene.get(i) is not None]
        if targets:
            # Sent before the objects are put back, so they never show at their old place.
            ops = move_ops(targets, dx, dy, host.next_op_id, host.max_payload)
            for op in ops:
                host.send(op)
            host.end_gesture([op.id for op in ops])
        host.set_lifted({})

    def erase_selection(self) -> None:
        host = self.host
        targets = list(host.selection)
        if not targets:
            return
        self.cancel()
        ops = erase_ops(targets, host.next_op_id, host.max_payload)
        for op in ops:
            host.send(op)
        host.end_gesture([op.id for op in ops])
        host.set_selection(())

    # -- resizing and turning ------------------------------------------------------------------

    def selection_box(self) -> Rect | None:
        """The box around the selection as shown (where its handles are), None if nothing
        is selected."""
        box: Rect | None = None
        for rect in self.selection_rects():
            box = rect_union(box, rect)
        return box

    def _transform_to(self, pointer: Pointer) -> None:
        box, handle, host = self._box, self._handle, self.host
        assert box is not None and handle is not None
        if handle is Handle.ROTATE:
            self._matrix = rotate_matrix(box, self._anchor, (pointer.x, pointer.y), pointer.shift)
        else:
            self._matrix = resize_matrix(
                box, handle, self._anchor, (pointer.x, pointer.y), pointer.shift, pointer.alt
            )
        # Shown as the objects are (the steps sent included), then the rest of the drag.
        rest = then(self._matrix, inverse(self._sent))
        host.set_lifted(dict.fromkeys(host.selection, 1.0), matrix=rest)
        host.refresh()  # the box turns with the drag, beyond the objects' rectangles

    def flush_live_chunk(self) -> None:
        """The live timer: send the drag's step since the last one."""
        if self._mode is _Mode.TRANSFORMING and self._send_step():
            self.host.set_lifted(dict.fromkeys(self.host.selection, 1.0), matrix=IDENTITY)
        elif self._mode is _Mode.MOVING and self._send_move_step():
            self.host.set_lifted(dict.fromkeys(self.host.selection, 1.0))

    # -- moving -------------------------------------------------------------------------------

    def _unsent(self) -> tuple[float, float]:
        """How much further the drag takes the selection than the Move ops sent so far."""
        dx, dy = self.offset
        return (dx - self._moved[0], dy - self._moved[1])

    def _send_move_step(self) -> bool:
        """Send the Move ops for the part of the drag not sent yet; whether there was one."""
        host = self.host
        dx, dy = self._unsent()
        targets = list(host.selection)
        if not targets or not (dx or dy):
            return False
        self._send_live(move_ops(targets, dx, dy, host.next_op_id, host.max_payload))
        self._moved = self.offset
        return True

    def _end_move(self) -> None:
        self._end_live(self._send_move_step)
        self._moved = (0.0, 0.0)

    def _send_live(self, ops: Sequence[Op]) -> None:
        """Send one step of a drag: before the objects are put back, so that they never
        show where they were."""
        for op in ops:
            self.host.send(op)
        self._sent_ids += [op.id for op in ops]

    def _end_live(self, send_step: Callable[[], bool]) -> None:
        """A drag ends: its last step, and all of its steps one undo step."""
        host = self.host
        host.stop_live_timer()
        send_step()
        if self._sent_ids:
            host.end_gesture(self._sent_ids)
        self._sent_ids = []
        host.set_lifted({})

    def _send_step(self) -> bool:
        """Send the Transform ops taking the selection from where the steps sent so far put
        it to where the drag does; whether there was a step to send."""
        host = self.host
        step = then(self._matrix, inverse(self._sent))
        targets = [i for i in host.selection if host.scene.get(i) is not None]
        if not targets or all(abs(s - i) < 1e-12 for s, i in zip(step, IDENTITY, strict=True)):
            return False
        self._send_live(transform_ops(targets, step, host.next_op_id, host.max_payload))
        self._sent = self._matrix
        return True

    def _send_transform(self) -> None:
        self._end_live(self._send_step)
        self._matrix = self._sent = IDENTITY
        self.host.refresh()

    def _marquee_rect(self) -> Rect | None:
        if self._mode is not _Mode.MARQUEE:
            return None
        return rect_from_points(*self._anchor, *self._current)

    def selection_rects(self) -> list[Rect]:
        """Where each selected object is shown, in board units."""
        dx, dy = self._unsent() if self._mode is _Mode.MOVING else self.offset
        rects = []
        for op_id in self.host.selection:
            item = self.host.scene.get(op_id)
            if item is not None:
                rects.append(rect_translated(item.rect, dx, dy))
        return rects

    def paint(self, painter: QPainter, view: View) -> None:
        pen = QPen(SELECTION_COLOUR, 1.0, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)  # one pixel wide at every zoom
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        pad = 3.0 / view.scale
        if self._mode is _Mode.TRANSFORMING and self._box is not None:
            # The box as the drag takes it: turned, it is no longer upright.
            corners = mapped_corners(self._matrix, self._box)
            painter.drawPolygon(QPolygonF([QPointF(x, y) for x, y in corners]))
            return
        for rect in self.selection_rects():
            x0, y0, x1, y1 = rect_inflated(rect, pad)
            painter.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0))
        box = self.selection_box()
        if box is not None and self._mode is not _Mode.MOVING and self.offset == (0.0, 0.0):
            if len(self.host.selection) > 1:  # the box the handles hold, around them all
                pen.setStyle(Qt.PenStyle.DotLine)
                painter.setPen(pen)
                x0, y0, x1, y1 = box
                painter.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0))
            self._paint_handles(painter, view, box)
        marquee = self._marquee_rect()
        if marquee is not None:
            painter.setBrush(MARQUEE_FILL)
            x0, y0, x1, y1 = marquee
            painter.drawRect(QRectF(x0, y0, x1 - x0, y1 - y0))

    def _paint_handles(self, painter: QPainter, view: View, box: Rect) -> None:
        scale = view.scale
        half = HANDLE_PX / 2.0 / scale
        pen = QPen(SELECTION_COLOUR, 1.0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(QColor(255, 255, 255))
        points = handle_points(box, scale)
        top = QPointF(points[Handle.N][0], points[Handle.N][1])
        turn = QPointF(*points[Handle.ROTATE])
        painter.drawLine(top, turn)
        for handle, (x, y) in points.items():
            if handle is Handle.ROTATE:
                painter.drawEllipse(QPointF(x, y), half, half)
            else:
                painter.drawRect(QRectF(x - half, y - half, 2 * half, 2 * half))
