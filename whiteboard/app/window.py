"""The main window: one replica, one transport, one canvas, and the wiring between them.

Everything runs on the Qt thread: the transport's sockets and timers are in the Qt event loop
(:class:`~whiteboard.app.qt_reactor.QtReactor`), so transport events arrive between paints and
need no locking.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QWidget,
)

from coreapi.description import EventKind
from whiteboard.app.about import add_help_menu, sample_recording
from whiteboard.app.attention import WindowPointers
from whiteboard.app.board_files import BoardFiles
from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.clipboard import BoardClipboard
from whiteboard.app.collector import FreezeSchedule, thaw_when_gone
from whiteboard.app.health import SessionHealth
from whiteboard.app.history import History
from whiteboard.app.leaving import LeavingLoss, confirm_leaving
from whiteboard.app.members_panel import MembersPanel
from whiteboard.app.own_presence import OwnPresence
from whiteboard.app.qt_reactor import QtReactor
from whiteboard.app.replay_window import ask_open_recording, open_recording
from whiteboard.app.selection_edits import SelectionEdits
from whiteboard.app.session import SessionSpec
from whiteboard.app.session_banner import ElidedLabel, SessionBanner, SessionStateView
from whiteboard.app.session_state import SessionLink, SessionTracker
from whiteboard.app.settings import SessionSettings, default_qsettings, load_settings, save_settings
from whiteboard.app.settings_dialog import edit_settings
from whiteboard.app.toolbar import DrawingToolbar
from whiteboard.app.undelivered import reissue, waiting_notice
from whiteboard.app.view_code import VIEW_CODE_TIP, copy_view_code
from whiteboard.board import Clear, Op, OpId
from whiteboard.net.runtime import MulticastCarrier, NetConfig, open_transport
from whiteboard.presence import (
    IDLE_PRESENCE_S,
    PRESENCE_S,
    Presence,
    PresenceDecodeError,
    decode_name_card,
    encode_name_card,
    name_card_of,
)
from whiteboard.replica import Replica
from whiteboard.security import OpAuthority, SessionKey
from whiteboard.sessionlog import (
    RecordingHandler,
    SessionLogWriter,
    header_on,
    keep_flushing,
)
from whiteboard.sessionlog.sealing import LogSealer
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import (
    BoardStateReceived,
    Delivered,
    EphemeralReceived,
    Event,
    Failure,
    Introduced,
    JoinProgress,
    MemberChanged,
    ProtocolEvent,
    Ready,
)
from whiteboard.transport.interface import MemberState

log = logging.getLogger(__name__)

# How long a protocol may take to leave before the window closes anyway. Leaving tells the
# others at once that we are gone; a stuck leave must still not keep the window open forever.
LEAVE_TIMEOUT_MS = 5000
MESSAGE_MS = 15000  # how long a failure stays in the status bar
# Presence (whiteboard/app/own_presence.py): sent first on joining, then as PresenceSchedule
# says (at least every IDLE_PRESENCE_MS), looked at every PRESENCE_MS.
PRESENCE_MS = round(PRESENCE_S * 1000)
IDLE_PRESENCE_MS = round(IDLE_PRESENCE_S * 1000)
# How long a board difference must last, neither board moving, to be believed
# (whiteboard/app/health.py).
AGREEMENT_SETTLE_S = 5.0
# A member whose last presence is older than this many idle presence intervals is not heard
# from: its board is not compared with ours.
STALE_PRESENCES = 3
MEMBERS_WIDTH = 400  # the members panel's default width: names, state, counters, board
# Said by the disabled tools, the canvas and the status bar to a member whose role cannot send.


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
        colour: int | None = None,
        log_dir: Path | None = None,
        record: bool = True,
        key: SessionKey | None = None,
        encrypt_recording: bool = True,
        share_pointer: bool = True,
    ) -> None:
        super().__init__(parent)
        self.log_dir = log_dir
        self.record = record
        self.session_log: SessionLogWriter | None = None
        self.display_name = display_name or "anonymous"
        self.replica = Replica()
        self._counter = itertools.count(1)
        self._leaving = False
        self._finished = False
        self._leave_timer: QTimer | None = None
        self._switch_to: SessionSpec | None = None  # the session to join once this one ends
        # Save, Open (an opened file's ops sent a batch at a time), Export.
        self.files = BoardFiles(self, self, self._send_op)
        # The settings this window was opened with, if it came from them (main.py sets it):
        # the settings dialog starts from them.
        self.settings: SessionSettings | None = None

        self.canvas = BoardCanvas(lambda: self.replica.board, self.next_op_id, self._send_op)
        self.canvas.on_gesture = self.on_gesture
        # What the board keeps alive is frozen now and then, out of the cyclic collector's
        # walks (see collector.py); given back when the window goes.
        self._freezes = FreezeSchedule()
        thaw_when_gone(self)
        # Nobody may draw before the transport says we joined: sending would fail, and a board
        # state may still be on its way.
        self.canvas.set_read_only(True)
        self.setCentralWidget(self.canvas)
        # Our name, colour and board, told to the others (colour None: a default one).
        self.presence = OwnPresence(self, colour)
        self.canvas.colour = self.presence.colour

        # Everyone's pointer on the board; ours sent while shared (whiteboard/app/pointers.py).
        self.pointers = WindowPointers(self, share_pointer, self)
        self.members_panel = MembersPanel(self)
        self.members_panel.member_chosen.connect(self.pointers.follow)  # double-click: follow
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.members_panel)
        self.resizeDocks([self.members_panel], [MEMBERS_WIDTH], Qt.Orientation.Horizontal)
        # The session state (whiteboard/app/session_state.py) and failures as notices.
        banner = SessionBanner(
            self.canvas, self.host_new_board, self.files.ask_save_board, self.join_again
        )
        self.state_view = SessionStateView(
            self.statusBar(), banner, self.members_panel.show_session, MESSAGE_MS
        )
        self.transport_label = QLabel()
        self.members_label = QLabel()
        self.agreement_label = ElidedLabel()  # names may be long: it shrinks first
        self.ops_label = QLabel()
        self.join_progress = QProgressBar()
        self.join_progress.setMaximumWidth(160)
        self.join_progress.setFormat("board %p%")
        self.join_progress.hide()
        # Permanent: a temporary message ("Joining: received …") would hide a normal one.
        self.statusBar().addPermanentWidget(self.join_progress)
        for label in (
            self.state_view.label,
            self.transport_label,
            self.members_label,
            self.agreement_label,
            self.ops_label,
        ):
            self.statusBar().addPermanentWidget(label)
        self.toolbar = DrawingToolbar(self.canvas, self)
        self.addToolBar(self.toolbar)
        self.clipboard = BoardClipboard(  # copy, cut, paste, duplicate (the Edit menu)
            self, self.canvas, lambda: self.replica.board, self.state_view.tell
        )
        self.clipboard.images.limits = lambda: (self.settings or SessionSettings()).picture_limits()
        self.selection_edits = SelectionEdits(self, self.canvas, self.state_view.tell)
        self.toolbar.style_picked.connect(self.selection_edits.restyle)
        self._build_menus()
        title = "Whiteboard"
        self.setWindowTitle(f"{title} — {display_name}" if display_name else title)

        self._presence_timer = QTimer(self)
        self._presence_timer.timeout.connect(self._presence_tick)
        self.transport: CoreDriver
        self.carrier: MulticastCarrier
        self._open_session(
            SessionSpec(transport_name, net, dict(params or {}), key, encrypt_recording)
        )

    # -- sessions ---------------------------------------------------------------------------

    def _open_session(self, spec: SessionSpec) -> None:
        self.spec = spec
        self.reactor = QtReactor(self)
        recorder = RecordingHandler(self._on_event, None, self.reactor.time)
        self.transport, self.carrier = open_transport(
            spec.transport,
            spec.net,
            self.reactor,
            recorder,
            dict(spec.params),
            on_finished=self._on_finished,
            key=spec.key,
        )
        self.session_log = recorder.writer = self._start_session_log(spec)
        self._finished = False
        self._leaving = False
        # A private session's ops go with a drawer's proof, and only proven ones are applied
        # (whiteboard/security/signing.py): room for the proof is kept in every op.
        self.replica.use_authority(OpAuthority.for_session(spec.key))
        self.canvas.max_payload = self.transport.max_payload - self.replica.payload_overhead
        self.canvas.max_message = self.transport.max_message - self.replica.payload_overhead
        # Live chunks let others watch a stroke being drawn where ops arrive at once (RMP,
        # raw); where each chunk would wait for a verdict of its own (MTP), a stroke goes whole.
        self.canvas.live_chunks = spec.description.live_strokes
        self._show_role()
        me = self.transport.member_id
        self.history = History(me)
        idle_s = IDLE_PRESENCE_MS / 1000
        # The colours shown in the session we leave, if any, for our new default colour.
        taken = (
            self.presence.colours_heard(present_only=False) if hasattr(self, "health") else set()
        )
        self.health = SessionHealth(
            me,
            self.presence.fingerprint,
            AGREEMENT_SETTLE_S,
            STALE_PRESENCES * idle_s,
            self._nacks_sent,
        )
        self.presence.start_session(idle_s, taken)
        self.health.member_changed(me, MemberState.JOINING)
        self.session = SessionTracker(spec.description.phases, not spec.is_viewer())
        self.state_view.banner.set_host_available(spec.description.host_role is not None)
        self._show_session_state()
        self.transport_label.setText(spec.describe())
        self.members_panel.show_private(spec.key)
        self.view_code_action.setEnabled(spec.key is not None and spec.key.can_draw)
        self.resync_action.setEnabled(False)
        self._refresh_status()
        # Our name card travels with the join: the members already there name us at once.
        self.transport.open(encode_name_card(name_card_of(self.presence.own_row())))

    def _start_session_log(self, spec: SessionSpec) -> SessionLogWriter | None:
        """This session's log (docs/session-log.md), or None if recording is off or the log
        cannot be created: a session is never refused for want of a log."""
        if not self.record:
            return None
        header = header_on(
            spec.net,
            transport=spec.transport,
            params=spec.params,
            member_id=self.transport.member_id,
            member_name=self.display_name,
            now=self.reactor.time(),
            key=spec.key,
        )
        sealer = LogSealer.for_session(spec.key, str(spec.net.group), spec.encrypt_recording)
        try:
            writer = SessionLogWriter.create(header, self.log_dir, sealer)
        except OSError as exc:
            log.warning("this session is not recorded: %s", exc)
            return None
        keep_flushing(self.reactor, writer, counters=self.transport.counters)
        return writer

    def record_sent(self, payload: bytes) -> None:
        if self.session_log is not None:
            self.session_log.record_local_op(payload, self.reactor.time())

    def _close_session_log(self) -> None:
        if self.session_log is not None:
            now = self.reactor.time()
            self.session_log.record_counters(self.transport.counters(), now)
            self.session_log.close(now)
            self.session_log = None

    def switch_session(self, spec: SessionSpec, fresh_board: bool = False) -> None:
        """Leave this session cleanly and join ``spec`` (other settings, or the same one again
        to resync: ``fresh_board`` then drops our board, to take the others' as it is)."""
        self._switch_to = spec
        self._fresh_board = fresh_board
        self._presence_timer.stop()
        if not self.transport.finished:
            self.session.leaving()
        self._show_session_state()
        if self.transport.finished:
            self._on_finished()
        else:
            self.transport.close()

    def join_again(self) -> None:
        """After the session ended: join the same session again and take the board it has
        (ours, kept, would differ from everyone's; the banner offers to save it first)."""
        self.switch_session(self.spec, fresh_board=self.spec.can_resync())

    def host_new_board(self) -> None:
        """After the session ended: host a new session on the same group, from this board
        (for a transport whose sessions live with a host: the joiners get this board)."""
        host = self.spec.description.host_role
        if host is not None:
            self.switch_session(
                self.spec.with_params(**{self.spec.description.role_param: host.value})
            )

    def resync(self) -> None:
        """Take the board the others have (TR 90-1141 §3.4, RR-2100 §2.8): leave and join
        again with an empty board, which the join fills with theirs."""
        if self.spec.can_resync():
            self.switch_session(self.spec, fresh_board=True)

    def _show_role(self) -> None:
        """A viewer (its role cannot send, RFC 1301 §3.1.1) gets its drawing tools disabled,
        each saying why; what only looks (pan, zoom, save, export) stays."""
        reason = self.spec.why_view_only() or ""
        can_draw = not reason
        self.toolbar.set_drawing_enabled(can_draw, reason)
        for action in (self.open_action, self.clear_action, self.delete_action):
            action.setEnabled(can_draw)
        self.canvas.setToolTip(reason)

    # -- toolbar and menus ------------------------------------------------------------------

    def _action(self, text: str, slot: Callable[[], object], *keys: QKeySequence) -> QAction:
        action = QAction(text, self)
        if keys:
            action.setShortcuts(list(keys))
            action.setToolTip(f"{text.replace('&', '').rstrip('…')} ({keys[0].toString()})")
        action.triggered.connect(lambda _=False: slot())
        self.addAction(action)  # shortcuts work with the menu bar hidden too
        return action

    def _build_menus(self) -> None:
        keys = QKeySequence.StandardKey
        file = self.menuBar().addMenu("&File")
        self.open_action = self._action(
            "&Open board…", self.files.ask_open_board, QKeySequence(keys.Open)
        )
        self.save_action = self._action(
            "&Save board…", self.files.ask_save_board, QKeySequence(keys.Save)
        )
        self.export_action = self._action(
            "&Export board…", self.files.ask_export_board, QKeySequence("Ctrl+E")
        )
        self.export_view_action = self._action(
            "Export &visible area…", lambda: self.files.ask_export_board(visible=True)
        )
        file.addActions([self.open_action, self.save_action, self.clipboard.images.insert_action])
        file.addSeparator()
        # A recorded session, replayed in a window of its own (docs/replay.md).
        self.open_recording_action = self._action(
            "Open &recording…", lambda: ask_open_recording(self, self._session_keys())
        )
        file.addAction(self.open_recording_action)
        file.addSeparator()
        file.addActions([self.export_action, self.export_view_action])
        edit = self.menuBar().addMenu("&Edit")
        self.undo_action = self._action("&Undo", self.undo, QKeySequence(keys.Undo))
        self.redo_action = self._action(
            "&Redo", self.redo, QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")
        )
        self.clear_action = self._action("&Clear board…", self.ask_clear_board)
        select_all = self._action(
            "Select &all", self.canvas.select_all, QKeySequence(keys.SelectAll)
        )
        delete = self.delete_action = self._action(
            "&Delete selection", self.canvas.delete_selection
        )
        delete.setToolTip("Delete selection (Delete)")
        edit.addActions([self.undo_action, self.redo_action])
        edit.addSeparator()
        edit.addActions(self.clipboard.actions)
        edit.addActions([select_all, delete])
        edit.addSeparator()
        edit.addAction(self.clear_action)
        self.menuBar().addMenu("&Arrange").addActions(self.selection_edits.actions)
        clip = self.clipboard
        self.selection_edits.use_context_menu(
            [clip.cut_action, clip.copy_action, clip.duplicate_action, delete], [clip.paste_action]
        )
        session = self.menuBar().addMenu("&Session")
        self.settings_action = self._action(
            "&Settings…", self.open_settings, QKeySequence("Ctrl+,")
        )
        session.addAction(self.settings_action)
        self.resync_action: QAction = self._action("&Resync board from the others", self.resync)
        self.resync_action.setToolTip(
            "Leave and join again, taking the board the others have (when yours differs)"
        )
        session.addAction(self.resync_action)
        self.view_code_action: QAction = self._action("Copy &view code", self.copy_view_code)
        self.view_code_action.setToolTip(VIEW_CODE_TIP)
        self.members_panel.view_code_button.clicked.connect(self.copy_view_code)
        session.addAction(self.view_code_action)
        session.addSeparator()
        self.quit_action = self._action("&Leave and close", self.ask_close, QKeySequence(keys.Quit))
        session.addAction(self.quit_action)
        view = self.menuBar().addMenu("&View")
        zoom_in = self._action(
            "Zoom &in", self.canvas.zoom_in, QKeySequence(keys.ZoomIn), QKeySequence("Ctrl+=")
        )
        zoom_out = self._action("Zoom &out", self.canvas.zoom_out, QKeySequence(keys.ZoomOut))
        actual = self._action("&Actual size", self.canvas.zoom_reset, QKeySequence("Ctrl+0"))
        fit = self._action("&Fit to content", self.canvas.fit_to_content, QKeySequence("Ctrl+9"))
        view.addActions([zoom_in, zoom_out, actual, fit])
        view.addSeparator()
        members = self.members_panel.toggleViewAction()
        members.setShortcut(QKeySequence("Ctrl+M"))
        view.addAction(members)
        view.addActions([self.pointers.action, self.pointers.ask_action, self.pointers.stop_action])
        add_help_menu(self, lambda: open_recording(sample_recording(), self))

    def _session_keys(self) -> tuple[SessionKey, ...]:
        """This session's key, if private: its encrypted recordings open without asking."""
        return () if self.spec.key is None else (self.spec.key,)

    def copy_view_code(self) -> str | None:
        """The private session's view code, on the clipboard (docs/security.md "Viewers")."""
        return copy_view_code(self, self.spec.key, MESSAGE_MS)

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(text)

    def set_colour(self, argb: int) -> None:
        self.toolbar.set_colour(argb)

    def set_width(self, width: float) -> None:
        self.toolbar.set_width(width)

    # -- sending ----------------------------------------------------------------------------

    def next_op_id(self) -> OpId:
        # Member ids are random per session, so a counter from 1 never collides with an op
        # this member id sent before.
        return OpId(self.transport.member_id, next(self._counter))

    def _send_op(self, op: Op) -> bool:
        payload = self.replica.payload_of(op)
        try:
            self.transport.send(payload)
        except (ValueError, RuntimeError) as exc:
            # Too big for the transport, or not in a session any more: say so, keep running.
            self.canvas.forget_pending(op.id)
            self.history.forget(op.id)
            self.state_view.tell(f"Could not send the drawing: {exc}")
            return False
        self.record_sent(payload)
        return True

    def on_gesture(self, ops: list[OpId]) -> None:
        """The canvas's ops of one user action (a live stroke's chunks, one erase...)."""
        self.history.record(ops)

    def undo(self) -> None:
        if self.canvas.is_read_only():
            return
        self.canvas.settle()
        for op in self.history.undo(self.replica.board, self.next_op_id):
            self._send_op(op)

    def redo(self) -> None:
        if self.canvas.is_read_only():
            return
        self.canvas.settle()
        for op in self.history.redo(self.replica.board, self.next_op_id):
            self._send_op(op)

    def ask_clear_board(self) -> None:
        if self.canvas.is_read_only():
            return
        answer = QMessageBox.question(
            self,
            "Clear the board",
            "Clear the board for everyone in the session?\n\nYou can undo it (Ctrl+Z).",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.clear_board()

    def clear_board(self) -> None:
        """A CLEAR op, like any other: everyone's board empties where it is ordered, and
        undoing it brings back what it removed (docs/board-model.md)."""
        clear = Clear(self.next_op_id())
        if self._send_op(clear):
            self.history.record([clear.id])

    # -- settings ---------------------------------------------------------------------------

    def open_settings(self) -> None:
        current = self.settings or load_settings(default_qsettings())
        chosen = edit_settings(current, self)
        if chosen is None:
            return
        save_settings(default_qsettings(), chosen)
        self.apply_settings(chosen)

    def apply_settings(self, chosen: SessionSettings) -> None:
        """Take new settings: name and colour at once; another transport, group or
        parameters by leaving this session cleanly and joining that one."""
        previous, self.settings = self.settings, chosen
        self.display_name = chosen.display_name
        self.presence.choose_colour(chosen.colour if chosen.own_colour else None)
        try:
            spec = SessionSpec(
                chosen.transport,
                chosen.net_config(),
                chosen.to_transport_params(),
                chosen.session_key(),
                chosen.encrypt_recordings,
            )
        except ValueError as exc:
            QMessageBox.warning(self, "Settings", str(exc))
            return
        if previous is None or spec != self.spec:
            self.switch_session(spec)

    # -- presence and health ----------------------------------------------------------------

    def _nacks_sent(self) -> int:
        return self.transport.counters().get("nacks_sent", 0)

    def _counts(self) -> tuple[int, object]:
        return len(self.replica.board), self.replica.board.last_key

    def _take_name_card(self, event: Introduced) -> None:
        """A joiner's name card, from its join request: its row shows its name at once."""
        try:
            card = decode_name_card(event.introduction)
        except PresenceDecodeError:
            return  # another application's introduction, or a broken one: "joining…" stays
        self.health.introduced(event.member, card)
        self._refresh_status()

    def _board_replaced(self) -> None:
        """A board state or a resync: the points our board passed before are not its past."""
        self.presence.forget_board()
        self.health.forget_passed()

    def _presence_tick(self, force: bool = False) -> None:
        if self._leaving or self.canvas.is_read_only() or self.transport.finished:
            return
        if self.presence.tick(force):
            self._refresh_status()

    # -- transport events -------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        rejected_states = self.replica.stats.rejected_states
        if isinstance(event, EphemeralReceived):
            self.pointers.on_ephemeral(event)  # a pointer: never the board's
            return
        change = self.replica.handle(event, self.transport)
        if self.session.on_event(event):
            self._show_session_state()
        if isinstance(event, Delivered):
            if isinstance(change, Presence):
                self.health.presence(event.origin, change, self._counts(), time.monotonic())
                self.presence.avoid_colour_of(event.origin, change)
            elif change is None:
                self.state_view.tell(
                    f"Ignored a bad drawing from member {event.origin:08x}: "
                    f"{self.replica.last_rejection}"
                )
            else:
                if not change.duplicate:
                    self.health.board_moved()
                    self.presence.passed_op()
                self.canvas.board_changed(change)
                self._freezes.op_delivered()
            self._refresh_status()
        elif isinstance(event, Introduced):
            self._take_name_card(event)
        elif isinstance(event, MemberChanged):
            if event.member not in self.health and event.state is not MemberState.LEFT:
                self.presence.schedule.due = True  # a newcomer: tell it who we are soon
            self.health.member_changed(event.member, event.state)
            self.pointers.member_changed(event.member, event.state)
            self._refresh_status()
        elif isinstance(event, Ready):
            self.join_progress.hide()
            self.pointers.session_ready()
            self.health.member_changed(self.transport.member_id, MemberState.ACTIVE)
            if self.spec.is_viewer():
                return  # an MTP consumer receives only (RFC 1301 §3.1.1): nothing to tell
            self._presence_timer.start(PRESENCE_MS)
            self._presence_tick(force=True)
            self._send_undelivered()
        elif isinstance(event, JoinProgress):
            self.join_progress.setRange(0, max(1, event.total))
            self.join_progress.setValue(event.received)
            self.join_progress.show()  # and the session state says it in words
        elif isinstance(event, BoardStateReceived):
            if self.replica.stats.rejected_states > rejected_states:
                self.state_view.tell(self.replica.last_rejection)
            self._board_replaced()
            self.health.board_moved()
            self.canvas.board_changed(None)
            self._freezes.board_loaded()
            self._refresh_status()
        elif isinstance(event, Failure) and self.session.state.link is not SessionLink.RECONNECTING:
            # Reasons are written for people by the transports; the details are in the log.
            # (While reconnecting, the state says it already.)
            self.state_view.tell(event.reason)
        elif (
            isinstance(event, ProtocolEvent)
            and self.spec.description.events.get(event.name) is EventKind.TOOK_OVER
        ):
            self._took_over()
        # Other protocol events: for the session logs.

    def _took_over(self) -> None:
        """The host died or left and this member took its role over (MTP failover): the
        label names the role, and the person is told why it matters."""
        description = self.spec.description
        host = description.host_role
        if host is not None:
            as_host = self.spec.with_params(**{description.role_param: host.value})
            self.transport_label.setText(as_host.describe())
        self.state_view.tell(
            "The host is gone: you host this board now. Keep this window open while others draw."
        )

    def _show_session_state(self) -> None:
        """Show the session state, and let the canvas take drawing only when the member can
        truly send."""
        state = self.session.state
        if self.state_view.show(state, self.spec.is_viewer()):
            self._members_out_of_reach(state.link)
        self.canvas.set_read_only(self._leaving or not state.can_draw)

    def _members_out_of_reach(self, link: SessionLink) -> None:
        """Reconnecting, we hear nobody as a member; ended, nobody is with us any more: the
        members panel and the board comparison must not go on saying otherwise."""
        if link in (SessionLink.RECONNECTING, SessionLink.ENDED):
            self.health.out_of_reach(ended=link is SessionLink.ENDED)
            self._refresh_status()

    def member_count(self) -> int:
        """Members present (this one included): joining, active or suspected."""
        return self.health.present()

    def _refresh_status(self) -> None:
        suspected = self.health.suspected()
        count = self.member_count()
        text = f"{count} member{'s' if count != 1 else ''}"
        if suspected:
            text += f" ({suspected} not heard from)"
        if self.session.state.link is SessionLink.ENDED:
            text = "not in a session"
        self.members_label.setText(text)
        text, tooltip = self.health.agreement_text()
        self.agreement_label.setText(text)
        self.agreement_label.setToolTip(tooltip)
        self.resync_action.setEnabled(bool(self.health.differing()) and self.spec.can_resync())
        ops = len(self.replica.board)
        text = f"{ops} op{'s' if ops != 1 else ''}"
        undelivered = self.canvas.undelivered_count()
        if undelivered:
            text += f", {undelivered} not delivered"
        self.ops_label.setText(text)
        self.ops_label.setToolTip(waiting_notice(undelivered))
        self.members_panel.show_rows(self.health.rows(self.presence.own_row()))
        self.undo_action.setEnabled(self.history.can_undo(self.replica.board))
        self.redo_action.setEnabled(self.history.can_redo(self.replica.board))

    # -- leaving ----------------------------------------------------------------------------

    def leaving_loss(self) -> LeavingLoss:
        undelivered = len(self.canvas.pending_ops()) + self.files.importer.unsent()
        return LeavingLoss.of(self.health.rows(), self.replica.board, undelivered)

    def may_leave(self) -> bool:
        """Ask first when leaving would lose something (whiteboard/app/leaving.py): also
        after the session ended, while drawings of ours wait to be sent again."""
        if self._leaving or (self.transport.finished and not self.canvas.pending_ops()):
            return True
        return confirm_leaving(self, self.leaving_loss(), self.files.ask_save_board)

    def ask_close(self) -> None:
        """Session ▸ Leave and close (Ctrl+Q): a person leaving, who is asked first."""
        if self.may_leave():
            self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        # The window manager's close button is a person leaving too; a close by the program
        # (after asking, a session switch, tests) is not asked again.
        if event.spontaneous() and not self.may_leave():
            event.ignore()
            return
        self._switch_to = None  # closing wins over a pending switch
        if not self._leaving:
            self._leaving = True
            self._presence_timer.stop()
            if not self.transport.finished:
                self.session.leaving()
            self._show_session_state()
            # Leave as the protocol says (a BYE, handing over a role...); on_finished follows,
            # at once for raw, after a few exchanges for others.
            self.transport.close()
        if self._finished:
            event.accept()
            return
        event.ignore()
        if self._leave_timer is None:
            self._leave_timer = QTimer(self)
            self._leave_timer.setSingleShot(True)
            self._leave_timer.timeout.connect(self._give_up_leaving)
            self._leave_timer.start(LEAVE_TIMEOUT_MS)

    def _on_finished(self) -> None:
        self._finished = True
        self._presence_timer.stop()
        self.pointers.session_ended()
        kept = self._keep_undelivered()
        self._close_session_log()
        self.session.finished(undelivered=kept)
        self._show_session_state()
        self._refresh_status()
        if self._switch_to is not None:
            # Called from inside the old transport's pump: join once it has returned.
            # With the window as context: if it is gone by then, the call is dropped rather
            # than made on a deleted object.
            QTimer.singleShot(0, self, self._join_switched)
            return
        if self._leave_timer is not None:
            self._leave_timer.stop()
            # Called from inside the transport's pump: close once it has returned.
            QTimer.singleShot(0, self, self.close)

    def _keep_undelivered(self) -> int:
        """The session is over: the ops still pending are kept to be sent in the next one,
        and recorded in this session's log (whiteboard/app/undelivered.py). Returns how many
        are kept in all (those of an earlier session too)."""
        kept = self.canvas.keep_undelivered()
        if self.session_log is not None:
            now = self.reactor.time()
            for op in kept:
                self.session_log.record_undelivered(self.replica.payload_of(op), now)
        return len(kept)

    def _send_undelivered(self) -> None:
        """In a session again (``Ready``): send the ops an earlier session kept, re-issued
        under this session's member id, except those its board has already."""
        waiting = self.canvas.waiting()
        if not waiting:
            return
        plan = reissue(waiting, self.replica.board, self.next_op_id)
        for kept in plan.already_there:
            self.canvas.send_again(kept, None)
        for kept, op in plan.ops:
            self.canvas.send_again(kept, op)
        self._refresh_status()

    def _join_switched(self) -> None:
        spec, self._switch_to = self._switch_to, None
        if spec is None:
            return
        if self._fresh_board:
            self.replica = Replica()
            self.presence.forget_board()
            self.canvas.board_changed(None)
        self._freezes.session_ended()
        try:
            self._open_session(spec)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Whiteboard", f"Cannot join the session.\n\n{exc}")
            self.session.finished(f"Could not join the session: {exc}")
            self._show_session_state()

    def _give_up_leaving(self) -> None:
        log.warning("the %s transport did not finish leaving in time", self.transport.name)
        self.carrier.release()
        self._finished = True
        self._close_session_log()
        self.close()


__all__ = ["MainWindow"]
