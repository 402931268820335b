"""Virtual clock, N stations, impaired links.

Everything random comes from ``random.Random`` instances seeded from the run's seed, and the
event queue breaks time ties by insertion order, so the same seed gives the same run bit for bit.
No wall clock is read.

Each datagram to each receiver is impaired independently (IP multicast loses per receiver):
loss, duplication, reordering (an extra random delay that lets later datagrams overtake), a
base delay with jitter, and partitions (sets of stations that cannot hear each other until
healed). A share of each sender's datagrams may also be lost at the sender, before the
network (``source_loss``: its link or its host's queue), so that every receiver misses them
together, the case a NACK suppression scheme is built for. Stations can crash (all state
lost, in-flight datagrams to them dropped) and restart.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from whiteboard.security.channel import PrivateChannel
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import EventHandler
from whiteboard.transport.interface import Address, CoreFactory


@dataclass(frozen=True, slots=True)
class Impairment:
    loss: float = 0.0  # probability a datagram to one receiver is dropped
    dup: float = 0.0  # probability it arrives twice
    reorder: float = 0.0  # probability it is held back so that later datagrams overtake it
    delay_ms: float = 1.0  # one-way base delay
    jitter_ms: float = 0.0  # uniform extra delay in [0, jitter)
    reorder_ms: float = 20.0  # the hold-back of a reordered datagram, uniform in [0, reorder_ms)
    # Probability a datagram is lost at its sender, before the network: no receiver gets it
    # (the sender still hears its own multicast, looped back in its host).
    source_loss: float = 0.0

    def __post_init__(self) -> None:
        for name in ("loss", "dup", "reorder", "source_loss"):
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
    source_losses_injected: int = 0  # datagrams dropped at their sender (every receiver)
    duplicates_injected: int = 0
    reorders_injected: int = 0
    partition_drops: int = 0
    crash_drops: int = 0
    unroutable: int = 0


# (sender index, receiver index, the datagram) for every injected loss
DropObserver = Callable[[int, int, bytes], None]
# (sender index, the datagram) for every datagram lost at its sender (source_loss)
SourceDropObserver = Callable[[int, bytes], None]


class SimStation:
    """One simulated host: an address, a core behind a driver, and the carrier for both.

    Its clock may run off the network's: ``local = network.now * (1 + drift) + offset``."""

    def __init__(self, network: SimNetwork, index: int, address: Address) -> None:
        self.network = network
        self.index = index
        self.address = address
        self.driver: CoreDriver | None = None
        self.up = False
        self.incarnation = 0
        self.released = False
        self.clock_offset = 0.0
        self.clock_drift = 0.0
        self._deadline: float | None = None  # local time the core wants to be woken
        self._scheduled_at: float | None = None  # network time of the pending wake-up
        self._token = 0  # invalidates superseded wake-ups
        self._last_wake = -1.0
        self._wakes_now = 0

    # -- Carrier -----------------------------------------------------------------------------

    def now(self) -> float:
        if not self.clock_drift and not self.clock_offset:
            return self.network.now  # a true clock: the same number, without the arithmetic
        return self.network.now * (1.0 + self.clock_drift) + self.clock_offset

    def transmit(self, data: bytes, dest: Address | None) -> None:
        self.network._transmit(self, data, dest)

    def set_timer(self, deadline: float | None) -> None:
        self._deadline = deadline
        if deadline is None or not self.up:
            return
        when = max(self._to_network_time(deadline), self.network.now)
        if self._scheduled_at is not None and self._scheduled_at <= when:
            return  # an earlier wake-up is pending; it re-arms for this deadline
        self._schedule(when)

    def release(self) -> None:
        self.released = True

    # -- internals ---------------------------------------------------------------------------

    def _to_network_time(self, local: float) -> float:
        """The first network time at which this station's clock reads ``local`` or later.

        The division can land a hair early (float rounding, with an offset and a drift): a
        station woken there finds its deadline not yet due, asks for the same instant, and
        would spin. So the result is moved up by a few units in the last place until it is
        not early (never with a true clock, where the division is exact)."""
        if not self.clock_drift and not self.clock_offset:
            return local  # a true clock: exact
        scale = 1.0 + self.clock_drift
        when = (local - self.clock_offset) / scale
        for _ in range(_ROUNDING_STEPS):
            if when * scale + self.clock_offset >= local:
                break
            when = math.nextafter(when, math.inf)
        return when

    def _schedule(self, when: float) -> None:
        self._token += 1
        token = self._token
        self._scheduled_at = when
        self.network.schedule(when, lambda: self._wake(token))

    def _wake(self, token: int) -> None:
        if token != self._token or not self.up or self.driver is None:
            return
        self._scheduled_at = None
        if self._deadline is None:
            return
        when = self._to_network_time(self._deadline)
        if when > self.network.now:
            self._schedule(when)  # the deadline moved later since this wake-up was queued
            return
        if self.network.now == self._last_wake:
            self._wakes_now += 1
            if self._wakes_now > SPIN_LIMIT:
                # A core whose timer is always due but never acted on would spin forever at
                # one instant (a rounding mismatch between get_timer and handle_timer, say).
                raise RuntimeError(
                    f"station {self.index}'s core asked to be woken {SPIN_LIMIT} times at "
                    f"t={self.network.now} without its deadline moving"
                )
        else:
            self._last_wake, self._wakes_now = self.network.now, 0
        self.driver.timer_fired()

    def _stop(self) -> None:
        self.up = False
        self.driver = None
        self._deadline = self._scheduled_at = None
        self._token += 1

    @property
    def transport(self) -> CoreDriver:
        if self.driver is None:
            raise RuntimeError(f"station {self.index} has no transport")
        return self.driver


