"""Pumps a sans-I/O core: the one place that moves datagrams, timers and events between a core
and whatever carries its datagrams (the real multicast runtime or the simulator).

A :class:`CoreDriver` *is* the application's :class:`~whiteboard.transport.interface.Transport`.
"""

from __future__ import annotations

import logging
import random
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from coreapi import MAX_INTRODUCTION
from coreapi.description import TransportDescription
from whiteboard.security import SessionKey
from whiteboard.security.channel import SEALED_IN_PUBLIC, PrivateChannel
from whiteboard.security.envelope import is_sealed
from whiteboard.transport.events import Event, EventHandler, EventQueue, Failure
from whiteboard.transport.interface import Address, CoreFactory

log = logging.getLogger(__name__)


class Carrier(Protocol):
    """The I/O side of a driver: a clock, a way to send, one re-armable timer."""

    def now(self) -> float: ...

    def transmit(self, data: bytes, dest: Address | None) -> None:
        """Send ``data`` to ``dest``, or to the group when ``dest`` is None."""

    def set_timer(self, deadline: float | None) -> None:
        """Call the driver's :meth:`CoreDriver.timer_fired` at ``deadline`` (replacing any
        earlier deadline); ``None`` cancels."""

    def release(self) -> None:
        """The core has finished: free the network resources."""


def private_channel(
    description: TransportDescription,
    key: SessionKey | None,
    params: Mapping[str, object],
    datagram_limit: int,
    wall: Callable[[], float] = time.time,
) -> tuple[PrivateChannel | None, dict[str, object]]:
    """A private session's channel for ``key`` (a new sender id: one per run of a member)
    and ``params`` with the core's datagrams kept to what ``datagram_limit`` leaves beside the
    envelope; no channel and ``params`` as they are for a session in clear (``key`` None)."""
    if key is None:
        return None, dict(params)
    channel = PrivateChannel(key, wall)
    return channel, description.params_within(params, datagram_limit - channel.overhead)


