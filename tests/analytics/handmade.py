"""A small set of session logs written by hand, whose every metric is worked out by hand in
test_metrics.py. Times are seconds after T0; ``at(s)`` is the microsecond time.

Board session 1, group G1, logs of ann (the reference: she delivered all ten ops) and bob
(joined at 4 s, so he delivered ops 3-10 only):

    #   time  author  op                                     ink
    1     0   ann     a:1 STROKE (0,0)-(3,4)-(3,10)          5 + 6 = 11
    2     2   ann     a:2 STROKE (0,0)-(0,1)                 1
    3     5   bob     b:1 STROKE (0,0)-(6,8)                 10
    4     8   ann     a:3 RECT
    5     9   bob     b:2 ERASE [a:2]                        (ann's work)
    6   100   cy      c:1 STROKE (1,1)-(4,5)                 5
    7   103   cy      c:2 MOVE [c:1, b:1]                    (one own, one bob's)
    8   104   ann     a:4 UNDO a:3                           (her own)
    9   180   bob     b:3 STROKE (0,0)-(0,2)                 2
   10   181   bob     b:4 UNDO c:1                           (cy's: the board ignores it)

cy recorded no log; dee drew nothing but bob's log saw her become active, and her presence
reached ann's log. Board session 2: eve alone on G1, after board 1 ended: a stroke at 1001 s,
a picture pasted at 1002 s (its BLOB, then its IMAGE in the box 10,10 - 50,40: one action,
the IMAGE, as the BLOB is no op of the board's) and a dot at 1003 s. Board session 3: fay
alone on G2, at the same time as board 1, never ready, no ops.

Board session 4, group G3, from 2000 s: where people drew. Only gus records a log; hal's
presence reaches it, ivy never says her name. Boxes are pen width 2, so 1 unit around the
points; cells are 64 units square, (column, row):

    #   time  op                                   box                 cells
    1   2000  gus:1 STROKE (10,10)-(50,10)         9,9 - 51,11         (0,0)
    2   2002  hal:1 STROKE (100,10)-(120,10)       99,9 - 121,11       (1,0)
    3   2004  ivy:1 STROKE (1000,1000)-(1010,1000) 999,999 - 1011,1001 (15,15)
    4   2028  ivy:2 RECT (10,20)-(50,40)           9,19 - 51,41        (0,0)
    5   2035  gus:2 TEXT (70,20) "hi", size 10     70,20 - 81,32       (1,0)
    6   2036  hal:2 ERASE [ivy:2]
    7   2037  ivy:3 MOVE [gus:1, gus:2]
    8   2038  hal:3 UNDO ivy:1                     (ivy's: the board ignores it)
    9   2045  gus:3 STROKE (2000,2000)-(2000,2130) 1999,1999 - 2001,2131 (31,31..33)
   10   2050  hal:4 RECT (0,0)-(5000,5000)         -1,-1 - 5001,5001   80 x 80: too many

The text's box is estimated (0.55 x 10 per character, 1.2 x 10 per line).

Attention in board session 1 (issue 19): ann's log has her own pointer at 10.0-10.9 s (ten
samples) and 12.0 and 12.5 s (two: 12 samples in 2 whole seconds), her laser at 20.0, 20.1,
20.2 and 25.0 s (two uses, four samples), a view asking everyone to follow at 30 s, and bob's
pointer at 11 s (his, not hers: it counts for nobody, as it is not in his own log). Bob's log
has him following ann from 40 to 70 s and from 150 s to its end at 190 s: two follows, 70 s.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from whiteboard.board import (
    Blob,
    Erase,
    Image,
    Move,
    Op,
    OpId,
    OpKind,
    Shape,
    Stroke,
    Text,
    Undo,
    encode_op,
)
from whiteboard.pointer import PointerKind, PointerPosition, SharedView, encode_pointer, encode_view
from whiteboard.presence import BoardFingerprint, Presence, encode_presence
from whiteboard.sessionlog import (
    CountersRecord,
    DeliveredRecord,
    EndRecord,
    FollowRecord,
    MemberRecord,
    ReadyRecord,
    Record,
    SessionHeader,
    SessionLogWriter,
    SideRecord,
)

T0 = datetime(2024, 3, 11, 10, 0, 0, tzinfo=UTC)
ANN, BOB, CY, DEE, EVE, FAY, GUS, HAL, IVY = 11, 22, 33, 44, 55, 66, 77, 88, 99
G1, G2, G3 = "239.255.1.1:5000", "239.255.2.2:5000", "239.255.3.3:5000"
BLACK = 0xFF000000

BOARD1 = "2024-03-11T09:59:58Z rmp 239.255.1.1:5000"  # ann's log starts 2 s before T0
BOARD2 = "2024-03-11T10:16:40Z rmp 239.255.1.1:5000"  # T0 + 1000 s
BOARD3 = "2024-03-11T10:00:00Z rmp 239.255.2.2:5000"
BOARD4 = "2024-03-11T10:33:19Z rmp 239.255.3.3:5000"  # gus's log starts at T0 + 1999 s


def at(seconds: float) -> int:
    return round((T0.timestamp() + seconds) * 1_000_000)


def stroke(author: int, counter: int, *points: float) -> Stroke:
    return Stroke(OpId(author, counter), points, BLACK, 2.0)


# (time, op): board session 1 in ann's delivery order.
BOARD1_OPS: tuple[tuple[float, Op], ...] = (
    (0, stroke(ANN, 1, 0, 0, 3, 4, 3, 10)),
    (2, stroke(ANN, 2, 0, 0, 0, 1)),
    (5, stroke(BOB, 1, 0, 0, 6, 8)),
    (8, Shape(OpId(ANN, 3), OpKind.RECT, 0, 0, 50, 50, BLACK, 1.0)),
    (9, Erase(OpId(BOB, 2), (OpId(ANN, 2),))),
    (100, stroke(CY, 1, 1, 1, 4, 5)),
    (103, Move(OpId(CY, 2), (OpId(CY, 1), OpId(BOB, 1)), 5.0, 5.0)),
    (104, Undo(OpId(ANN, 4), OpId(ANN, 3))),
    (180, stroke(BOB, 3, 0, 0, 0, 2)),
    (181, Undo(OpId(BOB, 4), OpId(CY, 1))),
)
BOARD4_OPS: tuple[tuple[float, Op], ...] = (
    (2000, stroke(GUS, 1, 10, 10, 50, 10)),
    (2002, stroke(HAL, 1, 100, 10, 120, 10)),
    (2004, stroke(IVY, 1, 1000, 1000, 1010, 1000)),
    (2028, Shape(OpId(IVY, 2), OpKind.RECT, 10, 20, 50, 40, BLACK, 2.0)),
    (2035, Text(OpId(GUS, 2), 70, 20, "hi", BLACK, 10.0)),
    (2036, Erase(OpId(HAL, 2), (OpId(IVY, 2),))),
    (2037, Move(OpId(IVY, 3), (OpId(GUS, 1), OpId(GUS, 2)), 5.0, 5.0)),
    (2038, Undo(OpId(HAL, 3), OpId(IVY, 1))),
    (2045, stroke(GUS, 3, 2000, 2000, 2000, 2130)),
    (2050, Shape(OpId(HAL, 4), OpKind.RECT, 0, 0, 5000, 5000, BLACK, 2.0)),
)
# A picture's bytes for the metrics: the board checks the PNG signature only, and nothing here
# paints them (the replay's picture is a real one: report_logs.py).
PICTURE = Blob(OpId(EVE, 2), b"\x89PNG\r\n\x1a\n" + b"not decoded by the metrics")
EVE_OPS: tuple[tuple[float, Op], ...] = (
    (1001, stroke(EVE, 1, 0, 0, 30, 40)),
    (1002, PICTURE),
    (1002, Image(OpId(EVE, 3), PICTURE.digest, 10, 10, 40, 30)),  # no ink; a box
    (1003, stroke(EVE, 4, 5, 5)),  # a dot: no length
)


def header(member: int, name: str, start: float, group: str = G1) -> SessionHeader:
    return log_header(member, name, at(start), group, f"{name}-{member}-log")


def log_header(member: int, name: str, t_us: int, group: str, session_id: str) -> SessionHeader:
    """The header of a hand-made RMP log (for these logs and report_logs')."""
    return SessionHeader(
        t_us=t_us,
        session_id=session_id,
        app_version="0.1.0",
        transport="rmp",
        params={"profile": "lan"},
        group=group,
        iface=None,
        ttl=1,
        member_id=member,
        member_name=name,
    )


def delivered(time: float, op: Op, late: bool = False) -> DeliveredRecord:
    key = (at(time), op.id.author, op.id.counter)
    return DeliveredRecord(at(time), op.id.author, key, at(time), late, encode_op(op))


def presence(time: float, member: int, name: str) -> DeliveredRecord:
    payload = encode_presence(Presence(name, BLACK, BoardFingerprint(0, None, "00" * 32)))
    return DeliveredRecord(at(time), member, (at(time), member, 99), at(time), False, payload)


def pointing(time: float, origin: int, kind: PointerKind = PointerKind.POINTER) -> SideRecord:
    position = PointerPosition(float(time), 1.0, True, at(time), kind)
    return SideRecord(at(time), origin, encode_pointer(position))


def asking(time: float, origin: int) -> SideRecord:
    return SideRecord(at(time), origin, encode_view(SharedView(0.0, 0.0, 9.0, 9.0, True, 0)))


def write(folder: Path, head: SessionHeader, records: list[Record]) -> Path:
    with SessionLogWriter.create(head, folder) as writer:
        for record in sorted(records, key=lambda r: r.t_us):
            writer.append(record)
    return writer.path


def write_logs(folder: Path) -> list[Path]:
    """The five logs, in ``folder``."""
    ann: list[Record] = [
        ReadyRecord(at(-0.5)),  # joined after 1.5 s
        MemberRecord(at(1), BOB, "active"),
        MemberRecord(at(99), CY, "active"),
        presence(50, DEE, "dee"),
        CountersRecord(at(60), {"nacks_sent": 1, "nacks_received": 0, "retransmissions": 0}),
        CountersRecord(at(199), {"nacks_sent": 3, "nacks_received": 1, "retransmissions": 2}),
        EndRecord(at(200)),
    ]
    ann += [delivered(time, op, late=index == 8) for index, (time, op) in enumerate(BOARD1_OPS)]
    ann += [pointing(10 + k / 10, ANN) for k in range(10)] + [
        pointing(12, ANN),
        pointing(12.5, ANN),
        pointing(11, BOB),
        *(pointing(t, ANN, PointerKind.LASER) for t in (20, 20.1, 20.2, 25)),
        asking(30, ANN),
    ]
    bob: list[Record] = [
        ReadyRecord(at(4)),  # joined after 3 s
        MemberRecord(at(30), DEE, "active"),
        CountersRecord(at(185), {"nacks_sent": 0, "nacks_received": 5, "retransmissions": 4}),
        FollowRecord(at(40), ANN),
        FollowRecord(at(70), 0),
        FollowRecord(at(150), ANN),
        EndRecord(at(190)),
    ]
    bob += [
        delivered(time + 0.01, op, late=index in (4, 5))
        for index, (time, op) in enumerate(BOARD1_OPS)
        if index >= 2
    ]
    eve: list[Record] = [
        ReadyRecord(at(1000.5)),
        *(delivered(time, op) for time, op in EVE_OPS),
        EndRecord(at(1010)),
    ]
    fay: list[Record] = [EndRecord(at(30))]
    gus: list[Record] = [
        ReadyRecord(at(1999.5)),
        presence(2001, HAL, "hal"),
        *(delivered(time, op) for time, op in BOARD4_OPS),
        EndRecord(at(2060)),
    ]
    return [
        write(folder, header(ANN, "ann", -2), ann),
        write(folder, header(BOB, "bob", 1), bob),
        write(folder, header(EVE, "eve", 1000), eve),
        write(folder, header(FAY, "fay", 0, G2), fay),
        write(folder, header(GUS, "gus", 1999, G3), gus),
    ]
