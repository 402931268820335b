"""Recording a live session: transport events in, log records out. Qt-free.

The app and ``whiteboard peer`` give their transport a :class:`RecordingHandler` in place of
their own event handler: it appends each event to the log, then passes it on unchanged, so
what the log says happened is exactly what the application was told, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from whiteboard import __version__
from whiteboard.net.reactor import EpochClock, TimerHandle
from whiteboard.net.runtime import NetConfig
from whiteboard.security import SessionKey
from whiteboard.sessionlog.format import (
    INT64_MIN,
    MAX_RECORD_BYTES,
    UINT64_MAX,
    DeliveredRecord,
    FailureRecord,
    FieldValue,
    JoinProgressRecord,
    MemberRecord,
    ParamValue,
    ProtocolRecord,
    ReadyRecord,
    Record,
    SessionHeader,
    StateReceivedRecord,
    StateSentRecord,
    to_us,
)
from whiteboard.sessionlog.paths import new_session_id
from whiteboard.sessionlog.sealing import drawing_key_of
from whiteboard.sessionlog.writer import FLUSH_TICK_S, SessionLogWriter
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    EphemeralReceived,
    Event,
    EventHandler,
    Failure,
    Introduced,
    JoinProgress,
    MemberChanged,
    ProtocolEvent,
    Ready,
)

COUNTERS_EVERY_S = 5.0  # how often keep_flushing records changed transport counters
# Room for a STATE_RECEIVED record's own fields next to the state it keeps.
_STATE_ROOM = MAX_RECORD_BYTES - 64


def new_header(
    *,
    transport: str,
    params: Mapping[str, object],
    group: str,
    iface: str | None,
    ttl: int,
    member_id: int,
    member_name: str,
    now: float,
    key: SessionKey | None = None,
) -> SessionHeader:
    """The header of a new session's log: a fresh session id, this app's version; a private
    session's key id and drawing key's public half (never a secret) if ``key``."""
    return SessionHeader(
        t_us=to_us(now),
        session_id=new_session_id(),
        app_version=__version__,
        transport=_text(transport),
        params={_text(str(k)): _plain_param(v) for k, v in params.items()},
        group=_text(group),
        iface=_text(iface) if iface else None,
        ttl=ttl,
        member_id=member_id,
        member_name=_text(member_name),
        key_id=key.key_id.hex() if key is not None else None,
        drawing_key=drawing_key_of(key),
    )


def header_on(
    net: NetConfig,
    *,
    transport: str,
    params: Mapping[str, object],
    member_id: int,
    member_name: str,
    now: float,
    key: SessionKey | None = None,
) -> SessionHeader:
    """:func:`new_header` for a session on real sockets, described by its ``NetConfig``."""
    return new_header(
        transport=transport,
        params=params,
        group=str(net.group),
        iface=net.iface,
        ttl=net.ttl,
        member_id=member_id,
        member_name=member_name,
        now=now,
        key=key,
    )


def record_for(event: Event, now: float, started_us: int) -> Record | None:
    """The record of a transport event at ``now``; ``None`` for a board-state request, whose
    record (STATE_SENT) needs the answer's duration: :class:`RecordingHandler` makes it."""
    t_us = to_us(now)
    match event:
        case Delivered():
            return DeliveredRecord(
                to_us(event.received_at),
                event.origin,
                tuple(event.order_key),
                to_us(event.timestamp),
                bool(event.late),
                bytes(event.payload),
            )
        case MemberChanged():
            return MemberRecord(t_us, event.member, str(event.state))
        case Introduced():
            # A joiner's introduction (its name card), kept as the peer sent it.
            card = event.introduction.hex()
            return ProtocolRecord(t_us, "introduced", {"member": event.member, "card": card})
        case Ready():
            return ReadyRecord(t_us)
        case JoinProgress():
            return JoinProgressRecord(t_us, event.received, event.total)
        case BoardStateReceived():
            size = len(event.state)
            kept = bytes(event.state) if size <= _STATE_ROOM else b""
            return StateReceivedRecord(t_us, size, t_us - started_us, kept)
        case Failure():
            return FailureRecord(t_us, event.reason)
        case ProtocolEvent():
            fields = {str(k): _plain_field(v) for k, v in event.fields.items()}
            return ProtocolRecord(to_us(event.at), event.name, fields)
    return None


