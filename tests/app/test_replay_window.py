"""The replay window on a recorded session (tests/replay/recorded.py): whatever way the
person moves in time (slider, lanes, keys, playing at a speed), the board shown is the one the
live member had, on the canvas object for object and, at the end, pixel for pixel."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox
from pytestqt.qtbot import QtBot

from tests.replay.recorded import LATE, RecordedSession, record_session, reference_board, untied
from whiteboard import cli
from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.export import export_png
from whiteboard.app.replay_timeline import MARK_COLOURS
from whiteboard.app.replay_window import ReplayWindow
from whiteboard.app.window import MainWindow
from whiteboard.board import Board, OpId
from whiteboard.net.runtime import NetConfig
from whiteboard.replay import SPEEDS, MarkKind, count_by_kind, load_timeline

S = 1_000_000


class FakeNow:
    """The clock playback runs on, moved by the test."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> RecordedSession:
    return record_session(tmp_path_factory.mktemp("replay-window"))


@pytest.fixture
def now() -> FakeNow:
    return FakeNow()


def open_replay(qtbot: QtBot, log: Path, now: FakeNow) -> ReplayWindow:
    window = ReplayWindow(load_timeline(log), now=now, spacing=5)
    qtbot.addWidget(window)
    window.resize(1100, 750)
    # Keys are the window's shortcuts (Space would pan the canvas): they go to the active one.
    with qtbot.waitActive(window):
        window.show()
        window.activateWindow()
    window.fit_recording()
    return window


@pytest.fixture
def window(qtbot: QtBot, recorded: RecordedSession, now: FakeNow) -> Iterator[ReplayWindow]:
    yield open_replay(qtbot, recorded.logs[0], now)


def shown(window: ReplayWindow) -> dict[OpId, tuple[float, float]]:
    """What the canvas shows: each object and its offset."""
    return {item.id: (item.dx, item.dy) for item in window.canvas.scene.items()}


def objects(board: Board) -> dict[OpId, tuple[float, float]]:
    return {obj.id: (obj.dx, obj.dy) for obj in board.objects()}


def test_seeking_shows_the_board_the_live_member_had_then(
    window: ReplayWindow, recorded: RecordedSession
) -> None:
    moments = untied(recorded, 0)
    for moment in random.Random(4).sample(moments, 12):
        window.seek_to(moment.t_us)
        assert window.replay.board.hash() == moment.board_hash
        assert shown(window) == objects(window.replay.board)


def test_the_slider_goes_to_the_moment_it_shows(
    window: ReplayWindow, recorded: RecordedSession
) -> None:
    slider = window.timeline_widget.slider
    start = window.timeline.start_us
    for value in random.Random(5).sample(range(slider.maximum() + 1), 8):
        slider.setValue(value)
        t = start + value * 1000
        assert window.position_us == t
        assert window.replay.board.hash() == reference_board(recorded.logs[0], t).hash()
        assert shown(window) == objects(window.replay.board)


