"""A simulated whiteboard session: stations in a :class:`SimNetwork`, each with a transport and
a :class:`~whiteboard.replica.Replica`, and the bookkeeping that scenario results are made of
(send times, injected losses matched to the payload they carried, latencies)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

from coreapi.memo import ValueMemo
from whiteboard.board import Op, OpId, decode_op
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.replica import Replica
from whiteboard.security import OpAuthority, SessionKey
from whiteboard.security.envelope import unseal
from whiteboard.sim.network import Impairment, SimNetwork, SimStation
from whiteboard.transport.driver import private_channel
from whiteboard.transport.events import (
    BoardStateReceived,
    Delivered,
    EphemeralReceived,
    Event,
    EventHandler,
    Failure,
    MemberChanged,
    Ready,
)
from whiteboard.transport.registry import core_factory, describe

# Strokes sent lately, by anyone: a datagram lost at its sender that carries one of them is a
# data packet (or a repair of one), whoever sent it (RMP repairs another member's packets).
RECENT_STROKES = 256

# Params for station ``index``: lets MTP make station 0 the master.
ParamsFor = Callable[[int], Mapping[str, object]]


@dataclass
class Peer:
    """One station's member: its replica, its outbox while joining, what it saw."""

    index: int
    member_id: int
    station: SimStation
    replica: Replica = field(default_factory=Replica)
    ready: bool = False
    counter: int = 0
    pending: list[bytes] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    # The failures of this incarnation only: what a person at the restarted member was told.
    failures_since_start: list[str] = field(default_factory=list)
    members: dict[int, str] = field(default_factory=dict)
    ready_at: float | None = None
    started_at: float = 0.0
    # The side channel (coreapi/ephemeral.py): how many payloads were handed up, and the
    # latest from each origin.
    ephemeral_received: int = 0
    latest_ephemeral: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DrawnOp:
    """One op a member drew and sent: who, in which incarnation of its station, and when."""

    index: int
    incarnation: int
    at: float  # virtual time
    op_id: OpId


HandlerWrapper = Callable[[Peer, Mapping[str, object], EventHandler], EventHandler]