class RecordingHandler:
    """An event handler that records each event in :attr:`writer`, then calls ``handler``.

    ``writer`` may be None at first and set later: a transport needs its handler before it
    exists, the log's header needs the member id the transport draws. No event is dispatched
    before ``transport.open()``, so setting the writer between the two loses nothing.
    """

    def __init__(
        self,
        handler: EventHandler,
        writer: SessionLogWriter | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.handler = handler
        self.writer = writer
        self.clock: Callable[[], float] = clock or EpochClock()

    def __call__(self, event: Event) -> None:
        writer = self.writer
        if writer is None:
            self.handler(event)
            return
        now = self.clock()
        if isinstance(event, BoardStateRequested):
            # The application answers inside its handler: time the answer.
            try:
                self.handler(event)
            finally:
                answer_us = to_us(self.clock() - now)
                writer.append(StateSentRecord(to_us(now), event.request, answer_us))
            return
        if isinstance(event, EphemeralReceived):
            writer.record_side(event.origin, event.payload, now)  # sampled: side.py
            self.handler(event)
            return
        record = record_for(event, now, writer.header.t_us)
        if record is not None:
            writer.append(record)
        self.handler(event)


def recording_handler(
    handler: EventHandler,
    writer: SessionLogWriter | None,
    clock: Callable[[], float] | None = None,
) -> RecordingHandler:
    """``handler``, recording every event in ``writer`` first (see :class:`RecordingHandler`)."""
    return RecordingHandler(handler, writer, clock)


class TimerSource(Protocol):
    """What :func:`keep_flushing` needs of a reactor (both the selector and the Qt one)."""

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle: ...


def keep_flushing(
    reactor: TimerSource,
    writer: SessionLogWriter,
    period: float = FLUSH_TICK_S,
    counters: Callable[[], Mapping[str, int]] | None = None,
    counters_every: float = COUNTERS_EVERY_S,
) -> None:
    """Call ``writer.maybe_flush`` every ``period`` seconds on ``reactor`` until the writer is
    closed: with it, a quiet session's last records still reach the file within a second.

    Given ``counters`` (``transport.counters``), also record them every ``counters_every``
    seconds when they changed: a time series of what the protocols count but do not report
    one by one (NACKs received, reminders, token requests...)."""
    last: dict[str, int] = {}
    next_counters = reactor.time() + counters_every

    def tick() -> None:
        nonlocal last, next_counters
        if writer.closed:
            return
        now = reactor.time()
        if counters is not None and now >= next_counters:
            next_counters = now + counters_every
            snapshot = dict(counters())
            if snapshot != last:
                writer.record_counters(snapshot, now)
                last = snapshot
        writer.maybe_flush(now)
        reactor.call_at(now + period, tick)

    reactor.call_at(reactor.time() + period, tick)


def _text(value: str) -> str:
    # A name from the command line may hold undecodable bytes (lone surrogates), which UTF-8
    # cannot write: keep them visible as escapes rather than fail to record the session.
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _plain_param(value: object) -> ParamValue:
    return None if value is None else _plain_field(value)


def _plain_field(value: object) -> FieldValue:
    # msgpack writes ints of 64 bits at most; anything else (an enum, a path, a huge int) is
    # kept as its text, which says enough in a log.
    if isinstance(value, int) and not isinstance(value, bool):
        return value if INT64_MIN <= value <= UINT64_MAX else str(value)
    if isinstance(value, str):
        return _text(value)
    return value if isinstance(value, float | bool) else _text(str(value))


__all__ = [
    "COUNTERS_EVERY_S",
    "RecordingHandler",
    "TimerSource",
    "header_on",
    "keep_flushing",
    "new_header",
    "record_for",
    "recording_handler",
]
