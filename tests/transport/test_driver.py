"""The driver between a core and its carrier: pumping, re-entrancy, and bug containment."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from tests.sim.probe import ProbeCore
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import Delivered, Event, Failure
from whiteboard.transport.interface import Address, UpperLayer
from whiteboard.transport.raw import make_core as make_raw


@dataclass
class RecordingCarrier:
    """The I/O edge, recorded: what the driver asks of it is what is under test."""

    clock: float = 0.0
    sent: list[tuple[bytes, Address | None]] = field(default_factory=list)
    timers: list[float | None] = field(default_factory=list)
    released: int = 0

    def now(self) -> float:
        return self.clock

    def transmit(self, data: bytes, dest: Address | None) -> None:
        self.sent.append((data, dest))

    def set_timer(self, deadline: float | None) -> None:
        self.timers.append(deadline)

    def release(self) -> None:
        self.released += 1


class ExplodingCore(ProbeCore):
    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        raise KeyError("a bug")


def make_exploding(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> ExplodingCore:
    return ExplodingCore(member_id, upper)


def driver_for(factory, handler, strict: bool = False) -> tuple[CoreDriver, RecordingCarrier]:
    carrier = RecordingCarrier()
    driver = CoreDriver("test", factory, 5, random.Random(1), {}, carrier, handler, strict=strict)
    return driver, carrier


def test_a_bug_in_a_core_is_reported_and_the_member_lives_on() -> None:
    events: list[Event] = []
    driver, _ = driver_for(make_exploding, events.append)
    driver.open()
    driver.datagram_received(b"x", ("h", 1))
    failures = [e for e in events if isinstance(e, Failure)]
    assert len(failures) == 1 and "internal error in the test transport" in failures[0].reason
    assert driver.counters()["internal_errors"] == 1
    driver.datagram_received(b"y", ("h", 1))  # still serving
    assert driver.counters()["internal_errors"] == 2


class PickyCore(ProbeCore):
    """Delivers every datagram but one that trips a bug."""

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        if data == b"bug":
            raise KeyError("a bug")
        self.upper.deliver(9, (1, 9, len(data)), now, data, False)


def test_a_batch_reaches_the_core_whole_and_is_pumped_once() -> None:
    """The carrier reads a burst in batches: each datagram to the core, even after one that
    trips a bug, then one pump (one timer computation) for the batch."""
    events: list[Event] = []
    driver, carrier = driver_for(
        lambda member, upper, rng, params: PickyCore(member, upper), events.append
    )
    driver.open()
    timers = len(carrier.timers)
    driver.datagrams_received([(b"a", ("h", 1)), (b"bug", ("h", 1)), (b"ccc", ("h", 1))])
    assert [e.payload for e in events if isinstance(e, Delivered)] == [b"a", b"ccc"]
    assert driver.counters()["internal_errors"] == 1
    assert len(carrier.timers) == timers + 1


def test_strict_mode_lets_a_core_bug_propagate() -> None:
    driver, _ = driver_for(make_exploding, lambda e: None, strict=True)
    driver.open()
    with pytest.raises(KeyError):
        driver.datagram_received(b"x", ("h", 1))


def test_a_handler_may_send_while_events_are_dispatched() -> None:
    payloads: list[bytes] = []
    driver: CoreDriver

    def handler(event: Event) -> None:
        if isinstance(event, Delivered):
            payloads.append(event.payload)
            if event.payload == b"ping":
                driver.send(b"pong")  # re-enters the driver mid-dispatch

    driver, carrier = driver_for(make_raw, handler)
    driver.open()
    driver.send(b"ping")
    assert payloads == [b"ping", b"pong"]
    assert len(carrier.sent) == 3  # HELLO, ping, pong: everything reached the wire
    assert carrier.timers[-1] is not None  # the core's next deadline is armed


def test_oversized_payload_is_refused_before_the_core() -> None:
    driver, _ = driver_for(make_raw, lambda e: None)
    driver.open()
    with pytest.raises(ValueError, match="exceeds the test transport's maximum"):
        driver.send(b"x" * (driver.max_payload + 1))


def test_closing_releases_the_carrier_once_the_core_has_finished() -> None:
    driver, carrier = driver_for(make_raw, lambda e: None)
    driver.open()
    driver.close()
    assert driver.finished and carrier.released == 1 and carrier.timers[-1] is None
    driver.close()
    assert carrier.released == 1


def test_send_reports_the_callers_mistake_even_when_not_strict() -> None:
    events: list[Event] = []
    driver, _ = driver_for(make_raw, events.append)
    driver.open()
    driver.close()
    with pytest.raises(RuntimeError, match="not in a session"):
        driver.send(b"too late")
    assert driver.counters()["internal_errors"] == 0
    assert not [e for e in events if isinstance(e, Failure)]


class TimerBugCore(ProbeCore):
    def get_timer(self) -> float | None:
        raise ZeroDivisionError("a bug in the timer computation")


def test_a_bug_while_pumping_is_contained_too() -> None:
    events: list[Event] = []
    driver, carrier = driver_for(
        lambda member, upper, rng, params: TimerBugCore(member, upper), events.append
    )
    driver.open()
    driver.datagram_received(b"x", ("h", 1))
    assert driver.counters()["internal_errors"] == 2
    assert carrier.timers[-1] is None
    assert any(isinstance(e, Failure) for e in events)


class JoinAnswerCore(ProbeCore):
    """Delivers a payload, then asks for the board, in one call: the snapshot it gets must
    already contain that payload (the application applies events in order)."""

    provided: list[tuple[int, bytes]]

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        self.upper.deliver(9, (1, 9, 1), now, data, False)
        self.upper.board_state_requested(42)

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        self.provided = [*getattr(self, "provided", []), (request, state)]


def test_a_board_state_request_is_answered_after_earlier_deliveries_are_applied() -> None:
    from whiteboard.board import Board, OpId, Stroke, encode_op
    from whiteboard.replica import Replica

    replica = Replica()
    driver: CoreDriver
    driver, _ = driver_for(
        lambda member, upper, rng, params: JoinAnswerCore(member, upper),
        lambda event: replica.handle(event, driver),
    )
    driver.open()
    stroke = Stroke(OpId(9, 1), (0.0, 0.0, 5.0, 5.0), 0xFF000000, 2.0)
    driver.datagram_received(encode_op(stroke), ("h", 1))
    core = driver.core
    assert isinstance(core, JoinAnswerCore)
    [(request, state)] = core.provided
    assert request == 42
    assert OpId(9, 1) in Board.from_snapshot(state)
