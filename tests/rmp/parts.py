"""Helpers for testing one part of the RMP core alone (RR-2100): a ``Shared`` context with an
event queue for upper layer, set to the phase the test wants, and its outbox decoded.

The phase is set directly here: in the core only ``RmpCore._enter`` changes it, but a part
test stands in for the core."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rmp.context import Phase, Shared
from rmp.params import params_from_mapping
from rmp.stations import Station
from rmp.wire import RmpPacket, decode
from tests.rmp.core_harness import SEED_PROFILE, addr_of
from whiteboard.transport.events import Event, EventQueue, ProtocolEvent
from whiteboard.transport.interface import Address


class Context:
    """A ``Shared`` as a core would build it, its upper layer, and what it has emitted."""

    def __init__(
        self, member_id: int, phase: Phase = Phase.READY, seed: int = 0, **params: object
    ) -> None:
        self.now = 0.0
        self.upper = EventQueue(clock=lambda: self.now)
        merged: dict[str, object] = dict(SEED_PROFILE)
        merged.update(params)
        self.shared = Shared(
            member_id, self.upper, random.Random(seed), params_from_mapping(merged)
        )
        self.shared.phase = phase
        self.events: list[Event] = []

    def station(self, ident: int, last_valid: int = 0) -> Station:
        """Add ``ident`` to the station list, heard from its usual address."""
        station = self.shared.stations.add(ident, last_valid, self.now)
        assert station is not None
        station.address = addr_of(ident)
        return station

    def sent(self) -> list[tuple[RmpPacket, Address | None]]:
        """The datagrams emitted since the last call, decoded."""
        out, self.shared.outbox = self.shared.outbox, []
        return [(decode(data), to) for data, to in out]

    def drain(self) -> list[Event]:
        self.events.extend(self.upper.drain())
        return self.events

    def protocol_events(self, name: str) -> list[ProtocolEvent]:
        return [e for e in self.drain() if isinstance(e, ProtocolEvent) and e.name == name]


@dataclass
class Consumed:
    """Records what a part hands on (the core's ``_consume``): station, sequence, payload."""

    items: list[tuple[int, int, bytes]] = field(default_factory=list)

    def __call__(self, station: Station, packet: RmpPacket, now: float) -> None:
        assert packet.data is not None
        self.items.append((station.ident, station.last_valid, packet.data))

    @property
    def payloads(self) -> list[bytes]:
        return [payload for _, _, payload in self.items]
