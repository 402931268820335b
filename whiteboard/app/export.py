"""Exporting a board as a picture: PNG, SVG or PDF, of the whole board or of one area.

Painting goes through :mod:`whiteboard.app.render`, the code the canvas paints with, so an
export looks like the screen. Each format is rendered into memory and then written with
:func:`~whiteboard.board.files.write_atomically`: a failed export never leaves half a file, and
every failure is one :class:`ExportError` with a sentence for the user.

A QGuiApplication must exist (Qt needs it for fonts).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
)
from PySide6.QtSvg import QSvgGenerator

from whiteboard import __version__
from whiteboard.app.pictures import Pictures, encode_picture
from whiteboard.app.render import geometry, paint_objects, placement
from whiteboard.board import Board
from whiteboard.board.files import describe_os_error, write_atomically

# Room around the drawings when exporting the whole board, in board units.
MARGIN = 24.0
# What an empty board exports: a small blank page rather than an error.
EMPTY_AREA = QRectF(0.0, 0.0, 320.0, 240.0)
BACKGROUND = QColor(255, 255, 255)
# Device pixels per board unit: 2 is sharp on HiDPI screens and when zoomed in.
DEFAULT_PNG_SCALE = 2.0
MAX_PNG_SCALE = 8.0
# A PNG stays openable (and its image under 256 MiB in memory): a board with one stray stroke
# far away gets a smaller scale instead of an error.
MAX_PNG_SIDE = 16384
MAX_PNG_PIXELS = 64 << 20
# A board unit is a CSS pixel: 1/96 inch, 0.75 pt, so a PDF prints at the size seen on screen.
BOARD_DPI = 96
POINTS_PER_UNIT = 72 / BOARD_DPI
# PDF viewers (Acrobat's limit) refuse pages over 200 inches; larger boards are scaled down.
MAX_PDF_POINTS = 14400.0

# For QFileDialog.getSaveFileName(..., filter=EXPORT_FILTER).
EXPORT_FILTER = "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"


class ExportFormat(StrEnum):
    PNG = "png"
    SVG = "svg"
    PDF = "pdf"


class ExportError(ValueError):
    """An export that could not be written. ``str()`` is a sentence for the user."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True, slots=True)
class Exported:
    """What was written."""

    path: Path
    format: ExportFormat
    area: QRectF  # the part of the board exported, in board coordinates
    width: int  # PNG: pixels; SVG: board units; PDF: points (rounded up)
    height: int
    scale: float  # PNG: pixels per board unit; SVG: 1; PDF: points per board unit


