"""Export: PNG, SVG and PDF files of the whole board or of one area, and their failures."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage

from whiteboard.app import export
from whiteboard.app.export import (
    DEFAULT_PNG_SCALE,
    EMPTY_AREA,
    EXPORT_FILTER,
    MARGIN,
    Exported,
    ExportError,
    ExportFormat,
    board_area,
    export_board,
    export_pdf,
    export_png,
    export_svg,
    format_for,
)
from whiteboard.app.render import geometry
from whiteboard.board import Board, Move, OpId, OpKind, Shape, Stroke, Text

RED = 0xFFFF0000
BLUE = 0xFF0000FF
SVG_NS = "{http://www.w3.org/2000/svg}"

# Every test needs a QApplication (fonts): pytest-qt's qapp fixture makes one.
pytestmark = pytest.mark.usefixtures("qapp")


def red_stroke(counter: int = 1, x: float = 10.0, y: float = 50.0, length: float = 100.0) -> Stroke:
    return Stroke(OpId(1, counter), (x, y, x + length / 2, y, x + length, y), RED, 6.0)


def board_with(*ops: object) -> Board:
    board = Board()
    for key, op in enumerate(ops):
        board.apply((key,), op)
    return board


def pixel(image: QImage, area: QRectF, scale: float, x: float, y: float) -> QColor:
    """The image's pixel at board point (x, y)."""
    return image.pixelColor(
        math.floor((x - area.left()) * scale), math.floor((y - area.top()) * scale)
    )


def is_red(colour: QColor) -> bool:
    return colour.red() > 200 and colour.green() < 60 and colour.blue() < 60


def is_blue(colour: QColor) -> bool:
    return colour.blue() > 200 and colour.red() < 60 and colour.green() < 60


def is_white(colour: QColor) -> bool:
    return colour.rgb() == QColor(255, 255, 255).rgb()


def colours(image: QImage) -> list[QColor]:
    return [image.pixelColor(x, y) for y in range(image.height()) for x in range(image.width())]


def load_png(path: Path) -> QImage:
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    image = QImage(str(path))
    assert not image.isNull()
    return image


def media_box(data: bytes) -> tuple[float, float]:
    match = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    assert match is not None
    return float(match[1]), float(match[2])


def assert_pdf(data: bytes) -> None:
    assert len(data) > 100
    assert data.startswith(b"%PDF-")
    assert data.rstrip().endswith(b"%%EOF")


def parse_svg(path: Path) -> ET.Element:
    root = ET.fromstring(path.read_bytes())
    assert root.tag == f"{SVG_NS}svg"
    return root


# -- the whole board ------------------------------------------------------------------------


def test_whole_board_area_is_the_objects_bounds_plus_a_margin() -> None:
    stroke = red_stroke()
    moved = Stroke(OpId(1, 2), (0.0, 0.0, 10.0, 10.0), BLUE, 2.0)
    board = board_with(stroke, moved, Move(OpId(1, 3), (OpId(1, 2),), 300.0, 200.0))
    expected = geometry(stroke).bounds.united(geometry(moved).bounds.translated(300.0, 200.0))
    assert board_area(board) == expected.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
    assert board_area(Board()) == EMPTY_AREA


def test_png_of_the_whole_board(tmp_path: Path) -> None:
    board = board_with(red_stroke())
    path = tmp_path / "board.png"
    result = export_png(path, board)

    area = board_area(board)
    image = load_png(path)
    assert isinstance(result, Exported)
    assert result == Exported(path, ExportFormat.PNG, area, image.width(), image.height(), 2.0)
    assert DEFAULT_PNG_SCALE == 2.0
    assert (image.width(), image.height()) == (
        math.ceil(area.width() * 2),
        math.ceil(area.height() * 2),
    )
    assert is_red(pixel(image, area, 2.0, 60.0, 50.0))  # on the stroke
    assert is_white(image.pixelColor(0, 0))  # the margin: white, not transparent
    assert is_white(pixel(image, area, 2.0, 60.0, 50.0 + MARGIN / 2))
    assert not image.hasAlphaChannel()


def test_png_scale(tmp_path: Path) -> None:
    board = board_with(red_stroke())
    area = board_area(board)
    image = load_png(export_png(tmp_path / "one.png", board, scale=1.0).path)
    assert (image.width(), image.height()) == (math.ceil(area.width()), math.ceil(area.height()))
    assert is_red(pixel(image, area, 1.0, 60.0, 50.0))
    result = export_png(tmp_path / "three.png", board, scale=3.0)
    assert load_png(result.path).width() == math.ceil(area.width() * 3) == result.width


def test_png_of_a_huge_board_is_scaled_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Smaller limits than the real ones: the real ones would need a 256 MiB image here.
    monkeypatch.setattr(export, "MAX_PNG_SIDE", 400)
    monkeypatch.setattr(export, "MAX_PNG_PIXELS", 50_000)
    board = board_with(red_stroke(1, 0.0, 0.0), red_stroke(2, 5000.0, 1000.0, 400.0))
    result = export_png(tmp_path / "big.png", board)
    image = load_png(result.path)
    assert result.scale < 0.1
    assert image.width() <= 400 and image.width() * image.height() <= 50_000
    assert (image.width(), image.height()) == (result.width, result.height)
    # Still the whole board: the far stroke is there, bottom right, thin at that scale.
    area = board_area(board)
    x, y = ((5200.0 - area.left()) * result.scale, (1000.0 - area.top()) * result.scale)
    near = [
        image.pixelColor(round(x) + dx, round(y) + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)
    ]
    assert any(colour.red() > colour.green() + 20 for colour in near)


