"""The sans-I/O contract between a protocol core and the layer above it.

:class:`TransportCore` is a protocol engine (the model is aioquic's ``QuicConnection``): it
never touches a socket, a thread or a clock. It is fed datagrams and ``now`` and hands back
datagrams to send and the deadline of its next timer. It reports to the layer above through an
:class:`UpperLayer` given to it at construction.

Only plain values and this package's types cross the boundary, never classes of either side,
which is what keeps the protocol packages independent of the whiteboard.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from coreapi.members import MemberState

# (host, port). The simulator uses synthetic host names; the runtime uses real IPv4 addresses.
Address = tuple[str, int]

# A datagram a core wants sent: its bytes and its destination, ``None`` meaning the session's
# multicast group.
Outgoing = tuple[bytes, Address | None]

# The most bytes of the introduction a member's join carries (TransportCore.introduce): the
# application's name card (a name and a colour), opaque to the core.
MAX_INTRODUCTION = 256

# A key that totally orders delivered payloads within one session (for example
# ``(timestamp_us, origin, seq)`` for RMP, ``(message_number,)`` for MTP). Replicas that sort the
# same payloads by their keys obtain the same board.
OrderKey = tuple[int, ...]


class UpperLayer(Protocol):
    """What a core calls on the layer above it. Every call is an indication, never I/O.

    Implementations must not call back into the core from inside these methods; the drivers
    queue them as events and dispatch after the core call returns.
    """

    def deliver(
        self, origin: int, order_key: OrderKey, timestamp: float, payload: bytes, late: bool
    ) -> None:
        """A payload is delivered reliably. ``late`` means a payload with a greater order key
        from the same session was already delivered: insert this one in its place."""

    def member_changed(self, member: int, state: MemberState) -> None:
        """``member`` is now in ``state``."""

    def member_introduced(self, member: int, introduction: bytes) -> None:
        """``member``'s join carried ``introduction`` (:meth:`TransportCore.introduce`): who
        it is, before it can send anything, and even if it never may (a viewer). Reported
        again when it asks again; the bytes are the peer's, so check them."""

    def join_progress(self, received: int, total: int) -> None:
        """While joining: ``received`` of ``total`` units of the board state have arrived."""

    def ready(self) -> None:
        """The local member has joined (with the board state, if there was one) and may send."""

    def board_state_requested(self, request: int) -> None:
        """A joiner needs the board. The application answers with
        :meth:`TransportCore.provide_board_state` (``request`` echoed) once it has applied
        every payload delivered before this call, so the snapshot matches the core's view."""

    def board_state_received(self, state: bytes) -> None:
        """The complete board state given by another member, to load before later deliveries."""

    def failure(self, reason: str) -> None:
        """The transport gave up on something; ``reason`` is for a person to read."""

    def protocol_event(self, name: str, fields: Mapping[str, int | float | str]) -> None:
        """A protocol event worth recording (NACK sent, retransmission, token grant, ...)."""

    def ephemeral(self, origin: int, payload: bytes) -> None:
        """A payload of the side channel (:meth:`TransportCore.send_ephemeral`) from member
        ``origin``: the newest from it so far. Never our own; the bytes are the peer's."""


@runtime_checkable
class TransportCore(Protocol):
    """A sans-I/O protocol engine. Times are seconds on the driver's clock (``now``)."""

    member_id: int  # 32-bit, non-zero; identifies this member on the wire
    max_payload: int  # the largest payload sent whole: in one packet or unit, at no extra cost
    # The largest payload ``send`` accepts (>= max_payload): longer ones than max_payload are
    # fragmented and reassembled before delivery (issue 20: images of up to a few MiB).
    max_message: int

    def introduce(self, introduction: bytes) -> None:
        """Before :meth:`start`: the bytes (at most :data:`MAX_INTRODUCTION`) every join
        request carries, reported to the members already there through
        ``upper.member_introduced``. A core whose joins carry nothing may keep them unsent."""

    def start(self, now: float) -> None:
        """Begin joining the session."""

    def send(self, payload: bytes, now: float) -> None:
        """Queue ``payload`` for reliable delivery to every member, this one included.

        Raises ``ValueError`` if the payload is larger than ``max_message`` and
        ``RuntimeError`` once the core has left (or before ``start``). A core that is still
        joining queues the payload and sends it once joined."""

    def send_ephemeral(self, payload: bytes, now: float) -> None:
        """Send ``payload`` (at most ``coreapi.ephemeral.MAX_EPHEMERAL`` bytes) to the other
        members on the side channel: best effort, latest wins, never repaired, no part of the
        reliable stream (coreapi/ephemeral.py). Above the member's rate it waits in place of
        the one before it. Raises ``ValueError`` if too large and ``RuntimeError`` once the
        core has left (or before ``start``); while joining it is dropped."""

    def leave(self, now: float) -> None:
        """Leave the session as the protocol says (``finished`` turns true when done)."""

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        """The answer to ``upper.board_state_requested(request)``: a board snapshot to give the
        joiner. A core that never asks may ignore it."""

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        """Process one datagram from ``addr``. Malformed input is counted, never raised."""

    def handle_timer(self, now: float) -> None:
        """Called at (or after) the deadline returned by :meth:`get_timer`."""

    def get_timer(self) -> float | None:
        """The next time :meth:`handle_timer` wants calling, or ``None``."""

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        """The datagrams produced since the last call, in order, and forget them."""

    def counters(self) -> dict[str, int]:
        """At least every name in :data:`coreapi.counters.COUNTER_NAMES`."""

    @property
    def finished(self) -> bool:
        """True once the core has left the session and has nothing more to send."""


# A transport package exposes one factory with this signature, named ``make_core``. ``params``
# are the transport's own settings (profile, role, timers...), validated by the factory, which
# raises ``ValueError`` with a readable message for a bad one.
CoreFactory = Callable[[int, UpperLayer, random.Random, Mapping[str, object]], TransportCore]
