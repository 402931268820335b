"""Session logs of simulated members: each records its session as the app and ``whiteboard
peer`` do (docs/session-log.md), so that the analytics can be tried without a LAN.

Nothing here is simulated differently: a member's transport is given a
:class:`~whiteboard.sessionlog.RecordingHandler` in front of its handler, what it sends is
recorded as LOCAL_OP, :func:`~whiteboard.sessionlog.keep_flushing` flushes and records the
transport's counters, and leaving writes the counters and an END record. Only the clock is
the simulator's: virtual time 0 is mapped onto a wall-clock ``start`` (a fixed date by
default, so that a run gives the same logs every time), and the logs' session ids are drawn
from the run's options rather than at random, for the same reason.

Recording observes and never changes the run: the same seed gives the same result with or
without logs. (Its flush timers are events on the simulator's queue; :attr:`SimRecorder.ticks`
counts them, so a result can leave them out.)

What differs from a real member's log, knowingly:

* order keys are the simulated transports' own: RMP's timestamps in them count from the
  simulation's start, not from 1970 (every other time is mapped onto ``start``);
* answering a joiner takes no time (``STATE_SENT``'s answer duration is 0);
* a crash loses nothing recorded (a real one may lose the last second); its log has no END;
* a member that has left closes its log at its next flush timer (within half a second), where
  the app closes it at once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from whiteboard.net.reactor import TimerHandle
from whiteboard.sessionlog import RecordingHandler, SessionLogWriter, keep_flushing, new_header
from whiteboard.sim.network import SimStation
from whiteboard.sim.presence import member_name
from whiteboard.sim.session import Peer, SimSession
from whiteboard.transport.events import Delivered, Event, EventHandler, ProtocolEvent

# A Monday morning: fixed, so that the same run writes the same logs.
DEFAULT_START = datetime(2024, 3, 11, 9, 30, tzinfo=UTC)
TTL = 1  # what the app and the peer use on a LAN


def parse_start(text: str) -> float:
    """An ISO 8601 time (``2024-03-11T09:30:00Z``; UTC if it names no zone) as Unix seconds."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO time like 2024-03-11T09:30:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


class SimRecorder:
    """Records every member of ``session`` in ``log_dir``: one log per member per start (a
    restarted member writes a new one).

    Attach it before the members start, and after anything else that wraps their handlers
    (the collab workload), so that it records what the transport said, as the app's does.
    ``run_key`` names the run (the options that shape it): logs' session ids and the group in
    their headers are drawn from it."""

    def __init__(
        self,
        session: SimSession,
        log_dir: str | Path,
        start: float = DEFAULT_START.timestamp(),
        run_key: str = "",
    ) -> None:
        self.session = session
        self.log_dir = Path(log_dir)
        if self.log_dir.exists() and not self.log_dir.is_dir():
            raise ValueError(f"{self.log_dir} is not a folder")
        self.start = start
        session.wall_start = start  # the members' keys and proofs of that day, as recorded
        self.run_key = run_key or f"{session.transport}:{session.seed}"
        self.group = _group(self.run_key)
        self.paths: list[Path] = []  # every log written, in the order they were created
        self.ticks = 0  # flush timer events run on the simulator
        self._open: dict[int, SessionLogWriter] = {}  # by peer index
        self._starts: dict[int, int] = {}
        session.handler_wrappers.append(self._wrap)
        session.crash_observers.append(self._crashed)
        session.send_observers.append(self._sent)

    def wall(self, local: float) -> float:
        """A station's clock reading as wall-clock (Unix) seconds."""
        return self.start + local

    def finish(self) -> list[Path]:
        """Close the logs of members still in the session, as a program that stops does;
        returns every log written."""
        for index in sorted(self._open):
            self._close(index)
        return list(self.paths)

    # -- the members' side -------------------------------------------------------------------

    def _wrap(
        self, peer: Peer, params: Mapping[str, object], handler: EventHandler
    ) -> EventHandler:
        station = peer.station
        starts = self._starts[peer.index] = self._starts.get(peer.index, 0) + 1
        header = new_header(
            transport=self.session.transport,
            params=params,
            group=self.group,
            iface=None,
            ttl=TTL,
            member_id=peer.member_id,
            member_name=member_name(peer.index),
            now=self.wall(station.now()),
            key=self.session.keys.get(peer.index),
        )
        session_id = _digest(f"{self.run_key}|{peer.index}|{starts}")
        header = dataclasses.replace(header, session_id=session_id)
        try:
            writer = SessionLogWriter.create(header, self.log_dir)
        except FileExistsError as exc:
            raise ValueError(
                f"{exc.filename} already exists: a run with these options wrote it "
                "(choose another --log-dir, --start or --seed)"
            ) from None
        self._open[peer.index] = writer
        self.paths.append(writer.path)
        keep_flushing(
            _StationTimers(self, peer.index, writer),
            writer,
            counters=lambda: station.transport.counters(),
        )
        return _WallClockRecorder(handler, writer, station, self.start)

    def _sent(self, peer: Peer, payload: bytes) -> None:
        writer = self._open.get(peer.index)
        if writer is not None:
            writer.record_local_op(payload, self.wall(peer.station.now()))

    def _crashed(self, peer: Peer) -> None:
        writer = self._open.pop(peer.index, None)
        if writer is not None:
            writer.close()  # no END record: the program died

    def _close(self, index: int) -> None:
        """As the app and the peer close a session's log: counters, then END."""
        writer = self._open.pop(index)
        station = self.session.peers[index].station
        now = self.wall(station.now())
        writer.record_counters(station.transport.counters(), now)
        writer.close(now)

    def flush_tick(
        self, index: int, writer: SessionLogWriter, callback: Callable[[], None]
    ) -> None:
        """A flush timer of member ``index``'s log came due."""
        self.ticks += 1
        if not writer.closed and self.session.peers[index].station.released:
            self._close(index)  # the member has left: its program closes the log
        callback()


