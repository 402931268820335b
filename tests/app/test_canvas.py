"""The canvas on its own: painting every kind of object, and drawing with the mouse."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from whiteboard.app.canvas import BACKGROUND, BoardCanvas
from whiteboard.board import Board, Move, Op, OpId, OpKind, Shape, Stroke, Text, Tool

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
    image = make_canvas(qtbot, board).grab().toImage()

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
    colour = pixel(make_canvas(qtbot, board).grab().toImage(), 100, 20)
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
    canvas.colour, canvas.width = BLUE, 4.0
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
