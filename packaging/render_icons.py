"""Render the app's icon (assets/icons/whiteboard.svg) to the PNG sizes a desktop asks for
(freedesktop's hicolor theme: 16 to 512 pixels), with Qt's SVG renderer:

    .venv/bin/python packaging/render_icons.py

Run it after changing the SVG, and commit the PNGs: a machine installing the app then needs
no SVG renderer (tests/desktop/test_assets.py checks that every size is there and drawn)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "assets" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(svg: Path, size: int) -> QImage:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    app = QGuiApplication([sys.argv[0], "-platform", "offscreen"])
    for size in SIZES:
        target = ICONS / f"whiteboard-{size}.png"
        if not render(ICONS / "whiteboard.svg", size).save(str(target)):
            raise SystemExit(f"could not write {target}")
        print(f"wrote {target.relative_to(ICONS.parent.parent)}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
