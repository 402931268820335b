"""The list of active stations (RR-2100 §2.1) and the depth virtual queue (§2.5)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from coreapi import MemberState
from rmp.wire import RmpPacket

MAX_STATIONS = 1024  # bounds per-station state whatever the network sends
MAX_WAITING = 4096  # out-of-sequence packets held per station
MAX_GAP = 4096  # packets one station may be missing from another before it gives up on them


@dataclass(slots=True)
class Missing:
    """A packet we lack and are asking for (§2.6)."""

    detected_at: float
    next_nack_at: float
    nack_number: int = 0  # times our NACK for it has been sent (§4.2.2)


@dataclass(slots=True)
class Waiting:
    """An out-of-sequence packet (§2.3), delivered after WI if the gap is not filled."""

    packet: RmpPacket
    deliver_at: float


@dataclass(slots=True)
class Station:
    """One entry of the active station list (§2.1), plus what the protocol keeps per peer."""

    ident: int
    last_valid: int  # §2.1: the last in-sequence number received (unbounded, see coreapi.seqnum)
    depth: int  # §2.5: our estimate of its place in the virtual queue
    last_heard: float
    address: tuple[str, int] | None = None
    confirmed: bool = True  # §2.1 A flag: its last_valid went out in a multicast data packet
    # (True at first: nothing received yet, nothing to confirm; False whenever it advances)
    confirmed_mine: int = 0  # the highest of our sequence numbers it confirmed (§2.4)
    state: MemberState = MemberState.ACTIVE
    waiting: dict[int, Waiting] = field(default_factory=dict)
    missing: dict[int, Missing] = field(default_factory=dict)
    delivered_ahead: set[int] = field(default_factory=set)  # delivered at WI expiry (§2.3)


class StationList:
    """The stations we know, and our own depth (§2.5)."""

    def __init__(self, own: int) -> None:
        self.own = own
        self.depth = 0
        self._stations: dict[int, Station] = {}

    def __len__(self) -> int:
        return len(self._stations)

    def __contains__(self, ident: object) -> bool:
        return ident in self._stations

    def __iter__(self) -> Iterator[Station]:
        return iter(list(self._stations.values()))

    def get(self, ident: int) -> Station | None:
        return self._stations.get(ident)

    def add(self, ident: int, last_valid: int, now: float) -> Station | None:
        """A new station goes to the back of the queue; None if the list is full."""
        if len(self._stations) >= MAX_STATIONS:
            return None
        depth = max((s.depth for s in self._stations.values()), default=self.depth) + 1
        station = Station(ident, last_valid, max(depth, self.depth + 1), now)
        self._stations[ident] = station
        return station

    def remove(self, ident: int) -> None:
        self._stations.pop(ident, None)

    def joined(self) -> None:
        """§2.5: on joining, our depth is the number of active stations plus one."""
        self.depth = len(self._stations) + 1

    def emitted(self, ident: int) -> None:
        """Station ``ident`` (or we) multicast a data packet: it goes to the front with depth 0,
        and everyone who was in front of it moves back by one (§2.5)."""
        sender_depth = self.depth if ident == self.own else self._depth_of(ident)
        if sender_depth is None:
            return
        if ident != self.own and sender_depth > self.depth:
            self.depth += 1  # "incremented ... from an other station which had a higher depth"
        for station in self._stations.values():
            if station.ident != ident and station.depth < sender_depth:
                station.depth += 1
        if ident == self.own:
            self.depth = 0
        else:
            station = self._stations[ident]
            station.depth = 0

    def _depth_of(self, ident: int) -> int | None:
        station = self._stations.get(ident)
        return station.depth if station is not None else None
