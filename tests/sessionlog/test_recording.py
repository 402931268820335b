"""Recording transport events: each event becomes its record before the application sees it,
and a log holds enough to rebuild the board its member showed."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import random
from collections.abc import Callable
from pathlib import Path

from whiteboard.board import encode_op
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.replica import Replica
from whiteboard.sessionlog import (
    DeliveredRecord,
    FailureRecord,
    JoinProgressRecord,
    LocalOpRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    SessionLogWriter,
    StateReceivedRecord,
    StateSentRecord,
    keep_flushing,
    new_header,
    read_log,
    recording_handler,
)
from whiteboard.sessionlog.format import to_us
from whiteboard.sim.network import Impairment, SimNetwork
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    Event,
    Failure,
    JoinProgress,
    MemberChanged,
    ProtocolEvent,
    Ready,
)
from whiteboard.transport.interface import MemberState
from whiteboard.transport.registry import core_factory

T0 = 1_700_000_000.0


class FakeClock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def writer_at(tmp_path: Path, now: float = T0, name: str = "s.wblog") -> SessionLogWriter:
    header = new_header(
        transport="rmp",
        params={"profile": "lan", "role": None},
        group="239.255.42.1:5000",
        iface="127.0.0.1",
        ttl=0,
        member_id=7,
        member_name="ann",
        now=now,
    )
    return SessionLogWriter(tmp_path / name, header)


def test_every_event_is_recorded_then_passed_on_unchanged(tmp_path: Path) -> None:
    clock = FakeClock(T0 + 1)
    writer = writer_at(tmp_path)
    seen: list[tuple[Event, int]] = []
    # The handler notes how many records existed when it ran: the event's own must be one.
    handler = recording_handler(lambda e: seen.append((e, writer.records)), writer, clock)
    events: list[Event] = [
        MemberChanged(9, MemberState.JOINING),
        JoinProgress(1, 4),
        BoardStateReceived(b"board"),
        Ready(),
        Delivered(9, (5, 9, 1), T0 + 0.5, b"payload", True, T0 + 1.25),
        ProtocolEvent("nack_sent", {"source": 9, "options": 2}, T0 + 1.5),
        Failure("the master is gone"),
        MemberChanged(9, MemberState.LEFT),
    ]
    for number, event in enumerate(events, start=2):
        handler(event)
        assert seen[-1] == (event, number)
    writer.close()
    t = to_us(T0 + 1)
    assert read_log(writer.path).records == (
        MemberRecord(t, 9, "joining"),
        JoinProgressRecord(t, 1, 4),
        StateReceivedRecord(t, 5, 1_000_000, b"board"),
        ReadyRecord(t),
        DeliveredRecord(to_us(T0 + 1.25), 9, (5, 9, 1), to_us(T0 + 0.5), True, b"payload"),
        ProtocolRecord(to_us(T0 + 1.5), "nack_sent", {"source": 9, "options": 2}),
        FailureRecord(t, "the master is gone"),
        MemberRecord(t, 9, "left"),
    )


def test_a_state_request_is_recorded_with_the_time_taken_to_answer(tmp_path: Path) -> None:
    clock = FakeClock(T0 + 3)
    writer = writer_at(tmp_path)

    def answer(event: Event) -> None:
        clock.now += 0.040  # building the snapshot

    recording_handler(answer, writer, clock)(BoardStateRequested(17))
    writer.close()
    assert read_log(writer.path).records == (StateSentRecord(to_us(T0 + 3), 17, 40_000),)


def test_without_a_writer_events_pass_straight_through(tmp_path: Path) -> None:
    seen: list[Event] = []
    handler = recording_handler(seen.append, None, FakeClock())
    handler(Ready())
    handler.writer = writer_at(tmp_path)  # the transport exists now: its member id is known
    handler(Failure("x"))
    handler.writer.close()
    assert seen == [Ready(), Failure("x")]
    assert len(read_log(handler.writer.path).records) == 1


def test_a_handler_error_still_leaves_the_record(tmp_path: Path) -> None:
    writer = writer_at(tmp_path)

    def broken(event: Event) -> None:
        raise RuntimeError("application bug")

    handler = recording_handler(broken, writer, FakeClock())
    for event in (Ready(), BoardStateRequested(1)):
        with contextlib.suppress(RuntimeError):
            handler(event)
    writer.close()
    kinds = [type(r) for r in read_log(writer.path).records]
    assert kinds == [ReadyRecord, StateSentRecord]


class FakeReactor:
    """Virtual time and call_at, as the selector and Qt reactors offer them."""

    def __init__(self, now: float) -> None:
        self.now = now
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], None]) -> None:
        heapq.heappush(self._timers, (when, next(self._order), callback))

    def advance(self, to: float) -> None:
        while self._timers and self._timers[0][0] <= to:
            when, _, callback = heapq.heappop(self._timers)
            self.now = max(self.now, when)
            callback()
        self.now = to

    @property
    def pending(self) -> int:
        return len(self._timers)


def test_keep_flushing_puts_a_quiet_sessions_last_records_on_disk_within_a_second(
    tmp_path: Path,
) -> None:
    reactor = FakeReactor(T0)
    writer = writer_at(tmp_path)
    handler = recording_handler(lambda e: None, writer, reactor.time)
    keep_flushing(reactor, writer)
    rng = random.Random(3)
    appended: list[float] = []
    for _ in range(40):
        # Bursts and silences: after a burst's last event only the ticker can flush.
        gap = rng.choice([0.001, 0.01, 0.3, 0.7, 2.5])
        for _ in range(int(gap / 0.05) + 1):  # watch the file through the silence
            reactor.advance(reactor.now + min(gap, 0.05))
            due = sum(1 for t in appended if t <= reactor.now - 1.0)
            assert read_log(writer.path).report.records - 1 >= due
        handler(Failure("event"))
        appended.append(reactor.now)
    now = reactor.now
    writer.close()
    reactor.advance(now + 5)
    assert reactor.pending == 0  # the ticker stops with the writer


def test_a_recorded_session_rebuilds_the_board_its_member_showed(tmp_path: Path) -> None:
    """Three RMP members on a lossy simulated network, the third joining late (it gets the
    board as an image): each one's log, replayed, gives the board that member had."""
    network = SimNetwork(seed=5, impairment=Impairment(loss=0.1))
    factory = core_factory("rmp")
    ids = [0x1001, 0x2002, 0x3003]
    stations = [network.add_station() for _ in ids]
    replicas = [Replica() for _ in ids]
    writers = [writer_at(tmp_path, 0.0, f"{i}.wblog") for i in range(len(ids))]
    rng = random.Random(5)
    counters = [0] * len(ids)

    def start(i: int) -> None:
        station = stations[i]
        handler = recording_handler(
            lambda event: replicas[i].handle(event, station.transport),
            writers[i],
            lambda: network.now,
        )
        network.start(
            station, name="rmp", factory=factory, member_id=ids[i], params={}, handler=handler
        )

    def draw(i: int) -> None:
        counters[i] += 1
        payload = encode_op(synthetic_stroke(ids[i], counters[i], rng))
        stations[i].transport.send(payload)
        writers[i].record_local_op(payload, network.now)

    start(0)
    start(1)
    for k in range(40):
        network.schedule(1.0 + k * 0.05, lambda k=k: draw(k % 2))
    network.schedule(3.0, lambda: start(2))
    for k in range(20):
        network.schedule(6.0 + k * 0.05, lambda k=k: draw(k % 3))
    network.run(until=40.0)
    for writer in writers:
        writer.close(network.now)

    assert len({r.board.hash() for r in replicas}) == 1
    assert len(replicas[0].board) == 60
    for i, replica in enumerate(replicas):
        log = read_log(writers[i].path)
        assert log.report.clean_end and not log.report.warnings
        rebuilt = Replica()
        for record in log.records:
            if isinstance(record, StateReceivedRecord):
                rebuilt.load_state(record.state)
            elif isinstance(record, DeliveredRecord):
                rebuilt.apply_delivered(
                    Delivered(record.origin, record.order_key, 0.0, record.payload, record.late, 0)
                )
        assert rebuilt.board.hash() == replica.board.hash()
        sent = [r for r in log.records if isinstance(r, LocalOpRecord)]
        assert len(sent) == counters[i]
        kinds = {type(r) for r in log.records}
        assert {MemberRecord, ReadyRecord, ProtocolRecord} <= kinds
    late_joiner = read_log(writers[2].path).records
    assert any(isinstance(r, StateReceivedRecord) and r.state for r in late_joiner)
    assert any(
        isinstance(r, StateSentRecord) for w in writers[:2] for r in read_log(w.path).records
    )


def test_keep_flushing_records_counters_when_they_change(tmp_path: Path) -> None:
    reactor = FakeReactor(T0)
    writer = writer_at(tmp_path)
    counters = {"nacks_received": 0}
    keep_flushing(reactor, writer, counters=lambda: counters, counters_every=5.0)
    reactor.advance(T0 + 5.0)
    counters["nacks_received"] = 3
    reactor.advance(T0 + 10.0)
    reactor.advance(T0 + 20.0)  # no change: nothing more
    writer.close()
    records = read_log(writer.path).records
    assert [(r.t_us, dict(r.counters)) for r in records] == [
        (to_us(T0 + 5.0), {"nacks_received": 0}),
        (to_us(T0 + 10.0), {"nacks_received": 3}),
    ]
