"""The replay window: a recorded session played back on a read-only board.

The board is the canvas of the live app (whiteboard/app/canvas.py), read-only, fed by a
:class:`~whiteboard.replay.Replay`: moving in time hands the canvas the changes, as the
transport does live. Playback is a :class:`~whiteboard.replay.PlaybackClock` read by a timer;
everything else (seeking, stepping, filters) is a direct call, so tests drive the window with
their own times (``tick(now)``) and never wait. See docs/replay.md.
"""

from __future__ import annotations

import gc
import itertools
import time
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.collector import collect_and_freeze, collector_paused, thaw_when_gone
from whiteboard.app.event_loop import run_until_closed
from whiteboard.app.export import ExportError, export_png
from whiteboard.app.identity import application
from whiteboard.app.render import bounds
from whiteboard.app.replay_highlight import HighlightOverlay
from whiteboard.app.replay_members import ReplayMembers
from whiteboard.app.replay_pointers import ReplayPointers
from whiteboard.app.replay_timeline import ReplayTimeline
from whiteboard.app.view import Rect, fit, rect_union
from whiteboard.board import OpId
from whiteboard.board.geometry import placed_rect
from whiteboard.replay import (
    SPEEDS,
    MemberFilter,
    PlaybackClock,
    Replay,
    Timeline,
    Update,
    format_elapsed,
    highlighted_objects,
    idle_gaps,
    load_timeline,
)
from whiteboard.security import SessionKey
from whiteboard.sessionlog import SessionLogError, default_log_dir
from whiteboard.sessionlog.sealing import RecordingLocked, Unlock

LOCKED_TEXT = (
    "{name} is the encrypted recording of a private session.\n\n"
    "Type its passphrase, or a view code:"
)
WRONG_SECRET = (
    "That does not open {name}: it opens another session's recordings (or is mistyped).\n\n"
    "Type this session's passphrase, or a view code:"
)

TICK_MS = 30  # a frame while playing: ~33 a second
JUMP_US = 10_000_000  # Shift+arrow
MESSAGE_MS = 15000
EXIT_UNREADABLE = 2  # as `whiteboard replay` exits for a file it cannot read
LOG_FILTER = "Session logs (*.wblog);;All files (*)"
DEFAULT_SPEED = 1.0