@pytest.mark.parametrize("peer", [0, LATE])
def test_the_final_frame_equals_the_live_end_state(
    qtbot: QtBot, recorded: RecordedSession, now: FakeNow, peer: int
) -> None:
    window = open_replay(qtbot, recorded.logs[peer], now)
    window.seek_to(window.timeline.start_us + window.timeline.duration_us // 3)
    QTest.keyClick(window.canvas, Qt.Key.Key_End)
    live = recorded.final_boards[peer]
    assert window.position_us == window.timeline.end_us
    assert window.replay.board.hash() == live.hash()
    assert shown(window) == objects(live)
    # Pixel for pixel: the live board in a canvas of its own, seen the same way.
    reference = BoardCanvas(lambda: live, lambda: OpId(0, 0))
    qtbot.addWidget(reference)
    reference.resize(window.canvas.size())
    reference.set_view(window.canvas.view)
    for canvas in (window.canvas, reference):
        canvas.finish_rendering()
    assert window.canvas.grab().toImage() == reference.grab().toImage()


def test_playing_advances_at_the_chosen_speed(window: ReplayWindow, now: FakeNow) -> None:
    start = window.timeline.start_us
    window.play()
    assert window.playing and window.play_button.text() == "Pause"
    now.t += 2.0
    window.tick()
    assert window.position_us == start + 2 * S
    window.speed_box.setCurrentIndex(SPEEDS.index(4.0))  # as a person picks 4x
    assert window.clock.speed == 4.0
    now.t += 1.5
    window.tick()
    assert window.position_us == start + 8 * S
    window.set_speed(0.25)
    now.t += 4.0
    window.tick()
    assert window.position_us == start + 9 * S
    assert window.replay.board.hash() == window.replay.board_at(start + 9 * S).hash()
    window.pause()
    now.t += 100.0
    window.tick()
    assert window.position_us == start + 9 * S and not window.playing


def test_playing_to_the_end_frame_by_frame_ends_on_the_live_board(
    window: ReplayWindow, recorded: RecordedSession, now: FakeNow
) -> None:
    """The canvas is fed each change as the live one was: ~25 changes a frame at 16x."""
    window.set_speed(16.0)
    window.play()
    frames = 0
    while window.playing:
        now.t += 0.5
        window.tick()
        frames += 1
        if frames % 10 == 0:
            assert shown(window) == objects(window.replay.board)
    assert window.position_us == window.timeline.end_us
    assert frames == pytest.approx(window.timeline.duration_us / S / 8, abs=1)
    assert window.replay.board.hash() == recorded.final_hash(0)
    assert shown(window) == objects(recorded.final_boards[0])
    assert window.play_button.text() == "Play"


def test_skipping_idle_time_crosses_a_long_gap_in_a_second(
    window: ReplayWindow, now: FakeNow
) -> None:
    gap = max(window.gaps, key=lambda g: g.length_us)
    assert gap.length_us > 20 * S
    window.skip_idle_box.setChecked(True)
    assert window.clock.skip_idle and window.timeline_widget.lanes.show_gaps
    window.seek_to(gap.start_us)
    window.play()
    now.t += 1.0
    window.tick()
    assert abs(window.position_us - gap.end_us) <= 1
    window.skip_idle_box.setChecked(False)
    now.t += 1.0
    window.tick()
    assert abs(window.position_us - (gap.end_us + S)) <= 1


def test_hiding_a_member_shows_the_board_without_their_ops(
    window: ReplayWindow, recorded: RecordedSession
) -> None:
    member = max((m for m in window.timeline.members if not m.me), key=lambda m: m.ops).member
    t = window.timeline.end_us
    window.seek_to(t)
    window.members_panel.set_shown(member, False)
    without = reference_board(recorded.logs[0], t, frozenset({member}))
    assert window.replay.board.hash() == without.hash() != recorded.final_hash(0)
    assert shown(window) == objects(without)
    assert all(op_id.author != member for op_id in shown(window))
    middle = window.timeline.start_us + window.timeline.duration_us // 2
    window.seek_to(middle)  # the filter holds while moving
    assert window.replay.board.hash() == (
        reference_board(recorded.logs[0], middle, frozenset({member})).hash()
    )
    window.members_panel.set_shown(member, True)
    window.seek_to(t)
    assert window.replay.board.hash() == recorded.final_hash(0)
    assert shown(window) == objects(recorded.final_boards[0])


def test_highlighting_a_member_veils_the_rest(window: ReplayWindow) -> None:
    member = max((m for m in window.timeline.members if not m.me), key=lambda m: m.ops).member
    window.seek_to(window.timeline.end_us)
    window.canvas.finish_rendering()
    plain = window.canvas.grab().toImage()
    window.members_panel.set_highlighted(member, True)
    overlay = window.highlight
    assert overlay.isVisible()
    theirs = [obj for obj in window.replay.board.objects() if obj.id.author == member]
    assert theirs and list(overlay.objects) == theirs
    veiled = window.canvas.grab().toImage()
    assert veiled != plain
    # Moving in time keeps picking out what they have on the board then.
    window.seek_to(window.timeline.start_us + window.timeline.duration_us // 2)
    assert {obj.id for obj in overlay.objects} == {
        obj.id for obj in window.replay.board.objects() if obj.id.author == member
    }
    window.members_panel.set_highlighted(member, False)
    assert not overlay.isVisible() and overlay.objects == ()
    window.seek_to(window.timeline.end_us)
    window.canvas.finish_rendering()
    assert window.canvas.grab().toImage() == plain


def test_export_png_writes_the_board_at_that_time(
    window: ReplayWindow, recorded: RecordedSession, tmp_path: Path
) -> None:
    t = window.timeline.start_us + window.timeline.duration_us * 2 // 3
    window.seek_to(t)
    assert window.export_png_to(tmp_path / "then.png")
    assert "the board at" in window.statusBar().currentMessage()
    export_png(tmp_path / "reference.png", reference_board(recorded.logs[0], t))
    written = QImage(str(tmp_path / "then.png"))
    assert not written.isNull()
    assert written == QImage(str(tmp_path / "reference.png"))
    window.seek_to(window.timeline.end_us)  # a later board is another picture
    assert window.export_png_to(tmp_path / "end.png")
    assert QImage(str(tmp_path / "end.png")) != written


def test_the_network_lane_holds_the_logs_events(window: ReplayWindow) -> None:
    timeline = window.timeline
    lanes = window.timeline_widget.lanes
    assert lanes.marks == timeline.marks
    totals = count_by_kind(timeline.marks)
    for kind in (MarkKind.NACK_SENT, MarkKind.NACK_RECEIVED, MarkKind.RETRANSMISSION):
        assert totals[kind] > 0 and kind in lanes.kinds
    assert MarkKind.JOIN in lanes.kinds
    legend = window.timeline_widget.legend.text()
    for kind, total in totals.items():
        assert f"{kind.label} ({total:,})" in legend
    # A NACK is painted in its colour, in its row, where it happened.
    window.seek_to(timeline.start_us)
    nack = next(m for m in timeline.marks if m.kind is MarkKind.NACK_SENT)
    image = lanes.grab().toImage()
    x = round(lanes.x_of(nack.t_us))
    y = round(lanes._row_rect(lanes.row_of(MarkKind.NACK_SENT)).center().y())
    assert image.pixelColor(x, y) == MARK_COLOURS[MarkKind.NACK_SENT]
    assert "NACK sent" in lanes.tooltip_at(x)
    # Clicking the lane goes there.
    QTest.mouseClick(lanes, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(x, y))
    per_pixel = timeline.duration_us / (lanes.slider.value_span()[1] - lanes.slider.value_span()[0])
    assert abs(window.position_us - nack.t_us) <= per_pixel


def test_keys_play_pause_and_step(window: ReplayWindow, now: FakeNow) -> None:
    canvas = window.canvas
    times = window.replay.step_times()
    QTest.keyClick(canvas, Qt.Key.Key_Space)
    assert window.playing
    QTest.keyClick(canvas, Qt.Key.Key_Space)
    assert not window.playing
    QTest.keyClick(canvas, Qt.Key.Key_Home)
    QTest.keyClick(canvas, Qt.Key.Key_Right)
    assert window.position_us == times[0] and window.replay.steps_applied >= 1
    QTest.keyClick(canvas, Qt.Key.Key_Right)
    second = window.replay.steps_applied
    assert window.position_us == times[second - 1] > times[0]
    QTest.keyClick(canvas, Qt.Key.Key_Left)
    assert window.position_us == times[0]
    QTest.keyClick(canvas, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert window.position_us == times[0] + 10 * S
    QTest.keyClick(canvas, Qt.Key.Key_End)
    assert window.replay.steps_applied == len(times)
    QTest.keyClick(canvas, Qt.Key.Key_BracketRight)  # faster
    assert window.clock.speed == 2.0
    QTest.keyClick(canvas, Qt.Key.Key_I)
    assert window.clock.skip_idle


@pytest.mark.network
def test_file_open_recording_opens_a_replay_window(
    qtbot: QtBot, net: NetConfig, recorded: RecordedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = MainWindow("raw", net, {}, "ann")
    qtbot.addWidget(main)
    chosen = [str(recorded.logs[LATE])]
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *_a, **_k: (chosen[0], ""))
    main.open_recording_action.trigger()
    [replay] = main.findChildren(ReplayWindow)
    assert replay.isVisible() and replay.timeline.name == recorded.logs[LATE].name
    replay.seek_to(replay.timeline.end_us)
    assert replay.replay.board.hash() == recorded.final_hash(LATE)
    assert gc.get_freeze_count() > 0  # the recording is out of the collector's way
    replay.close()  # deleted once the event loop runs: then the collector gets it all back
    qtbot.waitUntil(lambda: gc.get_freeze_count() == 0)
    # A file that is not a log: a message, and no window.
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _p, _t, text: warned.append(text))
    notes = recorded.logs[0].parent / "notes.txt"
    notes.write_text("hello\n")
    chosen[0] = str(notes)
    main.open_recording_action.trigger()
    assert warned == ['"notes.txt" is not a whiteboard session log']
    assert [w for w in main.findChildren(ReplayWindow) if w.isVisible()] == []


def test_whiteboard_replay_file_opens_the_recording(
    qapp: QApplication, recorded: RecordedSession
) -> None:
    """``whiteboard replay FILE``, in this process: the window opens on the log and the
    command ends when it is closed."""
    seen: list[tuple[str, str]] = []

    def look_and_close() -> None:
        for widget in qapp.topLevelWidgets():
            if isinstance(widget, ReplayWindow) and widget.isVisible():
                widget.seek_to(widget.timeline.end_us)
                seen.append((widget.timeline.name, widget.replay.board.hash()))
                widget.close()  # the last window: the event loop ends, as for a person
        if not seen:
            qapp.quit()  # no window: end anyway, the test fails below

    QTimer.singleShot(0, look_and_close)
    assert cli.main(["replay", str(recorded.logs[1])]) == 0
    assert seen == [(recorded.logs[1].name, recorded.final_hash(1))]
    assert gc.get_freeze_count() == 0
