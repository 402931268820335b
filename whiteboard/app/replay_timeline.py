"""The replay's timeline: a slider over the whole recording, with lanes painted under it.

* the **activity** lane: when the board changed (darker where more changed);
* the **network** lane, one row per kind of event the log holds: NACKs sent and received,
  retransmissions, joins, leaves, boards handed over, failures
  (:mod:`whiteboard.replay.network`), each kind in its colour, with a legend under it;
* idle stretches, shaded when *skip idle time* is on; the current moment as a line.

Clicking or dragging anywhere on the slider or the lanes asks to go there
(:attr:`ReplayTimeline.seek_requested`).
"""

from __future__ import annotations

import html
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPoint, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPixmap
from PySide6.QtWidgets import (
    QLabel,
    QSizePolicy,
    QSlider,
    QStyle,
    QStyleOptionSlider,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from whiteboard.replay.clock import IdleGap, format_elapsed
from whiteboard.replay.network import MarkKind, NetworkMark, count_by_kind
from whiteboard.replay.timeline import Timeline

MARK_COLOURS: dict[MarkKind, QColor] = {
    MarkKind.NACK_SENT: QColor(0xF5, 0x7C, 0x00),  # orange
    MarkKind.NACK_RECEIVED: QColor(0x8E, 0x24, 0xAA),  # purple
    MarkKind.RETRANSMISSION: QColor(0xE5, 0x39, 0x35),  # red
    MarkKind.JOIN: QColor(0x43, 0xA0, 0x47),  # green
    MarkKind.LEAVE: QColor(0x75, 0x75, 0x75),  # grey
    MarkKind.BOARD_TRANSFER: QColor(0x1E, 0x88, 0xE5),  # blue
    MarkKind.FAILURE: QColor(0x21, 0x21, 0x21),  # black
}
ACTIVITY_COLOUR = QColor(0x37, 0x47, 0x4F)
IDLE_COLOUR = QColor(0, 0, 0, 24)
CURSOR_COLOUR = QColor(0xD8, 0x1B, 0x60)
ROW_HEIGHT = 7
ROW_GAP = 2
# A mark under the pointer within this many pixels is described in the tooltip.
TOOLTIP_REACH_PX = 3


class TimelineSlider(QSlider):
    """A horizontal slider in milliseconds from the recording's start that jumps to where it
    is clicked (rather than a page at a time) and says where its values are drawn."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        # The window handles the arrow keys (a step is an op there, not a millisecond).
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

    def value_span(self) -> tuple[float, float]:
        """The x of the handle's centre at the minimum and at the maximum."""
        option = QStyleOptionSlider()
        self.initStyleOption(option)
        style = self.style()
        groove = style.subControlRect(
            QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderGroove, self
        )
        handle = style.subControlRect(
            QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, self
        )
        left = groove.x() + handle.width() / 2.0
        return left, left + max(1, groove.width() - handle.width())

    def value_at(self, x: float) -> int:
        left, right = self.value_span()
        share = min(max((x - left) / (right - left), 0.0), 1.0)
        return self.minimum() + round(share * (self.maximum() - self.minimum()))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            # Put the handle under the pointer first: the press then grabs it for a drag.
            self.setValue(self.value_at(event.position().x()))
        super().mousePressEvent(event)


class TimelineLanes(QWidget):
    """The lanes under the slider, drawn at the slider's scale."""

    def __init__(self, timeline: Timeline, slider: TimelineSlider, parent: QWidget) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.slider = slider
        self.marks: tuple[NetworkMark, ...] = timeline.marks
        self.kinds = [kind for kind in MarkKind if any(m.kind is kind for m in self.marks)]
        self._mark_times = [mark.t_us for mark in self.marks]
        self.position_us = timeline.start_us
        self.gaps: tuple[IdleGap, ...] = ()
        self.show_gaps = False
        self._cached: tuple[tuple[object, ...], QPixmap] | None = None  # see _background
        self._cached_gaps: tuple[IdleGap, ...] = ()
        rows = 1 + len(self.kinds)
        self.setFixedHeight(rows * (ROW_HEIGHT + ROW_GAP) + ROW_GAP)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(600, self.height())

    # -- geometry ---------------------------------------------------------------------------

    def x_of(self, t_us: int) -> float:
        left, right = self.slider.value_span()
        duration = max(1, self.timeline.duration_us)
        return left + (t_us - self.timeline.start_us) / duration * (right - left)

    def time_at(self, x: float) -> int:
        left, right = self.slider.value_span()
        share = min(max((x - left) / (right - left), 0.0), 1.0)
        return self.timeline.start_us + round(share * self.timeline.duration_us)

    def row_of(self, kind: MarkKind) -> int:
        """The row a kind is painted in (0 is the activity row)."""
        return 1 + self.kinds.index(kind)

    def _row_rect(self, row: int) -> QRectF:
        top = ROW_GAP + row * (ROW_HEIGHT + ROW_GAP)
        return QRectF(0.0, top, self.width(), ROW_HEIGHT)

    # -- painting ---------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            painter.drawPixmap(0, 0, self._background())
            x = self.x_of(self.position_us)
            painter.fillRect(QRectF(x - 0.5, 0.0, 1.5, self.height()), CURSOR_COLOUR)
        finally:
            painter.end()

    def _background(self) -> QPixmap:
        """Everything but the cursor, painted once per size and scale: a seek repaints the
        cursor's old and new places, and painting every column and mark each time took tens
        of milliseconds of a seek on a long recording."""
        dpr = self.devicePixelRatioF()
        key = (self.width(), self.height(), dpr, self.slider.value_span(), self.show_gaps)
        if self._cached is not None and self._cached[0] == key and self._cached_gaps is self.gaps:
            return self._cached[1]
        pixmap = QPixmap(round(self.width() * dpr), round(self.height() * dpr))
        pixmap.setDevicePixelRatio(dpr)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        try:
            if self.show_gaps:
                for gap in self.gaps:
                    x0, x1 = self.x_of(gap.start_us), self.x_of(gap.end_us)
                    painter.fillRect(QRectF(x0, 0.0, max(1.0, x1 - x0), self.height()), IDLE_COLOUR)
            self._paint_activity(painter)
            for kind in self.kinds:
                self._paint_marks(painter, kind)
        finally:
            painter.end()
        self._cached = (key, pixmap)
        self._cached_gaps = self.gaps
        return pixmap

    def _paint_activity(self, painter: QPainter) -> None:
        """Changes to the board per pixel column, darker where there are more."""
        times = self.timeline.times
        if not times:
            return
        rect = self._row_rect(0)
        columns = self._columns()
        counts = [bisect_right(times, hi) - bisect_left(times, lo) for lo, hi in columns]
        busiest = max(counts, default=0)
        if not busiest:
            return
        colour = QColor(ACTIVITY_COLOUR)
        for (lo, _), count in zip(columns, counts, strict=True):
            if count:
                colour.setAlphaF(0.25 + 0.75 * count / busiest)
                painter.fillRect(QRectF(self.x_of(lo), rect.top(), 1.0, rect.height()), colour)

    def _columns(self) -> list[tuple[int, int]]:
        """The stretch of time each pixel column stands for."""
        left, right = self.slider.value_span()
        start = self.timeline.start_us
        per_px = max(1.0, self.timeline.duration_us / max(1.0, right - left))
        return [
            (start + round(i * per_px), start + round((i + 1) * per_px) - 1)
            for i in range(round(right - left) + 1)
        ]

    def _paint_marks(self, painter: QPainter, kind: MarkKind) -> None:
        rect = self._row_rect(self.row_of(kind))
        colour = MARK_COLOURS[kind]
        drawn: set[int] = set()  # one tick per pixel column: a busy minute is not 500 fills
        for mark in self.marks:
            if mark.kind is kind:
                x = round(self.x_of(mark.t_us))
                if x not in drawn:
                    drawn.add(x)
                    painter.fillRect(QRectF(x - 0.5, rect.top(), 2.0, rect.height()), colour)

    # -- the pointer ------------------------------------------------------------------------

    def marks_near(self, x: float, reach_px: float = TOOLTIP_REACH_PX) -> list[NetworkMark]:
        lo, hi = self.time_at(x - reach_px), self.time_at(x + reach_px)
        times = self._mark_times
        return list(self.marks[bisect_left(times, lo) : bisect_right(times, hi)])

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            text = self.tooltip_at(event.pos().x())
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    def tooltip_at(self, x: float) -> str:
        near = self.marks_near(x)
        at = format_elapsed(self.time_at(x) - self.timeline.start_us)
        if not near:
            return ""
        lines = [f"around {at}:"]
        for mark in near[:8]:
            who = ""
            if mark.member is not None:
                info = self.timeline.member(mark.member)
                who = f" {info.name}" if info is not None else f" {mark.member:08x}"
            count = f"{mark.count} x " if mark.count > 1 else ""
            lines.append(f"{count}{mark.kind.label}{who}: {mark.detail}".rstrip(": "))
        if len(near) > 8:
            lines.append(f"… and {len(near) - 8} more")
        return "\n".join(lines)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._seek_to_pointer(event.position().x())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._seek_to_pointer(event.position().x())
        super().mouseMoveEvent(event)

    def _seek_to_pointer(self, x: float) -> None:
        parent = self.parent()
        if isinstance(parent, ReplayTimeline):
            parent.request_seek(self.time_at(x))


class ReplayTimeline(QWidget):
    """The slider, the lanes and the legend. Emits ``seek_requested(t_us)`` when the person
    asks for another moment; :meth:`set_position` moves it without emitting."""

    seek_requested = Signal(object)  # int microseconds (too large for a Qt int)

    def __init__(self, timeline: Timeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self.slider = TimelineSlider(self)
        self.slider.setRange(0, max(1, timeline.duration_us // 1000))
        self.slider.setPageStep(max(1, timeline.duration_us // 1000 // 20))
        self.slider.setToolTip("Drag to go to any moment of the recording")
        self.lanes = TimelineLanes(timeline, self.slider, self)
        self.legend = QLabel(self)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setText(legend_html(timeline))
        self.legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.slider)
        layout.addWidget(self.lanes)
        layout.addWidget(self.legend)
        self._moving = False
        self.slider.valueChanged.connect(self._slider_moved)

    def _slider_moved(self, value: int) -> None:
        if not self._moving:
            self.request_seek(self.timeline.start_us + value * 1000)

    def request_seek(self, t_us: int) -> None:
        self.seek_requested.emit(self.timeline.clamp(t_us))

    def set_position(self, t_us: int) -> None:
        self._moving = True
        try:
            self.slider.setValue((t_us - self.timeline.start_us) // 1000)
        finally:
            self._moving = False
        if self.lanes.position_us != t_us:
            old = self.lanes.x_of(self.lanes.position_us)
            self.lanes.position_us = t_us
            new = self.lanes.x_of(t_us)
            # Only the old and the new cursor lines: repainting the lanes is per column.
            for x in (old, new):
                self.lanes.update(round(x) - 2, 0, 5, self.lanes.height())

    def set_idle_gaps(self, gaps: Sequence[IdleGap], shown: bool) -> None:
        self.lanes.gaps = tuple(gaps)
        self.lanes.show_gaps = shown
        self.lanes.update()

    def point_of(self, t_us: int) -> QPoint:
        """Where ``t_us`` is on the lanes, in the lanes' coordinates (for tests)."""
        return QPoint(round(self.lanes.x_of(t_us)), self.lanes.height() // 2)


def legend_html(timeline: Timeline) -> str:
    """The legend: each kind of mark the log holds, in its colour, with how many there are."""
    totals = count_by_kind(timeline.marks)
    parts = [
        f'<span style="color:{ACTIVITY_COLOUR.name()}">■</span>&nbsp;board changes '
        f"({len(timeline.steps):,})"
    ]
    for kind in MarkKind:
        if kind in totals:
            colour = MARK_COLOURS[kind].name()
            parts.append(
                f'<span style="color:{colour}">■</span>&nbsp;{html.escape(kind.label)} '
                f"({totals[kind]:,})"
            )
    if len(parts) == 1:
        parts.append("no network events in this log")
    return " &nbsp; ".join(parts)


__all__ = ["MARK_COLOURS", "ReplayTimeline", "TimelineLanes", "TimelineSlider", "legend_html"]