class ReplayWindow(QMainWindow):
    """Plays ``timeline``. ``now``: the clock playback runs on (seconds, never going back).
    ``replay``: one prepared already (:func:`prepared_replay`); by default the window makes
    its own, keyframes every ``spacing`` steps (default: by length)."""

    def __init__(
        self,
        timeline: Timeline,
        parent: QWidget | None = None,
        *,
        now: Callable[[], float] = time.monotonic,
        spacing: int | None = None,
        replay: Replay | None = None,
    ) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self._now = now
        if replay is None:
            replay = Replay(timeline, spacing)
            replay.prepare()
        self.replay = replay
        self.gaps = idle_gaps(timeline.times, timeline.start_us, timeline.end_us)
        self.clock = PlaybackClock(timeline.start_us, timeline.end_us, self.gaps)
        self._fitted = False

        self.canvas = BoardCanvas(lambda: self.replay.board, _no_op_ids, None)
        self.canvas.set_read_only(True)
        # Every drawing of the recording bounded and indexed now, not on the first seeks:
        # a first jump to the end of 100,000 ops would otherwise take ~0.5 s.
        with collector_paused():
            self.canvas.prepare(timeline.drawings())
        self.highlight = HighlightOverlay(self.canvas)
        self.pointers = ReplayPointers(self.canvas, timeline)  # where members pointed
        self.timeline_widget = ReplayTimeline(timeline)
        self.timeline_widget.seek_requested.connect(self.seek_to)
        self.members_panel = ReplayMembers(timeline.members, self)
        self.members_panel.filter_changed.connect(self.set_member_filter)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.members_panel)
        self.resizeDocks([self.members_panel], [300], Qt.Orientation.Horizontal)
        self._build_controls()
        self._build_menus()
        self.setWindowTitle(f"Replay: {timeline.header.member_name} — {timeline.name}")
        if timeline.warnings:
            self.statusBar().showMessage(timeline.warnings[0])
            self.statusBar().setToolTip("\n".join(timeline.warnings))

        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(lambda: self.tick())
        self.canvas.setFocus()
        self._show_position()

    # -- building ---------------------------------------------------------------------------

    def _build_controls(self) -> None:
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Play or pause (Space)")
        self.play_button.clicked.connect(self.toggle_play)
        self.speed_box = QComboBox()
        self.speed_box.addItems([f"{speed:g}x" for speed in SPEEDS])
        self.speed_box.setCurrentIndex(SPEEDS.index(DEFAULT_SPEED))
        self.speed_box.setToolTip("Playback speed ([ slower, ] faster)")
        self.speed_box.currentIndexChanged.connect(self._speed_chosen)
        self.skip_idle_box = QCheckBox("Skip idle time")
        self.skip_idle_box.setToolTip(
            "Play stretches of more than 5 s in which the board does not change in 1 s (I)"
        )
        self.skip_idle_box.toggled.connect(self.set_skip_idle)
        self.time_label = QLabel()
        self.time_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.changes_label = QLabel()
        self.export_button = QPushButton("Export PNG at this time…")
        self.export_button.clicked.connect(self.ask_export_png)
        for widget in (self.play_button, self.speed_box, self.skip_idle_box, self.export_button):
            # Keys belong to the window (Space plays, arrows step) wherever the focus is.
            widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)

        row = QHBoxLayout()
        row.addWidget(self.play_button)
        row.addWidget(self.speed_box)
        row.addWidget(self.skip_idle_box)
        row.addSpacing(12)
        row.addWidget(self.time_label)
        row.addStretch(1)
        row.addWidget(self.export_button)
        self.statusBar().addPermanentWidget(self.changes_label)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 0, 6, 6)
        layout.addWidget(self.canvas, 1)
        layout.addWidget(self.timeline_widget)
        layout.addLayout(row)
        self.setCentralWidget(central)

    def _action(self, text: str, slot: Callable[[], object], *keys: str) -> QAction:
        action = QAction(text, self)
        if keys:
            action.setShortcuts([QKeySequence(key) for key in keys])
            # Wherever the focus is in this window (the canvas would take Space to pan).
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _=False: slot())
        self.addAction(action)
        return action

    def _build_menus(self) -> None:
        file = self.menuBar().addMenu("&File")
        self.export_action = self._action(
            "&Export PNG at this time…", self.ask_export_png, "Ctrl+E"
        )
        file.addAction(self.export_action)
        file.addSeparator()
        file.addAction(self._action("&Close", self.close, "Ctrl+W"))
        play = self.menuBar().addMenu("&Playback")
        self.play_action = self._action("&Play / pause", self.toggle_play, "Space")
        self.next_action = self._action("&Next change", lambda: self.step(1), "Right")
        self.previous_action = self._action("Pre&vious change", lambda: self.step(-1), "Left")
        forward = self._action("&Forward 10 s", lambda: self.jump(JUMP_US), "Shift+Right")
        back = self._action("&Back 10 s", lambda: self.jump(-JUMP_US), "Shift+Left")
        start = self._action("To the &start", lambda: self.seek_to(self.timeline.start_us), "Home")
        end = self._action("To the &end", lambda: self.seek_to(self.timeline.end_us), "End")
        faster = self._action("F&aster", lambda: self._speed_step(1), "]")
        slower = self._action("S&lower", lambda: self._speed_step(-1), "[")
        self.skip_idle_action = self._action(
            "Skip &idle time", lambda: self.skip_idle_box.toggle(), "I"
        )
        play.addActions([self.play_action, self.next_action, self.previous_action])
        play.addActions([forward, back, start, end])
        play.addSeparator()
        play.addActions([faster, slower, self.skip_idle_action])
        view = self.menuBar().addMenu("&View")
        view.addAction(self._action("Zoom &in", self.canvas.zoom_in, "Ctrl+="))
        view.addAction(self._action("Zoom &out", self.canvas.zoom_out, "Ctrl+-"))
        view.addAction(self._action("&Actual size", self.canvas.zoom_reset, "Ctrl+0"))
        view.addAction(self._action("&Fit to the recording", self.fit_recording, "Ctrl+9"))
        view.addSeparator()
        members = self.members_panel.toggleViewAction()
        members.setShortcut(QKeySequence("Ctrl+M"))
        view.addAction(members)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._fitted:
            self._fitted = True
            # Once laid out: the canvas has its size then.
            QTimer.singleShot(0, self, self.fit_recording)

    # -- playing ----------------------------------------------------------------------------

    @property
    def playing(self) -> bool:
        return self.clock.playing

    @property
    def position_us(self) -> int:
        return self.replay.position_us

    def toggle_play(self) -> None:
        if self.clock.playing:
            self.pause()
        else:
            self.play()

    def play(self, now: float | None = None) -> None:
        now = self._now() if now is None else now
        self.clock.play(now)
        self._timer.start()
        self.play_button.setText("Pause")
        self.tick(now)

    def pause(self, now: float | None = None) -> None:
        now = self._now() if now is None else now
        self.clock.pause(now)
        self._timer.stop()
        self.play_button.setText("Play")
        self._show(self.clock.position(now))

    def tick(self, now: float | None = None) -> None:
        """Show where the clock is at ``now``; at the end, pause."""
        now = self._now() if now is None else now
        self._show(self.clock.position(now))
        if self.clock.playing and self.clock.at_end(now):
            self.pause(now)

    def set_speed(self, speed: float) -> None:
        """One of :data:`~whiteboard.replay.SPEEDS`."""
        self.speed_box.setCurrentIndex(SPEEDS.index(speed))

    def _speed_chosen(self, index: int) -> None:
        self.clock.set_speed(SPEEDS[index], self._now())

    def _speed_step(self, direction: int) -> None:
        index = min(max(self.speed_box.currentIndex() + direction, 0), len(SPEEDS) - 1)
        self.speed_box.setCurrentIndex(index)

    def set_skip_idle(self, skip: bool) -> None:
        if self.skip_idle_box.isChecked() != skip:
            self.skip_idle_box.setChecked(skip)  # comes back here through toggled
            return
        self.clock.set_skip_idle(skip, self._now())
        self.timeline_widget.set_idle_gaps(self.gaps, skip)

    # -- moving -----------------------------------------------------------------------------

    def seek_to(self, t_us: int) -> None:
        """Show the board at ``t_us``; playing goes on from there."""
        self.clock.seek(t_us, self._now())
        self._show(self.clock.position(self._now()))

    def step(self, direction: int) -> None:
        """To the next change of the board (1) or back to before the last one (-1)."""
        times = self.replay.step_times()
        applied = self.replay.steps_applied
        if direction > 0:
            if applied < len(times):
                self.seek_to(times[applied])
        elif applied > 0:
            # Before every step made at the same moment as the last one shown.
            before = bisect_left(times, times[applied - 1]) - 1
            self.seek_to(times[before] if before >= 0 else self.timeline.start_us)

    def jump(self, delta_us: int) -> None:
        self.seek_to(self.position_us + delta_us)

    def set_member_filter(self, member_filter: MemberFilter) -> None:
        self._apply(self.replay.set_filter(member_filter), highlight=True)

    def _show(self, t_us: int) -> None:
        with collector_paused():
            update = self.replay.seek(t_us)
            self._apply(update, highlight=update != [])
        self.pointers.show(self.replay.position_us)
        self._show_position()

    def _apply(self, update: Update, highlight: bool) -> None:
        if update is None:
            self.canvas.board_changed(None)
        else:
            for change in update:
                self.canvas.board_changed(change)
        if highlight:
            chosen = self.replay.filter.highlighted
            objects = highlighted_objects(self.replay.board, chosen) if chosen else []
            self.highlight.show_objects(objects, bool(chosen))

    def _show_position(self) -> None:
        timeline = self.timeline
        t = self.replay.position_us
        self.timeline_widget.set_position(t)
        self.time_label.setText(
            f"{format_elapsed(t - timeline.start_us)} / {format_elapsed(timeline.duration_us)}"
        )
        when = datetime.fromtimestamp(t / 1e6).astimezone()
        self.time_label.setToolTip(when.strftime("%Y-%m-%d %H:%M:%S %Z (this computer's time)"))
        self.changes_label.setText(
            f"change {self.replay.steps_applied:,} of {self.replay.step_count:,}"
        )

    # -- the view ---------------------------------------------------------------------------

    def fit_recording(self) -> None:
        """Show everything drawn during the recording (not only what is on the board now)."""
        content: Rect | None = None
        at_end = self.replay.board_at(self.timeline.end_us)
        for obj in itertools.chain(at_end.objects(), self.replay.board.objects()):
            content = rect_union(content, placed_rect(bounds(obj.op), obj.dx, obj.dy, obj.linear))
        self.canvas.set_view(fit(content, self.canvas.width_px(), self.canvas.height_px()))

    # -- export -----------------------------------------------------------------------------

    def ask_export_png(self) -> None:
        elapsed = format_elapsed(self.position_us - self.timeline.start_us).replace(":", "-")
        suggested = f"{Path(self.timeline.name).stem}-at-{elapsed}.png"
        path, _ = QFileDialog.getSaveFileName(
            self, "Export PNG at this time", suggested, "PNG image (*.png)"
        )
        if path:
            chosen = Path(path)
            self.export_png_to(chosen if chosen.suffix.lower() == ".png" else Path(f"{path}.png"))

    def export_png_to(self, path: Path) -> bool:
        """The board shown now (members hidden stay hidden) as a PNG of the whole board."""
        try:
            done = export_png(path, self.replay.board)
        except ExportError as exc:
            QMessageBox.warning(self, "Export PNG", str(exc))
            return False
        at = format_elapsed(self.position_us - self.timeline.start_us)
        self.statusBar().showMessage(
            f"Exported {path.name} ({done.width} x {done.height}), the board at {at}", MESSAGE_MS
        )
        return True


