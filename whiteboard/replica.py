"""A replica: one member's board, fed by its transport's events.

The same class serves the app, the headless peer and the simulator, so what the tests check
(hashes, duplicates, order) is what users get.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from whiteboard.board import Board, Change, OpDecodeError, SnapshotError, decode_op
from whiteboard.presence import Presence, PresenceDecodeError, decode_presence, is_presence
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    Event,
)

MAX_PRESENCES = 4096  # members whose presence is remembered


class BoardStateSink(Protocol):
    """The part of a transport a replica answers board-state requests through."""

    def provide_board_state(self, request: int, state: bytes) -> None: ...


@dataclass
class ReplicaStats:
    ops_applied: int = 0
    duplicates_delivered: int = 0  # the transport delivered an op id twice
    order_violations: int = 0  # an op from an origin came before an earlier one, not as late
    late_inserts: int = 0
    rejected: int = 0  # payloads that are not valid ops, or claim another author
    rejected_states: int = 0  # board states from other members that could not be loaded
    presences: int = 0  # presence payloads taken (whiteboard/presence.py): not ops
    delivered_by_origin: Counter[int] = field(default_factory=Counter)


class Replica:
    def __init__(self) -> None:
        self.board = Board()
        self.stats = ReplicaStats()
        self._last_counter: dict[int, int] = {}
        self.last_rejection = ""
        # The latest presence of each member (name, colour, health, board fingerprint).
        self.presence: dict[int, Presence] = {}

    def handle(self, event: Event, transport: BoardStateSink) -> Change | Presence | None:
        """Apply what a transport event means for the board: a delivery, a board state given
        to us, or a request for ours. Other events are the caller's business. Never raises on
        bad input from peers: it is counted, and described in ``last_rejection``. A delivered
        presence is kept in :attr:`presence` and returned."""
        if isinstance(event, Delivered):
            return self.apply_delivered(event)
        if isinstance(event, BoardStateRequested):
            # Every delivery before the request has been applied: the snapshot is current.
            transport.provide_board_state(event.request, self.snapshot())
        elif isinstance(event, BoardStateReceived):
            try:
                self.load_state(event.state)
            except SnapshotError as exc:
                self.stats.rejected_states += 1
                self.last_rejection = f"the board sent by another member was unusable: {exc}"
        return None

    def apply_delivered(self, event: Delivered) -> Change | Presence | None:
        """Apply one delivered payload; return what changed (or the presence it was), or None
        if it was refused."""
        if is_presence(event.payload):
            return self._take_presence(event)
        try:
            op = decode_op(event.payload)
        except OpDecodeError as exc:
            self.stats.rejected += 1
            self.last_rejection = str(exc)
            return None
        if op.id.author != event.origin:
            self.stats.rejected += 1
            self.last_rejection = (
                f"op {op.id} claims author {op.id.author} but came from member {event.origin}"
            )
            return None
        self.stats.delivered_by_origin[event.origin] += 1
        last = self._last_counter.get(event.origin, -1)
        if op.id.counter < last and not event.late:
            self.stats.order_violations += 1
        self._last_counter[event.origin] = max(last, op.id.counter)
        change = self.board.apply(event.order_key, op)
        if change.duplicate:
            self.stats.duplicates_delivered += 1
        else:
            self.stats.ops_applied += 1
            if change.late:
                self.stats.late_inserts += 1
        return change

    def _take_presence(self, event: Delivered) -> Presence | None:
        try:
            presence = decode_presence(event.payload)
        except PresenceDecodeError as exc:
            self.stats.rejected += 1
            self.last_rejection = f"a presence from member {event.origin:08x} is unusable: {exc}"
            return None
        if event.origin not in self.presence and len(self.presence) >= MAX_PRESENCES:
            return None  # bounded whatever peers send: the first members keep their rows
        self.presence[event.origin] = presence
        self.stats.presences += 1
        return presence

    def load_state(self, state: bytes) -> None:
        """Adopt a board given by another member, keeping any op we already had that it lacks.

        Raises :class:`SnapshotError` with a readable message for a bad snapshot."""
        self.board = adopted(Board.from_snapshot(state), self.board)

    def snapshot(self) -> bytes:
        return self.board.snapshot()


def adopted(incoming: Board, had: Board) -> Board:
    """``incoming`` (a board given by another member) with every op of ``had`` (ours) that it
    lacks: what a member's board becomes when it is given one (also when a replay re-enacts
    it, whiteboard/replay/keyframes.py)."""
    for key, op in had.log():
        incoming.apply(key, op)
    return incoming


__all__ = ["BoardStateSink", "Replica", "ReplicaStats", "adopted"]
