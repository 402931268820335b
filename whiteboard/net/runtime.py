"""Drives one core over real UDP multicast: the :class:`~whiteboard.transport.driver.Carrier`
for the network, with seeded tx/rx loss injection for tests and demos (the kernel here has no
netem; NORM and Aeron inject loss in the same place)."""

from __future__ import annotations

import errno
import logging
import random
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from whiteboard.net.gathering import GATHER_S, ReadGathering
from whiteboard.net.reactor import Reactor, TimerHandle
from whiteboard.net.sockets import (
    GroupAddress,
    check_interface,
    open_group_socket,
    open_unicast_socket,
    receive_buffer_size,
)
from whiteboard.security import SessionKey
from whiteboard.security.channel import ETHERNET_DATAGRAM
from whiteboard.transport.driver import CoreDriver, private_channel
from whiteboard.transport.events import EventHandler
from whiteboard.transport.interface import Address
from whiteboard.transport.registry import core_factory, describe

log = logging.getLogger(__name__)

MAX_READS_PER_WAKEUP = 512  # drain the socket, but let the UI breathe between batches
# ... and never for longer than this in one loop turn, whatever each datagram costs the core: a
# flood (forged or not) must leave the loop free to see a signal, a timer or the UI in time
# (issue 17: SIGINT and SIGTERM were ignored for 8-12 s). What is unread stays in the socket.
MAX_READ_SECONDS_PER_WAKEUP = 0.05
READ_BATCH = 32  # datagrams the core takes between two pumps (a batch is read in well under 1 ms)


@dataclass(frozen=True, slots=True)
class NetConfig:
    group: GroupAddress
    iface: str | None = None  # IPv4 address of the interface; None: the system's choice
    ttl: int = 1
    loopback: bool = True  # hear members on this host (and our own datagrams)
    tx_loss: float = 0.0  # seeded probability of dropping an outgoing datagram
    rx_loss: float = 0.0  # ... an incoming one
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("tx_loss", "rx_loss"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1), got {value}")


@dataclass(slots=True)
class CarrierStats:
    tx_loss_injected: int = 0
    rx_loss_injected: int = 0
    send_errors: int = 0
    receive_buffer: int = 0  # bytes the kernel granted per socket (it may cap what we ask)


