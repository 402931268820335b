"""Pointers in the app (whiteboard/app/pointers.py), without a network: the others' pointers
glide and hide; ours is sent at most 30 times a second, its last position never dropped; the
overlay repaints cursors without touching the board's tiles."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.app.mouse import PRESS, RELEASE, mouse
from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.pointers import (
    GLIDE_S,
    LASER_FADE_S,
    STILL_HIDE_S,
    CursorOverlay,
    LaserTrails,
    PointerSharing,
    RemoteCursors,
)
from whiteboard.app.tools import ToolKind
from whiteboard.board import Board, OpId
from whiteboard.pointer import PointerKind, PointerPosition, decode_pointer


def at(x: float, y: float, visible: bool = True) -> PointerPosition:
    return PointerPosition(x, y, visible, 0)


def test_a_pointer_appears_where_it_is_then_glides_to_each_new_position() -> None:
    cursors = RemoteCursors()
    cursors.update(7, at(10.0, 10.0), now=0.0)
    assert cursors.position(7, 0.0) == (10.0, 10.0)  # no glide from nowhere
    cursors.update(7, at(110.0, 10.0), now=1.0)
    assert cursors.position(7, 1.0) == (10.0, 10.0)
    halfway = cursors.position(7, 1.0 + GLIDE_S / 2)
    assert halfway is not None and 10.0 < halfway[0] < 110.0
    assert cursors.gliding(1.0 + GLIDE_S / 2) and not cursors.gliding(1.0 + GLIDE_S)
    assert cursors.position(7, 1.0 + GLIDE_S) == (110.0, 10.0)


def test_a_still_pointer_is_hidden_after_three_seconds_and_reappears_in_place() -> None:
    cursors = RemoteCursors()
    cursors.update(7, at(5.0, 5.0), now=0.0)
    cursors.update(7, at(5.0, 5.0), now=2.0)  # the same place again: not a move
    assert cursors.next_hiding(2.0) == STILL_HIDE_S
    assert cursors.position(7, STILL_HIDE_S - 0.01) is not None
    assert cursors.position(7, STILL_HIDE_S) is None
    cursors.update(7, at(500.0, 5.0), now=10.0)
    assert cursors.position(7, 10.0) == (500.0, 5.0)  # back, where it is, not gliding there


def test_a_hidden_pointer_goes_at_once_and_a_leaver_is_forgotten() -> None:
    cursors = RemoteCursors()
    cursors.update(7, at(5.0, 5.0), now=0.0)
    cursors.update(8, at(6.0, 6.0), now=0.0)
    cursors.update(7, at(5.0, 5.0, visible=False), now=0.1)
    assert cursors.position(7, 0.1) is None and 7 not in cursors
    cursors.forget(8)
    assert len(cursors) == 0


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_canvas(qtbot: QtBot) -> BoardCanvas:
    board = Board()
    canvas = BoardCanvas(lambda: board, lambda: OpId(1, 1))
    qtbot.addWidget(canvas)
    canvas.resize(400, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    return canvas


def test_ours_is_sent_at_most_30_times_a_second_and_the_last_position_always(
    qtbot: QtBot,
) -> None:
    canvas = make_canvas(qtbot)
    sent: list[PointerPosition] = []
    clock = Clock()
    sharing = PointerSharing(canvas, lambda data: sent.append(decode_pointer(data)), clock=clock)
    assert canvas.hasMouseTracking()  # moves come without a button held
    for step in range(100):  # 100 moves within 1/30 s
        mouse(canvas, 10 + step, 20)
        clock.now += 0.0003
    assert [(p.x, p.y) for p in sent] == [(10.0, 20.0)]
    clock.now += 1 / 30
    qtbot.waitUntil(lambda: len(sent) == 2, timeout=2000)
    assert (sent[-1].x, sent[-1].y, sent[-1].visible) == (109.0, 20.0, True)
    mouse(canvas, 109, 20)  # not moved: nothing to say
    clock.now += 1.0
    QApplication.sendEvent(canvas, QEvent(QEvent.Type.Leave))
    assert sent[-1].visible is False and len(sent) == 3
    sharing.set_enabled(False)
    clock.now += 1.0
    mouse(canvas, 50, 50)
    assert len(sent) == 3 and sharing.sent == 3


def test_moving_cursors_repaint_the_overlay_and_never_the_boards_tiles(qtbot: QtBot) -> None:
    canvas = make_canvas(qtbot)
    clock = Clock()
    overlay = CursorOverlay(canvas, lambda member: (f"member {member}", 0xFF2266CC), clock)
    invalidated: list[object] = []
    canvas._tiles.invalidate = lambda *args, **kwargs: invalidated.append(args)  # type: ignore[method-assign]
    for step in range(10):
        for member in range(1, 11):  # ten members moving
            overlay.show_position(member, at(20.0 * member, 10.0 + 5 * step))
        clock.now += 1 / 30
        qtbot.wait(5)
    assert sorted(overlay.visible_members()) == list(range(1, 11))
    assert overlay.geometry() == canvas.rect()
    assert invalidated == []
    clock.now += STILL_HIDE_S + GLIDE_S
    overlay._tick()
    assert overlay.visible_members() == []


def test_a_laser_trail_fades_within_a_second() -> None:
    trails = LaserTrails()
    for step in range(10):
        trails.add(7, float(step), 0.0, now=step * 0.05)
    shown = trails.trails(0.5)[7]
    assert [x for x, _, _ in shown] == [float(s) for s in range(10)]  # all younger than 1 s
    assert shown[-1][2] == pytest.approx(0.05) and trails.active(0.5)
    assert [x for x, _, _ in trails.trails(1.2)[7]] == [5.0, 6.0, 7.0, 8.0, 9.0]
    assert not trails.active(0.45 + LASER_FADE_S) and trails.trails(2.0) == {}


def test_the_laser_sends_its_points_even_with_the_pointer_unshared_and_draws_no_op(
    qtbot: QtBot,
) -> None:
    canvas = make_canvas(qtbot)
    ops: list[object] = []
    canvas.on_local_op = ops.append  # type: ignore[assignment]
    sent: list[PointerPosition] = []
    ours: list[tuple[float, float]] = []
    clock = Clock()
    sharing = PointerSharing(canvas, lambda data: sent.append(decode_pointer(data)), clock=clock)
    sharing.on_laser = lambda x, y: ours.append((x, y))
    sharing.set_enabled(False)
    canvas.set_tool(ToolKind.LASER)
    mouse(canvas, 10, 10, PRESS)
    for step in range(1, 6):
        clock.now += 0.05
        mouse(canvas, 10 + 10 * step, 10, held=True)
    mouse(canvas, 60, 10, RELEASE)
    assert len(ours) == 6  # every point of our own trail, from the press on
    assert sent and all(p.kind is PointerKind.LASER for p in sent)
    assert (sent[-1].x, sent[-1].y) == (60.0, 10.0)
    clock.now += 1.0
    mouse(canvas, 80, 10)  # the laser released: the unshared pointer sends nothing
    assert all(p.kind is PointerKind.LASER for p in sent)
    assert ops == [] and len(canvas.board) == 0
