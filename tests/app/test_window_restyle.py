"""Restyling, reordering and editing text in real windows, on RMP and on MTP over loopback
multicast (issue 20, points 2, 3 and 4): a colour, width and opacity picked with objects
selected restyle them for both members, the Arrange shortcuts change their z-order for both,
a text double-clicked and edited changes for both; each is one undo step, and both boards
hash the same."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from pytestqt.qtbot import QtBot

from tests.app.test_window import drag, open_window
from tests.app.test_window_edit_keys import PAIRS, kinds, rectangle_for_both
from tests.app.test_window_editing import focus, press
from tests.app.test_window_mtp import WAIT_MS
from whiteboard.app.strokes import Style
from whiteboard.app.toolbar import COLOURS, OPACITIES
from whiteboard.app.tools import SelectTool, ToolKind
from whiteboard.app.window import MainWindow
from whiteboard.board import OpId, OpKind, Shape, Text
from whiteboard.net.runtime import NetConfig

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier
RED = dict(COLOURS)["Red"]


def order(window: MainWindow) -> list[OpId]:
    return [obj.id for obj in window.replica.board.objects()]


def style(window: MainWindow, op_id: OpId) -> tuple[int, float]:
    obj = window.replica.board.object(op_id)
    assert obj is not None and isinstance(obj.op, Shape)
    return obj.op.colour, obj.op.width


def window_with_a_rectangle(qtbot: QtBot, net: NetConfig) -> MainWindow:
    """One member's window (raw transport) and a rectangle drawn in it at (60, 60)-(160, 140)."""
    window = open_window(qtbot, net, "alice")
    press(window, "r")
    drag(window, [(60, 60), (120, 100), (160, 140)])
    return window


def same(alice: MainWindow, bob: MainWindow) -> bool:
    return alice.replica.board.hash() == bob.replica.board.hash()


@pytest.mark.network
@pytest.mark.parametrize("transport", sorted(PAIRS))
def test_restyle_and_reorder_reach_the_other_member_and_undo_one_step_each(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    alice, bob = PAIRS[transport](qtbot, net)
    press(alice, "r")
    drag(alice, [(60, 60), (120, 100), (160, 140)])  # the lower rectangle
    drag(alice, [(100, 80), (160, 120), (200, 160)])  # the upper one, over its corner
    qtbot.waitUntil(lambda: len(bob.replica.board) == 2, timeout=WAIT_MS)
    lower, upper = order(bob)

    press(alice, "v")
    QTest.mouseClick(alice.canvas, LEFT, NONE, QPoint(60, 100))  # the lower one's left side
    assert alice.canvas.selection == (lower,)
    press(alice, "2")  # red, as the tool bar's tip says
    for box, index in (
        (alice.toolbar.width_box, alice.toolbar.width_box.count() - 1),  # the widest
        (alice.toolbar.opacity_box, OPACITIES.index(128)),  # half
    ):
        box.setCurrentIndex(index)  # as a person picks from the list
        box.activated.emit(index)
    half_red = (RED & 0xFFFFFF) | (128 << 24)
    qtbot.waitUntil(lambda: style(bob, lower) == (half_red, 24.0), timeout=WAIT_MS)
    assert style(bob, upper) == style(alice, upper) != style(bob, lower)
    assert alice.canvas.colour == half_red  # and what is drawn next is so too

    focus(alice)
    QTest.keySequence(alice, "Ctrl+]")  # one step forward: above the upper rectangle
    qtbot.waitUntil(lambda: order(bob) == [upper, lower], timeout=WAIT_MS)
    QTest.keySequence(alice, "Ctrl+]")  # already above all it overlaps: nothing is sent
    QTest.keySequence(alice, "Ctrl+Z")  # undoes the reorder only
    qtbot.waitUntil(lambda: order(bob) == [lower, upper], timeout=WAIT_MS)
    assert style(bob, lower) == (half_red, 24.0)
    QTest.keySequence(alice, "Ctrl+Z")  # then the opacity
    qtbot.waitUntil(lambda: style(bob, lower) == (RED, 24.0), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: same(alice, bob), timeout=WAIT_MS)
    restyles, reorders = kinds(alice).count(OpKind.RESTYLE), kinds(alice).count(OpKind.REORDER)
    assert (restyles, reorders) == (3, 1)

    # Bob sends the upper one to the back, from his own window.
    press(bob, "v")
    QTest.mouseClick(bob.canvas, LEFT, NONE, QPoint(200, 140))  # the upper one's right side
    assert bob.canvas.selection == (upper,)
    focus(bob)
    QTest.keySequence(bob, "Ctrl+Shift+[")
    qtbot.waitUntil(lambda: order(alice) == [upper, lower], timeout=WAIT_MS)
    qtbot.waitUntil(lambda: same(alice, bob), timeout=WAIT_MS)


@pytest.mark.network
def test_a_new_colour_refills_filled_shapes_and_leaves_hollow_ones_hollow(
    qtbot: QtBot, net: NetConfig
) -> None:
    window = window_with_a_rectangle(qtbot, net)
    press(window, "f")  # the next one filled
    drag(window, [(200, 60), (260, 100), (300, 140)])
    qtbot.waitUntil(lambda: len(window.replica.board.objects()) == 2, timeout=WAIT_MS)
    hollow, filled = order(window)

    def shapes() -> list[tuple[int, int]]:
        objects = window.replica.board.objects()
        return [(o.op.colour, o.op.fill) for o in objects if isinstance(o.op, Shape)]

    drawn = shapes()
    QTest.keySequence(window, "Ctrl+A")
    press(window, "3")  # blue, with Fill on
    blue = dict(COLOURS)["Blue"]
    qtbot.waitUntil(lambda: [c for c, _ in shapes()] == [blue, blue], timeout=WAIT_MS)
    assert shapes()[0][1] == 0
    assert shapes()[1][1] == window.canvas.fill
    assert window.canvas.fill & 0xFFFFFF == blue & 0xFFFFFF
    assert [op.kind for _, op in window.replica.board.log()].count(OpKind.RESTYLE) == 2
    QTest.keySequence(window, "Ctrl+Z")  # one step: both restyles
    qtbot.waitUntil(lambda: shapes() == drawn, timeout=WAIT_MS)
    assert order(window) == [hollow, filled]


@pytest.mark.network
@pytest.mark.parametrize("transport", sorted(PAIRS))
def test_a_text_edited_in_place_reaches_the_other_member(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    alice, bob = PAIRS[transport](qtbot, net)
    press(alice, "t")
    QTest.mouseClick(alice.canvas, LEFT, NONE, QPoint(80, 80))
    QTest.keyClicks(QApplication.focusWidget(), "Hi")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(bob.replica.board) == 1, timeout=WAIT_MS)
    [label] = order(bob)

    def words(window: MainWindow) -> str:
        obj = window.replica.board.object(label)
        assert obj is not None and isinstance(obj.op, Text)
        return obj.op.text

    press(alice, "v")
    QTest.mouseDClick(alice.canvas, LEFT, NONE, QPoint(88, 92))
    editor = QApplication.focusWidget()
    QTest.keyClick(editor, Qt.Key.Key_Return, SHIFT)
    QTest.keyClicks(editor, "there")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: words(bob) == "Hi\nthere", timeout=WAIT_MS)
    assert alice.canvas.selection == (label,)
    focus(alice)
    QTest.keySequence(alice, "Ctrl+Z")
    qtbot.waitUntil(lambda: words(bob) == words(alice) == "Hi", timeout=WAIT_MS)
    assert OpKind.EDIT_TEXT in kinds(bob)
    qtbot.waitUntil(lambda: same(alice, bob), timeout=WAIT_MS)