class SimSession:
    def __init__(
        self,
        transport: str,
        peers: int,
        seed: int,
        impairment: Impairment | None = None,
        params_for: ParamsFor | None = None,
    ) -> None:
        if peers < 1:
            raise ValueError("a session needs at least one peer")
        self.transport = transport
        self.factory = core_factory(transport)
        self.seed = seed
        self.network = SimNetwork(seed, impairment)
        self.network.side_channel = describe(transport).is_side_channel
        self.params_for: ParamsFor = params_for or (lambda index: {})
        ids = random.Random(f"ids:{seed}").sample(range(1, 2**32), peers)
        self.peers = [Peer(i, ids[i], self.network.add_station()) for i in range(peers)]
        self._stroke_rng = random.Random(f"strokes:{seed}")
        self.sent_at: dict[bytes, float] = {}
        self.sent_by: dict[int, list[bytes]] = {i: [] for i in range(peers)}
        self.drawn: list[DrawnOp] = []  # every op drawn, in time order
        # A crashed program draws nothing: while this is set, an op drawn at a station that is
        # down is skipped (counted in ``skipped_draws``), not held for its restart.
        self.skip_draws_while_down = False
        self.skipped_draws = 0
        self.latencies_ms: list[float] = []
        self.recoveries_ms: list[float] = []
        self._lost: set[tuple[int, bytes]] = set()
        self._delivered: list[set[bytes]] = [set() for _ in range(peers)]
        self.network.drop_observers.append(self._on_drop)
        # Datagrams lost at their sender (--source-loss) that carried a stroke: the loss
        # events that NACK suppression is measured against (scenario.py).
        self.source_data_losses = 0
        self._recent_strokes: deque[bytes] = deque(maxlen=RECENT_STROKES)
        self.network.source_drop_observers.append(self._on_source_drop)
        # Private sessions (issue 21): the key of each peer that has one; the others are in
        # clear. Peers with different keys are in different sessions on the same group.
        self.keys: dict[int, SessionKey] = {}
        # The wall-clock time of the simulator's zero: what private sessions' keys and op
        # proofs take their day from. A recorder sets its start here (sim/recording.py), so
        # that a recording's times and its proofs' days agree when it is replayed.
        self.wall_start = 0.0
        # Every replica runs in this process: a stroke is decoded once for the group.
        self.op_decoder: ValueMemo[Op] = ValueMemo(decode_op)
        self.on_delivered: Callable[[Peer, Delivered], None] | None = None
        # Hooks for what watches members as an application would (whiteboard/sim/recording.py
        # records their sessions, the collab workload announces their presence). Empty, they
        # change nothing. A wrapper is given a booting peer, its transport's params and the
        # handler it would get, and returns the handler to give instead; the last is outermost.
        self.handler_wrappers: list[HandlerWrapper] = []
        self.crash_observers: list[Callable[[Peer], None]] = []
        self.send_observers: list[Callable[[Peer, bytes], None]] = []

    # -- control -----------------------------------------------------------------------------

    def start(self, index: int) -> None:
        """Boot (or reboot after a crash) peer ``index`` with an empty board, and join."""
        peer = self.peers[index]
        key = self.keys.get(index)
        peer.replica = Replica(self.op_decoder, OpAuthority.for_session(key, self._wall))
        peer.ready = False
        peer.ready_at = None
        peer.started_at = self.network.now
        peer.failures_since_start = []
        self._delivered[index] = set()
        # A private session's channel, a new one each run; its epoch (day) from the
        # simulator's clock, everyone's.
        channel, params = private_channel(
            describe(self.transport),
            key,
            self.params_for(index),
            self.network.mtu,
            self._wall,
        )

        def handler(event: Event) -> None:
            self._handle(peer, event)  # looked up per event: a test may wrap _handle later

        wrapped: EventHandler = handler
        for wrap in self.handler_wrappers:
            wrapped = wrap(peer, params, wrapped)
        self.network.start(
            peer.station,
            name=self.transport,
            factory=self.factory,
            member_id=peer.member_id,
            params=params,
            handler=wrapped,
            channel=channel,
        )
        pending, peer.pending = peer.pending, []
        for payload in pending:  # drawn while the station was down
            self._send(peer, payload)

    def crash(self, index: int) -> None:
        peer = self.peers[index]
        self.network.crash(peer.station)
        peer.ready = False
        for observer in self.crash_observers:
            observer(peer)

    def leave(self, index: int) -> None:
        self.peers[index].station.transport.close()

    def draw(self, index: int) -> bytes:
        """Peer ``index`` draws one synthetic stroke (sent at once, or when it has joined)."""
        peer = self.peers[index]
        peer.counter += 1
        return self.send_op(index, synthetic_stroke(peer.member_id, peer.counter, self._stroke_rng))

    def send_op(self, index: int, op: Op) -> bytes:
        """Peer ``index`` sends ``op``, one of its own (at once, or when it has joined).

        At a station that is down it is held for the restart, or skipped if
        :attr:`skip_draws_while_down` is set."""
        peer = self.peers[index]
        peer.counter = max(peer.counter, op.id.counter)
        payload = peer.replica.payload_of(op)
        if self.skip_draws_while_down and not peer.station.up:
            self.skipped_draws += 1
            return payload
        self.sent_by[index].append(payload)
        self.drawn.append(DrawnOp(index, peer.station.incarnation, self.network.now, op.id))
        if peer.station.up:
            # Straight to the core, joined or not: holding strokes back until the member has
            # joined is the core's job (RMP §2.8), and the tests must exercise it.
            self._send(peer, payload)
        else:
            peer.pending.append(payload)
        return payload

    def announce(self, index: int, payload: bytes) -> None:
        """Peer ``index`` sends a payload that is not an op (a presence): no latency is
        measured for it. Raises as ``transport.send`` does (not in a session, too large)."""
        peer = self.peers[index]
        peer.station.transport.send(payload)
        self._sent(peer, payload)

    def send_ephemeral(self, index: int, payload: bytes) -> None:
        """Peer ``index`` sends ``payload`` on the side channel (``Transport.send_ephemeral``;
        dropped while it joins, raises as that does)."""
        self.peers[index].station.transport.send_ephemeral(payload)

    def schedule_draws(self, messages: int, rate: float, start: float, live: list[int]) -> float:
        """Message k is drawn by ``live[k % len(live)]`` at ``start + k / rate``; returns the
        time of the last draw."""
        when = start
        for k in range(messages):
            when = start + k / rate
            index = live[k % len(live)]
            self.network.schedule(when, partial(self.draw, index))
        return when

    # -- observation -------------------------------------------------------------------------

    def live(self) -> list[Peer]:
        return [p for p in self.peers if p.station.up and not p.station.released]

    def hashes(self) -> dict[int, str]:
        return {p.index: p.replica.board.hash() for p in self.live()}

    def converged(self) -> bool:
        return len(set(self.hashes().values())) <= 1

    def counters_total(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for peer in self.peers:
            if peer.station.driver is None:
                continue
            for name, value in peer.station.driver.counters().items():
                total[name] = total.get(name, 0) + value
        return total

    # -- internals ---------------------------------------------------------------------------

    def _send(self, peer: Peer, payload: bytes) -> None:
        self.sent_at.setdefault(payload, self.network.now)
        self._recent_strokes.append(payload)
        peer.station.transport.send(payload)
        self._sent(peer, payload)

    def _sent(self, peer: Peer, payload: bytes) -> None:
        for observer in self.send_observers:
            observer(peer, payload)

    def _handle(self, peer: Peer, event: Event) -> None:
        if isinstance(event, Delivered):
            self._on_delivered(peer, event)
            return
        peer.replica.handle(event, peer.station.transport)
        if isinstance(event, Ready):
            peer.ready = True
            peer.ready_at = self.network.now
        elif isinstance(event, BoardStateReceived) and peer.replica.stats.rejected_states:
            # A snapshot that does not load is a bug in the simulator: fail loudly.
            raise AssertionError(peer.replica.last_rejection)
        elif isinstance(event, MemberChanged):
            peer.members[event.member] = event.state.value
        elif isinstance(event, Failure):
            peer.failures.append(event.reason)
            peer.failures_since_start.append(event.reason)
        elif isinstance(event, EphemeralReceived):
            peer.ephemeral_received += 1
            peer.latest_ephemeral[event.origin] = event.payload

    def _on_delivered(self, peer: Peer, event: Delivered) -> None:
        peer.replica.handle(event, peer.station.transport)
        delivered = self._delivered[peer.index]
        if event.payload not in delivered:
            delivered.add(event.payload)
            sent = self.sent_at.get(event.payload)
            if sent is not None and event.origin != peer.member_id:
                latency = (self.network.now - sent) * 1000.0
                self.latencies_ms.append(latency)
                if (peer.index, event.payload) in self._lost:
                    self.recoveries_ms.append(latency)
        if self.on_delivered is not None:
            self.on_delivered(peer, event)

    def _clear(self, sender: int, data: bytes) -> bytes:
        """The datagram as its core sent it (a private session's, taken out of its envelope),
        for the loss accounting, which looks for strokes' bytes in it."""
        key = self.keys.get(sender)
        if key is None:
            return data
        return unseal(key, data, self._wall) or data

    def _wall(self) -> float:
        return self.wall_start + self.network.now

    def _on_source_drop(self, sender: int, data: bytes) -> None:
        data = self._clear(sender, data)
        if any(payload in data for payload in reversed(self._recent_strokes)):
            self.source_data_losses += 1

    def _on_drop(self, sender: int, receiver: int, data: bytes) -> None:
        # Which payload did the lost datagram carry? Look among the sender's latest payloads
        # that the receiver still lacks; a repair of it then counts as a recovery.
        delivered = self._delivered[receiver]
        data = self._clear(sender, data)
        for payload in reversed(self.sent_by[sender][-64:]):
            if payload not in delivered and payload in data:
                self._lost.add((receiver, payload))
                return
