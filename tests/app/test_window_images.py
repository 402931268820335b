"""A picture's round trip in real windows on RMP and on MTP over loopback multicast (issue 20,
point 6): pasted by one member, it reaches the other (~0.6 MiB: hundreds of packets,
fragmented and reassembled), shows on both canvases, is saved and opened again, exported to
PNG, SVG and PDF, given to a member who joins later with the board, and replayed from the
recording, painted as the Spark replay job paints its frames."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter
from pytestqt.qtbot import QtBot

from analytics.frames import View, render_png
from tests.app.test_clipboard import keys, pointer_at
from tests.app.test_images import colour_at
from tests.app.test_window_edit_keys import PAIRS
from tests.app.test_window_mtp import WAIT_MS, open_mtp_window, ready
from tests.app.test_window_rmp import open_rmp_window
from whiteboard.app.export import export_board
from whiteboard.app.pictures import encode_picture
from whiteboard.app.window import MainWindow
from whiteboard.board import Board, Image
from whiteboard.board.files import open_board, save_board
from whiteboard.net.runtime import NetConfig
from whiteboard.replay import load_timeline
from whiteboard.replay.keyframes import board_after

GREEN = QColor(30, 200, 60)
SIZE = (512, 384)
CORNER = (128, 96)  # the top-left part of the picture is green, the rest noise


def picture() -> bytes:
    """A PNG no encoder shrinks much (noise), with a green corner to look for."""
    width, height = SIZE
    noise = random.Random(20).randbytes(width * height * 3)
    image = QImage(noise, width, height, width * 3, QImage.Format.Format_RGB888).copy()
    painter = QPainter(image)
    painter.fillRect(0, 0, *CORNER, GREEN)
    painter.end()
    return encode_picture(image)


def the_image(window: MainWindow) -> Image | None:
    return the_image_of(window.replica.board)


def green_corner(image: Image) -> tuple[float, float]:
    """A board point inside the picture's green corner, wherever and however large it is."""
    return (
        image.x + image.width * CORNER[0] / SIZE[0] / 2,
        image.y + image.height * CORNER[1] / SIZE[1] / 2,
    )


def late_joiner(qtbot: QtBot, net: NetConfig, transport: str) -> MainWindow:
    if transport == "rmp":
        carol = open_rmp_window(qtbot, net, "carol")
    else:
        carol = open_mtp_window(qtbot, net, "carol", "producer")
    qtbot.waitUntil(lambda: ready(carol), timeout=WAIT_MS)
    return carol


@pytest.mark.network
@pytest.mark.parametrize("transport", sorted(PAIRS))
def test_a_pasted_picture_goes_round_every_way_a_board_travels(
    qtbot: QtBot, net: NetConfig, transport: str, tmp_path: Path
) -> None:
    alice, bob = PAIRS[transport](qtbot, net)
    data = picture()
    assert len(data) > 500_000  # far more than one datagram, under the 2 MiB limit: as it is
    mime = QMimeData()
    mime.setData("image/png", data)
    QGuiApplication.clipboard().setMimeData(mime)
    pointer_at(alice, 450, 220)
    keys(alice, "Ctrl+V")
    pending = [alice.canvas.pending(op_id) for op_id in alice.canvas.pending_ops()]
    [image] = [op for op in pending if isinstance(op, Image)]
    assert colour_at(alice, *green_corner(image)) == GREEN  # at once, from the bytes on their way
    qtbot.waitUntil(lambda: the_image(alice) == image, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bob.replica.board.blob(image.digest) is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bob.replica.board.hash() == alice.replica.board.hash())
    assert bob.replica.board.blob(image.digest) == data  # byte for byte
    assert the_image(bob) == image
    assert colour_at(bob, *green_corner(image)) == GREEN

    # Saved and opened again: the picture's bytes are in the file.
    path = tmp_path / "with-picture.wbd"
    save_board(path, alice.replica.board)
    opened = open_board(path).board
    assert opened.hash() == alice.replica.board.hash() and opened.blob(image.digest) == data

    # Exported: a PNG shows it, an SVG embeds it, a PDF holds it.
    png = tmp_path / "board.png"
    done = export_board(png, opened, scale=1.0)
    exported = QImage(str(png))
    x, y = green_corner(image)
    px, py = round(x - done.area.left()), round(y - done.area.top())
    assert exported.pixelColor(px, py) == GREEN
    svg = tmp_path / "board.svg"
    export_board(svg, opened)
    assert b"data:image/png;base64," in svg.read_bytes()
    pdf = tmp_path / "board.pdf"
    export_board(pdf, opened)
    assert pdf.read_bytes().startswith(b"%PDF") and b"/Image" in pdf.read_bytes()

    # A member who joins later gets it with the board.
    carol = late_joiner(qtbot, net, transport)
    qtbot.waitUntil(lambda: carol.replica.board.hash() == alice.replica.board.hash())
    assert carol.replica.board.blob(image.digest) == data
    assert colour_at(carol, *green_corner(image)) == GREEN

    # Bob's recording replays to the board with the picture, painted as the Spark frames are.
    assert bob.session_log is not None
    recording = bob.session_log.path
    bob.close()
    qtbot.waitUntil(lambda: bob.session_log is None, timeout=WAIT_MS)
    timeline = load_timeline(recording)
    replayed = board_after(timeline.steps, len(timeline.steps))
    assert replayed.blob(image.digest) == data and the_image_of(replayed) == image
    view = View(image.x, image.y, image.x + image.width, image.y + image.height)
    frame = QImage.fromData(render_png(replayed, view, 128, 96))
    assert frame.pixelColor(16, 12) == GREEN  # the middle of the green corner



def the_image_of(board: Board) -> Image | None:
    found = [obj.op for obj in board.objects() if isinstance(obj.op, Image)]
    return found[0] if found else None
