"""Pictures on the board in a real window on loopback multicast (issue 20, point 6): pasted
from the clipboard, dropped, or inserted from a file; decoded by Qt, brought within the
limits, sent once by their bytes' digest, painted, selected, undone as one action; and a
file or clipboard that holds no picture is refused with a message, nothing sent. (The raw
transport carries one datagram: these pictures are small; tests/app/test_window_images.py
sends large ones over RMP and MTP.)"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.app.test_clipboard import keys, objects, pointer_at
from tests.app.test_clipboard import window as window  # the fixture: a rectangle, selected
from tests.app.test_window import WAIT_MS
from whiteboard.app.image_insert import ImageProblem, prepare_image
from whiteboard.app.pictures import encode_picture
from whiteboard.app.window import MainWindow
from whiteboard.board import Blob, Image

RED = QColor(220, 20, 20)


def png(width: int, height: int, colour: QColor = RED, form: str = "PNG") -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(colour)
    return encode_picture(image, form)


def noise(width: int, height: int, seed: int = 1) -> QImage:
    """A picture no encoder can shrink much (a photo's worst case)."""
    import random

    rng = random.Random(seed)
    image = QImage(width, height, QImage.Format.Format_RGB32)
    bits = rng.randbytes(width * height * 4)
    for y in range(height):
        row = bits[y * width * 4 : (y + 1) * width * 4]
        for x in range(width):
            image.setPixel(x, y, 0xFF000000 | int.from_bytes(row[4 * x : 4 * x + 3], "big"))
    return image


def images(shown: MainWindow) -> list[Image]:
    return [obj.op for obj in objects(shown) if isinstance(obj.op, Image)]


def blobs(shown: MainWindow) -> list[Blob]:
    return [op for _, op in shown.replica.board.log() if isinstance(op, Blob)]


def colour_at(shown: MainWindow, x: float, y: float) -> QColor:
    """The colour the canvas shows at board point (x, y)."""
    QApplication.processEvents()
    shot = shown.canvas.grab().toImage()
    wx, wy = shown.canvas.view.to_widget(x, y)
    ratio = shot.devicePixelRatio()
    return shot.pixelColor(round(wx * ratio), round(wy * ratio))


def test_a_picture_within_the_limits_travels_as_it_is_and_a_large_one_is_scaled() -> None:
    small = png(40, 30)
    prepared = prepare_image(small)
    assert (prepared.data, prepared.width, prepared.height) == (small, 40, 30)
    wide = prepare_image(png(3000, 1000))  # one colour: compresses to little, only scaled
    assert (wide.width, wide.height) == (2048, 683) and wide.data.startswith(b"\x89PNG")
    bmp = prepare_image(png(50, 20, form="BMP"))  # read, and sent as PNG
    assert bmp.data.startswith(b"\x89PNG") and (bmp.width, bmp.height) == (50, 20)


def test_a_picture_over_the_byte_limit_becomes_a_jpeg_or_smaller_until_it_fits() -> None:
    data = encode_picture(noise(300, 200))
    assert len(data) > 150_000
    fitted = prepare_image(data, max_bytes=60_000)
    assert len(fitted.data) <= 60_000 and fitted.data.startswith(b"\xff\xd8\xff")
    with pytest.raises(ImageProblem, match="not a picture"):
        prepare_image(b"GIF89a, or rather nothing of the kind")
    with pytest.raises(ImageProblem, match="not a picture"):
        prepare_image(b"\x89PNG\r\n\x1a\n" + bytes(100))  # a signature, then rubbish


@pytest.mark.network
def test_a_pasted_picture_is_drawn_under_the_pointer_selected_and_undone_as_one(
    qtbot: QtBot,
    window: MainWindow,
) -> None:
    mime = QMimeData()
    mime.setImageData(QImage.fromData(png(40, 30)))
    QGuiApplication.clipboard().setMimeData(mime)
    at = pointer_at(window, 400, 250)
    keys(window, "Ctrl+V")
    qtbot.waitUntil(lambda: len(images(window)) == 1, timeout=WAIT_MS)
    [image] = images(window)
    [blob] = blobs(window)
    assert image.digest == blob.digest and (image.width, image.height) == (40.0, 30.0)
    assert (image.x + 20, image.y + 15) == pytest.approx(at)
    assert window.canvas.selection == (image.id,)
    assert colour_at(window, *at) == RED  # its pixels, not a frame

    keys(window, "Ctrl+V")  # the same picture again: shown twice, its bytes sent once
    qtbot.waitUntil(lambda: len(images(window)) == 2, timeout=WAIT_MS)
    assert len(blobs(window)) == 1
    window.undo()
    qtbot.waitUntil(lambda: len(images(window)) == 1, timeout=WAIT_MS)
    window.undo()  # the first paste: one action, the picture goes, the rectangle stays
    qtbot.waitUntil(lambda: len(objects(window)) == 1, timeout=WAIT_MS)


@pytest.mark.network
def test_a_picture_file_dropped_or_inserted_lands_there_and_a_bad_one_is_told(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
) -> None:
    path = tmp_path / "photo.jpg"
    path.write_bytes(png(32, 24, QColor(20, 20, 220), form="JPEG"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    drop = QDropEvent(
        QPointF(300, 120), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    # Qt delivers a drop only within a drag from a real drag-and-drop session, which the
    # offscreen platform has none of: the drop is handed to the canvas's event filter as Qt
    # would hand it.
    assert window.clipboard.images.eventFilter(window.canvas, drop) and drop.isAccepted()
    qtbot.waitUntil(lambda: len(images(window)) == 1, timeout=WAIT_MS)
    [image] = images(window)
    assert blobs(window)[0].data == path.read_bytes()  # a JPEG within the limits: as it is
    at = window.canvas.view.to_board(300, 120)
    assert (image.x + 16, image.y + 12) == pytest.approx(at)
    assert hashlib.sha256(path.read_bytes()).digest() == image.digest

    sent = window.transport.counters()["sent"]
    bad = tmp_path / "notes.png"
    bad.write_text("these are words, not pixels")
    assert not window.clipboard.images.insert_file(bad)
    assert "Could not insert notes.png" in window.state_view.notice.text()
    assert not window.clipboard.images.insert_file(tmp_path / "gone.png")
    assert "could not be read" in window.state_view.notice.text()
    # More than the raw transport carries in one datagram: said, nothing sent.
    window.clipboard.images.paste(_mime_of(noise(64, 64)), (0.0, 0.0))
    assert "carries at most" in window.state_view.notice.text()
    qtbot.wait(200)
    assert window.transport.counters()["sent"] == sent and len(images(window)) == 1


def _mime_of(image: QImage) -> QMimeData:
    mime = QMimeData()
    mime.setImageData(image)
    return mime


@pytest.mark.network
def test_the_settings_limits_apply_to_what_is_pasted_next(
    qtbot: QtBot,
    window: MainWindow,
) -> None:
    from whiteboard.app.settings import SessionSettings

    window.settings = SessionSettings(picture_side=256, picture_kib=64)
    window.clipboard.images.paste(_mime_of(QImage.fromData(png(600, 200))), (0.0, 0.0))
    qtbot.waitUntil(lambda: len(images(window)) == 1, timeout=WAIT_MS)
    [blob] = blobs(window)
    assert QImage.fromData(blob.data).size().toTuple() == (256, 85)
    problems = SessionSettings(picture_side=100, picture_kib=5000).validate([])
    assert {p.field: p.message for p in problems if p.field.startswith("picture")} == {
        "picture_side": "A picture's long side must be 256 to 4,096 pixels",
        "picture_kib": "A picture's size must be 64 to 3,072 KiB",
    }


def test_pictures_decode_once_ahead_of_painting_and_refuse_what_is_not_one() -> None:
    from whiteboard.app.pictures import Pictures

    red, blue = png(40, 30), png(20, 10, QColor(20, 20, 220))
    store = {b"r": red, b"b": blue, b"x": b"\x89PNG\r\n\x1a\n" + bytes(64)}
    pictures = Pictures(store.get)
    pictures.prefetch([b"r", b"b", b"x", b"missing"])  # x: no size in its header, skipped
    red_picture, blue_picture = pictures.get(b"r"), pictures.get(b"b")
    assert red_picture is not None and red_picture.size().toTuple() == (40, 30)
    assert blue_picture is not None and blue_picture.size().toTuple() == (20, 10)
    assert pictures.get(b"r") is pictures.get(b"r") and pictures.decodes == 2
    assert pictures.get(b"x") is None and pictures.get(b"missing") is None
    # Decodes under way count against the budget across prefetches (a replay's jumps): half
    # of this budget holds the red picture and the blue one, not a second red.
    store[b"r2"] = png(40, 30, QColor(200, 10, 10))
    tight = Pictures(store.get, budget=2 * (40 * 30 + 20 * 10) * 4)
    tight.prefetch([b"r"])
    tight.prefetch([b"r2"])
    assert set(tight._decoding) == {b"r"}
    tight.get(b"r")
    tight.prefetch([b"b"])
    assert set(tight._decoding) == {b"b"}
    # A budget that holds one picture keeps the latest used.
    small = Pictures(store.get, budget=40 * 30 * 4)
    small.get(b"r")
    small.get(b"b")
    small.get(b"r")
    assert small.decodes == 3


@pytest.mark.network
def test_file_insert_image_asks_for_a_file_and_puts_it_in_the_middle_of_the_view(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from PySide6.QtWidgets import QFileDialog

    path = tmp_path / "plan.png"
    path.write_bytes(png(30, 20))
    asked: list[str] = []

    def choose(parent: object, caption: str, folder: str, filters: str) -> tuple[str, str]:
        asked.append(filters)  # the edge of the test: the system's file dialog
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(choose))
    action = window.clipboard.images.insert_action
    assert action.shortcut().toString() == "Ctrl+Shift+I"
    assert action in window.menuBar().actions()[0].menu().actions()  # File
    action.trigger()
    qtbot.waitUntil(lambda: len(images(window)) == 1, timeout=WAIT_MS)
    assert "*.png" in asked[0] and "*.jpg" in asked[0]
    [image] = images(window)
    canvas = window.canvas
    middle = canvas.view.to_board(canvas.width() / 2, canvas.height() / 2)
    assert (image.x + 15, image.y + 10) == pytest.approx(middle)


def test_an_image_shows_a_frame_until_its_bytes_arrive_then_its_picture(qtbot: QtBot) -> None:
    from tests.app.test_canvas import make_canvas, pixel, rendered
    from whiteboard.board import Board

    blob = Blob((7, 1), png(40, 30))
    board = Board()
    board.apply((2,), Image((8, 1), blob.digest, 100, 100, 40, 30))  # another's, pasted again
    canvas = make_canvas(qtbot, board)
    canvas.show()
    x, y = canvas.view.to_widget(120, 115)
    assert pixel(rendered(canvas), x, y) != RED  # the frame, grey
    canvas.board_changed(board.apply((1,), blob))  # late: before the image in key order
    assert pixel(rendered(canvas), x, y) == RED


@pytest.mark.parametrize("forward_first", [True, False])
def test_a_replay_shows_a_frame_before_the_bytes_arrived_and_the_picture_after(
    qtbot: QtBot, tmp_path: Path, forward_first: bool
) -> None:
    """An image delivered before its bytes (another's paste of a picture already sent, the
    bytes late): a replay shows the frame, then the picture, whichever way and however far
    the person moves in time; also back to before the bytes, with the picture decoded."""
    from tests.replay.handmade import at, write_log
    from whiteboard.app.replay_window import ReplayWindow
    from whiteboard.board import Op, Stroke, encode_op
    from whiteboard.replay import load_timeline
    from whiteboard.sessionlog import DeliveredRecord

    blob = Blob((7, 1), png(40, 30))
    image = Image((8, 1), blob.digest, 100, 100, 40, 30)
    ink = Stroke((8, 2), (300.0, 300.0, 320.0, 310.0), 0xFF000000, 2.0)  # something after
    steps: list[tuple[float, Op]] = [(1.0, image), (2.0, blob), (3.0, ink)]
    records = [
        DeliveredRecord(at(t), op.id.author, (n,), at(t), False, encode_op(op))
        for n, (t, op) in enumerate(steps, start=1)
    ]
    window = ReplayWindow(load_timeline(write_log(tmp_path / "late-bytes.wblog", records)))
    qtbot.addWidget(window)
    window.resize(900, 700)
    window.show()
    window.fit_recording()

    def shows_picture() -> bool:
        canvas = window.canvas
        canvas.finish_rendering()
        shot = canvas.grab().toImage()
        x, y = canvas.view.to_widget(120, 115)
        ratio = shot.devicePixelRatio()
        return shot.pixelColor(round(x * ratio), round(y * ratio)) == RED

    moves = [1.5, 3.5, 1.5, 2.5, 0.5, 3.5] if forward_first else [3.5, 1.5, 3.5, 0.5, 2.5]
    for seconds in moves:
        window.seek_to(at(seconds))
        assert shows_picture() == (seconds > 2.0), seconds
