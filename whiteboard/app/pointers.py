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

import itertools
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPointF, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import (
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
from whiteboard.app.tools import ToolKind
from whiteboard.board.ops import MAX_COORD
from whiteboard.pointer import (
    PointerKind,
    PointerPosition,
    encode_pointer,
)

SEND_HZ = 30.0  # positions a second, at most (Excalidraw: CURSOR_SYNC_TIMEOUT 33 ms)
GLIDE_S = 0.08  # a shown pointer reaches a new position over this long
STILL_HIDE_S = 3.0  # a pointer that has not moved this long is hidden (tldraw: idle after 3 s)
FRAME_MS = 16
MAX_CURSORS = 256  # members whose pointers are kept; the least recently moved go first
LABEL_MAX_CHARS = 24
LASER_FADE_S = 1.0  # a laser trail's point fades out over this long (tldraw: 1.2 s)
LASER_POINTS = 128  # the newest points of each trail
LASER_COLOUR = QColor(255, 32, 48)
LASER_WIDTH = 4.0  # widget pixels
# A cursor's extent around its tip, in widget pixels: the arrow and its label, on the right
# of the tip, or on its left near the canvas's right edge.
_EXTENT = QRect(-262, -3, 524, 48)


_Sent = tuple[float, float, bool, PointerKind]  # x, y, visible, kind
_MOUSE = (QEvent.Type.MouseMove, QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease)


class SideSender(QObject):
    """What tells the others something about our canvas on the side channel: its canvas, how
    to send, the wall clock (timestamps) and the monotonic one (pacing)."""

    def __init__(
        self,
        canvas: BoardCanvas,
        send: Callable[[bytes], None],
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(canvas)
        self._canvas = canvas
        self._send = send
        self._wall, self._clock = wall, clock
        self._last_at = -math.inf  # when we last sent
        self.sent = 0

    def _transmit(self, data: bytes) -> None:
        self._last_at = self._clock()
        try:
            self._send(data)
            self.sent += 1
        except RuntimeError:
            pass  # not in a session (it ended, or is being left): not worth telling anyone

    def _sent_us(self) -> int:
        return round(self._wall() * 1_000_000)


class PointerSharing(SideSender):
    """Sends our pointer's board position while ``enabled``."""

    def __init__(
        self,
        canvas: BoardCanvas,
        send: Callable[[bytes], None],
        enabled: bool = True,
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(canvas, send, wall, clock)
        self._enabled = enabled
        self._last: _Sent | None = None  # what we sent last
        self._pending: _Sent | None = None
        self._lasering = False  # the laser pointer is pressed (ToolKind.LASER)
        # Each laser point where we are: our own trail, drawn at every move, not 30 a second.
        self.on_laser: Callable[[float, float], None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._flush)
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
        if isinstance(event, QMouseEvent) and kind in _MOUSE:
            position = event.position()
            x, y = self._canvas.view.to_board(position.x(), position.y())
            left = event.button() == Qt.MouseButton.LeftButton
            if kind == QEvent.Type.MouseButtonPress and left:
                canvas = self._canvas
                self._lasering = canvas.tool is ToolKind.LASER and not canvas.is_read_only()
            elif kind == QEvent.Type.MouseButtonRelease and left:
                self._lasering = False
            if self._lasering:
                if self.on_laser is not None:
                    self.on_laser(x, y)
                self._offer(x, y, True, PointerKind.LASER)
            else:
                self._offer(x, y, True)
        elif kind == QEvent.Type.Leave and self._last is not None and self._last[2]:
            self._offer(self._last[0], self._last[1], False)
        return False  # the canvas gets every event as before

    def _offer(
        self, x: float, y: float, visible: bool, kind: PointerKind = PointerKind.POINTER
    ) -> None:
        # The laser is pointing on purpose: it goes even with the pointer's sharing off.
        if not self._enabled and kind is not PointerKind.LASER:
            return
        x, y = (min(MAX_COORD, max(-MAX_COORD, v)) for v in (x, y))
        if (x, y, visible, kind) == self._last:
            self._pending = None
            return
        self._pending = (x, y, visible, kind)
        wait = self._last_at + 1.0 / SEND_HZ - self._clock()
        if wait <= 0:
            self._flush()
        elif not self._timer.isActive():
            self._timer.start(max(1, math.ceil(wait * 1000)))

    def _flush(self) -> None:
        if self._pending is None:
            return
        x, y, visible, kind = self._pending
        self._pending = None
        self._last = (x, y, visible, kind)
        self._transmit(encode_pointer(PointerPosition(x, y, visible, self._sent_us(), kind)))


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


class LaserTrails:
    """The laser pointers' trails, ours included, in board coordinates: each point fades out
    over :data:`LASER_FADE_S` (no Qt, no clock of its own)."""

    def __init__(self) -> None:
        self._trails: dict[int, deque[tuple[float, float, float]]] = {}

    def add(self, member: int, x: float, y: float, now: float) -> None:
        trail = self._trails.pop(member, None)
        if trail is None:
            trail = deque(maxlen=LASER_POINTS)
            if len(self._trails) >= MAX_CURSORS:
                del self._trails[next(iter(self._trails))]
        trail.append((x, y, now))
        self._trails[member] = trail  # the most recently used, last

    def trails(self, now: float) -> dict[int, list[tuple[float, float, float]]]:
        """Each member's points that have not faded yet, oldest first, with their age."""
        shown: dict[int, list[tuple[float, float, float]]] = {}
        for member, trail in list(self._trails.items()):
            while trail and now - trail[0][2] >= LASER_FADE_S:
                trail.popleft()
            if not trail:
                del self._trails[member]
                continue
            shown[member] = [(x, y, now - at) for x, y, at in trail]
        return shown

    def active(self, now: float) -> bool:
        return bool(self.trails(now))


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
        self.lasers = LaserTrails()
        self._shown: dict[int, QRect] = {}  # what the last paint covered, per member
        self._laser_area = QRect()  # ... and of the laser trails
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

    def show_laser(self, member: int, x: float, y: float) -> None:
        self.lasers.add(member, x, y, self._clock())
        self._tick()

    def forget(self, member: int) -> None:
        self.cursors.forget(member)
        self._tick()

    def clear(self) -> None:
        for member in self.cursors.members():
            self.cursors.forget(member)
        self._tick()

    def refresh(self) -> None:
        """Repaint for what :attr:`cursors` and :attr:`lasers` hold now (set directly)."""
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
        laser_area = self._trails_area(now)
        if laser_area != self._laser_area:
            self.update(laser_area.united(self._laser_area))
            self._laser_area = laser_area
        if self.cursors.gliding(now) or not laser_area.isNull():
            if not self._frame.isActive():
                self._frame.start()
        else:
            self._frame.stop()
        hiding = self.cursors.next_hiding(now)
        if hiding is not None:
            self._hide_timer.start(max(1, math.ceil((hiding - now) * 1000)))

    def _trails_area(self, now: float) -> QRect:
        """The widget rectangle the laser trails cover (null: none shown)."""
        to_widget = self._canvas.view.to_widget
        xs: list[float] = []
        ys: list[float] = []
        for trail in self.lasers.trails(now).values():
            for x, y, _ in trail:
                wx, wy = to_widget(x, y)
                xs.append(wx)
                ys.append(wy)
        if not xs:
            return QRect()
        margin = LASER_WIDTH + 6
        return QRectF(
            min(xs) - margin, min(ys) - margin, max(xs) - min(xs) + 2 * margin,
            max(ys) - min(ys) + 2 * margin,
        ).toAlignedRect()  # fmt: skip

    def _paint_trails(self, painter: QPainter, now: float) -> None:
        to_widget = self._canvas.view.to_widget
        for trail in self.lasers.trails(now).values():
            points = [(QPointF(*to_widget(x, y)), age) for x, y, age in trail]
            for (start, _), (end, age) in itertools.pairwise(points):
                colour = QColor(LASER_COLOUR)
                colour.setAlphaF(max(0.0, 1.0 - age / LASER_FADE_S))
                pen = QPen(colour, LASER_WIDTH)
                pen.setCapStyle(Qt.PenCapStyle.RoundCap)
                painter.setPen(pen)
                painter.drawLine(start, end)
            head, age = points[-1]
            glow = QColor(LASER_COLOUR)
            glow.setAlphaF(max(0.0, 1.0 - age / LASER_FADE_S))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(glow)
            painter.drawEllipse(head, LASER_WIDTH, LASER_WIDTH)

    def _label_box(self, name: str, at: QPointF, metrics: QFontMetrics) -> tuple[str, QRectF]:
        """A pointer's label, shortened, and where it is drawn for a tip at ``at``."""
        text = name if len(name) <= LABEL_MAX_CHARS else name[: LABEL_MAX_CHARS - 1] + "…"
        box = QRectF(metrics.boundingRect(text)).adjusted(-5, -2, 5, 2)
        box.moveTopLeft(at + _LABEL_OFFSET)
        if box.right() > self.width():  # near the right edge: the label goes on the left
            box.moveTopRight(at + QPointF(-2, _LABEL_OFFSET.y()))
        return text, box

    def label_at(self, position: QPointF) -> int | None:
        """The member whose pointer's name is drawn at ``position`` (the canvas's pixels)."""
        metrics = QFontMetrics(self.font())
        for member in reversed(self.cursors.members()):  # the topmost first
            at = self.widget_position(member)
            if at is not None:
                _, box = self._label_box(self._label_of(member)[0], at, metrics)
                if box.contains(position):
                    return member
        return None

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._paint_trails(painter, self._clock())
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
            text, box = self._label_box(name, at, metrics)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawRoundedRect(box, 4, 4)
            painter.setPen(QColor(255, 255, 255) if colour.lightness() < 160 else QColor(0, 0, 0))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        painter.end()
