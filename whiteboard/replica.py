"""A replica: one member's board, fed by its transport's events.

The same class serves the app, the headless peer and the simulator, so what the tests check
(hashes, duplicates, order) is what users get.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from whiteboard.board import Board, Change, Op, OpDecodeError, OrderKey, SnapshotError, decode_op
from whiteboard.carry import CarryDecodeError, decode_carried, encode_carried, is_carried
from whiteboard.presence import Presence, PresenceDecodeError, decode_presence, is_presence
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    Event,
)

MAX_PRESENCES = 4096  # members whose presence is remembered


class BoardStateSink(Protocol):
    """The part of a transport a replica answers board-state requests through, and hands on
    what a board given to it lacks (whiteboard/carry.py)."""

    def provide_board_state(self, request: int, state: bytes) -> None: ...

    def send(self, payload: bytes) -> None: ...


@dataclass
class ReplicaStats:
    ops_applied: int = 0
    duplicates_delivered: int = 0  # the transport delivered an op id twice
    order_violations: int = 0  # an op from an origin came before an earlier one, not as late
    late_inserts: int = 0
    rejected: int = 0  # payloads that are not valid ops, or claim another author
    rejected_states: int = 0  # board states from other members that could not be loaded
    presences: int = 0  # presence payloads taken (whiteboard/presence.py): not ops
    carried_sent: int = 0  # our ops a board given to us lacked, handed on (whiteboard/carry.py)
    carried_applied: int = 0  # ops others handed on that we lacked
    carried_known: int = 0  # ops others handed on that we had already
    carry_failures: int = 0  # ops we could not hand on (the transport refused them)
    delivered_by_origin: Counter[int] = field(default_factory=Counter)


class Replica:
    def __init__(self, decode: Callable[[bytes], Op] = decode_op) -> None:
        # ``decode``: the simulator gives its replicas one shared memo of decode_op
        # (coreapi/memo.py ValueMemo), so that a stroke is decoded once for the whole group.
        self._decode = decode
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
                lacking = self.load_state(event.state)
            except SnapshotError as exc:
                self.stats.rejected_states += 1
                self.last_rejection = f"the board sent by another member was unusable: {exc}"
                return None
            self._hand_on(lacking, transport)
        return None

    def _hand_on(self, lacking: list[tuple[OrderKey, Op]], transport: BoardStateSink) -> None:
        """Send again, carried, every op of ours the given board lacked (whiteboard/carry.py),
        so the members who gave it, and everyone else, get it too."""
        for key, op in lacking:
            try:
                transport.send(encode_carried(key, op))
            except (RuntimeError, ValueError) as exc:
                self.stats.carry_failures += 1
                self.last_rejection = f"op {op.id} could not be handed on: {exc}"
            else:
                self.stats.carried_sent += 1

    def apply_delivered(self, event: Delivered) -> Change | Presence | None:
        """Apply one delivered payload; return what changed (or the presence it was), or None
        if it was refused."""
        if is_presence(event.payload):
            return self._take_presence(event)
        if is_carried(event.payload):
            return self._take_carried(event)
        try:
            op = self._decode(event.payload)
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

    def _take_carried(self, event: Delivered) -> Change | None:
        """An op another member handed on, with the order key it was first delivered with:
        filed there, so every replica files it alike."""
        try:
            carried = decode_carried(event.payload)
        except CarryDecodeError as exc:
            self.stats.rejected += 1
            self.last_rejection = f"from member {event.origin:08x}: {exc}"
            return None
        change = self.board.apply(carried.order_key, carried.op)
        if change.duplicate:
            self.stats.carried_known += 1
        else:
            self.stats.ops_applied += 1
            self.stats.carried_applied += 1
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

    def load_state(self, state: bytes) -> list[tuple[OrderKey, Op]]:
        """Adopt a board given by another member, keeping any op we already had that it lacks;
        returns those ops (with their keys), for the others to be given them too.

        Raises :class:`SnapshotError` with a readable message for a bad snapshot."""
        incoming = Board.from_snapshot(state)
        lacking = [(key, op) for key, op in self.board.log() if op.id not in incoming]
        self.board = adopted(incoming, self.board)
        return lacking

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
