"""A replica: one member's board, fed by its transport's events.

The same class serves the app, the headless peer and the simulator, so what the tests check
(hashes, duplicates, order) is what users get.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from whiteboard.board import (
    Board,
    Change,
    Op,
    OpDecodeError,
    OpId,
    OrderKey,
    SnapshotError,
    decode_op,
    encode_op,
)
from whiteboard.board.signed import (
    SIGNED_OVERHEAD,
    SignedDecodeError,
    decode_signed,
    encode_signed,
    is_signed,
)
from whiteboard.carry import Carried, CarryDecodeError, decode_carried, encode_carried, is_carried
from whiteboard.presence import Presence, PresenceDecodeError, decode_presence, is_presence
from whiteboard.security import OpAuthority
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
    # A private session's ops without a drawer's proof (a viewer's, or forged): never applied.
    unproven: int = 0
    delivered_by_origin: Counter[int] = field(default_factory=Counter)


class Replica:
    def __init__(
        self, decode: Callable[[bytes], Op] = decode_op, authority: OpAuthority | None = None
    ) -> None:
        # ``decode``: the simulator gives its replicas one shared memo of decode_op
        # (coreapi/memo.py ValueMemo), so that a stroke is decoded once for the whole group.
        self._decode = decode
        # A private session's: only ops proven by a drawer are applied, and ours are proven
        # (whiteboard/security/signing.py); each op's proof is kept, to go with it to joiners.
        self.authority = authority
        self._proofs: dict[OpId, bytes] = {}
        self._incoming_proofs: dict[OpId, bytes] = {}
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
        if self.authority is not None and not self.authority.can_sign:
            return  # a viewer cannot prove a hand-on: the drawers who have them will
        for key, op in lacking:
            try:
                transport.send(self._proven(encode_carried(key, op, self.proof_of(op))))
            except (RuntimeError, ValueError) as exc:
                self.stats.carry_failures += 1
                self.last_rejection = f"op {op.id} could not be handed on: {exc}"
            else:
                self.stats.carried_sent += 1

    def use_authority(self, authority: OpAuthority | None) -> None:
        """Join a session with ``authority`` (None: in clear), keeping the board; the old
        session's proofs go. A drawer vouches for every op on it when it first gives it or
        hands it on (:meth:`proof_of`), so joiners take them."""
        self.authority = authority
        self._proofs = {}

    def proof_of(self, op: Op) -> bytes | None:
        """The proof that goes with ``op`` to others: the one it came with, else, for a
        drawer, one made now (an op of the board it brought into the session; ~70 µs, once)."""
        proof = self._proofs.get(op.id)
        if proof is None and self.authority is not None and self.authority.can_sign:
            proof = self._proofs[op.id] = self.authority.prove(encode_op(op))
        return proof

    @property
    def proofs(self) -> Mapping[OpId, bytes]:
        """The proof of each op on the board that has one (a private session's)."""
        return self._proofs

    @property
    def can_draw(self) -> bool:
        """False for a viewer of a private session: no op of ours would be applied."""
        return self.authority is None or self.authority.can_sign

    @property
    def payload_overhead(self) -> int:
        """The most bytes :meth:`payload_of` adds to an op's encoding."""
        return 0 if self.authority is None else SIGNED_OVERHEAD

    def payload_of(self, op: Op) -> bytes:
        """What to send for an op of ours: its encoding, with a drawer's proof in a private
        session. A viewer's goes unproven, and no member applies it."""
        return self._proven(encode_op(op))

    def _proven(self, data: bytes) -> bytes:
        if self.authority is None or not self.authority.can_sign:
            return data
        return encode_signed(data, self.authority.prove(data))

    def _refuse_unproven(self, what: str, why: str = "no proof that a drawer made it") -> None:
        self.stats.unproven += 1
        self.last_rejection = f"{what} was not applied: {why}"

    def apply_delivered(self, event: Delivered) -> Change | Presence | None:
        """Apply one delivered payload; return what changed (or the presence it was), or None
        if it was refused."""
        if is_presence(event.payload):
            return self._take_presence(event)
        try:
            payload, proof = open_payload(event.payload, self.authority)
            if is_carried(payload):
                return self._take_carried(event, payload)
            op = self._decode(payload)
        except UnprovenOpError as exc:
            self._refuse_unproven(f"an op from member {event.origin:08x}", str(exc))
            return None
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
            if proof is not None:
                self._proofs[op.id] = proof
            self.stats.ops_applied += 1
            if change.late:
                self.stats.late_inserts += 1
        return change

    def _take_carried(self, event: Delivered, payload: bytes) -> Change | None:
        """An op another member handed on, with the order key it was first delivered with:
        filed there, so every replica files it alike. In a private session the hand-on was
        proven by a drawer (``payload`` is what that proof covered), and the op by its
        author."""
        try:
            carried = decode_carried(payload)
        except CarryDecodeError as exc:
            self.stats.rejected += 1
            self.last_rejection = f"from member {event.origin:08x}: {exc}"
            return None
        if not carried_proven(carried, self.authority):
            self._refuse_unproven(f"op {carried.op.id} handed on by member {event.origin:08x}")
            return None
        change = self.board.apply(carried.order_key, carried.op)
        if change.duplicate:
            self.stats.carried_known += 1
        else:
            if carried.proof is not None:
                self._proofs[carried.op.id] = carried.proof
            self.stats.ops_applied += 1
            self.stats.carried_applied += 1
        return change

    def _admit(self, op: Op, proof: bytes | None) -> bool:
        """Whether an op of a board given to us may be taken: with a drawer's proof, in a
        private session. Counted, and its proof kept, here."""
        if not snapshot_op_proven(op, proof, self.authority):
            self._refuse_unproven(f"op {op.id} of a board given to us")
            return False
        if proof is not None:
            self._incoming_proofs[op.id] = proof
        return True

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
        self._incoming_proofs = {}
        incoming = Board.from_snapshot(state, self._admit)
        lacking = [(key, op) for key, op in self.board.log() if op.id not in incoming]
        self.board = adopted(incoming, self.board)
        self._proofs.update(self._incoming_proofs)
        self._incoming_proofs = {}
        return lacking

    def snapshot(self) -> bytes:
        if self.authority is None:
            return self.board.snapshot()
        for _, op in self.board.log():
            self.proof_of(op)
        return self.board.snapshot(self._proofs)


class UnprovenOpError(OpDecodeError):
    """In a private session, an op without a valid proof that a drawer made it."""


def open_payload(
    payload: bytes, authority: OpAuthority | None, at: float | None = None
) -> tuple[bytes, bytes | None]:
    """What a delivered payload that is not a presence holds (an op, or an op handed on), and
    its proof: in clear, the payload itself; in a private session, what a drawer proved, made
    within a day of ``at`` (default: now). Raises :class:`UnprovenOpError` if no drawer did,
    :class:`OpDecodeError` if it is not a proven payload at all: how the live replica, and a
    replay after it (``at`` the record's time), take what changes the board."""
    if authority is None:
        return payload, None
    if not is_signed(payload):
        raise UnprovenOpError("an op without a proof that a drawer made it")
    try:
        data, proof = decode_signed(payload)
    except SignedDecodeError as exc:
        raise OpDecodeError(str(exc)) from None
    if not authority.check(data, proof, fresh=True, at=at):
        raise UnprovenOpError("an op whose proof is not a drawer's, or not of today")
    return data, proof



def carried_proven(carried: Carried, authority: OpAuthority | None) -> bool:
    """Whether an op handed on (whiteboard/carry.py) may be taken."""
    if authority is None:
        return True
    return carried.proof is not None and authority.check(carried.op_bytes, carried.proof)


def snapshot_op_proven(op: Op, proof: bytes | None, authority: OpAuthority | None) -> bool:
    """Whether an op of a board given to a joiner may be taken: its proof covers the op's
    encoding, which every op re-encodes to exactly (tests/security/test_viewers.py)."""
    if authority is None:
        return True
    return proof is not None and authority.check(encode_op(op), proof)


def adopted(incoming: Board, had: Board) -> Board:
    """``incoming`` (a board given by another member) with every op of ``had`` (ours) that it
    lacks: what a member's board becomes when it is given one (also when a replay re-enacts
    it, whiteboard/replay/keyframes.py)."""
    for key, op in had.log():
        incoming.apply(key, op)
    return incoming


__all__ = [
    "BoardStateSink",
    "Replica",
    "ReplicaStats",
    "UnprovenOpError",
    "adopted",
    "carried_proven",
    "open_payload",
    "snapshot_op_proven",
]
