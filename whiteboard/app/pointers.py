"""Live pointers (issue 19, point 2): every member's pointer on the board with its name and
colour, and ours sent to them on the transport's side channel (``send_ephemeral``).

* :class:`PointerSharing` watches the canvas's mouse (an event filter; the canvas keeps its
  events) and sends where the pointer is on the board, at most :data:`SEND_HZ` times a second
  and only when it moved; "hidden" when it leaves the canvas or sharing is turned off. The last
  position of a burst is sent when the interval allows, never dropped.
* :class:`RemoteCursors` is what we know of the others' pointers: each glides from where it
  is shown to the newest position over :data:`GLIDE_S` (positions come 30 times a second at
  most, and some are lost), and is hidden after :data:`STILL_HIDE_S` without moving.
* :class:`CursorOverlay` draws them in a child widget over the canvas that takes no mouse
  event. It repaints only the cursors' own rectangles; the board's tiles are never invalidated
  (the canvas repaints what lies beneath from the tiles it has).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, QPointF, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QColor,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QWidget

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.health import SessionHealth
from whiteboard.app.settings import SessionSettings, default_qsettings, save_settings
from whiteboard.board.ops import MAX_COORD
from whiteboard.pointer import (
    PointerDecodeError,
    PointerPosition,
    decode_pointer,
    encode_pointer,
    is_pointer,
)
from whiteboard.transport.events import EphemeralReceived
from whiteboard.transport.interface import MemberState, Transport

SEND_HZ = 30.0  # positions a second, at most (Excalidraw: CURSOR_SYNC_TIMEOUT 33 ms)
GLIDE_S = 0.08  # a shown pointer reaches a new position over this long
STILL_HIDE_S = 3.0  # a pointer that has not moved this long is hidden (tldraw: idle after 3 s)
FRAME_MS = 16
MAX_CURSORS = 256  # members whose pointers are kept; the least recently moved go first
LABEL_MAX_CHARS = 24
# A cursor's extent around its tip, in widget pixels: the arrow and its label, on the right
# of the tip, or on its left near the canvas's right edge.
_EXTENT = QRect(-262, -3, 524, 48)


class PointerSharing(QObject):
    """Sends our pointer's board position while ``enabled``."""

    def __init__(
        self,
        canvas: BoardCanvas,
        send: Callable[[bytes], None],
        enabled: bool = True,
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(canvas)
        self._canvas = canvas
        self._send = send
        self._wall, self._clock = wall, clock
        self._enabled = enabled
        self._last: tuple[float, float, bool] | None = None  # what we sent last
        self._last_at = -math.inf
        self._pending: tuple[float, float, bool] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._flush)
        self.sent = 0
        canvas.setMouseTracking(True)  # moves without a button held, to follow the pointer
        canvas.installEventFilter(self)

    @property
    def enabled(self) -> bool:
        return self._enabled

    def set_enabled(self, enabled: bool) -> None:
        if not enabled and self._last is not None and self._last[2]:
            self._offer(self._last[0], self._last[1], False)  # the others hide it now
            self._flush()
        self._enabled = enabled

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            position = event.position()
            x, y = self._canvas.view.to_board(position.x(), position.y())
            self._offer(x, y, True)
        elif kind == QEvent.Type.Leave and self._last is not None and self._last[2]:
            self._offer(self._last[0], self._last[1], False)
        return False  # the canvas gets every event as before

    def _offer(self, x: float, y: float, visible: bool) -> None:
        if not self._enabled:
            return
        x, y = (min(MAX_COORD, max(-MAX_COORD, v)) for v in (x, y))
        if (x, y, visible) == self._last:
            self._pending = None
            return
        self._pending = (x, y, visible)
        wait = self._last_at + 1.0 / SEND_HZ - self._clock()
        if wait <= 0:
            self._flush()
        elif not self._timer.isActive():
            self._timer.start(max(1, math.ceil(wait * 1000)))

    def _flush(self) -> None:
        if self._pending is None:
            return
        x, y, visible = self._pending
        self._pending = None
        self._last, self._last_at = (x, y, visible), self._clock()
        position = PointerPosition(x, y, visible, round(self._wall() * 1_000_000))
        try:
            self._send(encode_pointer(position))
            self.sent += 1
        except RuntimeError:
            pass  # not in a session (it ended, or is being left): a pointer is not worth telling


