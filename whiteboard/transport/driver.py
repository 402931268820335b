"""Pumps a sans-I/O core: the one place that moves datagrams, timers and events between a core
and whatever carries its datagrams (the real multicast runtime or the simulator).

A :class:`CoreDriver` *is* the application's :class:`~whiteboard.transport.interface.Transport`.
"""

from __future__ import annotations

import logging
import random
import traceback
from collections.abc import Callable, Mapping
from typing import Protocol

from whiteboard.transport.events import EventHandler, EventQueue, Failure, SnapshotProvider
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


class CoreDriver:
    """Wires one core to one carrier and one event handler.

    ``strict`` re-raises an exception escaping the core (the simulator's tests want bugs loud);
    otherwise it is logged, counted and reported as a :class:`Failure`, and the member lives on.
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
        snapshot_provider: SnapshotProvider | None = None,
        strict: bool = False,
        on_finished: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self._carrier = carrier
        self._handler = handler
        self._strict = strict
        self._on_finished = on_finished
        self._events = EventQueue(clock=carrier.now)
        if snapshot_provider is not None:
            self._events.snapshot_provider = snapshot_provider
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
    def finished(self) -> bool:
        return self.core.finished

    # -- the application's side (Transport) -------------------------------------------------

    def open(self) -> None:
        self._call(self.core.start)

    def send(self, payload: bytes) -> None:
        if len(payload) > self.core.max_payload:
            raise ValueError(
                f"payload of {len(payload)} bytes exceeds the {self.name} transport's "
                f"maximum of {self.core.max_payload}"
            )
        self._call(lambda now: self.core.send(payload, now))

    def close(self) -> None:
        """Leave as the protocol says; the carrier is released once the core has finished."""
        if not self.core.finished:
            self._call(self.core.leave)
        else:
            self._release()

    def counters(self) -> dict[str, int]:
        counters = dict(self.core.counters())
        counters["internal_errors"] = self.internal_errors
        return counters

    # -- the carrier's side ------------------------------------------------------------------

    def datagram_received(self, data: bytes, addr: Address) -> None:
        self._call(lambda now: self.core.receive_datagram(data, addr, now))

    def timer_fired(self) -> None:
        self._call(self.core.handle_timer)

    # -- pumping -----------------------------------------------------------------------------

    def _call(self, action: Callable[[float], None]) -> None:
        try:
            action(self._carrier.now())
        except Exception as exc:
            if self._strict:
                raise
            # A bug in a core must not kill the member: report it and keep serving.
            self.internal_errors += 1
            log.error("internal error in the %s core:\n%s", self.name, traceback.format_exc())
            self._events.failure(f"internal error in the {self.name} transport: {exc!r}")
        self._pump()

    def _pump(self) -> None:
        # Handlers may call send() while we dispatch; that re-enters _call, whose _pump returns
        # at once, and this loop picks up what the send produced.
        if self._pumping:
            return
        self._pumping = True
        try:
            while True:
                now = self._carrier.now()
                for data, dest in self.core.datagrams_to_send(now):
                    self._carrier.transmit(data, dest)
                dispatched = False
                for event in self._events.drain():
                    dispatched = True
                    self._dispatch(event)
                if not dispatched:
                    break
            if self.core.finished:
                self._carrier.set_timer(None)
                self._release()
            else:
                self._carrier.set_timer(self.core.get_timer())
        finally:
            self._pumping = False

    def _dispatch(self, event: object) -> None:
        try:
            self._handler(event)  # type: ignore[arg-type]
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
