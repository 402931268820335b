"""The view's math: mapping both ways, zoom about a point, pan, fit to content."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QPointF

from whiteboard.app.view import (
    FIT_MARGIN,
    MAX_ZOOM,
    MIN_ZOOM,
    ZOOM_STEP,
    View,
    board_transform,
    fit,
    wheel_zoom_factor,
)

coords = st.floats(-1e6, 1e6)
scales = st.floats(MIN_ZOOM, MAX_ZOOM)


@given(scales, coords, coords, coords, coords)
def test_board_widget_round_trip(scale: float, ox: float, oy: float, x: float, y: float) -> None:
    view = View(scale, ox, oy)
    bx, by = view.to_board(*view.to_widget(x, y))
    assert bx == pytest.approx(x, abs=1e-6 * (1 + abs(ox) + abs(x)) / scale)
    assert by == pytest.approx(y, abs=1e-6 * (1 + abs(oy) + abs(y)) / scale)


@given(scales, coords, coords, st.floats(0.01, 100.0), st.floats(0, 2000), st.floats(0, 2000))
def test_zoom_keeps_the_anchor_fixed(
    scale: float, ox: float, oy: float, factor: float, wx: float, wy: float
) -> None:
    view = View(scale, ox, oy)
    anchor = view.to_board(wx, wy)
    zoomed = view.zoomed(factor, wx, wy)
    assert MIN_ZOOM <= zoomed.scale <= MAX_ZOOM
    assert zoomed.scale == pytest.approx(min(max(scale * factor, MIN_ZOOM), MAX_ZOOM))
    x, y = zoomed.to_board(wx, wy)
    tolerance = 1e-6 * (1 + abs(ox) + abs(oy) + wx + wy) / zoomed.scale
    assert x == pytest.approx(anchor[0], abs=tolerance)
    assert y == pytest.approx(anchor[1], abs=tolerance)


def test_zoom_is_clamped() -> None:
    assert View().zoomed(1000.0, 0, 0).scale == MAX_ZOOM
    assert View().zoomed(1e-6, 0, 0).scale == MIN_ZOOM


def test_pan_moves_the_board_with_the_pointer() -> None:
    view = View(2.0, 10.0, 20.0).panned(30.0, -5.0)
    assert view == View(2.0, 40.0, 15.0)
    assert view.to_widget(0.0, 0.0) == (40.0, 15.0)


def test_rects_map_both_ways() -> None:
    view = View(0.5, 100.0, 50.0)
    assert view.rect_to_widget((0.0, 0.0, 200.0, 100.0)) == (100.0, 50.0, 200.0, 100.0)
    assert view.rect_to_board((100.0, 50.0, 200.0, 100.0)) == (0.0, 0.0, 200.0, 100.0)


def test_fit_centres_the_content_with_a_margin() -> None:
    content = (1000.0, 500.0, 3000.0, 1500.0)  # 2000 x 1000
    view = fit(content, 1048.0, 800.0)
    # The width decides: (1048 - 2 * 24) / 2000.
    assert view.scale == pytest.approx(0.5)
    x0, y0, x1, y1 = view.rect_to_widget(content)
    assert (x0, x1) == pytest.approx((FIT_MARGIN, 1048.0 - FIT_MARGIN))
    assert (y0 + y1) / 2 == pytest.approx(400.0)


def test_fit_does_not_magnify_small_content_and_handles_an_empty_board() -> None:
    view = fit((10.0, 10.0, 20.0, 20.0), 400.0, 300.0)
    assert view.scale == 1.0
    assert view.to_widget(15.0, 15.0) == pytest.approx((200.0, 150.0))
    assert fit(None, 400.0, 300.0) == View()
    # A huge board fits down to the smallest zoom at least.
    assert fit((0.0, 0.0, 1e7, 1e7), 400.0, 300.0).scale == MIN_ZOOM


def test_snapped_offsets_sit_on_device_pixels() -> None:
    view = View(1.3, 10.26, 7.74).snapped(2.0)
    assert (view.ox * 2.0, view.oy * 2.0) == (21.0, 15.0)
    assert view.scale == 1.3


def test_wheel_notches_step_the_zoom() -> None:
    assert wheel_zoom_factor(120) == pytest.approx(ZOOM_STEP)
    assert wheel_zoom_factor(-480) == pytest.approx(0.5)
    assert math.isclose(wheel_zoom_factor(0), 1.0)


def test_qtransform_matches_the_view() -> None:
    view = View(2.5, -30.0, 12.0)
    point = board_transform(view).map(QPointF(7.0, -3.0))
    assert (point.x(), point.y()) == pytest.approx(view.to_widget(7.0, -3.0))