class MulticastCarrier:
    def __init__(self, config: NetConfig, reactor: Reactor) -> None:
        self.config = config
        self.reactor = reactor
        self.stats = CarrierStats()
        self.driver: CoreDriver | None = None
        # One generator per direction, so that which datagrams are dropped on the way in does
        # not depend on how sends and receives happen to interleave.
        self._tx_rng = random.Random(f"tx:{config.seed}")
        self._rx_rng = random.Random(f"rx:{config.seed}")
        iface = check_interface(config.iface)
        self._group_socket = open_group_socket(config.group, iface)
        try:
            self._unicast_socket = open_unicast_socket(iface, config.ttl, config.loopback)
        except OSError:
            self._group_socket.close()
            raise
        self.stats.receive_buffer = min(
            receive_buffer_size(self._group_socket), receive_buffer_size(self._unicast_socket)
        )
        self._timer: TimerHandle | None = None
        self._timer_at: float | None = None  # when the armed timer fires
        self._deadline: float | None = None  # when the core wants to be woken
        self._closed = False
        self._gathering = {sock.fileno(): ReadGathering() for sock in self._sockets()}
        self._resumes: dict[int, TimerHandle] = {}  # sockets left unread a while (gathering)
        for sock in self._sockets():
            self._watch(sock)

    @property
    def local_address(self) -> Address:
        host, port = self._unicast_socket.getsockname()
        return host, port

    # -- Carrier -----------------------------------------------------------------------------

    def now(self) -> float:
        return self.reactor.time()

    def transmit(self, data: bytes, dest: Address | None) -> None:
        if self._closed:
            return
        if self.config.tx_loss and self._tx_rng.random() < self.config.tx_loss:
            self.stats.tx_loss_injected += 1
            return
        target = dest if dest is not None else (self.config.group.host, self.config.group.port)
        try:
            self._unicast_socket.sendto(data, target)
        except OSError as exc:
            # A full send buffer or an unreachable peer is a loss like any other: the protocol
            # repairs it. Never let it kill the member.
            self.stats.send_errors += 1
            if exc.errno not in (errno.EAGAIN, errno.ENOBUFS, errno.ECONNREFUSED):
                log.warning("sending to %s failed: %s", target, exc)

    def set_timer(self, deadline: float | None) -> None:
        self._deadline = deadline
        if deadline is None or self._closed:
            self._cancel_timer()
            return
        if self._timer_at is not None and self._timer_at <= deadline:
            return  # the armed timer comes first; _fire re-arms for the later deadline
        self._cancel_timer()
        self._arm(deadline)

    def release(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._cancel_timer()
        for resume in self._resumes.values():
            resume.cancel()
        self._resumes.clear()
        for sock in self._sockets():
            self.reactor.remove_reader(sock)
            sock.close()

    # -- internals ---------------------------------------------------------------------------

    def _sockets(self) -> tuple[socket.socket, socket.socket]:
        return self._group_socket, self._unicast_socket

    def _watch(self, sock: socket.socket) -> None:
        self.reactor.add_reader(sock, lambda: self._readable(sock))

    def _resume(self, sock: socket.socket) -> None:
        del self._resumes[sock.fileno()]
        if not self._closed:
            self._watch(sock)
            self._readable(sock)  # what gathered meanwhile, at once

    def _arm(self, when: float) -> None:
        self._timer_at = when
        self._timer = self.reactor.call_at(when, self._fire)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_at = None

    def _fire(self) -> None:
        # Re-arming a timer on every datagram would churn (a QTimer each time in the app), so
        # set_timer only ever brings the timer forward; here a later deadline is honoured.
        self._timer = self._timer_at = None
        if self._closed or self.driver is None or self._deadline is None:
            return
        if self._deadline > self.reactor.time():
            self._arm(self._deadline)
            return
        self.driver.timer_fired()

    def _readable(self, sock: socket.socket) -> None:
        # Drain until the socket is empty (one datagram per wake-up loses most of a burst), up
        # to a bounded batch: the loop comes back for the rest on its next turn. The core takes
        # READ_BATCH datagrams at a time and is pumped (sends, events, timer) once per batch,
        # not once per datagram (issue 17: the pump was a third of a member's work per packet).
        give_back_at = time.monotonic() + MAX_READ_SECONDS_PER_WAKEUP
        count = 0
        for _ in range(MAX_READS_PER_WAKEUP // READ_BATCH):
            batch, drained = self._read(sock)
            count += len(batch)
            if batch and self.driver is not None and not self._closed:
                self.driver.datagrams_received(batch)
            if self._closed or time.monotonic() >= give_back_at:
                return
            if drained:
                self._gather(sock, count)
                return

    def _gather(self, sock: socket.socket, count: int) -> None:
        """The socket ran dry: under a flood, leave it unread a while (net/gathering.py)."""
        key = sock.fileno()
        now = self.reactor.time()
        if key in self._resumes or not self._gathering[key].read(now, count):
            return
        self.reactor.remove_reader(sock)
        self._resumes[key] = self.reactor.call_at(now + GATHER_S, lambda: self._resume(sock))

    def _read(self, sock: socket.socket) -> tuple[list[tuple[bytes, Address]], bool]:
        """Up to READ_BATCH datagrams, and whether the socket ran dry (or failed) first."""
        batch: list[tuple[bytes, Address]] = []
        while len(batch) < READ_BATCH:
            try:
                data, addr = sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return batch, True
            except OSError as exc:
                log.warning("receiving failed: %s", exc)
                return batch, True
            if self.config.rx_loss and self._rx_rng.random() < self.config.rx_loss:
                self.stats.rx_loss_injected += 1
                continue
            batch.append((data, (addr[0], addr[1])))
        return batch, False


def open_transport(
    transport: str,
    config: NetConfig,
    reactor: Reactor,
    handler: EventHandler,
    params: Mapping[str, object] | None = None,
    member_id: int | None = None,
    on_finished: Callable[[], None] | None = None,
    key: SessionKey | None = None,
) -> tuple[CoreDriver, MulticastCarrier]:
    """Build a transport on real sockets; call ``open()`` on the result to join.

    Raises ``TransportUnavailable``, ``ValueError`` (bad parameters) or ``OSError`` (the
    network), each with a message a person can act on. With ``key``, a private session's
    member: every datagram sealed (whiteboard/security), within an Ethernet frame."""
    factory = core_factory(transport)
    # The core's own stream, apart from the loss injection's.
    rng = random.Random(f"core:{config.seed}") if config.seed is not None else random.Random()
    if member_id is None:
        member_id = secrets.randbelow(2**32 - 1) + 1
    params = dict(params or {})
    group_param = describe(transport).group_param
    if group_param is not None:
        # A transport that names the group in its packets (MTP, RFC 1301 §2.3.2).
        params.setdefault(group_param, f"{config.group.host}:{config.group.port}")
    channel, params = private_channel(describe(transport), key, params, ETHERNET_DATAGRAM)
    carrier = MulticastCarrier(config, reactor)
    try:
        driver = CoreDriver(
            transport,
            factory,
            member_id,
            rng,
            params,
            carrier,
            handler,
            on_finished=on_finished,
            channel=channel,
        )
    except Exception:
        carrier.release()
        raise
    carrier.driver = driver
    return driver, carrier
