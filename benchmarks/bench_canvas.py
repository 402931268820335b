"""Canvas speed: python benchmarks/bench_canvas.py [N] [--images M].

A board of N synthetic strokes (10,000 by default, seeded) in a 1200x800 canvas, offscreen;
with ``--images M`` (issue 20), also M real pictures among them: each a 400x300 PNG made with
Qt (a gradient, a few discs and some noise, so that it is neither trivial to encode nor to
decode, about 275 KiB), sent as the app sends one (a BLOB of its bytes, then the IMAGE showing
it, shown at its size) at a random place in the order and on the board (the strokes are the
same as without); the canvas decodes and paints them through whiteboard/app/pictures.py:

* rendering from scratch: a new canvas until every tile in view is rendered, at 100% (part
  of the board in view) and fitted (all of it in view);
* pan and zoom frames: the time of one repaint while panning 8 px or zooming 5% a frame
  (between frames the event loop runs, as it would at 60 Hz, and renders tiles in slices);
* a late op: a stroke inserted in the middle of the order, through Board.apply,
  board_changed and the repaint Qt then does of what changed (the posted update, as at the
  next turn of the event loop); and an op delivered on top, the usual case;
* a whole-window repaint while the most recent objects the canvas keeps above its tiles
  (RECENT_LIMIT, see board_layers.py) are in view: what a pan frame costs while others draw.

Each figure is several repetitions: median and max. Targets (issue 5): from scratch < 1 s,
pan/zoom frame < 16 ms, late op < 20 ms.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import cast

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QEvent, QPointF
from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter
from PySide6.QtWidgets import QApplication

from whiteboard.app.board_layers import RECENT_LIMIT
from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.collector import FreezeSchedule
from whiteboard.app.pictures import encode_picture
from whiteboard.app.render import prepare_painting
from whiteboard.board import Blob, Board, Image, Op, OpId, synthetic_stroke
from whiteboard.board.synthetic import AREA_HEIGHT, AREA_WIDTH

WIDTH, HEIGHT = 1200, 800
REPEATS = 5
FRAMES = 60
PICTURE_WIDTH, PICTURE_HEIGHT = 400, 300
PICTURE_AUTHOR = 6  # the strokes' authors are 1 to 5


def report(name: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000.0 for s in seconds)
    tail = f", 90th percentile {ms[len(ms) * 9 // 10]:.1f} ms" if len(ms) >= 50 else ""
    print(
        f"{name}: median {statistics.median(ms):.1f} ms{tail}, max {ms[-1]:.1f} ms ({len(ms)} runs)"
    )


def full_collections() -> list[float]:
    """Three full collections by Python's cyclic garbage collector, timed."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - start)
    return times


def make_board(count: int, images: int = 0) -> Board:
    rng = random.Random(1)
    ops: list[tuple[int, Op]] = []
    for i in range(count):
        # Keys 10 apart leave room for late inserts in between.
        ops.append((10 * (i + 1), synthetic_stroke(1 + i % 5, i, rng)))
    if images:
        ops.extend(picture_ops(images, count))
        ops.sort(key=lambda pair: pair[0])
    board = Board()
    for key, op in ops:
        board.apply((key,), op)
    return board


