"""Events a :class:`~whiteboard.transport.interface.Transport` hands to the application.

:class:`EventQueue` is the :class:`~whiteboard.transport.interface.UpperLayer` the drivers give
to a core: it turns the core's calls into these records, to be dispatched after the core call
returns (so a handler may call ``send`` without re-entering the core).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from whiteboard.transport.interface import MemberState, OrderKey


@dataclass(frozen=True, slots=True)
class Delivered:
    origin: int
    order_key: OrderKey
    timestamp: float  # the sender's timestamp, seconds
    payload: bytes
    late: bool  # insert before already delivered payloads with greater keys
    received_at: float  # local clock when delivered


@dataclass(frozen=True, slots=True)
class MemberChanged:
    member: int
    state: MemberState


@dataclass(frozen=True, slots=True)
class Introduced:
    """``member``'s join carried this introduction (the application's name card)."""

    member: int
    introduction: bytes


@dataclass(frozen=True, slots=True)
class JoinProgress:
    received: int
    total: int


@dataclass(frozen=True, slots=True)
class Ready:
    """The local member joined and may send."""


@dataclass(frozen=True, slots=True)
class BoardStateRequested:
    """A joiner needs the board: answer with ``transport.provide_board_state(request, ...)``.
    Every delivery before this event has been dispatched already."""

    request: int


@dataclass(frozen=True, slots=True)
class BoardStateReceived:
    state: bytes


@dataclass(frozen=True, slots=True)
class Failure:
    reason: str


@dataclass(frozen=True, slots=True)
class ProtocolEvent:
    name: str
    fields: Mapping[str, int | float | str]
    at: float


@dataclass(frozen=True, slots=True)
class EphemeralReceived:
    """A payload of the side channel (``Transport.send_ephemeral``) from another member: the
    newest from it so far; never part of the board."""

    origin: int
    payload: bytes
    received_at: float  # local clock


Event = (
    Delivered
    | MemberChanged
    | Introduced
    | JoinProgress
    | Ready
    | BoardStateRequested
    | BoardStateReceived
    | Failure
    | ProtocolEvent
    | EphemeralReceived
)
EventHandler = Callable[[Event], None]


@dataclass
class EventQueue:
    """The upper layer of a core: records what the core says, in order."""

    clock: Callable[[], float]
    _events: deque[Event] = field(default_factory=deque)

    def deliver(
        self, origin: int, order_key: OrderKey, timestamp: float, payload: bytes, late: bool
    ) -> None:
        self._events.append(
            Delivered(origin, tuple(order_key), timestamp, payload, late, self.clock())
        )

    def member_changed(self, member: int, state: str) -> None:
        self._events.append(MemberChanged(member, MemberState(state)))

    def member_introduced(self, member: int, introduction: bytes) -> None:
        self._events.append(Introduced(member, bytes(introduction)))

    def join_progress(self, received: int, total: int) -> None:
        self._events.append(JoinProgress(received, total))

    def ready(self) -> None:
        self._events.append(Ready())

    def board_state_requested(self, request: int) -> None:
        self._events.append(BoardStateRequested(request))

    def board_state_received(self, state: bytes) -> None:
        self._events.append(BoardStateReceived(state))

    def failure(self, reason: str) -> None:
        self._events.append(Failure(reason))

    def protocol_event(self, name: str, fields: Mapping[str, int | float | str]) -> None:
        self._events.append(ProtocolEvent(name, dict(fields), self.clock()))

    def ephemeral(self, origin: int, payload: bytes) -> None:
        self._events.append(EphemeralReceived(origin, bytes(payload), self.clock()))

    def pending(self) -> bool:
        """Whether events wait to be drained."""
        return bool(self._events)

    def drain(self) -> Iterator[Event]:
        while self._events:
            yield self._events.popleft()
