"""Following a member's view (whiteboard/app/follow.py), without a network."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from tests.app.test_pointers import Clock, make_canvas
from whiteboard.app.follow import ASK_S, VIEW_HZ, Following, ViewSharing
from whiteboard.pointer import SharedView, decode_side


def test_our_view_goes_out_when_it_changes_at_a_bounded_rate_and_marks_a_request(
    qtbot: QtBot,
) -> None:
    canvas = make_canvas(qtbot)
    sent: list[SharedView] = []
    clock = Clock()

    def send(data: bytes) -> None:
        view = decode_side(data)
        assert isinstance(view, SharedView)
        sent.append(view)

    sharing = ViewSharing(canvas, send, clock=clock)
    canvas.zoom_by(1.05)  # before the session: nothing goes out
    assert sent == []
    sharing.start()  # joined: our view at once
    assert len(sent) == 1
    clock.now += 1.0
    for _ in range(20):  # twenty zooms at one instant: one view now, the last one soon after
        canvas.zoom_by(1.05)
    assert len(sent) == 2 and not sent[1].asks_follow
    clock.now += 1.0 / VIEW_HZ
    qtbot.waitUntil(lambda: len(sent) == 3, timeout=2000)
    rect = canvas.visible_board_rect()
    assert (sent[-1].x0, sent[-1].y1) == (rect.left(), rect.bottom())
    sharing.ask_everyone_to_follow()
    assert sent[-1].asks_follow and sharing.asking
    clock.now += ASK_S
    assert not sharing.asking
    sharing.stop()  # the session ended: nothing more goes out
    told = len(sent)
    canvas.zoom_by(1.05)
    clock.now += 10.0
    qtbot.wait(700)  # past a refresh tick
    assert len(sent) == told


def test_following_puts_our_view_on_theirs_until_we_move(qtbot: QtBot) -> None:
    canvas = make_canvas(qtbot)  # 400 x 300
    following = Following(canvas)
    told: list[object] = []
    following.changed.connect(told.append)
    following.on_view(7, SharedView(1000.0, 1000.0, 1200.0, 1100.0, False, 0))
    before = canvas.view
    following.on_view(8, SharedView(0.0, 0.0, 50.0, 50.0, False, 0))
    assert canvas.view == before
    following.follow(7)
    rect = canvas.visible_board_rect()
    assert rect.left() <= 1000.0 + 1 and rect.right() >= 1200.0 - 1  # fitted: 2x, 200 wide
    assert abs(canvas.zoom - 2.0) < 1e-9
    following.on_view(7, SharedView(-500.0, -500.0, -100.0, -200.0, False, 0))
    assert canvas.visible_board_rect().top() <= -500.0 + 1
    canvas.pan_by(10, 0)  # the person moves the board: following ends
    assert following.followed is None and told == [7, None]
    following.on_view(7, SharedView(0.0, 0.0, 10.0, 10.0, False, 0))
    assert canvas.visible_board_rect().left() < -400.0  # left where the person put it
    following.follow(8)
    following.forget(8)  # it left
    assert following.followed is None and 8 not in following.views
