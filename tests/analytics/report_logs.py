"""Hand-built session logs for the report and replay tests, their answers worked out here.

Times are seconds after T0 (a whole minute, so that minutes of the timeline start at T0).

**Board A** (group GA): logs of ann and bob, both recorded from -2 s to 200 s and delivering
all five ops (ann's log is the reference: it starts first). Their names are user input with
HTML in it.

    time  author  op                          ink  minute
       0  ann     a:1 STROKE (0,0)-(3,4)        5  0
      10  ann     a:2 STROKE (0,0)-(6,8)       10  0
      70  bob     b:1 STROKE (0,0)-(0,2)        2  1
      75  bob     b:2 ERASE [a:1]                  1      (ann's work: bob -> ann, 1 edit)
     130  ann     a:3 STROKE (0,0)-(0,1)        1  2      (ann's log: delivered late)

Contribution: ann 3 ops, ink 16, active 10 s (the 120 s gap is idle); bob 2 ops, ink 2,
active 5 s. Timeline (ops per minute): ann 2, 0, 1; bob 0, 2, 0. Interactions: no co-edits
(no drawings of the two within 10 s), bob edited ann's work once: weight 1. Network: ann
joined in 1.5 s, 3 NACKs sent, 2 retransmissions, 1 late delivery; bob joined in 3 s, 0
NACKs, 4 retransmissions, 0 late.

**Board B** (group GB): eve alone, two strokes: Gini 0, no hand-offs.

**Board J** (group GJ), for replay: a late joiner is the reference. ann delivers her three
strokes (1, 2, 3 s) and leaves at 10 s; bob joins at 5 s and is given the board (a snapshot
of ann's three strokes) at 6 s, then delivers cy's four ops (20-23 s; cy recorded no log),
the last of which erases a:2, and at 24 s cy's picture (issue 20): a real PNG, 64 x 48 px of
solid GREEN (its BLOB), shown stretched in the box 160,30 - 256,102 (its IMAGE). bob's log
delivered the most ops (6 against 3): it is the reference, and its board starts from the
snapshot.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from PySide6.QtGui import QColor, QImage

from tests.analytics.handmade import log_header, write
from whiteboard.app.pictures import encode_picture
from whiteboard.board import Blob, Board, Erase, Image, Op, OpId, Stroke, encode_op
from whiteboard.sessionlog import (
    CountersRecord,
    DeliveredRecord,
    EndRecord,
    ReadyRecord,
    Record,
    SessionHeader,
    StateReceivedRecord,
)

T0 = datetime(2024, 5, 6, 8, 0, 0, tzinfo=UTC)
ANN, BOB, CY, EVE = 101, 202, 303, 404
ANN_NAME = 'Ann & <Co> "quoted"'
BOB_NAME = "<script>alert('bob')</script>"
EVE_NAME = "eve"
GA, GB, GJ = "239.255.10.1:5000", "239.255.10.2:5000", "239.255.10.3:5000"
BLACK = 0xFF000000
GREEN = 0xFF00A000  # board J's picture: nothing else drawn is green

BOARD_A = "2024-05-06T07:59:58Z rmp 239.255.10.1:5000"
BOARD_B = "2024-05-06T08:00:00Z rmp 239.255.10.2:5000"
BOARD_J = "2024-05-06T08:00:00Z rmp 239.255.10.3:5000"


def at(seconds: float) -> int:
    return round((T0.timestamp() + seconds) * 1_000_000)


def stroke(author: int, counter: int, *points: float) -> Stroke:
    return Stroke(OpId(author, counter), points, BLACK, 2.0)


def key(time: float, op: Op) -> tuple[int, ...]:
    return (at(time), op.id.author, op.id.counter)


@cache
def green_png() -> bytes:
    """A real picture, for the replay to decode and paint: 64 x 48 px of solid GREEN, encoded
    as PNG by Qt (a QImage needs no QGuiApplication)."""
    image = QImage(64, 48, QImage.Format.Format_RGB32)
    image.fill(QColor.fromRgba(GREEN))
    return encode_picture(image)


BOARD_A_OPS: tuple[tuple[float, Op], ...] = (
    (0, stroke(ANN, 1, 0, 0, 3, 4)),
    (10, stroke(ANN, 2, 0, 0, 6, 8)),
    (70, stroke(BOB, 1, 0, 0, 0, 2)),
    (75, Erase(OpId(BOB, 2), (OpId(ANN, 1),))),
    (130, stroke(ANN, 3, 0, 0, 0, 1)),
)
BOARD_B_OPS: tuple[tuple[float, Op], ...] = (
    (5, stroke(EVE, 1, 0, 0, 30, 40)),
    (20, stroke(EVE, 2, 10, 10, 20, 10)),
)
JOINED_OPS: tuple[tuple[float, Op], ...] = (  # ann's, in the snapshot bob was given
    (1, stroke(ANN, 1, 0, 0, 40, 30)),
    (2, stroke(ANN, 2, 10, 50, 90, 50)),
    (3, stroke(ANN, 3, 60, 0, 60, 80)),
)
PICTURE = Blob(OpId(CY, 5), green_png())
PICTURE_BOX = (160.0, 30.0, 96.0, 72.0)  # x, y, width, height: the picture stretched 1.5x
AFTER_JOIN_OPS: tuple[tuple[float, Op], ...] = (  # cy's, delivered by bob
    (20, stroke(CY, 1, 100, 100, 140, 130)),
    (21, stroke(CY, 2, 0, 100, 30, 140)),
    (22, stroke(CY, 3, 120, 0, 150, 20)),
    (23, Erase(OpId(CY, 4), (OpId(ANN, 2),))),
    # A pasted picture, as the app sends it: its bytes, then the IMAGE showing them.
    (24, PICTURE),
    (24, Image(OpId(CY, 6), PICTURE.digest, *PICTURE_BOX)),
)


def header(member: int, name: str, start: float, group: str) -> SessionHeader:
    session_id = f"report-{member}-{group[-9:-5].replace('.', '')}"
    return log_header(member, name, at(start), group, session_id)


def delivered(time: float, op: Op, late: bool = False) -> DeliveredRecord:
    return DeliveredRecord(at(time), op.id.author, key(time, op), at(time), late, encode_op(op))


def write_report_logs(folder: Path) -> list[Path]:
    """Boards A and B: three logs in ``folder``."""
    ann: list[Record] = [
        ReadyRecord(at(-0.5)),
        *(delivered(t, op, late=op.id == OpId(ANN, 3)) for t, op in BOARD_A_OPS),
        CountersRecord(at(150), {"nacks_sent": 3, "nacks_received": 0, "retransmissions": 2}),
        EndRecord(at(200)),
    ]
    bob: list[Record] = [
        ReadyRecord(at(1)),
        *(delivered(t + 0.01, op) for t, op in BOARD_A_OPS),
        CountersRecord(at(150), {"nacks_sent": 0, "nacks_received": 3, "retransmissions": 4}),
        EndRecord(at(200)),
    ]
    eve: list[Record] = [
        ReadyRecord(at(1)),
        *(delivered(t, op) for t, op in BOARD_B_OPS),
        EndRecord(at(100)),
    ]
    return [
        write(folder, header(ANN, ANN_NAME, -2, GA), ann),
        write(folder, header(BOB, BOB_NAME, -2, GA), bob),
        write(folder, header(EVE, EVE_NAME, 0, GB), eve),
    ]


def joined_snapshot() -> bytes:
    """The board bob was given when joining board J: ann's three strokes."""
    board = Board()
    for time, op in JOINED_OPS:
        board.apply(key(time, op), op)
    return board.snapshot()


def write_joiner_logs(folder: Path) -> list[Path]:
    """Board J: ann's log and bob's (the reference, which starts from a snapshot)."""
    ann: list[Record] = [
        ReadyRecord(at(0.5)),
        *(delivered(t, op) for t, op in JOINED_OPS),
        EndRecord(at(10)),
    ]
    state = joined_snapshot()
    bob: list[Record] = [
        StateReceivedRecord(at(6), len(state), 1_000_000, state),
        ReadyRecord(at(6)),
        *(delivered(t, op) for t, op in AFTER_JOIN_OPS),
        EndRecord(at(40)),
    ]
    return [
        write(folder, header(ANN, "ann", 0, GJ), ann),
        write(folder, header(BOB, "bob", 5, GJ), bob),
    ]


def board_of(ops: tuple[tuple[float, Op], ...]) -> Board:
    """The board of ``ops``, each at its time's order key: the expected answer, computed
    with the board model alone (no replica, no Spark)."""
    board = Board()
    for time, op in ops:
        board.apply(key(time, op), op)
    return board