class _WallClockRecorder:
    """A :class:`RecordingHandler` for a station, fed its events with their times mapped onto
    the wall clock; the handler behind it gets them as the transport gave them."""

    def __init__(
        self, handler: EventHandler, writer: SessionLogWriter, station: SimStation, start: float
    ) -> None:
        self.handler = handler
        self.start = start
        self.recorder = RecordingHandler(self._pass_on, writer, lambda: start + station.now())
        self._events: list[Event] = []  # the original of the event being recorded

    def __call__(self, event: Event) -> None:
        self._events.append(event)
        try:
            self.recorder(self._on_wall_clock(event))
        finally:
            self._events.pop()

    def _pass_on(self, _recorded: Event) -> None:
        self.handler(self._events[-1])

    def _on_wall_clock(self, event: Event) -> Event:
        start = self.start
        if isinstance(event, Delivered):
            return dataclasses.replace(
                event, timestamp=event.timestamp + start, received_at=event.received_at + start
            )
        if isinstance(event, ProtocolEvent):
            return dataclasses.replace(event, at=event.at + start)
        return event


class _StationTimers:
    """What :func:`keep_flushing` needs of a reactor, on the simulator and a station's clock,
    in wall-clock seconds."""

    def __init__(self, recorder: SimRecorder, index: int, writer: SessionLogWriter) -> None:
        self.recorder = recorder
        self.index = index
        self.writer = writer
        self.station = recorder.session.peers[index].station

    def time(self) -> float:
        return self.recorder.wall(self.station.now())

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        station = self.station
        local = when - self.recorder.start
        at = (local - station.clock_offset) / (1.0 + station.clock_drift)
        network = station.network
        network.schedule(
            max(at, network.now),
            lambda: self.recorder.flush_tick(self.index, self.writer, callback),
        )
        return _NoHandle()


class _NoHandle:
    def cancel(self) -> None:  # keep_flushing never cancels: it stops when the log closes
        pass


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _group(run_key: str) -> str:
    """A group as the app picks one for a new board (239.255.0.0/16, a high port)."""
    rng = random.Random(f"group:{run_key}")
    return f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}:{rng.randrange(20000, 32768)}"


__all__ = ["DEFAULT_START", "SimRecorder", "parse_start"]