@dataclass(slots=True)
class _Cursor:
    from_x: float
    from_y: float
    to_x: float
    to_y: float
    moved_at: float  # when it set off for (to_x, to_y)
    still_since: float  # when it last moved


class RemoteCursors:
    """The others' pointers, by member, in board coordinates (no Qt, no clock of its own)."""

    def __init__(self) -> None:
        self._cursors: dict[int, _Cursor] = {}  # least recently moved first

    def __len__(self) -> int:
        return len(self._cursors)

    def __contains__(self, member: object) -> bool:
        return member in self._cursors

    def members(self) -> list[int]:
        return list(self._cursors)

    def update(self, member: int, position: PointerPosition, now: float) -> None:
        if not position.visible:
            self._cursors.pop(member, None)
            return
        x, y = position.x, position.y
        cursor = self._cursors.pop(member, None)
        if cursor is None or now - cursor.still_since >= STILL_HIDE_S:
            cursor = _Cursor(x, y, x, y, now, now)  # appears where it is: no glide from afar
        elif (x, y) != (cursor.to_x, cursor.to_y):
            cursor.from_x, cursor.from_y = self._at(cursor, now)
            cursor.to_x, cursor.to_y = x, y
            cursor.moved_at = cursor.still_since = now
        if len(self._cursors) >= MAX_CURSORS:
            del self._cursors[next(iter(self._cursors))]
        self._cursors[member] = cursor

    def forget(self, member: int) -> None:
        self._cursors.pop(member, None)

    def position(self, member: int, now: float) -> tuple[float, float] | None:
        """Where ``member``'s pointer is shown at ``now``; None if hidden."""
        cursor = self._cursors.get(member)
        if cursor is None or now - cursor.still_since >= STILL_HIDE_S:
            return None
        return self._at(cursor, now)

    def gliding(self, now: float) -> bool:
        return any(now - c.moved_at < GLIDE_S for c in self._cursors.values())

    def next_hiding(self, now: float) -> float | None:
        """When the next shown pointer is hidden for standing still."""
        times = [c.still_since + STILL_HIDE_S for c in self._cursors.values()]
        upcoming = [t for t in times if t > now]
        return min(upcoming, default=None)

    @staticmethod
    def _at(cursor: _Cursor, now: float) -> tuple[float, float]:
        share = min(1.0, max(0.0, (now - cursor.moved_at) / GLIDE_S))
        share = share * (2.0 - share)  # eases out: fast start, gentle arrival
        return (
            cursor.from_x + (cursor.to_x - cursor.from_x) * share,
            cursor.from_y + (cursor.to_y - cursor.from_y) * share,
        )


# The arrow of a pointer, tip at (0, 0), in widget pixels.
_ARROW = QPolygonF(
    [QPointF(0, 0), QPointF(0, 16), QPointF(4.5, 12), QPointF(8, 19), QPointF(10.5, 18),
     QPointF(7, 11), QPointF(12.5, 11)]
)  # fmt: skip
_LABEL_OFFSET = QPointF(14, 16)


