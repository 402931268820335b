"""Mouse events sent straight to a canvas, as the tests of pointers and lasers need them:
through the screen, a move would reach whichever of the overlapping test windows is on top."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QWidget

MOVE = QEvent.Type.MouseMove
PRESS = QEvent.Type.MouseButtonPress
RELEASE = QEvent.Type.MouseButtonRelease


def mouse(
    canvas: QWidget, x: float, y: float, kind: QEvent.Type = MOVE, held: bool = False
) -> None:
    """A move (with the left button ``held`` or not), or a left-button press or release."""
    at = QPointF(x, y)
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    button = none if kind == MOVE else left
    buttons = left if kind == PRESS or (kind == MOVE and held) else none
    event = QMouseEvent(kind, at, canvas.mapToGlobal(at), button, buttons,
                        Qt.KeyboardModifier.NoModifier)  # fmt: skip
    QApplication.sendEvent(canvas, event)
