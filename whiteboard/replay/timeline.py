"""A session log as a replay timeline: the changes to the board in the order the member made
them, each at the time it was made, who took part, and the network lane.

The board is rebuilt exactly as the live member's :class:`~whiteboard.replica.Replica` built
it, so that replayed boards hash like the live ones:

* a DELIVERED op is applied at its order key (a late one lands in its place in the order);
  presences are not ops and never touch the board; a payload that is not an op, or an op that
  claims another author than the member it came from, was refused live and is left out here;
* a STATE_RECEIVED board (a late joiner's: the board the others had) is adopted with every op
  the member already had added to it, as ``Replica.load_state`` does; one that cannot be
  loaded was refused live too, and is left out with a warning.

Every change gets a time that never goes back (the running maximum of the records' times), so
that "the board at time t" is the board after every change made at or before t.
"""

from __future__ import annotations

import contextlib
import os
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from whiteboard.board import (
    Board,
    DrawingOp,
    Op,
    OpDecodeError,
    OpId,
    OrderKey,
    SnapshotError,
    decode_op,
)
from whiteboard.carry import CarryDecodeError, decode_carried, is_carried
from whiteboard.pointer import PointerDecodeError, PointerPosition, decode_side
from whiteboard.presence import Presence, PresenceDecodeError, decode_presence, is_presence
from whiteboard.replay.network import NetworkMark, network_marks
from whiteboard.replica import carried_proven, open_payload, snapshot_op_proven
from whiteboard.security import OpAuthority
from whiteboard.sessionlog import (
    DeliveredRecord,
    LocalOpRecord,
    MemberRecord,
    SessionHeader,
    SessionLog,
    SideRecord,
    StateReceivedRecord,
    op_authority,
    read_log,
)
from whiteboard.sessionlog.reader import NO_SECRET
from whiteboard.sessionlog.sealing import Unlock


@dataclass(frozen=True, slots=True)
class OpStep:
    """An op delivered to the member, applied at its order key."""

    t_us: int
    key: OrderKey
    op: Op
    late: bool

    @property
    def entries(self) -> tuple[tuple[OrderKey, Op]]:
        """Its op with its key, as a :class:`StateStep` lists its ops."""
        return ((self.key, self.op),)


@dataclass(frozen=True, slots=True)
class StateStep:
    """A board given to the member on joining: its ops in order, as the snapshot held them."""

    t_us: int
    entries: tuple[tuple[OrderKey, Op], ...]
    size: int  # bytes of the snapshot


Step = OpStep | StateStep


@dataclass(frozen=True, slots=True)
class MemberInfo:
    """Someone in the recorded session, as far as the log tells."""

    member: int
    name: str  # from their presence; the member id in hex if they never sent one
    colour: int | None  # ARGB, from their presence
    ops: int  # their ops in the log: delivered, or on a board given on joining
    me: bool  # the member who recorded the log


@dataclass(frozen=True, slots=True)
class PointerSample:
    """Where a member pointed (its pointer or its laser), as the log sampled it (SIDE)."""

    t_us: int
    origin: int
    position: PointerPosition


@dataclass(frozen=True, slots=True)
class Timeline:
    name: str  # the log's file name, for titles and messages
    header: SessionHeader
    start_us: int  # when recording started
    end_us: int  # the last record's time
    steps: tuple[Step, ...]
    times: tuple[int, ...]  # each step's time: never decreasing
    members: tuple[MemberInfo, ...]  # the recording member first
    marks: tuple[NetworkMark, ...]
    refused: int  # payloads the live member refused too (not ops, or of another author)
    warnings: tuple[str, ...]  # about reading the log, and about boards that are not in it
    pointers: tuple[PointerSample, ...] = ()  # in time order (docs/session-log.md "SIDE")
    pointer_times: tuple[int, ...] = ()  # each pointer sample's time, for bisection

    def pointers_between(self, since_us: int, until_us: int) -> list[PointerSample]:
        """The pointer samples in (``since_us``, ``until_us``], oldest first."""
        low = bisect_right(self.pointer_times, since_us)
        high = bisect_right(self.pointer_times, until_us)
        return list(self.pointers[low:high])

    @property
    def duration_us(self) -> int:
        return self.end_us - self.start_us

    def count_at(self, t_us: int) -> int:
        """How many steps were made at or before ``t_us``."""
        return bisect_right(self.times, t_us)

    def clamp(self, t_us: int) -> int:
        return min(max(t_us, self.start_us), self.end_us)

    def member(self, member: int) -> MemberInfo | None:
        return next((info for info in self.members if info.member == member), None)

    def drawings(self) -> list[tuple[DrawingOp, OrderKey]]:
        """Every drawing op of the recording with its order key: all that any moment of it
        may show. The first op object of each id: after a board given on joining, the board
        holds the given board's object for an id it had already (an equal op)."""
        found: dict[OpId, tuple[DrawingOp, OrderKey]] = {}
        for step in self.steps:
            for key, op in step.entries:
                if isinstance(op, DrawingOp) and op.id not in found:
                    found[op.id] = (op, key)
        return list(found.values())