class CursorOverlay(QWidget):
    """Draws :attr:`cursors` over ``canvas``; ``label_of(member)`` gives a name and a colour."""

    def __init__(
        self,
        canvas: BoardCanvas,
        label_of: Callable[[int], tuple[str, int | None]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(canvas)
        self._canvas = canvas
        self._label_of = label_of
        self._clock = clock
        self.cursors = RemoteCursors()
        self._shown: dict[int, QRect] = {}  # what the last paint covered, per member
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._frame = QTimer(self)
        self._frame.setInterval(FRAME_MS)
        self._frame.timeout.connect(self._tick)
        self._hide_timer = QTimer(self)
        self._hide_timer.setSingleShot(True)
        self._hide_timer.timeout.connect(self._tick)
        canvas.installEventFilter(self)
        canvas.view_changed.connect(self._view_changed)
        self.setGeometry(canvas.rect())
        self.raise_()

    def show_position(self, member: int, position: PointerPosition) -> None:
        self.cursors.update(member, position, self._clock())
        self._tick()

    def forget(self, member: int) -> None:
        self.cursors.forget(member)
        self._tick()

    def clear(self) -> None:
        for member in self.cursors.members():
            self.cursors.forget(member)
        self._tick()

    def visible_members(self) -> list[int]:
        now = self._clock()
        return [m for m in self.cursors.members() if self.cursors.position(m, now) is not None]

    def widget_position(self, member: int) -> QPointF | None:
        """Where ``member``'s pointer tip is drawn now, in the canvas's pixels."""
        at = self.cursors.position(member, self._clock())
        if at is None:
            return None
        x, y = self._canvas.view.to_widget(*at)
        return QPointF(x, y)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._canvas and event.type() == QEvent.Type.Resize:
            self.setGeometry(self._canvas.rect())
        return False

    def _view_changed(self) -> None:
        self._shown.clear()
        self.update()  # a pan or zoom moves every pointer

    def _rect_of(self, member: int) -> QRect | None:
        at = self.widget_position(member)
        if at is None:
            return None
        return _EXTENT.translated(round(at.x()), round(at.y()))

    def _tick(self) -> None:
        """Repaint what moved: each cursor's old and new rectangles, nothing else."""
        now = self._clock()
        current = {m: r for m in self.cursors.members() if (r := self._rect_of(m)) is not None}
        for member in set(self._shown) | set(current):
            old, new = self._shown.get(member), current.get(member)
            if old != new:
                for rect in (old, new):
                    if rect is not None:
                        self.update(rect)
        self._shown = current
        if self.cursors.gliding(now):
            if not self._frame.isActive():
                self._frame.start()
        else:
            self._frame.stop()
        hiding = self.cursors.next_hiding(now)
        if hiding is not None:
            self._hide_timer.start(max(1, math.ceil((hiding - now) * 1000)))

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = QFontMetrics(self.font())
        clip = event.rect()
        for member in self.cursors.members():
            at = self.widget_position(member)
            if at is None or not clip.intersects(_EXTENT.translated(round(at.x()), round(at.y()))):
                continue
            name, argb = self._label_of(member)
            colour = QColor.fromRgba(argb) if argb is not None else QColor(90, 90, 90)
            colour.setAlpha(255)
            painter.setPen(QPen(QColor(255, 255, 255), 1.5))
            painter.setBrush(colour)
            painter.drawPolygon(_ARROW.translated(at))
            text = name if len(name) <= LABEL_MAX_CHARS else name[: LABEL_MAX_CHARS - 1] + "…"
            box = QRectF(metrics.boundingRect(text)).adjusted(-5, -2, 5, 2)
            box.moveTopLeft(at + _LABEL_OFFSET)
            if box.right() > self.width():  # near the right edge: the label goes on the left
                box.moveTopRight(at + QPointF(-2, _LABEL_OFFSET.y()))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawRoundedRect(box, 4, 4)
            painter.setPen(QColor(255, 255, 255) if colour.lightness() < 160 else QColor(0, 0, 0))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()


class WindowPointers:
    """A window's pointers: ours shared while the View menu's "Share my pointer" is checked (a
    setting, saved), the others' shown with the name and colour the session knows them by."""

    def __init__(self, window: PointerWindow, share: bool) -> None:
        self._window = window
        self.overlay = CursorOverlay(window.canvas, self._label)
        self.sharing = PointerSharing(
            window.canvas, lambda data: window.transport.send_ephemeral(data), share
        )
        self.action = QAction("Share my &pointer", window.canvas)
        self.action.setCheckable(True)
        self.action.setChecked(share)
        self.action.setToolTip("Let the others see where your pointer is on the board")
        self.action.toggled.connect(self._share)
        self.rejected = 0  # side-channel payloads that were not pointers we understand

    def on_ephemeral(self, event: EphemeralReceived) -> None:
        if not is_pointer(event.payload):
            self.rejected += 1  # another kind, from a later version: not ours to read
            return
        try:
            self.overlay.show_position(event.origin, decode_pointer(event.payload))
        except PointerDecodeError:
            self.rejected += 1

    def member_changed(self, member: int, state: MemberState) -> None:
        if state is MemberState.LEFT:
            self.overlay.forget(member)

    def _label(self, member: int) -> tuple[str, int | None]:
        health = self._window.health
        return health.name_of(member), health.colour_of(member)

    def _share(self, share: bool) -> None:
        self.sharing.set_enabled(share)
        settings = self._window.settings
        if settings is not None and settings.share_pointer != share:
            self._window.settings = replace(settings, share_pointer=share)
            save_settings(default_qsettings(), self._window.settings)


class PointerWindow(Protocol):
    """What :class:`WindowPointers` needs of the main window."""

    settings: SessionSettings | None

    @property
    def canvas(self) -> BoardCanvas: ...

    @property
    def transport(self) -> Transport: ...

    @property
    def health(self) -> SessionHealth: ...
