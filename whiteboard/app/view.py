"""Where the board is on screen: zoom and pan as one affine map, board -> widget.

``widget = board * scale + offset``, in the widget's *logical* coordinates: Qt maps those to
device pixels itself, so HiDPI needs nothing here but :meth:`View.snapped`. The math is plain
Python (tested without Qt); :func:`board_transform` is the one Qt helper, for a QPainter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtGui import QTransform

from whiteboard.board.geometry import Rect

MIN_ZOOM = 0.05
MAX_ZOOM = 32.0
# Ctrl+= / Ctrl+-: four steps double the size.
ZOOM_STEP = 2.0**0.25
# Room left around the content by "fit to content", in widget pixels.
FIT_MARGIN = 24.0
# Fit never magnifies past 100%: a single small scribble is shown at its real size, centred,
# rather than blown up to fill the window.
FIT_MAX_ZOOM = 1.0


def clamp_zoom(scale: float) -> float:
    return min(max(scale, MIN_ZOOM), MAX_ZOOM)


def rect_union(a: Rect | None, b: Rect) -> Rect:
    if a is None:
        return b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def rect_intersects(a: Rect, b: Rect) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def rect_contains(outer: Rect, inner: Rect) -> bool:
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[2] <= outer[2]
        and (inner[3] <= outer[3])
    )


def rect_translated(rect: Rect, dx: float, dy: float) -> Rect:
    return (rect[0] + dx, rect[1] + dy, rect[2] + dx, rect[3] + dy)


def rect_inflated(rect: Rect, margin: float) -> Rect:
    return (rect[0] - margin, rect[1] - margin, rect[2] + margin, rect[3] + margin)


def rect_from_points(x0: float, y0: float, x1: float, y1: float) -> Rect:
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


@dataclass(frozen=True, slots=True)
class View:
    """An immutable view: ``scale`` widget pixels per board unit, and the widget position
    ``(ox, oy)`` of the board's origin."""

    scale: float = 1.0
    ox: float = 0.0
    oy: float = 0.0

    def to_widget(self, x: float, y: float) -> tuple[float, float]:
        return (x * self.scale + self.ox, y * self.scale + self.oy)

    def to_board(self, wx: float, wy: float) -> tuple[float, float]:
        return ((wx - self.ox) / self.scale, (wy - self.oy) / self.scale)

    def rect_to_widget(self, rect: Rect) -> Rect:
        x0, y0 = self.to_widget(rect[0], rect[1])
        x1, y1 = self.to_widget(rect[2], rect[3])
        return (x0, y0, x1, y1)

    def rect_to_board(self, rect: Rect) -> Rect:
        x0, y0 = self.to_board(rect[0], rect[1])
        x1, y1 = self.to_board(rect[2], rect[3])
        return (x0, y0, x1, y1)

    def zoomed(self, factor: float, wx: float, wy: float) -> View:
        """Zoom by ``factor`` (clamped to the zoom range) about the widget point (wx, wy),
        which keeps showing the same board point."""
        return self.with_scale(self.scale * factor, wx, wy)

    def with_scale(self, scale: float, wx: float, wy: float) -> View:
        scale = clamp_zoom(scale)
        bx, by = self.to_board(wx, wy)
        return View(scale, wx - bx * scale, wy - by * scale)

    def panned(self, dx: float, dy: float) -> View:
        """The board moved by (dx, dy) widget pixels (a drag to the right shows what was left)."""
        return View(self.scale, self.ox + dx, self.oy + dy)

    def snapped(self, device_pixel_ratio: float) -> View:
        """The offset rounded to whole device pixels, so that a cached rendering of the board
        lands on the pixel grid (blitted, not resampled). Moves the view by under a pixel."""
        ratio = device_pixel_ratio
        return View(self.scale, round(self.ox * ratio) / ratio, round(self.oy * ratio) / ratio)


def fit(
    content: Rect | None,
    width: float,
    height: float,
    margin: float = FIT_MARGIN,
    max_scale: float = FIT_MAX_ZOOM,
) -> View:
    """The view that shows all of ``content`` (board coordinates) centred in a widget of
    ``width`` x ``height``, with ``margin`` pixels around it. An empty board is shown at
    100% with its origin at the top-left corner."""
    if content is None:
        return View()
    cw = max(content[2] - content[0], 1e-9)
    ch = max(content[3] - content[1], 1e-9)
    room_w = max(width - 2.0 * margin, 1.0)
    room_h = max(height - 2.0 * margin, 1.0)
    scale = clamp_zoom(min(room_w / cw, room_h / ch, max_scale))
    cx = (content[0] + content[2]) / 2.0
    cy = (content[1] + content[3]) / 2.0
    return View(scale, width / 2.0 - cx * scale, height / 2.0 - cy * scale)


def wheel_zoom_factor(angle_delta: float) -> float:
    """The zoom factor for a wheel turn of ``angle_delta`` eighths of a degree (one notch is
    120): a notch is one :data:`ZOOM_STEP`, and trackpads' small deltas zoom smoothly."""
    return math.pow(ZOOM_STEP, angle_delta / 120.0)


def board_transform(view: View) -> QTransform:
    """The QTransform mapping board coordinates to the widget's logical coordinates."""
    return QTransform(view.scale, 0.0, 0.0, view.scale, view.ox, view.oy)
