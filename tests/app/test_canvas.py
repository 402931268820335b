"""The canvas on its own: painting every kind of object, drawing with the mouse, the view
(zoom, pan), and showing changes and pending ops through its caches."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from whiteboard.app.canvas import BACKGROUND, WHEEL_PAN_PER_NOTCH, BoardCanvas
from whiteboard.app.render import (
    AA_MARGIN,
    CORNER_RADIUS,
    WHOLE,
    bounds,
    paint_parts,
    stroke_chunks,
    stroke_path,
    stroke_path_near,
    stroke_pen,
)
from whiteboard.app.tiles import THINNEST_DEVICE_PEN
from whiteboard.app.view import ZOOM_STEP
from whiteboard.board import (
    Board,
    Erase,
    Move,
    Op,
    OpId,
    OpKind,
    Shape,
    Stroke,
    Text,
    Tool,
    Undo,
    synthetic_op,
    synthetic_stroke,
)

RED = 0xFFFF0000
BLUE = 0xFF0000FF


def make_canvas(qtbot: QtBot, board: Board, sink: list[Op] | None = None) -> BoardCanvas:
    counter = itertools.count(1)
    canvas = BoardCanvas(
        lambda: board, lambda: OpId(42, next(counter)), sink.append if sink is not None else None
    )
    qtbot.addWidget(canvas)
    canvas.resize(400, 300)
    return canvas


def rendered(canvas: BoardCanvas) -> QImage:
    """The canvas as it looks once every tile in view is rendered: a first paint renders
    only what its frame budget allows, which a busy machine may cut short."""
    canvas.finish_rendering()
    return canvas.grab().toImage()


def pixel(image: QImage, x: float, y: float) -> QColor:
    # grab() renders at the screen's device pixel ratio; board coordinates are logical.
    ratio = image.devicePixelRatio()
    return image.pixelColor(round(x * ratio), round(y * ratio))


def is_background(colour: QColor) -> bool:
    return colour.rgb() == BACKGROUND.rgb()


def test_paints_each_kind_of_object_where_it_is(qtbot: QtBot) -> None:
    board = Board()
    ops: list[Op] = [
        Stroke(OpId(1, 1), (20.0, 20.0, 60.0, 20.0, 100.0, 22.0), RED, 5.0),
        Stroke(OpId(1, 2), (30.0, 250.0), BLUE, 9.0),  # a dot
        Shape(OpId(1, 3), OpKind.LINE, 20.0, 60.0, 120.0, 60.0, BLUE, 4.0),
        Shape(OpId(1, 4), OpKind.RECT, 150.0, 20.0, 250.0, 80.0, RED, 2.0, fill=BLUE),
        Shape(OpId(1, 5), OpKind.ELLIPSE, 150.0, 100.0, 250.0, 160.0, RED, 3.0, fill=RED),
        Shape(OpId(1, 6), OpKind.ARROW, 20.0, 120.0, 120.0, 120.0, RED, 3.0),
        Text(OpId(1, 7), 280.0, 20.0, "Hello", BLUE, 40.0),
        Stroke(OpId(1, 8), (300.0, 200.0, 340.0, 200.0), RED, 6.0),
        Move(OpId(1, 9), (OpId(1, 8),), 0.0, 50.0),
    ]
    for n, op in enumerate(ops):
        board.apply((n,), op)
    image = rendered(make_canvas(qtbot, board))

    assert pixel(image, 60, 20).rgb() == QColor.fromRgba(RED).rgb()  # stroke
    assert pixel(image, 30, 250).rgb() == QColor.fromRgba(BLUE).rgb()  # dot
    assert pixel(image, 70, 60).rgb() == QColor.fromRgba(BLUE).rgb()  # line
    assert pixel(image, 200, 50).rgb() == QColor.fromRgba(BLUE).rgb()  # rect fill
    assert pixel(image, 150, 50).rgb() == QColor.fromRgba(RED).rgb()  # rect outline
    assert pixel(image, 200, 130).rgb() == QColor.fromRgba(RED).rgb()  # ellipse fill
    assert is_background(pixel(image, 152, 102))  # outside the ellipse, inside its box
    assert pixel(image, 60, 120).rgb() == QColor.fromRgba(RED).rgb()  # arrow shaft
    assert pixel(image, 117, 120).rgb() == QColor.fromRgba(RED).rgb()  # arrow head
    assert not is_background(pixel(image, 110, 116))  # the head is wider than the shaft
    text_pixels = [pixel(image, x, y) for x in range(280, 380) for y in range(20, 70)]
    assert any(not is_background(c) for c in text_pixels)
    # The moved stroke is at its offset, not where it was drawn.
    assert is_background(pixel(image, 320, 200))
    assert pixel(image, 320, 250).rgb() == QColor.fromRgba(RED).rgb()
    assert is_background(pixel(image, 390, 290))


def test_highlighter_lets_the_background_through(qtbot: QtBot) -> None:
    board = Board()
    board.apply((1,), Stroke(OpId(1, 1), (20.0, 20.0, 200.0, 20.0), RED, 12.0, Tool.HIGHLIGHTER))
    colour = pixel(rendered(make_canvas(qtbot, board)), 100, 20)
    assert colour.red() == 255 and 100 < colour.green() < 255


def drag(canvas: BoardCanvas, points: list[tuple[int, int]]) -> None:
    """A left-button drag through ``points`` with real mouse events."""
    left, none = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QTest.mousePress(canvas, left, none, QPoint(*points[0]))
    for x, y in points[1:-1]:
        QTest.mouseMove(canvas, QPoint(x, y))
    QTest.mouseRelease(canvas, left, none, QPoint(*points[-1]))


def test_drag_makes_a_stroke_op_and_does_not_apply_it(qtbot: QtBot) -> None:
    board = Board()
    sent: list[Op] = []
    canvas = make_canvas(qtbot, board, sent)
    canvas.colour, canvas.pen_width = BLUE, 4.0
    canvas.show()
    qtbot.waitExposed(canvas)
    drag(canvas, [(10, 10), (50, 30), (90, 10), (130, 30)])

    assert len(sent) == 1
    op = sent[0]
    assert isinstance(op, Stroke)
    assert op.id == OpId(42, 1) and op.colour == BLUE and op.width == 4.0
    assert op.points == (10.0, 10.0, 50.0, 30.0, 90.0, 10.0, 130.0, 30.0)
    assert len(board) == 0  # the transport delivers it back; the canvas never applies
    # Until then it is shown as pending, so the line does not vanish on release.
    assert canvas.pending_ops() == (op.id,)
    assert not is_background(pixel(canvas.grab().toImage(), 50, 30))
    board.apply((1,), op)
    canvas.board_changed(None)
    canvas.grab()
    assert canvas.pending_ops() == ()


def test_read_only_canvas_does_not_draw(qtbot: QtBot) -> None:
    sent: list[Op] = []
    canvas = make_canvas(qtbot, Board(), sent)
    canvas.set_read_only(True)
    canvas.show()
    qtbot.waitExposed(canvas)
    drag(canvas, [(10, 10), (50, 50)])
    assert sent == []
    canvas.set_read_only(False)
    drag(canvas, [(10, 10), (50, 50)])
    assert len(sent) == 1


def test_a_click_is_a_dot(qtbot: QtBot) -> None:
    sent: list[Op] = []
    canvas = make_canvas(qtbot, Board(), sent)
    canvas.show()
    qtbot.waitExposed(canvas)
    drag(canvas, [(33, 44), (33, 44)])
    assert [op.points for op in sent if isinstance(op, Stroke)] == [(33.0, 44.0)]


# -- a canvas wired to a board, as the window does ---------------------------------------------


class Session:
    """A canvas on a local board with a stand-in transport: every op the canvas sends is
    applied at the next order key, at once (like RMP) or when :meth:`deliver` is called
    (like MTP's later acceptance)."""

    def __init__(self, qtbot: QtBot, *, immediate: bool = True, size: tuple[int, int] = (400, 300)):
        self.board = Board()
        self.sent: list[Op] = []
        self.gestures: list[list[OpId]] = []
        self.held: list[Op] = []
        self.immediate = immediate
        self._keys = itertools.count(1)
        counter = itertools.count(1)
        self.canvas = BoardCanvas(lambda: self.board, lambda: OpId(42, next(counter)), self._sent)
        self.canvas.on_gesture = self.gestures.append
        qtbot.addWidget(self.canvas)
        self.canvas.resize(*size)
        self.canvas.show()
        qtbot.waitExposed(self.canvas)

    def _sent(self, op: Op) -> None:
        self.sent.append(op)
        if self.immediate:
            self.apply(op)
        else:
            self.held.append(op)

    def apply(self, op: Op, key: tuple[int, ...] | None = None) -> None:
        change = self.board.apply(key if key is not None else (10 * next(self._keys),), op)
        self.canvas.board_changed(change)

    def deliver(self) -> None:
        held, self.held = self.held, []
        for op in held:
            self.apply(op)

    def image(self) -> QImage:
        self.canvas.finish_rendering()
        return self.canvas.grab().toImage()


def same_image(a: QImage, b: QImage, tolerance: int = 0) -> bool:
    assert a.size() == b.size()
    a = a.convertToFormat(QImage.Format.Format_ARGB32)
    b = b.convertToFormat(QImage.Format.Format_ARGB32)
    if tolerance == 0:
        return a == b
    for y in range(a.height()):
        for x in range(a.width()):
            ca, cb = a.pixelColor(x, y), b.pixelColor(x, y)
            if (
                max(
                    abs(ca.red() - cb.red()),
                    abs(ca.green() - cb.green()),
                    abs(ca.blue() - cb.blue()),
                )
                > tolerance
            ):
                return False
    return True


def rgb(argb: int) -> int:
    return QColor.fromRgba(argb).rgb()


def test_zoom_doubles_the_painted_size(qtbot: QtBot) -> None:
    session = Session(qtbot)
    session.apply(Shape(OpId(1, 1), OpKind.RECT, 20.0, 20.0, 60.0, 40.0, RED, 2.0, fill=BLUE))
    image = session.image()
    assert pixel(image, 40, 30).rgb() == rgb(BLUE)
    assert is_background(pixel(image, 100, 70))
    session.canvas.zoom_by(2.0, QPointF(0.0, 0.0))
    assert session.canvas.zoom == 2.0
    shown = session.canvas.visible_board_rect()
    assert (shown.x(), shown.y(), shown.width(), shown.height()) == (0.0, 0.0, 200.0, 150.0)
    image = session.image()
    # (20, 20)-(60, 40) on the board is (40, 40)-(120, 80) on screen, outline included.
    assert pixel(image, 80, 60).rgb() == rgb(BLUE)
    assert pixel(image, 110, 75).rgb() == rgb(BLUE)
    assert pixel(image, 40, 60).rgb() == rgb(RED)  # left edge, 4 px wide now
    assert pixel(image, 120, 60).rgb() == rgb(RED)
    assert is_background(pixel(image, 130, 60)) and is_background(pixel(image, 80, 90))


def test_ctrl_wheel_zooms_about_the_pointer_and_the_wheel_pans(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    anchor = QPointF(150.0, 100.0)
    before = canvas.view.to_board(anchor.x(), anchor.y())
    wheel(canvas, anchor, 120, Qt.KeyboardModifier.ControlModifier)
    assert canvas.zoom == pytest.approx(ZOOM_STEP)
    after = canvas.view.to_board(anchor.x(), anchor.y())
    # The offset is rounded to whole device pixels: the point moves by less than one.
    assert after == pytest.approx(before, abs=1.0 / canvas.zoom)
    zoom = canvas.zoom
    wheel(canvas, anchor, -120)  # a notch down scrolls the board up
    assert canvas.zoom == zoom
    assert canvas.view.to_board(anchor.x(), anchor.y())[1] == pytest.approx(
        after[1] + WHEEL_PAN_PER_NOTCH / zoom, abs=1.0
    )


def wheel(
    canvas: BoardCanvas,
    at: QPointF,
    delta: int,
    modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier,
) -> None:
    event = QWheelEvent(
        at,
        canvas.mapToGlobal(at),
        QPoint(),
        QPoint(0, delta),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(canvas, event)


def test_zoom_keys(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    session.apply(Shape(OpId(1, 1), OpKind.RECT, 1000.0, 1000.0, 3000.0, 2000.0, RED, 2.0))
    ctrl = Qt.KeyboardModifier.ControlModifier
    QTest.keyClick(canvas, Qt.Key.Key_Equal, ctrl)
    assert canvas.zoom == pytest.approx(ZOOM_STEP)
    QTest.keyClick(canvas, Qt.Key.Key_Minus, ctrl)
    QTest.keyClick(canvas, Qt.Key.Key_Minus, ctrl)
    assert canvas.zoom == pytest.approx(1.0 / ZOOM_STEP)
    QTest.keyClick(canvas, Qt.Key.Key_0, ctrl)
    assert canvas.zoom == 1.0
    QTest.keyClick(canvas, Qt.Key.Key_9, ctrl)
    # The rectangle fills the width but for the margins: (400 - 48) / 2002.
    assert canvas.zoom == pytest.approx(352.0 / 2002.0)
    x0, y0, x1, y1 = canvas.view.rect_to_widget((999.0, 999.0, 3001.0, 2001.0))
    assert x0 == pytest.approx(24.0, abs=1.0) and x1 == pytest.approx(376.0, abs=1.0)
    assert (y0 + y1) / 2.0 == pytest.approx(150.0, abs=1.0)  # centred
    QTest.keyClick(canvas, Qt.Key.Key_0, ctrl)
    QTest.keyClick(canvas, Qt.Key.Key_Exclam, Qt.KeyboardModifier.ShiftModifier)  # Shift+1
    assert canvas.zoom == pytest.approx(352.0 / 2002.0)


def test_space_drag_and_middle_drag_pan_without_drawing(qtbot: QtBot) -> None:
    session = Session(qtbot)
    canvas = session.canvas
    QTest.keyPress(canvas, Qt.Key.Key_Space)
    drag(canvas, [(100, 100), (130, 110), (150, 120)])
    QTest.keyRelease(canvas, Qt.Key.Key_Space)
    assert session.sent == []
    # The offset is kept on whole device pixels: exact at ratios 1 and 2, within a pixel else.
    assert canvas.view.to_widget(0.0, 0.0) == pytest.approx((50.0, 20.0), abs=1.0)
    middle, none = Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier
    QTest.mousePress(canvas, middle, none, QPoint(50, 50))
    QTest.mouseMove(canvas, QPoint(40, 45))
    QTest.mouseRelease(canvas, middle, none, QPoint(40, 45))
    assert canvas.view.to_widget(0.0, 0.0) == pytest.approx((40.0, 15.0), abs=1.0)
    assert session.sent == []
    # The pen draws again, where the board now is.
    drag(canvas, [(60, 60), (80, 60)])
    [stroke] = session.sent
    x0, y0 = canvas.view.to_board(60.0, 60.0)
    x1, y1 = canvas.view.to_board(80.0, 60.0)
    assert isinstance(stroke, Stroke) and stroke.points == (x0, y0, x1, y1)


def test_what_is_shown_after_many_changes_equals_a_fresh_rendering(qtbot: QtBot) -> None:
    """The tiles are patched change by change; they must show what rendering the final board
    from scratch shows, pixel for pixel."""
    rng = random.Random(3)
    session = Session(qtbot, size=(360, 260))
    canvas = session.canvas
    canvas.zoom_by(0.3, QPointF(0.0, 0.0))
    session.image()
    ops = [synthetic_op(1 + i % 3, i, rng) for i in range(150)]
    for i, op in enumerate(ops):
        session.apply(op, (100 * (i + 1),))
    session.image()
    drawn = [op.id for op in ops if isinstance(op, Stroke | Shape | Text)]
    later: list[tuple[tuple[int, ...], Op]] = [
        # Late strokes, under others.
        *((((100 * rng.randrange(1, 150) + 7),), synthetic_op(7, i, rng)) for i in range(6)),
        ((100_000,), Erase(OpId(8, 1), tuple(rng.sample(drawn, 5)))),
        ((100_001,), Move(OpId(8, 2), tuple(rng.sample(drawn, 5)), 120.0, -40.0)),
        ((5_050,), Move(OpId(8, 3), (drawn[3],), -30.0, 10.0)),  # a late move
        ((100_002,), Undo(OpId(1, 10_000), drawn[0])),
    ]
    for key, op in later:
        session.apply(op, key)
        session.image()
    canvas.pan_by(-37.0, 21.0)
    incremental = session.image()

    fresh = BoardCanvas(lambda: session.board, lambda: OpId(9, 1))
    qtbot.addWidget(fresh)
    fresh.resize(360, 260)
    fresh.set_view(canvas.view)
    fresh.show()
    qtbot.waitExposed(fresh)
    fresh.finish_rendering()
    # A few levels apart at most: Qt paints an arrow (a flat-capped shaft and a head) a little
    # differently on paint devices of other sizes and offsets: a tile, a block of tiles, the
    # widget (where recent objects are painted, see board_layers.py).
    assert same_image(incremental, fresh.grab().toImage(), tolerance=3)


def test_a_pending_move_and_erase_show_their_effect_until_delivered(qtbot: QtBot) -> None:
    session = Session(qtbot, immediate=False)
    canvas = session.canvas
    a = Stroke(OpId(1, 1), (20.0, 20.0, 100.0, 20.0), RED, 6.0)
    b = Stroke(OpId(1, 2), (20.0, 60.0, 100.0, 60.0), BLUE, 6.0)
    session.apply(a)
    session.apply(b)
    canvas.send(Move(OpId(42, 100), (a.id,), 0.0, 100.0))
    canvas.send(Erase(OpId(42, 101), (b.id,)))
    image = session.image()
    assert is_background(pixel(image, 60, 20)) and pixel(image, 60, 120).rgb() == rgb(RED)
    assert is_background(pixel(image, 60, 60))
    assert canvas.pending_ops() == (OpId(42, 100), OpId(42, 101))
    session.deliver()
    image = session.image()
    assert canvas.pending_ops() == ()
    assert is_background(pixel(image, 60, 20)) and pixel(image, 60, 120).rgb() == rgb(RED)
    assert is_background(pixel(image, 60, 60))


def test_a_pending_op_that_failed_is_forgotten(qtbot: QtBot) -> None:
    session = Session(qtbot, immediate=False)
    canvas = session.canvas
    a = Stroke(OpId(1, 1), (20.0, 20.0, 100.0, 20.0), RED, 6.0)
    session.apply(a)
    canvas.send(Move(OpId(42, 100), (a.id,), 0.0, 100.0))
    canvas.send(Shape(OpId(42, 101), OpKind.RECT, 200.0, 200.0, 300.0, 250.0, BLUE, 4.0))
    canvas.forget_pending(OpId(42, 100))
    canvas.forget_pending(OpId(42, 101))
    image = session.image()
    assert pixel(image, 60, 20).rgb() == rgb(RED) and is_background(pixel(image, 60, 120))
    assert is_background(pixel(image, 200, 225))


def test_a_whole_new_board_replaces_what_is_shown(qtbot: QtBot) -> None:
    session = Session(qtbot)
    session.apply(Stroke(OpId(1, 1), (20.0, 20.0, 100.0, 20.0), RED, 6.0))
    session.image()
    session.board = Board()
    session.board.apply((1,), Stroke(OpId(2, 1), (20.0, 60.0, 100.0, 60.0), BLUE, 6.0))
    session.canvas.board_changed(None)
    image = session.image()
    assert is_background(pixel(image, 60, 20)) and pixel(image, 60, 60).rgb() == rgb(BLUE)


# -- repainting a change where it paints -------------------------------------------------------


def test_a_stroke_cut_to_some_rectangles_paints_as_the_whole_one_in_them() -> None:
    """stroke_path_near keeps the runs of a stroke's chunks near the rectangles: within the
    rectangles, pixel for pixel what the whole stroke paints."""
    rng = random.Random(11)
    cut_some = 0
    for i in range(60):
        op = synthetic_stroke(1, i, rng)
        assert isinstance(op, Stroke)
        x0, y0, x1, y1 = bounds(op)
        ox, oy = math.floor(x0) - 4, math.floor(y0) - 4
        size = QSize(math.ceil(x1 - ox) + 4, math.ceil(y1 - oy) + 4)
        # Small rectangles around some of the stroke's points, as a change along another
        # stroke would give.
        rects = []
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(op.points) // 2)
            px, py = op.points[2 * k] - ox, op.points[2 * k + 1] - oy
            w, h = rng.randint(4, 40), rng.randint(4, 40)
            rects.append(QRect(round(px) - w // 2, round(py) - h // 2, w, h))
        # As TileCache._paint_items: antialiasing and the thinnest pen reach a little farther.
        extra = AA_MARGIN + THINNEST_DEVICE_PEN / 2.0
        near_rects = [
            (
                r.left() + ox - extra,
                r.top() + oy - extra,
                r.right() + 1 + ox + extra,
                r.bottom() + 1 + oy + extra,
            )
            for r in rects
        ]
        chunks = stroke_chunks(op.points, op.width / 2.0 + CORNER_RADIUS)
        cut = stroke_path_near(op.points, chunks, near_rects)
        whole = stroke_path(op.points)
        if isinstance(cut, QPainterPath):
            cut_some += 1
            assert cut.elementCount() < whole.elementCount()
        images = []
        for path in (whole, None if cut is None else whole if cut == WHOLE else cut):
            image = QImage(size, QImage.Format.Format_RGB32)
            image.fill(QColor(255, 255, 255))
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.translate(-ox, -oy)
            painter.setPen(stroke_pen(op.colour, max(op.width, THINNEST_DEVICE_PEN), op.tool))
            if path is not None:
                painter.drawPath(path)
            painter.end()
            images.append(image)
        for r in rects:
            assert images[0].copy(r) == images[1].copy(r)
    assert cut_some > 20  # most of them were cut


def zigzag(rng: random.Random, counter: int) -> Stroke:
    """A stroke of sharp corners between segments short and long: its corner curves reach
    far into the segments beside each point."""
    x, y = 100.0, 100.0
    points = [x, y]
    for _ in range(rng.randint(5, 30)):
        angle = rng.uniform(0.0, 2.0 * math.pi)
        length = rng.choice(
            [rng.uniform(1.0, 4.0), rng.uniform(4.0, 14.0), rng.uniform(14.0, 60.0)]
        )
        x, y = x + length * math.cos(angle), y + length * math.sin(angle)
        points += [round(x, 2), round(y, 2)]
    return Stroke(OpId(1, counter), tuple(points), BLUE, rng.choice([1.0, 2.0, 3.0, 6.0, 12.0]))


def test_the_parts_of_a_stroke_cover_all_it_paints() -> None:
    """A late stroke is repainted only in its parts (paint_parts: its chunks' boxes): they
    must hold every pixel it paints, corner curves that reach across a chunk's end
    included. Painting the background over the parts (grown by the antialiasing) must leave
    nothing of the stroke."""
    rng = random.Random(8)
    for i in range(300):
        op = zigzag(rng, i) if i % 2 else synthetic_stroke(1, i, rng)
        scale = rng.choice([0.5, 1.0, 3.0, 8.0])
        x0, y0, x1, y1 = bounds(op)
        pad = 4.0
        size = QSize(math.ceil((x1 - x0) * scale + 2 * pad), math.ceil((y1 - y0) * scale + 2 * pad))
        image = QImage(size, QImage.Format.Format_RGB32)
        image.fill(QColor(255, 255, 255))
        blank = image.copy()
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.translate(pad - x0 * scale, pad - y0 * scale)
        painter.scale(scale, scale)
        painter.setPen(stroke_pen(op.colour, op.width, op.tool))
        painter.drawPath(stroke_path(op.points))
        margin = AA_MARGIN / scale
        for px0, py0, px1, py1 in paint_parts(op):
            painter.fillRect(
                QRectF(px0 - margin, py0 - margin, px1 - px0 + 2 * margin, py1 - py0 + 2 * margin),
                QColor(255, 255, 255),
            )
        painter.end()
        assert image == blank, (i, op)


def test_a_late_stroke_under_many_others_is_repainted_exactly_where_it_paints(
    qtbot: QtBot,
) -> None:
    """A stroke delivered late, under hundreds of others, is painted in only where it paints
    (a chain of small rectangles along it, each object cut down to its part near them); so
    are an erase and a move of objects under others. The tiles must equal a fresh rendering,
    pixel for pixel."""
    rng = random.Random(12)
    session = Session(qtbot, size=(420, 320))
    canvas = session.canvas
    canvas.zoom_by(0.3, QPointF(0.0, 0.0))
    ops = [synthetic_stroke(1 + i % 4, i, rng) for i in range(600)]
    for i, op in enumerate(ops):
        session.apply(op, (100 * (i + 1),))
    session.image()
    areas: list[int] = []
    repaint = canvas._tiles._repaint

    def counting(rects: list[tuple[float, float, float, float]], targets: list) -> None:
        areas.append(len(rects))
        repaint(rects, targets)

    canvas._tiles._repaint = counting  # type: ignore[method-assign]
    later: list[tuple[tuple[int, ...], Op]] = [
        *(((100 * rng.randrange(1, 60) + 7,), synthetic_stroke(7, i, rng)) for i in range(6)),
        ((100_000,), Erase(OpId(8, 1), (ops[5].id, ops[9].id))),
        ((100_001,), Move(OpId(8, 2), (ops[12].id,), 150.0, 60.0)),
    ]
    for key, op in later:
        session.apply(op, key)
        session.image()
    assert any(count > 1 for count in areas)  # repainted along strokes, not over their boxes
    incremental = session.image()

    fresh = BoardCanvas(lambda: session.board, lambda: OpId(9, 1))
    qtbot.addWidget(fresh)
    fresh.resize(420, 320)
    fresh.set_view(canvas.view)
    fresh.show()
    qtbot.waitExposed(fresh)
    fresh.finish_rendering()
    assert same_image(incremental, fresh.grab().toImage())