class CoreDriver:
    """Wires one core to one carrier and one event handler.

    ``strict`` re-raises an exception escaping the core (the simulator's tests want bugs loud);
    otherwise it is logged, counted and reported as a :class:`Failure`, and the member lives on.
    The caller's own mistakes are not bugs: ``send`` raises ``ValueError`` (too large) and
    ``RuntimeError`` (not in a session) whatever the mode.

    ``channel``: a private session's (issue 21). Every datagram the core sends is sealed and
    every datagram received opened first; what does not open is counted and dropped before
    the core sees it. Without one, a sealed datagram is dropped and counted likewise (the core
    would take it for a malformed one of its own). The person is told once of each kind.
    """

    def __init__(
        self,
        name: str,
        factory: CoreFactory,
        member_id: int,
        rng: random.Random,
        params: Mapping[str, object],
        carrier: Carrier,
        handler: EventHandler,
        strict: bool = False,
        on_finished: Callable[[], None] | None = None,
        channel: PrivateChannel | None = None,
    ) -> None:
        self.name = name
        self._channel = channel
        self.sealed_dropped = 0  # private sessions' datagrams, heard without a channel
        self._carrier = carrier
        self._handler = handler
        self._strict = strict
        self._on_finished = on_finished
        self._events = EventQueue(clock=carrier.now)
        self.core = factory(member_id, self._events, rng, params)
        self._pumping = False
        self._released = False
        self.internal_errors = 0

    @property
    def member_id(self) -> int:
        return self.core.member_id

    @property
    def max_payload(self) -> int:
        return self.core.max_payload

    @property
    def max_message(self) -> int:
        return self.core.max_message

    @property
    def finished(self) -> bool:
        return self.core.finished

    # -- the application's side (Transport) -------------------------------------------------

    def open(self, introduction: bytes = b"") -> None:
        if len(introduction) > MAX_INTRODUCTION:
            raise ValueError(
                f"an introduction of {len(introduction)} bytes exceeds the maximum of "
                f"{MAX_INTRODUCTION}"
            )
        self.core.introduce(bytes(introduction))
        self._call(self.core.start)

    def send(self, payload: bytes) -> None:
        if len(payload) > self.core.max_message:
            raise ValueError(
                f"payload of {len(payload)} bytes exceeds the {self.name} transport's "
                f"maximum of {self.core.max_message}"
            )
        self._call(lambda now: self.core.send(payload, now), caller_errors=True)

    def send_ephemeral(self, payload: bytes) -> None:
        self._call(lambda now: self.core.send_ephemeral(payload, now), caller_errors=True)

    def provide_board_state(self, request: int, state: bytes) -> None:
        self._call(lambda now: self.core.provide_board_state(request, state, now))

    def close(self) -> None:
        """Leave as the protocol says; the carrier is released once the core has finished."""
        if not self.core.finished:
            self._call(self.core.leave)
        else:
            self._release()

    def counters(self) -> dict[str, int]:
        counters = dict(self.core.counters())
        counters["internal_errors"] = self.internal_errors
        counters["sealed_dropped"] = self.sealed_dropped
        if self._channel is not None:
            counters.update(self._channel.counters())
        return counters

    # -- the carrier's side ------------------------------------------------------------------

    def datagram_received(self, data: bytes, addr: Address) -> None:
        # A session in clear, a datagram in clear: the core's as it is (the usual case).
        opened = data if self._channel is None and not is_sealed(data) else self._opened(data)
        if opened is not None:
            # _call's work, inlined: one datagram is the carrier's most frequent call (issue
            # 18). No caller's mistake can come from here: every exception is the core's.
            try:
                self.core.receive_datagram(opened, addr, self._carrier.now())
            except Exception:
                self._contain()
            finally:
                self._pump()
        elif self._events.pending():
            self._pump()  # the person is told (a refusal of a new kind)

    def _opened(self, data: bytes) -> bytes | None:
        """What the core is to read of ``data``: opened from its envelope in a private
        session, as it is otherwise; None if refused (counted; the person told once, through
        an event the caller's pump dispatches)."""
        if self._channel is None:
            if not is_sealed(data):
                return data
            self.sealed_dropped += 1
            message = SEALED_IN_PUBLIC if self.sealed_dropped == 1 else None
        else:
            opened, message = self._channel.open(data)
            if opened is not None:
                return opened
        if message is not None:
            self._events.failure(message)
        return None

    def datagrams_received(self, batch: Sequence[tuple[bytes, Address]]) -> None:
        """Several datagrams read at once, each to the core, then one pump: the sends, events
        and timer of the whole batch (the carrier reads a burst in batches)."""

        def receive_all(_: float) -> None:
            for sealed, addr in batch:
                data = self._opened(sealed)
                if data is None:
                    continue
                try:
                    self.core.receive_datagram(data, addr, self._carrier.now())
                except Exception:
                    self._contain()  # one bad datagram must not cost the rest of the batch

        self._call(receive_all)

    def timer_fired(self) -> None:
        self._call(self.core.handle_timer)

    # -- pumping -----------------------------------------------------------------------------

    def _call(self, action: Callable[[float], None], caller_errors: bool = False) -> None:
        try:
            action(self._carrier.now())
        except (ValueError, RuntimeError):
            if caller_errors:
                raise  # the caller's mistake, documented: not a bug of the core
            self._contain()
        except Exception:
            self._contain()
        finally:
            self._pump()

    def _contain(self) -> None:
        """Handle an exception escaping the core: a bug."""
        if self._strict:
            raise  # bare: re-raises the exception our caller is handling
        # A bug in a core must not kill the member: report it and keep serving.
        self.internal_errors += 1
        log.error("internal error in the %s core:\n%s", self.name, traceback.format_exc())
        self._events.failure(f"internal error in the {self.name} transport")

    def _pump(self) -> None:
        # Handlers may call send() while we dispatch; that re-enters _call, whose _pump returns
        # at once, and this loop picks up what the send produced.
        if self._pumping:
            return
        self._pumping = True
        try:
            while True:
                try:
                    outgoing = self.core.datagrams_to_send(self._carrier.now())
                except Exception:
                    self._contain()
                    outgoing = []
                channel = self._channel
                for data, dest in outgoing:
                    self._carrier.transmit(data if channel is None else channel.seal(data), dest)
                if not self._events.pending():
                    break
                for event in self._events.drain():
                    self._dispatch(event)
            self._rearm()
        finally:
            self._pumping = False

    def _rearm(self) -> None:
        try:
            finished = self.core.finished
            deadline = None if finished else self.core.get_timer()
        except Exception:
            self._contain()
            finished, deadline = False, None
        self._carrier.set_timer(deadline)
        if finished:
            self._release()

    def _dispatch(self, event: Event) -> None:
        try:
            self._handler(event)
        except Exception:
            if self._strict:
                raise
            log.error("event handler failed on %r:\n%s", event, traceback.format_exc())
            if not isinstance(event, Failure):
                self._events.failure("internal error while handling a transport event")

    def _release(self) -> None:
        if self._released:
            return
        self._released = True
        self._carrier.release()
        if self._on_finished is not None:
            self._on_finished()