@pytest.mark.network
def test_a_right_click_selects_the_object_under_it_and_offers_what_can_be_done(
    qtbot: QtBot, net: NetConfig
) -> None:
    window = window_with_a_rectangle(qtbot, net)
    qtbot.waitUntil(lambda: len(window.replica.board.objects()) == 1, timeout=WAIT_MS)
    [rect] = order(window)

    def texts(menu: QMenu | None) -> list[str]:
        assert menu is not None
        return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]

    menus = window.selection_edits
    assert texts(menus.context_menu(QPoint(300, 300))) == ["Paste"]  # nothing there
    menu = menus.context_menu(QPoint(60, 100))  # on the rectangle's left side
    assert window.canvas.tool is ToolKind.SELECT and window.canvas.selection == (rect,)
    assert texts(menu) == [
        "Cut", "Copy", "Duplicate", "Delete selection", "Paste",
        "Bring to front", "Bring forward", "Send backward", "Send to back",
    ]  # fmt: skip
    assert menu is not None
    [duplicate] = [a for a in menu.actions() if a.text() == "&Duplicate"]
    duplicate.trigger()  # what the menu's entry does: a copy beside it
    qtbot.waitUntil(lambda: len(window.replica.board.objects()) == 2, timeout=WAIT_MS)
    # Opened for real by the event a right-click makes (and closed again).
    popups: list[QWidget] = []

    def close_popup() -> None:
        popup = QApplication.activePopupWidget()
        if popup is not None:
            popups.append(popup)
            popup.close()

    QTimer.singleShot(300, close_popup)
    at = QPoint(60, 100)
    right_click = QContextMenuEvent(
        QContextMenuEvent.Reason.Mouse, at, window.canvas.mapToGlobal(at), NONE
    )
    QApplication.sendEvent(window.canvas, right_click)
    qtbot.waitUntil(lambda: bool(popups), timeout=WAIT_MS)
    assert isinstance(popups[0], QMenu) and len(texts(popups[0])) == 9


