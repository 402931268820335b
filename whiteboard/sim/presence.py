"""Simulated members that present themselves as the app's do: a name, a colour, and a presence
(whiteboard/presence.py) on joining and every few seconds after, on the app's schedule
(whiteboard/app/window.py). The collab workload uses it, so that its members' session logs
hold presences among the ops, as an app's log does."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from whiteboard.board import Board
from whiteboard.board.synthetic import PALETTE
from whiteboard.presence import BoardFingerprint, Presence, encode_presence, is_checkpoint
from whiteboard.sim.session import Peer, SimSession
from whiteboard.transport.events import Delivered, Event, EventHandler, MemberChanged, Ready
from whiteboard.transport.interface import MemberState

# As the app: a presence on joining, then every PRESENCE_S while the board or the NACK count
# moves, every IDLE_PRESENCE_S when nothing does, and soon after a newcomer appears.
PRESENCE_S = 2.0
IDLE_PRESENCE_S = 10.0
# A timer fires a little late, by however busy its event loop is: without that, members that
# joined together would send in lockstep forever, which no real session does.
TIMER_LATENESS_S = 0.03


def member_name(index: int) -> str:
    """What simulated member ``index`` calls itself, in presences and session logs."""
    return f"member-{index + 1}"


def member_colour(index: int) -> int:
    """Member ``index``'s colour: its presence's, and its drawings' usual one."""
    return PALETTE[index % len(PALETTE)]


class AppPresence:
    """Every member of ``session`` announces its presence as the app does, from joining until
    :meth:`stop` (or its station's crash). Create it before the members start."""

    def __init__(self, session: SimSession, seed: int) -> None:
        self.session = session
        self.seed = seed
        self.sent = 0  # presences sent, by all members
        self.stopped = False
        session.handler_wrappers.append(self._wrap)

    def stop(self) -> None:
        """The members are leaving: the app stops its presence timer then."""
        self.stopped = True

    def _wrap(
        self, peer: Peer, params: Mapping[str, object], handler: EventHandler
    ) -> EventHandler:
        announcer = _Announcer(self, peer)

        def handle(event: Event) -> None:
            handler(event)  # the replica first, as in the app
            announcer.on_event(event)

        return handle


class _Announcer:
    """One incarnation of one member's presence timer."""

    def __init__(self, owner: AppPresence, peer: Peer) -> None:
        self.owner = owner
        self.peer = peer
        self.incarnation: int | None = None  # the station's, once joined
        self.seen: set[int] = set()
        self.due = False
        self.last_state: tuple[object, ...] | None = None
        self.sent_at = -math.inf
        self.fingerprint: BoardFingerprint | None = None
        # The board at its last checkpoint, told in presences as the app does (presence.py).
        self.checkpoint: BoardFingerprint | None = None
        self.applied = 0
        self.rng = random.Random()  # seeded on joining

    def on_event(self, event: Event) -> None:
        board = self.peer.replica.board
        if len(board) != self.applied:  # an op applied (or a board state adopted)
            self.applied = len(board)
            if isinstance(event, Delivered) and is_checkpoint(self.applied):
                self.checkpoint = self._fingerprint(board)
            elif not isinstance(event, Delivered):
                self.checkpoint = None  # a board state: its past is not this board's
        if isinstance(event, MemberChanged):
            if event.member not in self.seen and event.state is not MemberState.LEFT:
                self.due = True  # a newcomer: tell it who we are soon
            self.seen.add(event.member)
        elif isinstance(event, Ready) and self.incarnation is None and not self.owner.stopped:
            self.incarnation = self.peer.station.incarnation
            self.rng.seed(f"presence:{self.owner.seed}:{self.peer.index}:{self.incarnation}")
            self.tick(force=True)

    def tick(self, force: bool = False) -> None:
        peer, station = self.peer, self.peer.station
        if self.owner.stopped or not station.up or station.incarnation != self.incarnation:
            return  # leaving, or crashed: this timer died with its program
        network = self.owner.session.network
        counters = station.transport.counters()
        presence = Presence(
            member_name(peer.index),
            member_colour(peer.index),
            self._fingerprint(peer.replica.board),
            counters.get("nacks_sent", 0),
            counters.get("retransmissions", 0),
            counters.get("late_delivered", 0),
            self.checkpoint,
        )
        state = (presence.board.ops, presence.board.last_key, presence.nacks_sent)
        due = force or self.due or state != self.last_state
        if due or network.now - self.sent_at >= IDLE_PRESENCE_S:
            try:
                self.owner.session.announce(peer.index, encode_presence(presence))
            except (ValueError, RuntimeError):
                return  # leaving: nothing to tell, as in the app
            self.owner.sent += 1
            self.due = False
            self.last_state, self.sent_at = state, network.now
        lateness = self.rng.uniform(0.0, TIMER_LATENESS_S)
        network.schedule(network.now + PRESENCE_S + lateness, self.tick)

    def _fingerprint(self, board: Board) -> BoardFingerprint:
        cached = self.fingerprint
        if cached is None or (cached.ops, cached.last_key) != (len(board), board.last_key):
            cached = self.fingerprint = BoardFingerprint.of(board)  # hashing: only if it moved
        return cached


__all__ = ["IDLE_PRESENCE_S", "PRESENCE_S", "AppPresence", "member_colour", "member_name"]