def picture(rng: random.Random) -> bytes:
    """A PNG of PICTURE_WIDTH x PICTURE_HEIGHT: a gradient, discs and noise (Qt, not decoded
    by anything but Qt)."""
    width, height = PICTURE_WIDTH, PICTURE_HEIGHT
    image = QImage(width, height, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    gradient = QLinearGradient(QPointF(0, 0), QPointF(width, height))
    gradient.setColorAt(0.0, QColor.fromRgb(rng.randrange(1 << 24)))
    gradient.setColorAt(1.0, QColor.fromRgb(rng.randrange(1 << 24)))
    painter.fillRect(image.rect(), gradient)
    painter.setPen(QColor(0, 0, 0, 0))
    for _ in range(12):
        painter.setBrush(QColor.fromRgba((rng.randrange(64, 224) << 24) | rng.randrange(1 << 24)))
        side = rng.uniform(20, 160)
        painter.drawEllipse(QPointF(rng.uniform(0, width), rng.uniform(0, height)), side, side)
    noise = bytearray(rng.randbytes(width * height * 4))
    noise[3::4] = bytes([48]) * (width * height)  # about a fifth opaque: grain, not snow
    grain = QImage(bytes(noise), width, height, QImage.Format.Format_ARGB32).copy()
    painter.drawImage(0, 0, grain)
    painter.end()
    return encode_picture(image)


def picture_ops(images: int, strokes: int) -> list[tuple[int, Op]]:
    """``images`` pictures, each a BLOB and its IMAGE (keys one apart between two strokes'),
    at a random place in the order and in the strokes' area, shown at their size."""
    rng = random.Random(2)
    ops: list[tuple[int, Op]] = []
    for n in range(images):
        blob = Blob(OpId(PICTURE_AUTHOR, 2 * n), picture(rng))
        x = rng.uniform(0.0, AREA_WIDTH - PICTURE_WIDTH)
        y = rng.uniform(0.0, AREA_HEIGHT - PICTURE_HEIGHT)
        image = Image(
            OpId(PICTURE_AUTHOR, 2 * n + 1), blob.digest, x, y, PICTURE_WIDTH, PICTURE_HEIGHT
        )
        key = 10 * rng.randrange(0, strokes + 1) + 3
        ops += [(key, blob), (key + 1, image)]
    return ops


def make_canvas(board: Board) -> BoardCanvas:
    counter = iter(range(1, 1 << 30))
    canvas = BoardCanvas(lambda: board, lambda: OpId(99, next(counter)))
    canvas.resize(WIDTH, HEIGHT)
    canvas.show()
    return canvas


def paint_changes(canvas: BoardCanvas) -> None:
    """Paint what the canvas asked to repaint, as the event loop's next turn would."""
    QCoreApplication.sendPostedEvents(canvas, QEvent.Type.UpdateRequest)


def from_scratch(board: Board, app: QApplication, fitted: bool) -> list[float]:
    times = []
    for _ in range(REPEATS):
        app.processEvents()
        gc.collect()  # the last run's canvas, not this run's work
        start = time.perf_counter()
        canvas = make_canvas(board)
        if fitted:
            canvas.fit_to_content()
        canvas.finish_rendering()
        canvas.repaint()
        times.append(time.perf_counter() - start)
        canvas.close()
        canvas.deleteLater()
    return times


def frames(
    canvas: BoardCanvas, app: QApplication, step: Callable[[], None]
) -> tuple[list[float], list[float]]:
    """Paint times of FRAMES frames, and the times of the idle work between them."""
    paint, idle = [], []
    for _ in range(FRAMES):
        step()
        start = time.perf_counter()
        canvas.repaint()
        paint.append(time.perf_counter() - start)
        start = time.perf_counter()
        app.processEvents()
        idle.append(time.perf_counter() - start)
    return paint, idle


_authors = iter(range(1000, 2000))


def late_ops(board: Board, canvas: BoardCanvas, where: str, count: int = 100) -> list[float]:
    """Times of ``count`` strokes delivered ``where``: "top" (in order, the usual case), "recent"
    (late, among the last 20 strokes: what reordering on a network does) or "anywhere" (late,
    at a random place in the whole history: the worst case, it repaints the most)."""
    rng = random.Random(7)
    author = next(_authors)
    last = board.last_key
    assert last is not None
    times = []
    for i in range(count):
        op = synthetic_stroke(author, i, rng)
        if where == "top":
            key = (last[0] + 10 * (i + 1),)  # 10 apart, as on the board
        elif where == "recent":
            key = (last[0] - rng.randrange(1, 200),)
        else:
            key = (rng.randrange(1, last[0]),)
        start = time.perf_counter()
        change = board.apply(key, op)
        canvas.board_changed(change)
        paint_changes(canvas)
        times.append(time.perf_counter() - start)
        assert change.late == (where != "top")
    return times


def full_repaints(canvas: BoardCanvas) -> list[float]:
    """Whole-window repaints with RECENT_LIMIT strokes just delivered in view, painted over
    the tiles."""
    rng = random.Random(11)
    last = canvas.board.last_key
    assert last is not None
    author = next(_authors)
    for i in range(RECENT_LIMIT):
        change = canvas.board.apply((last[0] + 10 * (i + 1),), synthetic_stroke(author, i, rng))
        canvas.board_changed(change)
    assert canvas.recent_count() == RECENT_LIMIT
    times = []
    for _ in range(FRAMES):
        start = time.perf_counter()
        canvas.repaint()
        times.append(time.perf_counter() - start)
    return times


def main(count: int, images: int = 0) -> None:
    app = cast(QApplication, QApplication.instance() or QApplication(sys.argv[:1]))
    # Before the pictures are drawn: painting anything first starts Qt's GUI thread pool,
    # which then takes every translucent fill (highlighters) and made the strokes ~25%
    # slower to paint, a cost of this script, not of the app (which prepares at start).
    prepare_painting()
    start = time.perf_counter()
    board = make_board(count, images)
    print(f"{count} strokes on the board ({time.perf_counter() - start:.1f} s to build)")
    if images:
        sizes = [len(board.blob(d) or b"") for d in board.blob_digests]
        print(
            f"{images} pictures of {PICTURE_WIDTH}x{PICTURE_HEIGHT} px among them, PNG "
            f"{statistics.fmean(sizes) / 1024:.0f} KiB each on average "
            f"({sum(sizes) / (1 << 20):.1f} MiB of blobs)"
        )
    print(f"canvas {WIDTH}x{HEIGHT}, device pixel ratio {app.devicePixelRatio():g}")

    report("from scratch at 100%", from_scratch(board, app, fitted=False))
    report("from scratch fitted (whole board in view)", from_scratch(board, app, fitted=True))

    canvas = make_canvas(board)
    app.processEvents()  # shown on the (offscreen) screen: it paints from now on
    canvas.finish_rendering()
    canvas.repaint()
    paint, idle = frames(canvas, app, lambda: canvas.pan_by(-8.0, -4.0))
    report("pan frame at 100% (paint)", paint)
    report("  idle rendering between pan frames", idle)

    canvas.fit_to_content()
    canvas.finish_rendering()
    paint, idle = frames(canvas, app, lambda: canvas.pan_by(8.0, 0.0))
    report("pan frame fitted (paint)", paint)
    report("  idle rendering between pan frames", idle)

    canvas.finish_rendering()
    paint, _ = frames(canvas, app, lambda: canvas.zoom_by(1.05))
    report("zoom frame, 5% a frame (paint)", paint)
    start = time.perf_counter()
    canvas.finish_rendering()
    canvas.repaint()
    print(
        f"  rendering at the new zoom once it settles: {(time.perf_counter() - start) * 1e3:.0f} ms"
    )

    # As the live window does once a board arrived (whiteboard/app/collector.py): what is
    # alive now is out of the cyclic collector's full walks, which a late op could pay for.
    FreezeSchedule().board_loaded()
    for label, fitted in (("fitted", True), ("at 100%", False)):
        if fitted:
            canvas.fit_to_content()
        else:
            canvas.zoom_reset()
        canvas.finish_rendering()
        canvas.repaint()
        what = f"one stroke (apply + board_changed + repaint) {label}"
        report(f"{what}, delivered in order", late_ops(board, canvas, "top"))
        report(f"{what}, late among the last 20", late_ops(board, canvas, "recent"))
        report(f"{what}, late anywhere in history", late_ops(board, canvas, "anywhere"))
        report(
            f"whole-window repaint {label}, {RECENT_LIMIT} recent strokes over the tiles",
            full_repaints(canvas),
        )

    # Not the canvas's: Python stops for a full collection now and then, whatever it is doing,
    # and any one operation above may have paid for one.
    gc.unfreeze()
    report("a full garbage collection with this board and canvas", full_collections())
    # What the live window does (whiteboard/app/collector.py): the board frozen once loaded.
    FreezeSchedule().board_loaded()
    report("  the same once the live window froze the board", full_collections())
    gc.unfreeze()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("strokes", nargs="?", type=int, default=10_000)
    parser.add_argument("--images", type=int, default=0, metavar="M", help="pictures on it")
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    main(args.strokes, args.images)