@pytest.mark.network
@pytest.mark.parametrize("transport", sorted(PAIRS))
def test_a_resize_and_a_turn_by_the_handles_reach_the_other_member(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    alice, bob = PAIRS[transport](qtbot, net)
    rectangle_for_both(qtbot, alice, bob)
    [rect] = order(bob)
    press(alice, "v")
    QTest.mouseClick(alice.canvas, LEFT, NONE, QPoint(60, 100))
    tool = alice.canvas.active_tool
    assert isinstance(tool, SelectTool)
    box = tool.selection_box()
    assert box is not None
    corner = QPoint(round(box[2]), round(box[3]))

    def linear(window: MainWindow) -> object:
        obj = window.replica.board.object(rect)
        return None if obj is None else obj.linear

    QTest.mousePress(alice.canvas, LEFT, NONE, corner)
    QTest.mouseMove(alice.canvas, corner + QPoint(30, 20))
    assert alice.canvas.live_chunks == (transport == "rmp")
    if alice.canvas.live_chunks:  # RMP: Bob watches the resize while it happens
        qtbot.waitUntil(lambda: linear(bob) is not None, timeout=WAIT_MS)
    else:  # MTP: sent when Alice lets go, seen once accepted
        qtbot.wait(300)
        assert linear(bob) is None
    QTest.mouseMove(alice.canvas, QPoint(260, 200))
    QTest.mouseRelease(alice.canvas, LEFT, NONE, QPoint(260, 200))
    qtbot.waitUntil(lambda: linear(bob) == linear(alice) != (1.0, 0.0, 0.0, 1.0), timeout=WAIT_MS)

    qtbot.waitUntil(lambda: linear(bob) is not None, timeout=WAIT_MS)
    assert linear(bob) == linear(alice)
    focus(alice)
    QTest.keySequence(alice, "Ctrl+Z")
    qtbot.waitUntil(lambda: linear(bob) is None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: same(alice, bob), timeout=WAIT_MS)
    assert OpKind.TRANSFORM in kinds(bob)


@pytest.mark.network
def test_the_tool_bar_shows_the_selections_style_and_then_what_is_drawn_next(
    qtbot: QtBot, net: NetConfig
) -> None:
    window = window_with_a_rectangle(qtbot, net)
    qtbot.waitUntil(lambda: len(window.replica.board.objects()) == 1, timeout=WAIT_MS)
    [rect] = order(window)
    bar, canvas = window.toolbar, window.canvas
    drawing = canvas.colour
    half_red = (RED & 0xFFFFFF) | (128 << 24)
    QTest.keySequence(window, "Ctrl+A")
    window.selection_edits.restyle(Style(colour=half_red, width=12.0))
    qtbot.waitUntil(lambda: style(window, rect) == (half_red, 12.0), timeout=WAIT_MS)
    canvas.set_selection([])
    QTest.mouseClick(canvas, LEFT, NONE, QPoint(60, 100))  # select it
    assert bar.colour_actions[RED].isChecked()
    assert bar.opacity_box.currentData() == 128 and bar.width_box.currentData() == 12.0
    assert canvas.colour == drawing  # shown, not taken: what is drawn next is unchanged
    QTest.keyClick(canvas, Qt.Key.Key_Escape)  # deselected: the drawing style again
    assert bar.opacity_box.currentData() == OPACITIES[0]
    drawn_next = bar.colour_actions.get(drawing | 0xFF000000, bar.custom_colour_action)
    assert drawn_next.isChecked() and bar.width_box.currentData() == canvas.pen_width


@pytest.mark.network
@pytest.mark.parametrize("transport", sorted(PAIRS))
def test_a_dragged_selection_moves_for_the_other_member_while_dragged_on_rmp(
    qtbot: QtBot, net: NetConfig, transport: str
) -> None:
    alice, bob = PAIRS[transport](qtbot, net)
    rectangle_for_both(qtbot, alice, bob)
    [rect] = order(bob)

    def offset(window: MainWindow) -> tuple[float, float]:
        obj = window.replica.board.object(rect)
        assert obj is not None
        return obj.dx, obj.dy

    press(alice, "v")
    QTest.mousePress(alice.canvas, LEFT, NONE, QPoint(60, 100))  # selects it, and drags
    QTest.mouseMove(alice.canvas, QPoint(90, 110))
    if transport == "rmp":  # Bob watches it move while Alice's button is down
        qtbot.waitUntil(lambda: offset(bob) == (30.0, 10.0), timeout=WAIT_MS)
    else:  # MTP: one move, sent when she lets go
        qtbot.wait(300)
        assert offset(bob) == (0.0, 0.0)
    QTest.mouseMove(alice.canvas, QPoint(100, 130))
    QTest.mouseRelease(alice.canvas, LEFT, NONE, QPoint(100, 130))
    qtbot.waitUntil(lambda: offset(bob) == offset(alice) == (40.0, 30.0), timeout=WAIT_MS)
    focus(alice)
    QTest.keySequence(alice, "Ctrl+Z")  # the whole drag, one step
    qtbot.waitUntil(lambda: offset(bob) == (0.0, 0.0), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: same(alice, bob), timeout=WAIT_MS)
