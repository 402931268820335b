"""Following a member's view (issue 19, point 4): our window shows what theirs shows, zoomed to
fit, until we pan or zoom ourselves; and asking everyone to follow ours.

* :class:`ViewSharing` tells the others the board rectangle our canvas shows, on the
  transport's side channel: when it changes (at most :data:`VIEW_HZ` a second) and every
  :data:`VIEW_REFRESH_S` regardless, so that a new follower, or one whose copy was lost, has it
  soon. Asking everyone to follow marks our views for :data:`ASK_S` and sends them more often.
* :class:`Following` keeps the others' latest views and, while following one, puts ours on it
  at each of theirs. A change of view it did not make itself (the person panned, zoomed or
  fitted) ends following.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.pointers import SideSender
from whiteboard.app.view import fit
from whiteboard.board.ops import MAX_COORD
from whiteboard.pointer import SharedView, encode_view

VIEW_HZ = 10.0  # view changes sent a second, at most
VIEW_REFRESH_S = 2.0  # our view again, changed or not
ASK_S = 5.0  # how long a request to follow us is repeated
ASK_REPEAT_S = 0.5  # ... and how often
PROMPT_QUIET_S = 10.0  # a member's request is asked about again only after this long without
FOLLOW_MARGIN = 0.0  # widget pixels around the followed view: it fills our canvas


class ViewSharing(SideSender):
    def __init__(
        self,
        canvas: BoardCanvas,
        send: Callable[[bytes], None],
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(canvas, send, wall, clock)
        self._asking_until = -math.inf
        self._due = QTimer(self)
        self._due.setSingleShot(True)
        self._due.timeout.connect(self.send_now)
        self._refresh = QTimer(self)
        self._refresh.timeout.connect(self._tick)
        canvas.view_changed.connect(self.changed)
        self._live = False  # in a session: sending makes sense (start, stop)

    def start(self) -> None:
        """We are in the session: our view goes out now and keeps going out."""
        self._live = True
        self._refresh.start(round(ASK_REPEAT_S * 1000))
        self.send_now()

    def stop(self) -> None:
        """The session ended: nothing more to tell until the next one starts."""
        self._live = False
        self._refresh.stop()
        self._due.stop()

    @property
    def asking(self) -> bool:
        return self._clock() < self._asking_until

    def ask_everyone_to_follow(self) -> None:
        self._asking_until = self._clock() + ASK_S
        self.send_now()

    def changed(self) -> None:
        """Our view moved: sent now, or when the rate allows."""
        wait = self._last_at + 1.0 / VIEW_HZ - self._clock()
        if wait <= 0:
            self.send_now()
        elif not self._due.isActive():
            self._due.start(max(1, math.ceil(wait * 1000)))

    def _tick(self) -> None:
        since = self._clock() - self._last_at
        if since >= VIEW_REFRESH_S or (self.asking and since >= ASK_REPEAT_S):
            self.send_now()

    def send_now(self) -> None:
        if not self._live:
            return
        rect = self._canvas.visible_board_rect()
        x0, y0, x1, y1 = (
            min(MAX_COORD, max(-MAX_COORD, v))
            for v in (rect.left(), rect.top(), rect.right(), rect.bottom())
        )
        if not (x0 < x1 and y0 < y1):
            self._last_at = self._clock()
            return  # a canvas with no area (hidden, or squeezed to nothing)
        self._transmit(encode_view(SharedView(x0, y0, x1, y1, self.asking, self._sent_us())))


class Following(QObject):
    """Whom we follow, if anyone; ``changed`` is emitted with the member (None: nobody)."""

    changed = Signal(object)

    def __init__(self, canvas: BoardCanvas) -> None:
        super().__init__(canvas)
        self._canvas = canvas
        self.views: dict[int, SharedView] = {}
        self.followed: int | None = None
        self._applying = False
        canvas.view_changed.connect(self._view_changed)

    def on_view(self, member: int, view: SharedView) -> None:
        self.views[member] = view
        if member == self.followed:
            self._apply(view)

    def follow(self, member: int) -> None:
        self.followed = member
        self.changed.emit(member)
        view = self.views.get(member)
        if view is not None:
            self._apply(view)

    def stop(self) -> None:
        if self.followed is not None:
            self.followed = None
            self.changed.emit(None)

    def forget(self, member: int) -> None:
        """``member`` left: its view goes, and following it ends."""
        self.views.pop(member, None)
        if member == self.followed:
            self.stop()

    def _apply(self, view: SharedView) -> None:
        canvas = self._canvas
        area = (view.x0, view.y0, view.x1, view.y1)
        fitted = fit(area, canvas.width_px(), canvas.height_px(), FOLLOW_MARGIN, math.inf)
        self._applying = True
        try:
            canvas.set_view(fitted)
        finally:
            self._applying = False

    def _view_changed(self) -> None:
        if not self._applying:
            self.stop()  # the person moved the board themself