def load_timeline(path: str | os.PathLike[str], unlock: Unlock = NO_SECRET) -> Timeline:
    """Read a session log into a timeline (``unlock`` opens an encrypted one).
    :class:`~whiteboard.sessionlog.SessionLogError`, with a message naming the file, if it is
    not a readable session log."""
    return timeline_of(read_log(path, unlock), Path(path).name)


def timeline_of(log: SessionLog, name: str = "") -> Timeline:
    header = log.header
    start = header.t_us
    steps: list[Step] = []
    times: list[int] = []
    warnings = list(log.report.warnings)
    presences: dict[int, Presence] = {}
    seen: set[int] = {header.member_id}
    ops_by: Counter[int] = Counter()
    refused = 0
    last = start
    end = start
    # A private session's ops are taken only with a drawer's proof, as the member took them.
    authority = op_authority(header)
    pointers: list[PointerSample] = []
    for record in log.records:
        end = max(end, record.t_us)
        match record:
            case DeliveredRecord(origin=origin, payload=payload):
                seen.add(origin)
                if is_presence(payload):
                    _take_presence(presences, origin, payload)
                    continue
                try:
                    # A private session's: what a drawer proved, as the member judged it.
                    payload, _ = open_payload(payload, authority, record.t_us / 1e6)
                except OpDecodeError:  # not proven by a drawer (a viewer's), or not one
                    refused += 1
                    continue
                if is_carried(payload):
                    # Handed on by another member (whiteboard/carry.py): filed at the key it
                    # was first delivered with, as the live replica files it.
                    try:
                        carried = decode_carried(payload)
                    except CarryDecodeError:
                        refused += 1
                        continue
                    if not carried_proven(carried, authority):
                        refused += 1
                        continue
                    last = max(last, record.t_us)
                    steps.append(OpStep(last, carried.order_key, carried.op, record.late))
                    times.append(last)
                    ops_by[carried.op.id.author] += 1
                    seen.add(carried.op.id.author)
                    continue
                try:
                    op = decode_op(payload)
                except OpDecodeError:
                    refused += 1
                    continue
                if op.id.author != origin:
                    refused += 1
                    continue
                last = max(last, record.t_us)
                steps.append(OpStep(last, record.order_key, op, record.late))
                times.append(last)
                ops_by[origin] += 1
            case LocalOpRecord(payload=payload) if is_presence(payload):
                _take_presence(presences, header.member_id, payload)
            case MemberRecord(member=member):
                seen.add(member)
            case SideRecord(origin=origin, payload=payload):
                try:
                    message = decode_side(payload)
                except PointerDecodeError:
                    continue  # the live member would not have shown it either
                if isinstance(message, PointerPosition):
                    pointers.append(PointerSample(record.t_us, origin, message))
            case StateReceivedRecord():
                step = _state_step(record, max(last, record.t_us), start, warnings, authority)
                if step is not None:
                    last = step.t_us
                    steps.append(step)
                    times.append(last)
                    for _, op in step.entries:
                        ops_by[op.id.author] += 1
                        seen.add(op.id.author)
    members = [
        _member_info(member, header, presences.get(member), ops_by[member])
        for member in seen | set(ops_by)
    ]
    members.sort(key=lambda info: (not info.me, info.name.casefold(), info.member))
    pointers.sort(key=lambda sample: sample.t_us)  # a log's times may step back (clocks)
    return Timeline(
        name=name or log.report.name.strip('"'),
        header=header,
        start_us=start,
        end_us=max(end, last),
        steps=tuple(steps),
        times=tuple(times),
        members=tuple(members),
        marks=network_marks(header, log.records),
        refused=refused,
        warnings=tuple(warnings),
        pointers=tuple(pointers),
        pointer_times=tuple(sample.t_us for sample in pointers),
    )


def _take_presence(presences: dict[int, Presence], member: int, payload: bytes) -> None:
    # One that cannot be read was refused live too: the member keeps the name it had.
    with contextlib.suppress(PresenceDecodeError):
        presences[member] = decode_presence(payload)


def _state_step(
    record: StateReceivedRecord,
    t_us: int,
    start: int,
    warnings: list[str],
    authority: OpAuthority | None,
) -> StateStep | None:
    when = f"{(t_us - start) / 1e6:.1f} s in"
    if not record.state:
        warnings.append(
            f"the board given to this member on joining ({when}, {record.size:,} bytes) was too "
            "large to keep in the log: the replay goes on without it"
        )
        return None
    try:
        board = Board.from_snapshot(
            record.state, lambda op, proof: snapshot_op_proven(op, proof, authority)
        )
    except SnapshotError as exc:
        # The live member could not load it either (Replica.load_state), and kept its board.
        warnings.append(f"the board given to this member on joining ({when}) was unusable: {exc}")
        return None
    return StateStep(t_us, tuple(board.log()), record.size)


def _member_info(
    member: int, header: SessionHeader, presence: Presence | None, ops: int
) -> MemberInfo:
    me = member == header.member_id
    if presence is not None:
        name = presence.name
    elif me and header.member_name:
        name = header.member_name
    else:
        name = f"member {member:08x}"
    return MemberInfo(member, name, presence.colour if presence else None, ops, me)


__all__ = [
    "MemberInfo",
    "OpStep",
    "StateStep",
    "Step",
    "Timeline",
    "load_timeline",
    "timeline_of",
]
