"""The network lane of a replay: what the transport did, as marks on the session's timeline.

Taken from a session log's records (docs/session-log.md): NACKs this member sent, NACKs it
received, retransmissions, members joining and leaving, boards handed over on joining, and
failures. Most come one record each; a few only as counters (NACKs received on every
transport, retransmissions on MTP), which become one mark per counters snapshot holding the
increase since the previous one, at the snapshot's time (they happened in the ~5 s before).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from coreapi.description import EventKind
from whiteboard.sessionlog import (
    CountersRecord,
    FailureRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    Record,
    SessionHeader,
    StateReceivedRecord,
    StateSentRecord,
)
from whiteboard.transport.registry import TransportUnavailable, describe


class MarkKind(Enum):
    """A kind of mark on the network lane, with its words for the legend and tooltips."""

    NACK_SENT = "NACK sent"
    NACK_RECEIVED = "NACK received"
    RETRANSMISSION = "retransmission"
    JOIN = "join"
    LEAVE = "leave"
    BOARD_TRANSFER = "board transfer"
    FAILURE = "failure"

    @property
    def label(self) -> str:
        return self.value


# What a protocol event means (its transport's description says) -> its mark.
_MARKS: dict[EventKind, MarkKind] = {
    EventKind.NACK_SENT: MarkKind.NACK_SENT,
    EventKind.RETRANSMISSION: MarkKind.RETRANSMISSION,
}
# Counters whose increase is a mark: what no transport reports one by one.
COUNTER_NACKS_RECEIVED = "nacks_received"
COUNTER_RETRANSMISSIONS = "retransmissions"


@dataclass(frozen=True, slots=True)
class NetworkMark:
    t_us: int
    kind: MarkKind
    count: int = 1  # events the mark stands for (a counters snapshot's increase)
    member: int | None = None  # who joined or left
    detail: str = ""  # in words, for a tooltip


def network_marks(header: SessionHeader, records: Iterable[Record]) -> tuple[NetworkMark, ...]:
    """The marks of a log's records, in time order; times before the log's start (a clock that
    jumped back) are put at the start."""
    start = header.t_us
    protocol_marks = _protocol_marks(header.transport)
    marks: list[NetworkMark] = []
    counted: list[NetworkMark] = []  # retransmissions from counters, if none came one by one
    retransmission_events = False
    last_counters: dict[str, int] = {}
    present: set[int] = set()
    for record in records:
        t = max(record.t_us, start)
        match record:
            case ProtocolRecord(name=name) if name in protocol_marks:
                kind = protocol_marks[name]
                retransmission_events |= kind is MarkKind.RETRANSMISSION
                marks.append(NetworkMark(t, kind, detail=_fields_text(record)))
            case CountersRecord(counters=counters):
                for name, kind, into in (
                    (COUNTER_NACKS_RECEIVED, MarkKind.NACK_RECEIVED, marks),
                    (COUNTER_RETRANSMISSIONS, MarkKind.RETRANSMISSION, counted),
                ):
                    increase = _increase(last_counters.get(name, 0), counters.get(name))
                    if increase:
                        into.append(NetworkMark(t, kind, increase, detail="counted"))
                last_counters.update(counters)
            case MemberRecord(member=member, state=state):
                if state in ("joining", "active") and member not in present:
                    present.add(member)
                    marks.append(NetworkMark(t, MarkKind.JOIN, member=member, detail=state))
                elif state == "left":
                    present.discard(member)
                    marks.append(NetworkMark(t, MarkKind.LEAVE, member=member, detail="left"))
                elif state == "suspected":
                    marks.append(
                        NetworkMark(t, MarkKind.LEAVE, member=member, detail="not heard from")
                    )
            case ReadyRecord():
                marks.append(
                    NetworkMark(t, MarkKind.JOIN, member=header.member_id, detail="you joined")
                )
            case StateReceivedRecord(size=size):
                marks.append(
                    NetworkMark(t, MarkKind.BOARD_TRANSFER, detail=f"board received, {size:,} B")
                )
            case StateSentRecord():
                marks.append(
                    NetworkMark(t, MarkKind.BOARD_TRANSFER, detail="board sent to a joiner")
                )
            case FailureRecord(reason=reason):
                marks.append(NetworkMark(t, MarkKind.FAILURE, detail=reason))
    if not retransmission_events:
        # A transport that counts its retransmissions only (MTP); one that reports each one
        # (RMP) would have them counted twice.
        marks.extend(counted)
    marks.sort(key=lambda mark: mark.t_us)  # stable: records' order among equal times
    return tuple(marks)


def _protocol_marks(transport: str) -> dict[str, MarkKind]:
    """The protocol events of ``transport`` that are a mark each, by the core's name for them;
    none for a log of a transport this build does not have."""
    try:
        events = describe(transport).events
    except TransportUnavailable:
        return {}
    return {name: _MARKS[kind] for name, kind in events.items() if kind in _MARKS}


def _increase(previous: int, current: int | None) -> int:
    if current is None:
        return 0
    # A counter that went down was reset (a transport restarted): all of it is new.
    return current - previous if current >= previous else current


def _fields_text(record: ProtocolRecord) -> str:
    fields = ", ".join(f"{key} {value}" for key, value in record.fields.items())
    return f"{record.name} ({fields})" if fields else record.name


def count_by_kind(marks: Iterable[NetworkMark]) -> dict[MarkKind, int]:
    """Events per kind (a counted mark is as many events as it counts)."""
    totals: dict[MarkKind, int] = {}
    for mark in marks:
        totals[mark.kind] = totals.get(mark.kind, 0) + mark.count
    return totals


__all__ = ["MarkKind", "NetworkMark", "count_by_kind", "network_marks"]
