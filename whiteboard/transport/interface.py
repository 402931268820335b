"""The one interface between the board and any transport.

Two levels, both structural (``typing.Protocol``):

* the sans-I/O contract between a protocol core and the layer above it
  (:class:`~coreapi.upper.TransportCore`, :class:`~coreapi.upper.UpperLayer`) lives in the
  dependency-free :mod:`coreapi` package, which ``rmp`` and ``mtp`` import instead of the
  whiteboard; it is re-exported here for the whiteboard's own modules;
* :class:`Transport` is what the application sees: a core already wired to real sockets (the
  runtime) or to the simulator, emitting :mod:`whiteboard.transport.events` to one handler.
"""

from __future__ import annotations

from typing import Protocol

from coreapi import (
    COUNTER_NAMES,
    Address,
    CoreFactory,
    MemberState,
    OrderKey,
    Outgoing,
    TransportCore,
    UpperLayer,
)

__all__ = [
    "COUNTER_NAMES",
    "Address",
    "CoreFactory",
    "MemberState",
    "OrderKey",
    "Outgoing",
    "Transport",
    "TransportCore",
    "UpperLayer",
]


class Transport(Protocol):
    """What the application holds: a core wired to a network (real or simulated)."""

    name: str  # "raw", "rmp" or "mtp"

    @property
    def member_id(self) -> int: ...

    @property
    def max_payload(self) -> int:
        """The largest payload sent whole (one packet or unit); the app splits longer
        strokes and edits to this size."""

    @property
    def max_message(self) -> int:
        """The largest payload ``send`` accepts (images); over ``max_payload`` it travels
        fragmented, at a cost."""

    @property
    def finished(self) -> bool:
        """True once ``close`` has completed the protocol's leaving."""

    def open(self, introduction: bytes = b"") -> None:
        """Join the session, the join carrying ``introduction`` (at most
        ``MAX_INTRODUCTION`` bytes: who we are, for the members already there, as an
        ``Introduced`` event). Progress and readiness arrive as events."""

    def send(self, payload: bytes) -> None:
        """Reliable delivery to every member, this one included (as a ``Delivered`` event)."""

    def send_ephemeral(self, payload: bytes) -> None:
        """Best effort to the other members, for what matters only while fresh (a pointer):
        unordered, latest wins, never repaired, never part of the board, rate-limited
        (coreapi/ephemeral.py). Arrives as ``EphemeralReceived``; never to this member."""

    def close(self) -> None:
        """Leave the session as the protocol says, then release the network."""

    def provide_board_state(self, request: int, state: bytes) -> None:
        """Answer a ``BoardStateRequested`` event with a snapshot of the board."""

    def counters(self) -> dict[str, int]: ...
