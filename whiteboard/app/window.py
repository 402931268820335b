"""The main window: one replica, one transport, one canvas, and the wiring between them.

Everything runs on the Qt thread: the transport's sockets and timers are in the Qt event loop
(:class:`~whiteboard.net.qt_reactor.QtReactor`), so transport events arrive between paints and
need no locking.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping

from PySide6.QtCore import QSize, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QColor, QIcon, QPixmap
from PySide6.QtWidgets import QComboBox, QLabel, QMainWindow, QToolBar, QWidget

from whiteboard.app.canvas import DEFAULT_COLOUR, DEFAULT_WIDTH, BoardCanvas
from whiteboard.board import Op, OpId, encode_op
from whiteboard.net.qt_reactor import QtReactor
from whiteboard.net.runtime import MulticastCarrier, NetConfig, open_transport
from whiteboard.replica import Replica
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import (
    BoardStateReceived,
    Delivered,
    Event,
    Failure,
    JoinProgress,
    MemberChanged,
    Ready,
)
from whiteboard.transport.interface import MemberState

log = logging.getLogger(__name__)

COLOURS: tuple[tuple[str, int], ...] = (
    ("Black", 0xFF000000),
    ("Red", 0xFFE53935),
    ("Blue", 0xFF1E88E5),
    ("Green", 0xFF43A047),
    ("Orange", 0xFFFB8C00),
    ("Purple", 0xFF8E24AA),
)
WIDTHS: tuple[float, ...] = (1.0, 3.0, 6.0, 12.0, 24.0)
# How long a protocol may take to leave before the window closes anyway. Leaving tells the
# others at once that we are gone; a stuck leave must still not keep the window open forever.
LEAVE_TIMEOUT_MS = 5000
MESSAGE_MS = 15000  # how long a failure stays in the status bar


class MainWindow(QMainWindow):
    """Opens the transport and joins on construction; leaves on close.

    Raises what :func:`~whiteboard.net.runtime.open_transport` raises (``TransportUnavailable``,
    ``ValueError``, ``OSError``, each with a message for a person) if it cannot join.
    """

    def __init__(
        self,
        transport_name: str,
        net: NetConfig,
        params: Mapping[str, object] | None = None,
        display_name: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.display_name = display_name
        self.replica = Replica()
        self._members: dict[int, MemberState] = {}
        self._counter = itertools.count(1)
        self._leaving = False
        self._finished = False
        self._leave_timer: QTimer | None = None

        self.canvas = BoardCanvas(lambda: self.replica.board, self._next_op_id, self._send_op)
        # Nobody may draw before the transport says we joined: sending would fail, and a board
        # state may still be on its way.
        self.canvas.set_read_only(True)
        self.setCentralWidget(self.canvas)

        self.transport: CoreDriver
        self.carrier: MulticastCarrier
        self.transport, self.carrier = open_transport(
            transport_name,
            net,
            QtReactor(self),
            self._on_event,
            dict(params or {}),
            on_finished=self._on_finished,
        )
        self.canvas.max_payload = self.transport.max_payload
        self.transport_label = QLabel(f"{transport_name} · {net.group}")
        self.members_label = QLabel()
        self.ops_label = QLabel()
        for label in (self.transport_label, self.members_label, self.ops_label):
            self.statusBar().addPermanentWidget(label)
        self._build_toolbar()
        title = "Whiteboard"
        self.setWindowTitle(f"{title} — {display_name}" if display_name else title)
        self._refresh_status()
        self.statusBar().showMessage("Joining…")
        self.transport.open()

    # -- toolbar ----------------------------------------------------------------------------

    def _build_toolbar(self) -> None:
        toolbar = QToolBar("Pen", self)
        toolbar.setObjectName("pen")
        toolbar.setIconSize(QSize(20, 20))
        self.addToolBar(toolbar)
        group = QActionGroup(self)
        group.setExclusive(True)
        self.colour_actions: dict[int, QAction] = {}
        for name, argb in COLOURS:
            action = QAction(_swatch(argb), name, self)
            action.setCheckable(True)
            action.setChecked(argb == DEFAULT_COLOUR)
            action.triggered.connect(lambda _=False, argb=argb: self.set_colour(argb))
            group.addAction(action)
            toolbar.addAction(action)
            self.colour_actions[argb] = action
        toolbar.addSeparator()
        self.width_box = QComboBox(self)
        self.width_box.setToolTip("Pen width")
        for width in WIDTHS:
            self.width_box.addItem(f"{width:g} px", width)
        self.width_box.setCurrentIndex(WIDTHS.index(DEFAULT_WIDTH))
        self.width_box.currentIndexChanged.connect(
            lambda index: self.set_width(float(self.width_box.itemData(index)))
        )
        toolbar.addWidget(self.width_box)

    def set_colour(self, argb: int) -> None:
        self.canvas.colour = argb
        action = self.colour_actions.get(argb)
        if action is not None:
            action.setChecked(True)

    def set_width(self, width: float) -> None:
        self.canvas.width = width

    # -- sending ----------------------------------------------------------------------------

    def _next_op_id(self) -> OpId:
        # Member ids are random per session, so a counter from 1 never collides with an op
        # this member id sent before.
        return OpId(self.transport.member_id, next(self._counter))

    def _send_op(self, op: Op) -> None:
        try:
            self.transport.send(encode_op(op))
        except (ValueError, RuntimeError) as exc:
            # Too big for the transport, or not in a session any more: say so, keep running.
            self.canvas.forget_pending(op.id)
            self.statusBar().showMessage(f"Could not send the drawing: {exc}", MESSAGE_MS)

    # -- transport events -------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        rejected_states = self.replica.stats.rejected_states
        change = self.replica.handle(event, self.transport)
        if isinstance(event, Delivered):
            if change is None:
                self.statusBar().showMessage(
                    f"Ignored a bad drawing from member {event.origin:08x}: "
                    f"{self.replica.last_rejection}",
                    MESSAGE_MS,
                )
            else:
                self.canvas.board_changed(change)
            self._refresh_status()
        elif isinstance(event, MemberChanged):
            self._members[event.member] = event.state
            self._refresh_status()
        elif isinstance(event, Ready):
            if not self._leaving:
                self.canvas.set_read_only(False)
            self.statusBar().showMessage("Joined", 3000)
        elif isinstance(event, JoinProgress):
            self.statusBar().showMessage(
                f"Joining: received {event.received} of {event.total} parts of the board…"
            )
        elif isinstance(event, BoardStateReceived):
            if self.replica.stats.rejected_states > rejected_states:
                self.statusBar().showMessage(self.replica.last_rejection, MESSAGE_MS)
            self.canvas.board_changed(None)
            self._refresh_status()
        elif isinstance(event, Failure):
            # Reasons are written for people by the transports; the details are in the log.
            self.statusBar().showMessage(event.reason, MESSAGE_MS)
        # ProtocolEvent: for the health panel and session logs, not shown here yet.

    def member_count(self) -> int:
        """Members present (this one included): joining, active or suspected."""
        return sum(1 for state in self._members.values() if state is not MemberState.LEFT)

    def _refresh_status(self) -> None:
        suspected = sum(1 for s in self._members.values() if s is MemberState.SUSPECTED)
        count = self.member_count()
        text = f"{count} member{'s' if count != 1 else ''}"
        if suspected:
            text += f" ({suspected} not heard from)"
        self.members_label.setText(text)
        ops = len(self.replica.board)
        self.ops_label.setText(f"{ops} op{'s' if ops != 1 else ''}")

    # -- leaving ----------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._leaving:
            self._leaving = True
            self.canvas.set_read_only(True)
            # Leave as the protocol says (a BYE, handing over a role...); on_finished follows,
            # at once for raw, after a few exchanges for others.
            self.transport.close()
        if self._finished:
            event.accept()
            return
        event.ignore()
        self.statusBar().showMessage("Leaving the session…")
        if self._leave_timer is None:
            self._leave_timer = QTimer(self)
            self._leave_timer.setSingleShot(True)
            self._leave_timer.timeout.connect(self._give_up_leaving)
            self._leave_timer.start(LEAVE_TIMEOUT_MS)

    def _on_finished(self) -> None:
        self._finished = True
        if not self._leaving:
            # The transport ended the session by itself: drawing would go nowhere.
            self.canvas.set_read_only(True)
            self.statusBar().showMessage("Left the session")
        if self._leave_timer is not None:
            self._leave_timer.stop()
            # Called from inside the transport's pump: close once it has returned.
            QTimer.singleShot(0, self.close)

    def _give_up_leaving(self) -> None:
        log.warning("the %s transport did not finish leaving in time", self.transport.name)
        self.carrier.release()
        self._finished = True
        self.close()


def _swatch(argb: int) -> QIcon:
    pixmap = QPixmap(32, 32)  # scaled down by the toolbar: sharp at 2x too
    pixmap.fill(QColor.fromRgba(argb))
    return QIcon(pixmap)


__all__ = ["COLOURS", "WIDTHS", "MainWindow"]
