"""Objects delivered in the last moments wait above the tiles, painted on the widget, until
they settle into the tiles (board_layers.py): a late op among them repaints the screen where it
is, never the tiles under it; one deeper in history repaints the tiles as before. Whatever
waits where, the picture must be pixel for pixel that of a canvas showing the board afresh."""

from __future__ import annotations

import itertools
import random

import pytest
from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from tests.app.test_canvas import Session, same_image
from tests.app.test_canvas_rebuild import fresh_picture, session_ops
from whiteboard.app import board_layers
from whiteboard.app.board_layers import RECENT_LIMIT, RECENT_SETTLE_MS
from whiteboard.app.canvas import BoardCanvas
from whiteboard.board import Board, Erase, Move, Op, OpId, Stroke, Undo, synthetic_stroke

SIZE = (360, 260)
GAP = 100  # between the order keys of strokes delivered in order: room for late ones


def refreshes(canvas: BoardCanvas) -> list[QRect]:
    """The widget areas the canvas asks Qt to repaint from now on."""
    asked: list[QRect] = []
    canvas.update = lambda *args: asked.append(QRect(*args) if args else canvas.rect())  # type: ignore[method-assign]
    return asked


def on_widget(canvas: BoardCanvas, rect: tuple[float, float, float, float]) -> QRect:
    """A board rectangle on the widget, out to whole pixels."""
    x0, y0, x1, y1 = canvas.view.rect_to_widget(rect)
    return QRectF(x0, y0, x1 - x0, y1 - y0).toAlignedRect()


class TileWork:
    """Counts what the canvas asks of its tiles: repaints over what is there (a late op's
    region) and objects painted over them."""

    def __init__(self, canvas: BoardCanvas) -> None:
        self.repaints = 0
        self.on_top: list[OpId] = []
        tiles = canvas._tiles
        invalidate = tiles.invalidate

        def counting(rect, on_top=None, parts=None):  # type: ignore[no-untyped-def]
            if on_top is None:
                self.repaints += 1
            else:
                self.on_top.append(on_top.id)
            invalidate(rect, on_top, parts)

        tiles.invalidate = counting  # type: ignore[method-assign]


def strokes_session(qtbot: QtBot, count: int, seed: int) -> tuple[Session, list[Op]]:
    """A zoomed-out canvas that was delivered ``count`` strokes in order, keys GAP apart."""
    rng = random.Random(seed)
    session = Session(qtbot, size=SIZE)
    session.canvas.zoom_by(0.3, QPointF(0.0, 0.0))
    session.image()
    ops: list[Op] = [synthetic_stroke(1 + i % 4, i, rng) for i in range(count)]
    for i, op in enumerate(ops):
        session.apply(op, (GAP * (i + 1),))
    return session, ops


def test_a_late_stroke_among_the_recent_ones_leaves_the_tiles_alone(qtbot: QtBot) -> None:
    session, ops = strokes_session(qtbot, 200, seed=21)
    canvas = session.canvas
    session.image()
    work = TileWork(canvas)
    rng = random.Random(5)
    # Late by a few strokes, as reordering on a network makes them: inserted among the
    # recent ones, painted on the widget in their place.
    for i in range(5):
        late = (GAP * (len(ops) - rng.randrange(1, 20)) + 7 + i,)
        session.apply(synthetic_stroke(7, i, rng), late)
        image = session.image()
        assert work.repaints == 0
        assert same_image(image, fresh_picture(qtbot, canvas, session.board))
    # Only the lowest recent ones, over the limit, went into the tiles, painted over them.
    assert len(work.on_top) == 5
    assert canvas.recent_count() == RECENT_LIMIT
    # Late deep in history: under objects already in the tiles, which are repainted there.
    session.apply(synthetic_stroke(7, 99, rng), (GAP * 3 + 7,))
    assert work.repaints > 0
    assert same_image(session.image(), fresh_picture(qtbot, canvas, session.board))


def test_recent_objects_settle_into_the_tiles_when_changes_pause_and_look_the_same(
    qtbot: QtBot,
) -> None:
    session, ops = strokes_session(qtbot, RECENT_LIMIT + 30, seed=22)
    canvas = session.canvas
    assert canvas.recent_count() == RECENT_LIMIT
    before = session.image()
    work = TileWork(canvas)
    # The settling timer is what the app has; waiting on its outcome, not on a duration.
    qtbot.waitUntil(lambda: canvas.recent_count() == 0, timeout=RECENT_SETTLE_MS + 20_000)
    assert work.repaints == 0 and len(work.on_top) == RECENT_LIMIT
    # Each went in from the lowest, so each could be painted over what was there.
    order = {op.id: session.board.key(op.id) for op in ops}
    assert [order[i] for i in work.on_top] == sorted(order[i] for i in work.on_top)
    after = session.image()
    assert same_image(after, before)
    assert same_image(after, fresh_picture(qtbot, canvas, session.board))