SPIN_LIMIT = 10_000  # timer wake-ups at one instant before the simulator calls it a bug
# Units in the last place a wake-up time may move so as not to be early (two or three do).
_ROUNDING_STEPS = 64

# The largest UDP payload that crosses an Ethernet LAN unfragmented (1500 - IP 20 - UDP 8).
# A core that sends more would work on loopback and fail on a real LAN, so here it is an error.
DEFAULT_MTU = 1472


class _Fanout:
    """One multicast datagram's arrivals at one instant, in order (``SimNetwork.run``)."""

    __slots__ = ("data", "next", "receivers", "source")

    def __init__(self, receivers: list[tuple[SimStation, int]], data: bytes, source: Address):
        self.receivers = receivers
        self.data = data
        self.source = source
        self.next = 0  # the first receiver not yet reached

    def __call__(self) -> None:
        raise AssertionError("SimNetwork.run delivers a fan-out itself")


class SimNetwork:
    def __init__(
        self, seed: int, impairment: Impairment | None = None, mtu: int = DEFAULT_MTU
    ) -> None:
        self.seed = seed
        self.mtu = mtu
        self.impairment = impairment or Impairment()
        self.now = 0.0
        self.stats = NetworkStats()
        self.stations: list[SimStation] = []
        self._rng = random.Random(f"network:{seed}")
        # Source losses draw from their own stream: the per-receiver draws stay as they are.
        self._source_rng = random.Random(f"source:{seed}")
        self._queue: list[tuple[float, int, Callable[[], object]]] = []
        self._sequence = 0
        self._links: dict[tuple[int, int], Impairment] = {}
        self._partition: dict[int, int] | None = None  # station index -> component
        self._by_address: dict[Address, SimStation] = {}
        self.drop_observers: list[DropObserver] = []
        self.source_drop_observers: list[SourceDropObserver] = []
        self.events_processed = 0
        # The side channel (coreapi/ephemeral.py): the datagrams ``side_channel`` tells apart
        # (a transport's description says how) are impaired by ``side_impairment`` instead,
        # drawn from a stream of their own, so that the reliable traffic's draws are the same
        # whether or not members use it. Partitions and crashes apply to them alike.
        self.side_channel: Callable[[bytes], bool] | None = None
        self.side_impairment = Impairment()
        self._side_rng = random.Random(f"side:{seed}")
        self.side_losses_injected = 0

    # -- building ----------------------------------------------------------------------------

    def add_station(self) -> SimStation:
        index = len(self.stations)
        # Benchmarking addresses (RFC 2544, 198.18.0.0/15): never routed, plainly IPv4, so a
        # core may encode them as it would real ones.
        station = SimStation(self, index, (f"198.18.{index // 250}.{index % 250 + 1}", 7000))
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
        channel: PrivateChannel | None = None,
    ) -> CoreDriver:
        """Boot ``station`` (again, after a crash) with a fresh core, and open it; with
        ``channel``, in a private session (its datagrams sealed)."""
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
            strict=True,
            channel=channel,
        )
        station.driver.open()
        return station.driver

    def crash(self, station: SimStation) -> None:
        """The host dies: its core and everything in flight to it are gone."""
        station._stop()

    def set_clock(self, station: SimStation, offset: float, drift: float = 0.0) -> None:
        """Make ``station``'s clock read ``offset`` seconds ahead, gaining ``drift`` s/s."""
        if not -0.01 < drift < 0.01:
            raise ValueError("clock drift must be under 1% (10,000 ppm)")
        station.clock_offset, station.clock_drift = offset, drift

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

    def schedule(self, when: float, action: Callable[[], object]) -> None:
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
        queue = self._queue
        while queue and queue[0][0] <= until:
            when, sequence, action = heapq.heappop(queue)
            self.now = when
            if type(action) is _Fanout:
                # One multicast datagram's arrivals at one instant: each is an event as if
                # queued alone (the same order, the same count, ``stop`` after each).
                receivers, data, source = action.receivers, action.data, action.source
                while action.next < len(receivers):
                    receiver, incarnation = receivers[action.next]
                    action.next += 1
                    self._arrive(receiver, incarnation, data, source)
                    self.events_processed += 1
                    if stop is not None and stop():
                        if action.next < len(receivers):  # the rest, later
                            rest: tuple[float, int, Callable[[], object]] = (when, sequence, action)
                            heapq.heappush(queue, rest)
                        return True
                    if self.events_processed >= max_events:
                        raise RuntimeError(f"simulation exceeded {max_events} events")
                continue
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
        if len(data) > self.mtu:
            raise ValueError(
                f"station {sender.index} sent a {len(data)}-byte datagram; the network's MTU "
                f"allows {self.mtu}"
            )
        self.stats.datagrams_sent += 1
        if self.side_channel is not None and self.side_channel(data):
            self._transmit_side(sender, data, dest)
            return
        lost_at_source = self._lost_at_source(sender, data)
        if dest is None:
            # IP_MULTICAST_LOOP: the sender hears its own datagram, unimpaired.
            self._arrive_later(sender, sender, data, self.now)
            if not lost_at_source and self._uniform():
                self._fan_out(sender, data)
                return
            for receiver in self.stations:
                # A host that is down hears nothing: no loss is rolled (or counted) for it.
                if receiver is not sender and receiver.up:
                    self._deliver_or_drop(sender, receiver, data, lost_at_source)
        else:
            receiver_or_none = self._by_address.get(dest)
            if receiver_or_none is None:
                self.stats.unroutable += 1
            elif not receiver_or_none.up:
                self.stats.crash_drops += 1
            else:
                self._deliver_or_drop(sender, receiver_or_none, data, lost_at_source)

    def _transmit_side(self, sender: SimStation, data: bytes, dest: Address | None) -> None:
        receivers = [self._by_address.get(dest)] if dest is not None else self.stations
        impairment, rng = self.side_impairment, self._side_rng
        for receiver in receivers:
            if receiver is None or not receiver.up or self._parted(sender, receiver):
                continue
            if receiver is not sender and impairment.loss and rng.random() < impairment.loss:
                self.side_losses_injected += 1
                continue
            jitter = rng.random() * impairment.jitter_ms if impairment.jitter_ms else 0.0
            delay = 0.0 if receiver is sender else (impairment.delay_ms + jitter) / 1000.0
            self._arrive_later(sender, receiver, data, self.now + delay)

    def _parted(self, sender: SimStation, receiver: SimStation) -> bool:
        partition = self._partition
        return partition is not None and partition.get(sender.index, -1) != partition.get(
            receiver.index, -1
        )

    def _lost_at_source(self, sender: SimStation, data: bytes) -> bool:
        """Whether ``data`` is lost at its sender (``source_loss``: the sender's link or its
        host's queue), before any receiver's own impairment is drawn. One draw per datagram,
        from a stream of its own: with no source loss, no draw at all."""
        share = self.impairment.source_loss
        if not share or self._source_rng.random() >= share:
            return False
        self.stats.source_losses_injected += 1
        for observer in self.source_drop_observers:
            observer(sender.index, data)
        return True

    def _deliver_or_drop(
        self, sender: SimStation, receiver: SimStation, data: bytes, lost_at_source: bool
    ) -> None:
        if not lost_at_source:
            self._impair(sender, receiver, data)
            return
        # Every receiver misses it, as if lost on its own link (recoveries are measured the
        # same way), but nothing is drawn for it and it is not a per-receiver loss.
        for observer in self.drop_observers:
            observer(sender.index, receiver.index, data)

    def _uniform(self) -> bool:
        """Whether every receiver of a multicast datagram that is not lost gets it at the same
        instant, as ``_impair`` would have it: no partition, no link of its own, no jitter,
        duplication or reordering (and ``_impair`` neither wrapped, as some tests do, nor
        overridden)."""
        link = self.impairment
        return not (
            self._partition is not None
            or self._links
            or link.jitter_ms
            or link.dup
            or link.reorder
            or "_impair" in self.__dict__
            or type(self)._impair is not SimNetwork._impair
        )

    def _fan_out(self, sender: SimStation, data: bytes) -> None:
        """``_impair`` for every other station that is up, in order (the same loss draws and
        observers), with the arrivals queued as one entry: ``run`` takes them one by one, so
        the events, their order and their count are those of one entry each (issue 18: the
        queue's work per arrival was a tenth of a 100-member run)."""
        link = self.impairment
        loss = link.loss
        receivers: list[tuple[SimStation, int]] = []
        for receiver in self.stations:
            if receiver is sender or not receiver.up:
                continue
            if loss and self._lost(sender, receiver, loss, data):
                continue
            receivers.append((receiver, receiver.incarnation))
        if receivers:
            delay = link.delay_ms + 0.0  # as _impair reckons it, to the last bit
            self.schedule(self.now + delay / 1000.0, _Fanout(receivers, data, sender.address))

    def _impair(self, sender: SimStation, receiver: SimStation, data: bytes) -> None:
        if self._parted(sender, receiver):
            self.stats.partition_drops += 1
            return
        link = self._links.get((sender.index, receiver.index), self.impairment)
        rng = self._rng
        if link.loss and self._lost(sender, receiver, link.loss, data):
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

    def _lost(self, sender: SimStation, receiver: SimStation, loss: float, data: bytes) -> bool:
        """One draw of ``loss`` on the link from ``sender`` to ``receiver``; a loss is
        counted and told to the drop observers."""
        if self._rng.random() >= loss:
            return False
        self.stats.losses_injected += 1
        for observer in self.drop_observers:
            observer(sender.index, receiver.index, data)
        return True

    def _arrive_later(
        self, sender: SimStation, receiver: SimStation, data: bytes, when: float
    ) -> None:
        incarnation = receiver.incarnation
        source = sender.address
        self.schedule(when, lambda: self._arrive(receiver, incarnation, data, source))

    def _arrive(
        self, receiver: SimStation, incarnation: int, data: bytes, source: Address
    ) -> None:
        """A datagram reaches ``receiver``, unless its host went down or restarted since it
        was sent."""
        driver = receiver.driver
        if not receiver.up or receiver.incarnation != incarnation or driver is None:
            self.stats.crash_drops += 1
            return
        self.stats.datagrams_delivered += 1
        driver.datagram_received(data, source)
