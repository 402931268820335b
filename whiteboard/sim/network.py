"""Virtual clock, N stations, impaired links.

Everything random comes from ``random.Random`` instances seeded from the run's seed, and the
event queue breaks time ties by insertion order, so the same seed gives the same run bit for bit.
No wall clock is read.

Each datagram to each receiver is impaired independently (IP multicast loses per receiver):
loss, duplication, reordering (an extra random delay that lets later datagrams overtake), a
base delay with jitter, and partitions (sets of stations that cannot hear each other until
healed). Stations can crash (all state lost, in-flight datagrams to them dropped) and restart.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import EventHandler, SnapshotProvider
from whiteboard.transport.interface import Address, CoreFactory


@dataclass(frozen=True, slots=True)
class Impairment:
    loss: float = 0.0  # probability a datagram to one receiver is dropped
    dup: float = 0.0  # probability it arrives twice
    reorder: float = 0.0  # probability it is held back so that later datagrams overtake it
    delay_ms: float = 1.0  # one-way base delay
    jitter_ms: float = 0.0  # uniform extra delay in [0, jitter)
    reorder_ms: float = 20.0  # the hold-back of a reordered datagram, uniform in [0, reorder_ms)

    def __post_init__(self) -> None:
        for name in ("loss", "dup", "reorder"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {value}")
        for name in ("delay_ms", "jitter_ms", "reorder_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")


@dataclass(slots=True)
class NetworkStats:
    datagrams_sent: int = 0
    datagrams_delivered: int = 0
    losses_injected: int = 0
    duplicates_injected: int = 0
    reorders_injected: int = 0
    partition_drops: int = 0
    crash_drops: int = 0
    unroutable: int = 0


# (sender index, receiver index, the datagram) for every injected loss
DropObserver = Callable[[int, int, bytes], None]


class SimStation:
    """One simulated host: an address, a core behind a driver, and the carrier for both."""

    def __init__(self, network: SimNetwork, index: int, address: Address) -> None:
        self.network = network
        self.index = index
        self.address = address
        self.driver: CoreDriver | None = None
        self.up = False
        self.incarnation = 0
        self._timer_generation = 0
        self._armed: float | None = None
        self.released = False

    # -- Carrier -----------------------------------------------------------------------------

    def now(self) -> float:
        return self.network.now

    def transmit(self, data: bytes, dest: Address | None) -> None:
        self.network._transmit(self, data, dest)

    def set_timer(self, deadline: float | None) -> None:
        if deadline == self._armed and deadline is not None:
            return  # already armed for that instant: don't pile up stale queue entries
        self._timer_generation += 1
        self._armed = deadline
        if deadline is None or not self.up:
            return
        generation, incarnation = self._timer_generation, self.incarnation
        when = max(deadline, self.network.now)

        def fire() -> None:
            if (
                self.up
                and self.driver is not None
                and generation == self._timer_generation
                and incarnation == self.incarnation
            ):
                self._armed = None
                self.driver.timer_fired()

        self.network.schedule(when, fire)

    def release(self) -> None:
        self.released = True

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def transport(self) -> CoreDriver:
        if self.driver is None:
            raise RuntimeError(f"station {self.index} has no transport")
        return self.driver


class SimNetwork:
    def __init__(self, seed: int, impairment: Impairment | None = None) -> None:
        self.seed = seed
        self.impairment = impairment or Impairment()
        self.now = 0.0
        self.stats = NetworkStats()
        self.stations: list[SimStation] = []
        self._rng = random.Random(f"network:{seed}")
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._sequence = 0
        self._links: dict[tuple[int, int], Impairment] = {}
        self._partition: dict[int, int] | None = None  # station index -> component
        self._by_address: dict[Address, SimStation] = {}
        self.drop_observers: list[DropObserver] = []
        self.events_processed = 0

    # -- building ----------------------------------------------------------------------------

    def add_station(self) -> SimStation:
        index = len(self.stations)
        station = SimStation(self, index, (f"station-{index}", 7000 + index))
        self.stations.append(station)
        self._by_address[station.address] = station
        return station

    def start(
        self,
        station: SimStation,
        *,
        name: str,
        factory: CoreFactory,
        member_id: int,
        params: dict[str, object],
        handler: EventHandler,
        snapshot_provider: SnapshotProvider | None = None,
    ) -> CoreDriver:
        """Boot ``station`` (again, after a crash) with a fresh core, and open it."""
        if station.up:
            raise RuntimeError(f"station {station.index} is already up")
        station.incarnation += 1
        station.up = True
        station.released = False
        rng = random.Random(f"station:{self.seed}:{station.index}:{station.incarnation}")
        station.driver = CoreDriver(
            name,
            factory,
            member_id,
            rng,
            params,
            station,
            handler,
            snapshot_provider,
            strict=True,
        )
        station.driver.open()
        return station.driver

    def crash(self, station: SimStation) -> None:
        """The host dies: its core and everything in flight to it are gone."""
        station.up = False
        station.driver = None
        station.set_timer(None)

    def set_link(self, sender: int, receiver: int, impairment: Impairment) -> None:
        """Override the impairment of one direction of one link."""
        self._links[(sender, receiver)] = impairment

    def partition(self, components: Iterable[Iterable[int]]) -> None:
        """Split the network: stations hear only those in their own component. Stations not
        named form one more component together."""
        mapping: dict[int, int] = {}
        for number, members in enumerate(components):
            for index in members:
                mapping[index] = number
        self._partition = mapping

    def heal(self) -> None:
        self._partition = None

    # -- running -----------------------------------------------------------------------------

    def schedule(self, when: float, action: Callable[[], None]) -> None:
        self._sequence += 1
        heapq.heappush(self._queue, (when, self._sequence, action))

    def run(
        self,
        until: float,
        stop: Callable[[], bool] | None = None,
        max_events: int = 50_000_000,
    ) -> bool:
        """Process events up to virtual time ``until``; return True if ``stop`` became true.

        ``stop`` is checked after every event. ``max_events`` bounds a runaway core."""
        while self._queue and self._queue[0][0] <= until:
            when, _, action = heapq.heappop(self._queue)
            self.now = when
            action()
            self.events_processed += 1
            if stop is not None and stop():
                return True
            if self.events_processed >= max_events:
                raise RuntimeError(f"simulation exceeded {max_events} events")
        self.now = max(self.now, until)
        return False

    # -- the medium --------------------------------------------------------------------------

    def _transmit(self, sender: SimStation, data: bytes, dest: Address | None) -> None:
        self.stats.datagrams_sent += 1
        if dest is None:
            # IP_MULTICAST_LOOP: the sender hears its own datagram, unimpaired.
            self._arrive_later(sender, sender, data, self.now)
            for receiver in self.stations:
                if receiver is not sender:
                    self._impair(sender, receiver, data)
        else:
            receiver_or_none = self._by_address.get(dest)
            if receiver_or_none is None:
                self.stats.unroutable += 1
                return
            self._impair(sender, receiver_or_none, data)

    def _impair(self, sender: SimStation, receiver: SimStation, data: bytes) -> None:
        if self._partition is not None and self._partition.get(
            sender.index, -1
        ) != self._partition.get(receiver.index, -1):
            self.stats.partition_drops += 1
            return
        link = self._links.get((sender.index, receiver.index), self.impairment)
        rng = self._rng
        if link.loss and rng.random() < link.loss:
            self.stats.losses_injected += 1
            for observer in self.drop_observers:
                observer(sender.index, receiver.index, data)
            return
        delay = link.delay_ms + (rng.random() * link.jitter_ms if link.jitter_ms else 0.0)
        if link.reorder and rng.random() < link.reorder:
            self.stats.reorders_injected += 1
            delay += rng.random() * link.reorder_ms
        self._arrive_later(sender, receiver, data, self.now + delay / 1000.0)
        if link.dup and rng.random() < link.dup:
            self.stats.duplicates_injected += 1
            extra = rng.random() * max(link.jitter_ms, 1.0)
            self._arrive_later(sender, receiver, data, self.now + (delay + extra) / 1000.0)

    def _arrive_later(
        self, sender: SimStation, receiver: SimStation, data: bytes, when: float
    ) -> None:
        incarnation = receiver.incarnation
        source = sender.address

        def arrive() -> None:
            if not receiver.up or receiver.incarnation != incarnation or receiver.driver is None:
                self.stats.crash_drops += 1
                return
            self.stats.datagrams_delivered += 1
            receiver.driver.datagram_received(data, source)

        self.schedule(when, arrive)
