"""This member's own presence (whiteboard/presence.py): what it tells the others about itself,
and when.

It says the member's name and colour, its transport's health counters, its board's
fingerprint, and the fingerprint its board had at its last checkpoint
(:func:`~whiteboard.presence.is_checkpoint`), which the others compare with their own board at
the same point (whiteboard/app/health.py). A colour chosen in the settings is kept; a default
one (from the member id) moves to a free colour when another member shows it too, as
:func:`~whiteboard.presence.yields_colour` decides. The first presence goes as soon as the
member is ready, then as :class:`~whiteboard.presence.PresenceSchedule` says, looked at every
tick of the window's presence timer; each tick also lets the board comparison move on.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Protocol

from whiteboard.app.canvas import DEFAULT_COLOUR, BoardCanvas
from whiteboard.app.health import SessionHealth
from whiteboard.app.toolbar import DrawingToolbar
from whiteboard.presence import (
    MAX_NAME,
    BoardFingerprint,
    Presence,
    PresenceSchedule,
    default_colour,
    encode_presence,
    is_checkpoint,
    yields_colour,
)
from whiteboard.replica import Replica
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.interface import MemberState

# Our own row in the members panel: our board is not compared with itself.
_NO_BOARD = BoardFingerprint(0, None, "0" * 64)


class PresenceHost(Protocol):
    """What the presence reads through the window: the current session's parts (each replaced
    when the window joins another session), and where sent payloads are recorded."""

    display_name: str
    replica: Replica
    transport: CoreDriver
    health: SessionHealth
    canvas: BoardCanvas
    toolbar: DrawingToolbar

    def record_sent(self, payload: bytes) -> None: ...


class OwnPresence:
    """The window's presence, its colour and its board's checkpoint, for as long as the window
    lives (sessions come and go: :meth:`start_session` begins each)."""

    def __init__(self, host: PresenceHost, colour: int | None) -> None:
        self._host = host
        # None: a default colour, from our member id and the colours others use, changed if
        # another member has it; an explicit one (chosen in the settings) is kept.
        self.own_colour = colour is not None
        self.colour = colour if colour is not None else DEFAULT_COLOUR
        self._fingerprint_cache: BoardFingerprint | None = None
        # Our board at its last checkpoint (presence.is_checkpoint), told in our presences.
        self.checkpoint: BoardFingerprint | None = None
        self.schedule = PresenceSchedule()
        self.sent_count = 0

    def start_session(self, idle_s: float, taken: Collection[int] = ()) -> None:
        """A session begins: the first presence is due at once, then one at least every
        ``idle_s``; a default colour is taken afresh from the new member id, none of ``taken``
        (the colours the others showed in the session we left: mostly the same people, and
        taking one of theirs made both show one colour until one of them moved)."""
        self.schedule = PresenceSchedule(idle_s)
        if not self.own_colour:
            self.take_colour(default_colour(self._host.transport.member_id, taken))

    # -- colour -----------------------------------------------------------------------------

    def take_colour(self, argb: int) -> None:
        """Our colour is now ``argb``; the tool bar follows unless another colour was picked
        there for drawing."""
        if self._host.canvas.colour == self.colour:
            self._host.toolbar.set_colour(argb)
        self.colour = argb
        self.schedule.due = True

    def choose_colour(self, colour: int | None) -> None:
        """The settings' colour: ``colour`` chosen and kept, or (None) a default one; going
        back from a chosen colour to a default takes one nobody uses."""
        was_own, self.own_colour = self.own_colour, colour is not None
        if colour is not None:
            self.take_colour(colour)
        elif was_own:
            self.take_colour(self._free_colour())
        self.schedule.due = True

    def avoid_colour_of(self, member: int, presence: Presence) -> None:
        """Another member shows our default colour: of the two, one moves to a free colour
        (never both: they would collide again). A colour chosen in the settings stays."""
        me = self._host.transport.member_id
        if self.own_colour or member == me or presence.colour != self.colour:
            return
        if yields_colour(me, member, presence.colour_chosen):
            self.take_colour(self._free_colour())

    def _free_colour(self) -> int:
        """A default colour no other member present shows (whiteboard/presence.py)."""
        return default_colour(self._host.transport.member_id, self.colours_heard())

    def colours_heard(self, present_only: bool = True) -> set[int]:
        """The colours the other members show: those present, or (``present_only`` False,
        when we leave a session and every member is shown as left) all of them."""
        rows = self._host.health.rows()
        return {
            r.colour
            for r in rows
            if r.colour and not r.me and not (present_only and r.state is MemberState.LEFT)
        }

    # -- board ------------------------------------------------------------------------------

    def fingerprint(self) -> BoardFingerprint:
        board = self._host.replica.board
        cached = self._fingerprint_cache
        if cached is None or (cached.ops, cached.last_key) != (len(board), board.last_key):
            # Hashing 10,000 strokes takes ~25 ms: only when the board changed.
            cached = self._fingerprint_cache = BoardFingerprint.of(board)
        return cached

    def passed_op(self) -> None:
        """An op was applied: at a checkpoint count, keep our board's fingerprint there, to
        tell the others and to compare theirs with (whiteboard/app/health.py)."""
        if is_checkpoint(len(self._host.replica.board)):
            self.checkpoint = self.fingerprint()
            self._host.health.passed(self.checkpoint, checkpoint=True)

    def forget_board(self) -> None:
        """Our board was replaced: what we knew of the old one is not its past."""
        self._fingerprint_cache = self.checkpoint = None

    # -- telling ----------------------------------------------------------------------------

    def own(self) -> Presence:
        counters = self._host.transport.counters()
        return Presence(
            self._host.display_name[:MAX_NAME],
            self.colour,
            self.fingerprint(),
            counters.get("nacks_sent", 0),
            counters.get("retransmissions", 0),
            counters.get("late_delivered", 0),
            self.checkpoint,
            self.own_colour,
        )

    def own_row(self) -> Presence:
        """What our own row in the members panel shows (our board is not compared)."""
        counters = self._host.transport.counters()
        return Presence(
            self._host.display_name[:MAX_NAME],
            self.colour,
            _NO_BOARD,
            counters.get("nacks_sent", 0),
            counters.get("retransmissions", 0),
            counters.get("late_delivered", 0),
        )

    def tick(self, force: bool = False) -> bool:
        """Let the board comparison move on, and send our presence if it is due (``force``:
        now). False if it could not be sent: the session is ending, there is nothing to tell."""
        host = self._host
        now = time.monotonic()
        host.health.check((len(host.replica.board), host.replica.board.last_key), now)
        presence = self.own()
        host.health.passed(presence.board)
        if force or self.schedule.is_due(presence, now):
            payload = encode_presence(presence)
            try:
                host.transport.send(payload)
            except (ValueError, RuntimeError):
                return False
            host.record_sent(payload)
            self.sent_count += 1
            self.schedule.sent(presence, now)
        return True


__all__ = ["OwnPresence", "PresenceHost"]