def test_erases_moves_and_undos_of_recent_objects_show_as_on_a_fresh_canvas(
    qtbot: QtBot,
) -> None:
    session, ops = strokes_session(qtbot, 120, seed=23)
    canvas = session.canvas
    recent = [op.id for op in ops[-RECENT_LIMIT:]]
    settled = [op.id for op in ops[: -RECENT_LIMIT - 1]]
    later: list[tuple[tuple[int, ...], Op]] = [
        ((GAP * 1000,), Erase(OpId(8, 1), (recent[3], settled[5]))),
        ((GAP * 1001,), Move(OpId(8, 2), (recent[10], recent[11], settled[7]), 90.0, -30.0)),
        # A late move, among the recent ones, of one of them.
        ((GAP * 119 + 5,), Move(OpId(8, 3), (recent[-5],), -40.0, 25.0)),
        ((GAP * 1002,), Undo(OpId(8, 4), OpId(8, 2))),
        ((GAP * 1003,), Undo(OpId(1, 10_000), recent[20])),
    ]
    for key, op in later:
        session.apply(op, key)
        assert same_image(session.image(), fresh_picture(qtbot, canvas, session.board))


def test_a_whole_board_shown_afresh_puts_the_recent_objects_into_the_tiles(
    qtbot: QtBot,
) -> None:
    session, ops = strokes_session(qtbot, 40, seed=24)
    canvas = session.canvas
    assert canvas.recent_count() == 40
    # A replay's jump back: a copy of the board without its last ten strokes.
    earlier = Board()
    for i, op in enumerate(ops[:30]):
        earlier.apply((GAP * (i + 1),), op)
    session.board = earlier
    canvas.board_changed(None)
    assert canvas.recent_count() == 0
    assert same_image(session.image(), fresh_picture(qtbot, canvas, earlier))
    # Delivered on top of it: recent again, and shown as a fresh canvas shows it.
    session.apply(ops[30], (GAP * 31,))
    assert canvas.recent_count() == 1
    assert same_image(session.image(), fresh_picture(qtbot, canvas, session.board))


def looks_the_same(a: QImage, b: QImage) -> bool:
    # A few levels apart at most where an arrow is (see test_canvas.py).
    return same_image(a, b) or same_image(a, b, tolerance=3)


