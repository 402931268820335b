"""A minimal core for testing the simulator itself: it sends what the test tells it to and
records every datagram it receives with its arrival time."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from whiteboard.transport.interface import Address, Outgoing, UpperLayer


@dataclass
class ProbeCore:
    member_id: int
    upper: UpperLayer
    max_payload: int = 1200
    max_message: int = 1200
    arrivals: list[tuple[float, bytes, Address]] = field(default_factory=list)
    outbox: list[Outgoing] = field(default_factory=list)
    timer: float | None = None
    timer_calls: list[float] = field(default_factory=list)
    _finished: bool = False
    introduction: bytes = b""

    @property
    def finished(self) -> bool:
        return self._finished

    def introduce(self, introduction: bytes) -> None:
        self.introduction = introduction

    def start(self, now: float) -> None:
        self.upper.ready()

    def send(self, payload: bytes, now: float) -> None:
        self.outbox.append((payload, None))

    def send_to(self, payload: bytes, dest: Address | None) -> None:
        self.outbox.append((payload, dest))

    def leave(self, now: float) -> None:
        self._finished = True

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        self.arrivals.append((now, data, addr))

    def handle_timer(self, now: float) -> None:
        self.timer_calls.append(now)
        if self.timer is not None and now >= self.timer:
            self.timer = None

    def get_timer(self) -> float | None:
        return self.timer

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        out, self.outbox = self.outbox, []
        return out

    def counters(self) -> dict[str, int]:
        return {}


def make_probe(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> ProbeCore:
    return ProbeCore(member_id, upper)
