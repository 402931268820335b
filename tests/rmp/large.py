"""A group of RMP cores on the simulator's network, for payloads longer than a packet (issue 20):
each member's deliveries and failures recorded, its board a list of payloads. Virtual time only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from rmp import make_core
from rmp.core import RmpCore
from whiteboard.sim.network import Impairment, SimNetwork, SimStation
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    Event,
    Failure,
    Ready,
)


@dataclass
class Member:
    index: int
    member_id: int
    station: SimStation
    delivered: list[Delivered] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    states: list[bytes] = field(default_factory=list)  # board images received on joining
    ready: bool = False

    @property
    def core(self) -> RmpCore:
        driver = self.station.driver
        assert driver is not None
        core = driver.core
        assert isinstance(core, RmpCore)
        return core

    def payloads(self) -> list[bytes]:
        return [d.payload for d in self.delivered]

    def copies(self, payload: bytes) -> int:
        """How many times ``payload`` reached this member: delivered, or in its board image."""
        framed = len(payload).to_bytes(4, "big") + payload
        return self.payloads().count(payload) + sum(s.count(framed) for s in self.states)

    def send(self, payload: bytes) -> None:
        self.station.transport.send(payload)


class Group:
    """``size`` members (lan profile unless told), started on a seeded lossy network."""

    def __init__(
        self,
        size: int,
        seed: int,
        impairment: Impairment | None = None,
        params: Mapping[str, object] | None = None,
    ) -> None:
        self.network = SimNetwork(seed, impairment or Impairment())
        self.params = {"profile": "lan", **(params or {})}
        ids = random.Random(f"ids:{seed}").sample(range(1, 2**32), size)
        self.members = [Member(i, ids[i], self.network.add_station()) for i in range(size)]

    def start(self, index: int) -> None:
        member = self.members[index]
        self.network.start(
            member.station,
            name="rmp",
            factory=make_core,
            member_id=member.member_id,
            params=dict(self.params),
            handler=self._handler(member),
        )

    def _handler(self, member: Member) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            if isinstance(event, Delivered):
                member.delivered.append(event)
            elif isinstance(event, Failure):
                member.failures.append(event.reason)
            elif isinstance(event, Ready):
                member.ready = True
            elif isinstance(event, BoardStateReceived):
                member.states.append(event.state)
            elif isinstance(event, BoardStateRequested):
                # The board: the payloads delivered so far, in order, with their lengths.
                board = b"".join(
                    len(p).to_bytes(4, "big") + p for p in sorted(member.payloads())
                )
                member.station.transport.provide_board_state(event.request, board)

        return handle

    def start_all(self, until: float = 3.0) -> None:
        for index in range(len(self.members)):
            self.start(index)
        self.run_until(lambda: all(m.ready for m in self.members), until)

    def run_until(self, condition: Callable[[], bool], limit: float) -> float:
        """Run until ``condition`` holds (at most ``limit`` more virtual seconds): the time."""
        reached = self.network.run(self.network.now + limit, stop=condition)
        assert reached or condition(), f"not reached within {limit} virtual seconds"
        return self.network.now

    def settle(self, seconds: float) -> None:
        self.network.run(self.network.now + seconds)

    def has(self, payload: bytes, indices: list[int] | None = None) -> Callable[[], bool]:
        chosen = [self.members[i] for i in (indices or range(len(self.members)))]
        return lambda: all(payload in m.payloads() for m in chosen)