def _no_op_ids() -> OpId:
    raise RuntimeError("a replay is read-only: nothing is drawn in it")


# -- opening ------------------------------------------------------------------------------


def prepared_replay(timeline: Timeline) -> Replay:
    """A replay of ``timeline`` with all its keyframes, kept out of the garbage collector's way
    (see whiteboard/app/collector.py): on 100,000 ops a seek that set off a full collection
    took ~250 ms instead of ~30. Called before the window exists, so that the window stays
    collectable; :func:`thaw_when_gone` gives the collector everything back when it goes."""
    replay = Replay(timeline)
    replay.prepare()
    collect_and_freeze()
    return replay


def open_recording(
    path: Path, parent: QWidget | None = None, keys: tuple[SessionKey, ...] = ()
) -> ReplayWindow | None:
    """Open ``path`` in a replay window of its own and show it; a file that is not a readable
    session log is explained in a message box instead, and None returned. An encrypted
    recording opens with ``keys`` (the session one is in) or asks for its passphrase."""
    timeline = _read_recording(path, parent, Unlock(keys=keys))
    if timeline is None:
        return None
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        window = ReplayWindow(timeline, parent, replay=prepared_replay(timeline))
        thaw_when_gone(window)
    finally:
        if QApplication.overrideCursor() is not None:
            QApplication.restoreOverrideCursor()
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.resize(1200, 800)
    window.show()
    return window