def test_svg_of_the_whole_board(tmp_path: Path) -> None:
    board = board_with(red_stroke(), Shape(OpId(2, 1), OpKind.RECT, 0, 0, 40, 30, BLUE, 2.0))
    path = tmp_path / "board.svg"
    result = export_svg(path, board, title="Plan")
    root = parse_svg(path)
    area = board_area(board)
    width, height = math.ceil(area.width()), math.ceil(area.height())
    assert root.get("viewBox") == f"0 0 {width} {height}"
    assert (result.width, result.height) == (width, height)
    assert result.scale == 1.0
    assert root.findtext(f"{SVG_NS}title") == "Plan"
    assert list(root.iter(f"{SVG_NS}path"))  # the smoothed stroke
    text = path.read_text()
    assert 'stroke="#ff0000"' in text
    assert 'stroke="#0000ff"' in text
    # No background: an SVG drops into a document as a drawing.
    assert "#ffffff" not in text


def test_pdf_of_the_whole_board(tmp_path: Path) -> None:
    board = board_with(red_stroke())
    path = tmp_path / "board.pdf"
    result = export_pdf(path, board, title="Plan")
    data = path.read_bytes()
    assert_pdf(data)
    area = board_area(board)
    # A board unit is a CSS pixel, 0.75 pt: the page is the area's size, in whole points.
    assert media_box(data) == (math.ceil(area.width() * 0.75), math.ceil(area.height() * 0.75))
    assert (result.width, result.height) == media_box(data)
    assert result.scale == 0.75


def test_pdf_of_a_huge_board_fits_a_page(tmp_path: Path) -> None:
    board = board_with(red_stroke(1, 0.0, 0.0), red_stroke(2, 100_000.0, 10.0))
    result = export_pdf(tmp_path / "big.pdf", board)
    width, height = media_box(result.path.read_bytes())
    assert width == pytest.approx(14400.0, abs=0.01)
    assert height < 14400.0
    assert result.scale == pytest.approx(14400.0 / board_area(board).width())


def test_pdf_loads_in_qtpdf(tmp_path: Path) -> None:
    qtpdf = pytest.importorskip("PySide6.QtPdf", reason="QtPdf is not in PySide6-Essentials")
    path = export_pdf(tmp_path / "board.pdf", board_with(red_stroke())).path
    document = qtpdf.QPdfDocument()
    assert document.load(str(path)) == qtpdf.QPdfDocument.Error.None_
    assert document.pageCount() == 1


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_an_empty_board_exports_a_small_blank_page(tmp_path: Path, suffix: str) -> None:
    result = export_board(tmp_path / f"empty{suffix}", Board())
    assert result.area == EMPTY_AREA
    if suffix == ".png":
        image = load_png(result.path)
        assert (image.width(), image.height()) == (640, 480)
        assert all(is_white(colour) for colour in colours(image.scaled(64, 48)))
    elif suffix == ".svg":
        root = parse_svg(result.path)
        assert root.get("viewBox") == "0 0 320 240"
        assert list(root.iter(f"{SVG_NS}path")) == []
    else:
        assert media_box(result.path.read_bytes()) == (240.0, 180.0)


def test_moved_objects_export_where_they_are(tmp_path: Path) -> None:
    board = board_with(red_stroke(), Move(OpId(1, 2), (OpId(1, 1),), 0.0, 100.0))
    area = board_area(board)
    image = load_png(export_png(tmp_path / "moved.png", board).path)
    assert is_red(pixel(image, area, 2.0, 60.0, 150.0))
    assert area.top() > 50.0  # where the stroke was is not even on the page


# -- a visible area -------------------------------------------------------------------------


def two_strokes() -> Board:
    left = red_stroke(1, 10.0, 50.0, 50.0)
    right = Stroke(OpId(1, 2), (300.0, 50.0, 350.0, 50.0), BLUE, 6.0)
    crossing = red_stroke(3, 80.0, 80.0, 100.0)  # from inside the area to beyond its edge
    return board_with(left, right, crossing)


AREA = QRectF(0.0, 0.0, 120.0, 100.0)


def test_png_of_an_area_has_only_what_is_in_it(tmp_path: Path) -> None:
    result = export_png(tmp_path / "area.png", two_strokes(), area=AREA, scale=2.0)
    image = load_png(result.path)
    assert result.area == AREA
    assert (image.width(), image.height()) == (240, 200)
    assert is_red(pixel(image, AREA, 2.0, 35.0, 50.0))
    assert is_red(pixel(image, AREA, 2.0, 115.0, 80.0))  # the crossing stroke, up to the edge
    assert not any(is_blue(colour) for colour in colours(image))
    assert is_white(pixel(image, AREA, 2.0, 60.0, 20.0))


