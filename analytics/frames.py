"""What the ``replay`` job runs on the executors: folding a reference log's records into a
board, and painting a board into a PNG of a given size. No Spark here: :mod:`analytics.replay`
wraps these in Python UDFs, and tests call them directly.

The board is folded exactly as the live app folds it: a :class:`~whiteboard.replica.Replica`
is given each delivered op (presences were left out before) and, where the log received the
board from another member when joining, that board (:meth:`Replica.load_state`). The board is
a deterministic function of its ops and their order keys, so a fold that starts from a
keyframe (a snapshot of the board after the first *k* records) ends with the very board, and
the very hash, of a fold from the start.

Painting goes through :mod:`whiteboard.app.render`, the code the app's canvas paints with.
Qt is imported only when painting, so the keyframe fold needs no Qt.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from whiteboard.board import Board, SnapshotError
from whiteboard.board.files import write_atomically
from whiteboard.board.geometry import placed_rect
from whiteboard.replica import Replica
from whiteboard.sessionlog.rows import op_bbox
from whiteboard.transport.events import Delivered

if TYPE_CHECKING:
    from PySide6.QtGui import QGuiApplication

# Room around the drawings, in board units (as whiteboard.app.export's MARGIN).
VIEW_MARGIN = 24.0
# The view of a board with no drawings at all (as whiteboard.app.export's EMPTY_AREA).
EMPTY_VIEW = (0.0, 0.0, 320.0, 240.0)
WHITE = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class FoldRecord:
    """One record of a reference log that changes its board, in the log's order ``n``
    (1, 2, ...): a delivered op (``payload`` with its ``origin`` and ``order_key``) or a board
    given by another member when joining (``state``)."""

    n: int
    origin: int | None = None
    order_key: tuple[int, ...] | None = None
    payload: bytes | None = None
    state: bytes | None = None


@dataclass
class FoldStats:
    records: int = 0  # records folded
    no_key: int = 0  # ops whose order key the rows could not hold (beyond int64): left out
    rejected: int = 0  # payloads the replica refused, as the live app would have
    bad_states: int = 0  # boards from other members that could not be loaded


@dataclass(frozen=True, slots=True)
class View:
    """The part of the board a session's frames show, in board units: the same for every
    frame of a session, so that they can be flipped through."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def as_list(self) -> list[float]:
        return [self.x0, self.y0, self.x1, self.y1]


@dataclass
class Keyframes:
    """The result of a board session's fold: the snapshots asked for, by record count, the
    view its frames share and the board at the end."""

    snapshots: dict[int, bytes] = field(default_factory=dict)
    view: View = field(default_factory=lambda: View(*EMPTY_VIEW))
    final_hash: str = ""
    stats: FoldStats = field(default_factory=FoldStats)


def fold(replica: Replica, records: Iterable[FoldRecord], stats: FoldStats) -> None:
    """Apply ``records`` (in order) to ``replica`` as the live app applied them."""
    for record in records:
        stats.records += 1
        if record.state is not None:
            try:
                replica.load_state(record.state)
            except SnapshotError:
                stats.bad_states += 1
            continue
        if record.payload is None or record.origin is None:
            continue
        if record.order_key is None:
            stats.no_key += 1
            continue
        event = Delivered(record.origin, record.order_key, 0.0, record.payload, False, 0.0)
        if replica.apply_delivered(event) is None:
            stats.rejected += 1


def keyframes(records: Sequence[FoldRecord], wanted: Iterable[int]) -> Keyframes:
    """Fold every record of a board session, keeping a snapshot of the board after each
    record count in ``wanted``; the view is computed from every op the board ever held."""
    stops = sorted(set(wanted), reverse=True)  # popped from the end: smallest first
    result = Keyframes()
    replica = Replica()
    for record in sorted(records, key=lambda r: r.n):
        while stops and record.n > stops[-1]:
            result.snapshots[stops.pop()] = replica.snapshot()
        fold(replica, (record,), result.stats)
    for stop in stops:
        result.snapshots[stop] = replica.snapshot()
    result.view = view_of(replica.board)
    result.final_hash = replica.board.hash()
    return result


def board_at(snapshot: bytes | None, records: Sequence[FoldRecord]) -> tuple[Board, FoldStats]:
    """The board of a keyframe (None: the empty board) with ``records`` folded on top."""
    replica = Replica()
    stats = FoldStats()
    if snapshot is not None:
        replica.load_state(snapshot)  # made by keyframes(): a SnapshotError is a bug
    fold(replica, sorted(records, key=lambda r: r.n), stats)
    return replica.board, stats


def view_of(board: Board) -> View:
    """The box around every drawing the board ever held (erased and undone ones too, so that
    earlier frames fit), where it was drawn and where it is now, plus a margin."""
    boxes: list[list[float]] = []
    for _, op in board.log():
        box = op_bbox(op)
        if box is not None:
            boxes.append(box)
    for obj in board.objects():
        if obj.dx or obj.dy or obj.linear is not None:
            box = op_bbox(obj.op)
            if box is not None:
                placed = placed_rect((box[0], box[1], box[2], box[3]), obj.dx, obj.dy, obj.linear)
                boxes.append(list(placed))
    finite = [b for b in boxes if all(math.isfinite(v) for v in b)]
    if not finite:
        return View(*EMPTY_VIEW)
    return View(
        min(b[0] for b in finite) - VIEW_MARGIN,
        min(b[1] for b in finite) - VIEW_MARGIN,
        max(b[2] for b in finite) + VIEW_MARGIN,
        max(b[3] for b in finite) + VIEW_MARGIN,
    )


# -- painting --------------------------------------------------------------------------------


def qt_application() -> QGuiApplication:
    """This process's QGuiApplication, made on first use. An executor's Python worker has no
    display: Qt's offscreen platform paints into memory (set here too, in case the executor's
    environment lacks QT_QPA_PLATFORM). Qt allows one per process, and it must outlive every
    painting, so it is never deleted: Qt keeps it as its instance."""
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QGuiApplication([])
    assert isinstance(app, QGuiApplication)
    return app


def render_png(board: Board, view: View, width: int, height: int) -> bytes:
    """``board`` inside ``view``, scaled to fit a ``width`` x ``height`` picture (centred, on
    white), as PNG bytes."""
    qt_application()
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    from whiteboard.app.pictures import Pictures
    from whiteboard.app.render import paint_objects

    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor.fromRgba(WHITE))
    scale = min(width / view.width, height / view.height)
    area = QRectF(view.x0, view.y0, view.width, view.height)
    painter = QPainter()
    if not painter.begin(image):
        raise RuntimeError("Qt could not paint into an image")
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        # Centred: the view keeps its proportions, whatever the picture's.
        painter.translate((width - view.width * scale) / 2, (height - view.height * scale) / 2)
        painter.scale(scale, scale)
        painter.translate(-view.x0, -view.y0)
        painter.setClipRect(area)
        paint_objects(painter, board.objects(), area, pictures=Pictures(board.blob))
    finally:
        painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # The binding takes the format as str; its stub says bytes, which it refuses at run time.
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]
        raise RuntimeError("Qt could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def write_png(path: Path, data: bytes) -> None:
    """Write a frame whole or not at all (a task Spark retries writes it again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, data)


def worker_name() -> str:
    """Which process this is, for the frames table: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


__all__ = [
    "EMPTY_VIEW",
    "VIEW_MARGIN",
    "FoldRecord",
    "FoldStats",
    "Keyframes",
    "View",
    "board_at",
    "fold",
    "keyframes",
    "qt_application",
    "render_png",
    "view_of",
    "worker_name",
]