def _read_recording(path: Path, parent: QWidget | None, unlock: Unlock) -> Timeline | None:
    """The recording's timeline, asking for the passphrase of an encrypted one until it
    opens or the person gives up; None (said why) if it cannot be read."""
    while True:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            return load_timeline(path, unlock)
        except RecordingLocked as locked:
            QApplication.restoreOverrideCursor()
            secret, ok = QInputDialog.getText(
                parent,
                "Open recording",
                (WRONG_SECRET if locked.tried else LOCKED_TEXT).format(name=path.name),
                QLineEdit.EchoMode.Password,
            )
            if not ok or not secret:
                return None
            unlock = replace(unlock, secret=secret)
        except SessionLogError as exc:
            QApplication.restoreOverrideCursor()
            QMessageBox.warning(parent, "Open recording", str(exc))
            return None
        finally:
            if QApplication.overrideCursor() is not None:
                QApplication.restoreOverrideCursor()


def ask_open_recording(
    parent: QWidget | None = None, keys: tuple[SessionKey, ...] = ()
) -> ReplayWindow | None:
    """File ▸ Open recording…: choose a session log (in the folder they are recorded in)."""
    path, _ = QFileDialog.getOpenFileName(
        parent, "Open recording", str(default_log_dir()), LOG_FILTER
    )
    return open_recording(Path(path), parent, keys) if path else None


def run_recording_app(path: Path, unlock: Unlock) -> int:
    """``whiteboard FILE.wblog`` (a recording double-clicked on the desktop): its replay on
    its own, asking for the passphrase of an encrypted one; 2 if it cannot be read (said so
    in a message box: there may be no terminal to read)."""
    application()
    timeline = _read_recording(path, None, unlock)
    return EXIT_UNREADABLE if timeline is None else run_replay_app(timeline)


def run_replay_app(timeline: Timeline) -> int:
    """``whiteboard replay FILE``: the replay window on its own, until it is closed."""
    app = application()
    window = ReplayWindow(timeline, replay=prepared_replay(timeline))
    window.resize(1200, 800)
    window.show()
    try:
        return run_until_closed(app, window)
    finally:
        window.close()
        gc.unfreeze()  # see prepared_replay


__all__ = [
    "ReplayWindow",
    "ask_open_recording",
    "open_recording",
    "prepared_replay",
    "run_recording_app",
    "run_replay_app",
]
