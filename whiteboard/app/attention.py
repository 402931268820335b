"""Where everyone is, for the main window (issue 19): the pointers and laser trails
(whiteboard/app/pointers.py) and following a member's view (whiteboard/app/follow.py), wired
to the window's transport, members and menus, and the prompt when someone asks everyone to
follow them."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QMouseEvent
from PySide6.QtWidgets import QMessageBox, QWidget

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.follow import PROMPT_QUIET_S, Following, ViewSharing
from whiteboard.app.health import SessionHealth
from whiteboard.app.pointers import CursorOverlay, PointerSharing
from whiteboard.app.settings import SessionSettings, default_qsettings, save_settings
from whiteboard.net.reactor import Reactor
from whiteboard.pointer import PointerDecodeError, PointerKind, SharedView, decode_side
from whiteboard.sessionlog import SessionLogWriter
from whiteboard.transport.events import EphemeralReceived
from whiteboard.transport.interface import MemberState, Transport


class PointerWindow(Protocol):
    """What :class:`WindowPointers` needs of the main window."""

    settings: SessionSettings | None
    session_log: SessionLogWriter | None  # this session's recording, if any

    @property
    def reactor(self) -> Reactor: ...

    @property
    def canvas(self) -> BoardCanvas: ...

    @property
    def transport(self) -> Transport: ...

    @property
    def health(self) -> SessionHealth: ...

    def show_status(self, text: str) -> None:
        """Say ``text`` in the status bar until the next."""


class WindowPointers(QObject):
    """A window's pointers: ours shared while the View menu's "Share my pointer" is checked (a
    setting, saved), the others' shown with the name and colour the session knows them by;
    our view told to the others, and theirs followed on request."""

    def __init__(self, window: PointerWindow, share: bool, parent: QWidget) -> None:
        super().__init__(parent)
        self._window = window
        canvas = window.canvas

        def send(data: bytes) -> None:
            window.transport.send_ephemeral(data)
            if window.session_log is not None:  # ours too, sampled as the others' are
                now = window.reactor.time()
                window.session_log.record_side(window.transport.member_id, data, now)

        self.overlay = CursorOverlay(canvas, self._label)
        self.sharing = PointerSharing(canvas, send, share)
        # Our own laser trail, at every move (the others get it 30 times a second).
        self.sharing.on_laser = lambda x, y: self.overlay.show_laser(
            window.transport.member_id, x, y
        )
        self.views = ViewSharing(canvas, send)
        self.following = Following(canvas)
        self.following.changed.connect(self._following_changed)
        self.action = QAction("Share my &pointer", parent)
        self.action.setCheckable(True)
        self.action.setChecked(share)
        self.action.setToolTip("Let the others see where your pointer is on the board")
        self.action.toggled.connect(self._share)
        self.ask_action = QAction("Ask everyone to &follow me", parent)
        self.ask_action.setToolTip("The others are asked to follow your view; they may decline")
        self.ask_action.triggered.connect(lambda _=False: self.views.ask_everyone_to_follow())
        self.stop_action = QAction("Stop f&ollowing", parent)
        self.stop_action.setEnabled(False)
        self.stop_action.triggered.connect(lambda _=False: self.following.stop())
        self.rejected = 0  # side-channel payloads that were not pointers or views we read
        self._asked_at: dict[int, float] = {}  # when each member's request was last heard
        self.prompt: QMessageBox | None = None
        canvas.installEventFilter(self)  # a click on a pointer's name follows its member

    def session_ready(self) -> None:
        """Joined: our view goes out from now on (the pointer goes as it moves)."""
        self.views.start()

    def session_ended(self) -> None:
        """Nothing more to tell, nor to show of the others, until the next session."""
        self.views.stop()
        self.following.stop()
        self.overlay.clear()

    def on_ephemeral(self, event: EphemeralReceived) -> None:
        try:
            message = decode_side(event.payload)
        except PointerDecodeError:
            self.rejected += 1  # another kind, from a later version: not ours to read
            return
        if isinstance(message, SharedView):
            self.following.on_view(event.origin, message)
            if message.asks_follow:
                self._asked(event.origin)
            return
        if message.kind is PointerKind.LASER:
            self.overlay.show_laser(event.origin, message.x, message.y)
        self.overlay.show_position(event.origin, message)

    def member_changed(self, member: int, state: MemberState) -> None:
        if state is MemberState.LEFT:
            self.overlay.forget(member)
            self.following.forget(member)

    def follow(self, member: int) -> None:
        if member != self._window.transport.member_id:
            self.following.follow(member)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.MouseButtonPress
            and isinstance(event, QMouseEvent)
            and event.button() == Qt.MouseButton.LeftButton
        ):
            member = self.overlay.label_at(event.position())
            if member is not None:
                self.follow(member)
                return True  # the click was on the name, not the board: nothing is drawn
        return False

    def _asked(self, member: int) -> None:
        if self._window.health.colour_of(member) is None:
            return  # its name has not come yet: asked when the request is repeated
        now = time.monotonic()
        last = self._asked_at.get(member)
        self._asked_at[member] = now
        if last is not None and now - last < PROMPT_QUIET_S:
            return  # the same request, repeated
        if self.following.followed == member:
            return
        name = self._window.health.name_of(member)
        box = QMessageBox(self.parent())  # type: ignore[arg-type]
        box.setWindowTitle("Follow?")
        box.setText(f"{name} asks everyone to follow their view.")
        follow = box.addButton("Follow", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.buttonClicked.connect(lambda button: self.follow(member) if button is follow else None)
        box.open()
        self.prompt = box

    def _following_changed(self, member: int | None) -> None:
        self.stop_action.setEnabled(member is not None)
        log = self._window.session_log
        if log is not None:
            log.record_follow(member, self._window.reactor.time())
        if member is None:
            self._window.show_status("")
        else:
            name = self._window.health.name_of(member)
            self._window.show_status(f"Following {name}'s view: pan or zoom to stop")

    def _label(self, member: int) -> tuple[str, int | None]:
        health = self._window.health
        return health.name_of(member), health.colour_of(member)

    def _share(self, share: bool) -> None:
        self.sharing.set_enabled(share)
        settings = self._window.settings
        if settings is not None and settings.share_pointer != share:
            self._window.settings = replace(settings, share_pointer=share)
            save_settings(default_qsettings(), self._window.settings)