def format_for(path: str | os.PathLike[str]) -> ExportFormat | None:
    """The format a file name asks for, by its extension (any case), or None."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return ExportFormat(suffix) if suffix in set(ExportFormat) else None


def board_area(board: Board) -> QRectF:
    """The whole board: the bounds of every visible object, plus :data:`MARGIN`."""
    area = QRectF()
    for obj in board.objects():
        area = area.united(placement(obj).mapRect(geometry(obj.op).bounds))
    if area.isEmpty():
        return QRectF(EMPTY_AREA)
    return area.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)


def export_board(
    path: str | os.PathLike[str],
    board: Board,
    *,
    area: QRectF | None = None,
    scale: float = DEFAULT_PNG_SCALE,
    title: str = "",
) -> Exported:
    """Export to ``path`` in the format its extension names (.png, .svg or .pdf).

    ``area`` (board coordinates) exports what is inside it, cut at its edges; None exports the
    whole board. ``scale`` is for PNG only; ``title`` goes into SVG and PDF metadata.
    """
    chosen = format_for(path)
    if chosen is None:
        raise ExportError(
            f'"{Path(path).name}" cannot be exported: the name must end in .png, .svg or .pdf',
            Path(path),
        )
    if chosen is ExportFormat.PNG:
        return export_png(path, board, area=area, scale=scale)
    if chosen is ExportFormat.SVG:
        return export_svg(path, board, area=area, title=title)
    return export_pdf(path, board, area=area, title=title)


def export_png(
    path: str | os.PathLike[str],
    board: Board,
    *,
    area: QRectF | None = None,
    scale: float = DEFAULT_PNG_SCALE,
) -> Exported:
    """A PNG on a white background, ``scale`` pixels per board unit (reduced for huge areas)."""
    path = Path(path)
    if not (isinstance(scale, int | float) and 0.0 < scale <= MAX_PNG_SCALE):
        raise ExportError(f"the PNG scale must be above 0 and at most {MAX_PNG_SCALE}", path)
    area = _checked_area(path, board, area)
    image = render_image(board, area, scale)
    try:
        data = encode_picture(image)
    except ValueError:
        failed = f"{_quoted(path)} could not be exported: PNG encoding failed"
        raise ExportError(failed, path) from None
    _write(path, data)
    used = image.width() / area.width()
    return Exported(path, ExportFormat.PNG, area, image.width(), image.height(), used)


def render_image(board: Board, area: QRectF, scale: float = DEFAULT_PNG_SCALE) -> QImage:
    """``area`` of ``board`` as an opaque image, at ``scale`` pixels per board unit or less."""
    scale = min(
        scale,
        MAX_PNG_SIDE / area.width(),
        MAX_PNG_SIDE / area.height(),
        math.sqrt(MAX_PNG_PIXELS / (area.width() * area.height())),
    )
    width = max(1, math.ceil(area.width() * scale))
    height = max(1, math.ceil(area.height() * scale))
    # Opaque: the background is white anyway, and the PNG then has no alpha channel.
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(BACKGROUND)
    # So that viewers that read the PNG's pHYs show it at its size on the board.
    dots_per_metre = round(BOARD_DPI * scale / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    _with_painter(image, lambda painter: _paint(painter, board, area, scale))
    return image


def export_svg(
    path: str | os.PathLike[str], board: Board, *, area: QRectF | None = None, title: str = ""
) -> Exported:
    """An SVG drawing, one board unit per SVG user unit, with no background.

    SVG has no clipping here (Qt's generator ignores it): an object that crosses the area's
    edge is written whole, and the viewBox shows only the area.
    """
    path = Path(path)
    area = _checked_area(path, board, area)
    data, size = svg_bytes(board, area, title, path)
    _write(path, data)
    return Exported(path, ExportFormat.SVG, area, size.width(), size.height(), 1.0)


def svg_bytes(
    board: Board, area: QRectF, title: str = "", path: Path | None = None
) -> tuple[bytes, QSize]:
    """``area`` of ``board`` as an SVG document (see :func:`export_svg`), and its size."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    size = QSize(math.ceil(area.width()), math.ceil(area.height()))
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(size)
    # Whole units, as the size must be: a viewBox of another shape would be centred in it.
    generator.setViewBox(QRectF(0.0, 0.0, size.width(), size.height()))
    generator.setResolution(BOARD_DPI)  # so its width and height in mm match the screen
    generator.setTitle(title or "Whiteboard")
    generator.setDescription(f"Exported by whiteboard {__version__}")
    _with_painter(generator, lambda painter: _paint(painter, board, area, 1.0), path)
    buffer.close()
    return bytes(data.data()), size


def export_pdf(
    path: str | os.PathLike[str], board: Board, *, area: QRectF | None = None, title: str = ""
) -> Exported:
    """A one-page PDF on a white background, the page the size of the area (a board unit is
    0.75 pt) rounded up to whole points, scaled down to fit :data:`MAX_PDF_POINTS` if larger."""
    path = Path(path)
    area = _checked_area(path, board, area)
    fit = min(1.0, MAX_PDF_POINTS / (area.width() * POINTS_PER_UNIT))
    fit = min(fit, MAX_PDF_POINTS / (area.height() * POINTS_PER_UNIT))
    scale = POINTS_PER_UNIT * fit
    # Qt rounds page sizes to whole points; rounding up keeps all of the area on the page (the
    # sliver added at the right and bottom is background). round() first: 14400.0000001 is full.
    width = max(1, math.ceil(round(area.width() * scale, 6)))
    height = max(1, math.ceil(round(area.height() * scale, 6)))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(BOARD_DPI)  # a device unit is then a board unit (before `fit`)
    writer.setTitle(title or "Whiteboard")
    writer.setCreator(f"whiteboard {__version__}")
    writer.setPageLayout(
        QPageLayout(
            QPageSize(
                QSizeF(width, height),
                QPageSize.Unit.Point,
                "",
                QPageSize.SizeMatchPolicy.ExactMatch,
            ),
            QPageLayout.Orientation.Portrait,
            QMarginsF(0.0, 0.0, 0.0, 0.0),
        )
    )

    def paint(painter: QPainter) -> None:
        painter.scale(fit, fit)
        painter.fillRect(QRectF(0.0, 0.0, width / scale, height / scale), BACKGROUND)
        _paint(painter, board, area, 1.0)

    _with_painter(writer, paint, path)
    buffer.close()
    _write(path, bytes(data.data()))
    return Exported(path, ExportFormat.PDF, area, width, height, scale)


# -- shared ---------------------------------------------------------------------------------


def _checked_area(path: Path, board: Board, area: QRectF | None) -> QRectF:
    if QGuiApplication.instance() is None:
        # Painting text without one crashes Qt; this is the caller's bug, not the user's.
        raise RuntimeError("exporting needs a QGuiApplication")
    if area is None:
        return board_area(board)
    corners = (area.left(), area.top(), area.width(), area.height())
    if not all(math.isfinite(v) for v in corners) or area.width() <= 0 or area.height() <= 0:
        raise ExportError(f"{_quoted(path)} was not exported: the area is empty", path)
    return QRectF(area)


def _paint(painter: QPainter, board: Board, area: QRectF, scale: float) -> None:
    """Paint the objects that meet ``area``, with ``area``'s top-left at the origin."""
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.scale(scale, scale)
    painter.translate(-area.left(), -area.top())
    # Cuts objects at the area's edge in PNG and PDF (SVG ignores it, see export_svg).
    painter.setClipRect(area)
    paint_objects(painter, board.objects(), area, pictures=Pictures(board.blob))


def _with_painter(
    device: QImage | QSvgGenerator | QPdfWriter,
    paint: Callable[[QPainter], None],
    path: Path | None = None,
) -> None:
    painter = QPainter()
    if not painter.begin(device):
        where = _quoted(path) if path is not None else "the image"
        raise ExportError(f"{where} could not be exported: Qt could not start painting", path)
    try:
        paint(painter)
    finally:
        painter.end()


def _write(path: Path, data: bytes) -> None:
    try:
        write_atomically(path, data)
    except OSError as error:
        raise ExportError(
            f"{_quoted(path)} could not be exported: {describe_os_error(error)}", path
        ) from None


def _quoted(path: Path) -> str:
    return f'"{path.name or path}"'