def test_png_of_an_area_elsewhere_on_the_board(tmp_path: Path) -> None:
    area = QRectF(280.0, 30.0, 100.0, 40.0)
    image = load_png(export_png(tmp_path / "right.png", two_strokes(), area=area).path)
    assert is_blue(pixel(image, area, 2.0, 325.0, 50.0))
    assert not any(is_red(colour) for colour in colours(image))


def test_svg_of_an_area_leaves_out_what_is_outside(tmp_path: Path) -> None:
    result = export_svg(tmp_path / "area.svg", two_strokes(), area=AREA)
    root = parse_svg(result.path)
    assert root.get("viewBox") == "0 0 120 100"
    text = result.path.read_text()
    assert 'stroke="#ff0000"' in text
    assert "#0000ff" not in text


def test_pdf_of_an_area_is_the_area_size(tmp_path: Path) -> None:
    result = export_pdf(tmp_path / "area.pdf", two_strokes(), area=AREA)
    data = result.path.read_bytes()
    assert_pdf(data)
    assert media_box(data) == (90.0, 75.0)


# -- text -----------------------------------------------------------------------------------


def text_board() -> Board:
    return board_with(Text(OpId(1, 1), 20.0, 20.0, "Hello", BLUE, 40.0))


def test_text_exports_to_png(tmp_path: Path) -> None:
    board = text_board()
    image = load_png(export_png(tmp_path / "text.png", board).path)
    inked = [colour for colour in colours(image) if colour.blue() > colour.red() + 80]
    assert len(inked) > 200  # glyphs, antialiased


def test_text_exports_to_svg(tmp_path: Path) -> None:
    root = parse_svg(export_svg(tmp_path / "text.svg", text_board()).path)
    texts = [element for element in root.iter(f"{SVG_NS}text") if element.text]
    assert [element.text for element in texts] == ["Hello"]
    assert texts[0].get("fill") == "#0000ff"


def test_text_exports_to_pdf(tmp_path: Path) -> None:
    data = export_pdf(tmp_path / "text.pdf", text_board()).path.read_bytes()
    assert_pdf(data)
    assert b"/Font" in data  # the glyphs are text, with an embedded font
    assert len(data) > len(export_pdf(tmp_path / "blank.pdf", Board()).path.read_bytes())


# -- choosing a format, and failures --------------------------------------------------------


def test_format_by_extension(tmp_path: Path) -> None:
    assert format_for("a/b.PNG") is ExportFormat.PNG
    assert format_for("b.svg") is ExportFormat.SVG
    assert format_for("b.pdf") is ExportFormat.PDF
    assert format_for("b.jpeg") is None and format_for("png") is None
    assert "(*.png)" in EXPORT_FILTER and "(*.svg)" in EXPORT_FILTER and "(*.pdf)" in EXPORT_FILTER
    board = board_with(red_stroke())
    assert export_board(tmp_path / "x.PNG", board, scale=1.0).format is ExportFormat.PNG
    assert export_board(tmp_path / "x.svg", board).format is ExportFormat.SVG
    assert export_board(tmp_path / "x.pdf", board).format is ExportFormat.PDF
    with pytest.raises(ExportError, match=r'^"x.jpeg" cannot be exported: the name must end in'):
        export_board(tmp_path / "x.jpeg", board)


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_an_unwritable_path_is_one_readable_error(tmp_path: Path, suffix: str) -> None:
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    with pytest.raises(ExportError) as caught:
        export_board(folder, board_with(red_stroke()))
    assert str(caught.value) == f'"folder{suffix}" could not be exported: it is a folder'
    assert caught.value.path == folder
    with pytest.raises(ExportError, match=r'^"x.png" could not be exported: there is no such'):
        export_png(tmp_path / "missing" / "x.png", Board())
    assert sorted(tmp_path.iterdir()) == [folder]
    assert list(folder.iterdir()) == []


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "board.png"
    path.write_bytes(b"old")

    def disk_full(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "write_atomically", disk_full)
    with pytest.raises(ExportError, match=r'^"board.png" could not be exported: the disk is full$'):
        export_png(path, board_with(red_stroke()))
    assert path.read_bytes() == b"old"


@pytest.mark.parametrize(
    "area",
    [QRectF(), QRectF(0, 0, 0, 10), QRectF(0, 0, 10, -5), QRectF(0, 0, math.inf, 10)],
)
def test_an_empty_area_is_refused(tmp_path: Path, area: QRectF) -> None:
    with pytest.raises(ExportError, match=r'^"x.svg" was not exported: the area is empty$'):
        export_svg(tmp_path / "x.svg", board_with(red_stroke()), area=area)


@pytest.mark.parametrize("scale", [0.0, -1.0, 9.0, math.nan])
def test_a_bad_png_scale_is_refused(tmp_path: Path, scale: float) -> None:
    with pytest.raises(ExportError, match="the PNG scale must be above 0 and at most 8"):
        export_png(tmp_path / "x.png", Board(), scale=scale)
    assert list(tmp_path.iterdir()) == []