@pytest.mark.parametrize("seed", range(6))
def test_any_mix_of_deliveries_settling_jumps_lifts_and_pending_ops_shows_the_board(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Ops delivered in order and late, our own sent and delivered later, objects lifted by
    a tool and put back, recent objects settling by the limit or by a pause, the whole board
    shown afresh: after each, the objects above the tiles are exactly the delivered ones
    above the tiles' top, and the picture is that of a canvas showing the board afresh."""
    rng = random.Random(seed)
    monkeypatch.setattr(board_layers, "RECENT_LIMIT", rng.choice([2, 9, 40]))
    ops = session_ops(160, seed=100 + seed)
    session = Session(qtbot, size=SIZE, immediate=False)
    canvas = session.canvas
    canvas.zoom_by(0.25, QPointF(0.0, 0.0))
    session.image()
    lifted: dict[OpId, float] = {}
    mine = itertools.count(1)  # ours go between the session's keys, scaled apart

    def deliver_ours(at: int) -> None:
        held, session.held = session.held, []
        for op in held:
            session.apply(op, (at + next(mine),))

    for step, (key, op) in enumerate(ops):
        at = key[0] * 1000
        session.apply(op, (at,))
        roll = rng.random()
        if roll < 0.1:
            canvas._layers._fold_step()  # changes paused
        elif roll < 0.14:
            canvas.board_changed(None)
        elif roll < 0.24:
            shown = [item.id for item in canvas.scene.items()]
            lifted = {i: 0.4 for i in rng.sample(shown, min(3, len(shown)))}
            canvas.set_lifted(lifted)
        elif roll < 0.3:
            lifted = {}
            canvas.set_lifted(lifted)
        elif roll < 0.36:
            canvas.send(synthetic_stroke(42, 1000 + step, rng))
        elif roll < 0.42:
            deliver_ours(at - rng.choice([0, 25_000]))  # on top, or late
        top = canvas._layers._tile_top
        delivered = [item for item in canvas.scene.items() if item.id in session.board]
        assert set(canvas._layers._recent) == {
            item.id for item in delivered if top is None or item.order > top
        }
        if step % 10 == 9:
            deliver_ours(at)
            lifted = {i: a for i, a in lifted.items() if i in canvas.scene}
            picture = fresh_picture(qtbot, canvas, session.board, lifted)
            assert looks_the_same(session.image(), picture)
    deliver_ours(ops[-1][0][0] * 1000)
    canvas.set_lifted({})
    assert looks_the_same(session.image(), fresh_picture(qtbot, canvas, session.board))


def test_a_recent_object_put_back_after_a_drag_is_repainted_where_it_is(
    qtbot: QtBot,
) -> None:
    """A drag cancelled: the object, recent (painted over the tiles before and after), is
    shown again at its place, so that place is repainted."""
    session = Session(qtbot, size=SIZE)
    canvas = session.canvas
    stroke = Stroke(OpId(1, 1), (40.0, 40.0, 80.0, 60.0, 120.0, 40.0), 0xFF000000, 4.0)
    session.apply(stroke, (100,))
    session.image()
    assert canvas.recent_count() == 1
    canvas.set_lifted({stroke.id: 1.0}, 100.0, 100.0)
    refreshed = refreshes(canvas)
    canvas.set_lifted({})  # Escape
    place = on_widget(canvas, (38.0, 38.0, 122.0, 62.0))  # the stroke's, pen included
    assert any(rect.contains(place) for rect in refreshed)


def test_settling_waits_while_the_tiles_in_view_are_rendered_after_a_zoom(
    qtbot: QtBot,
) -> None:
    """Until the tiles at a new zoom are rendered the screen shows the previous scale's,
    stretched; putting a recent object into the tiles then would drop them where it is
    (while it leaves the overlay): it waits."""
    rng = random.Random(3)
    session = Session(qtbot, size=SIZE)
    canvas = session.canvas
    canvas.zoom_by(0.2, QPointF(0.0, 0.0))
    for i in range(30):
        session.apply(synthetic_stroke(1, i, rng), (GAP * (i + 1),))
    session.image()
    # Each fold step has a wall-clock budget (STEP_BUDGET_S): on a loaded machine one step
    # folds only some of the 30, so step until all are in the tiles (bounded).
    for _ in range(100):
        canvas._layers._fold_step()
        if canvas.recent_count() == 0:
            break
    assert canvas.recent_count() == 0
    session.apply(synthetic_stroke(1, 99, rng), (GAP * 1000,))
    session.image()
    canvas.zoom_by(1.1, QPointF(0.0, 0.0))  # a wheel step: the new tiles wait to settle
    before = canvas.grab().toImage()
    assert canvas._tiles.has_fallback
    canvas._layers._fold_step()  # changes paused
    assert canvas.recent_count() == 1
    assert same_image(canvas.grab().toImage(), before)
    # Once the tiles at the new zoom are there, it settles, and nothing shows the difference.
    session.image()
    qtbot.waitUntil(lambda: canvas.recent_count() == 0, timeout=RECENT_SETTLE_MS + 20_000)
    assert same_image(session.image(), fresh_picture(qtbot, canvas, session.board))


def test_an_object_shown_again_when_our_erase_failed_settles_too(qtbot: QtBot) -> None:
    rng = random.Random(1)
    session = Session(qtbot, immediate=False, size=SIZE)
    canvas = session.canvas
    stroke = synthetic_stroke(1, 1, rng)
    session.apply(stroke, (GAP,))
    canvas.send(Erase(OpId(42, 1), (stroke.id,)))
    # Settling comes, with nothing to settle: the stroke is hidden by our erase.
    timer = canvas._layers._recent_timer
    qtbot.waitUntil(lambda: not timer.isActive(), timeout=RECENT_SETTLE_MS + 20_000)
    canvas.forget_pending(OpId(42, 1))  # sending failed: shown again, recent
    assert canvas.recent_count() == 1
    qtbot.waitUntil(lambda: canvas.recent_count() == 0, timeout=RECENT_SETTLE_MS + 20_000)
    assert same_image(session.image(), fresh_picture(qtbot, canvas, session.board))


def test_an_object_erased_by_someone_while_we_drag_it_leaves_no_ghost(qtbot: QtBot) -> None:
    session = Session(qtbot, size=SIZE)
    canvas = session.canvas
    stroke = Stroke(OpId(1, 1), (40.0, 40.0, 80.0, 60.0, 120.0, 40.0), 0xFF000000, 4.0)
    session.apply(stroke, (100,))
    canvas.set_lifted({stroke.id: 1.0}, 100.0, 100.0)  # dragged by the select tool
    session.image()
    refreshed = refreshes(canvas)
    session.apply(Erase(OpId(2, 1), (stroke.id,)), (200,))
    shown = on_widget(canvas, (138.0, 138.0, 222.0, 162.0))  # dragged 100 right and down
    assert any(rect.contains(shown) for rect in refreshed)
