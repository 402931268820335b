"""The app's shipped files (assets/, the package whiteboard_assets): every icon size drawn,
and the launcher, metainfo and file types agreeing with each other and with the formats they
describe."""

from __future__ import annotations

import configparser
import xml.etree.ElementTree as ElementTree

import pytest
from PySide6.QtGui import QImage

from whiteboard import __version__
from whiteboard.board.files import MAGIC as BOARD_MAGIC
from whiteboard.desktop import assets
from whiteboard.sessionlog import read_log
from whiteboard.sessionlog.format import MAGIC as LOG_MAGIC

MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"


@pytest.mark.parametrize("size", assets.ICON_SIZES)
def test_every_icon_size_is_there_and_drawn(size: int) -> None:
    image = QImage()
    assert image.loadFromData(assets.icon_png(size).read_bytes(), "PNG")
    assert (image.width(), image.height()) == (size, size)
    middle = image.pixelColor(size // 2, size // 2)
    corner = image.pixelColor(0, 0)
    assert middle.alpha() == 255 and corner.alpha() < 255  # a board on a clear background


def test_the_launcher_names_the_app_its_icon_and_its_file_types() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read_string(assets.desktop_entry().read_text(encoding="utf-8"))
    section = entry["Desktop Entry"]
    assert section["Icon"] == assets.APP_ID and section["Exec"] == "whiteboard %f"
    assert section["MimeType"].split(";")[:2] == [assets.BOARD_MIME, assets.RECORDING_MIME]


def test_the_metainfo_is_the_launchers_and_names_this_version() -> None:
    component = ElementTree.fromstring(assets.metainfo().read_bytes())
    newest = component.find("releases/release")
    assert newest is not None and newest.get("version") == __version__
    assert component.findtext("id") == assets.APP_ID
    assert component.findtext("launchable") == f"{assets.APP_ID}.desktop"
    provided = [m.text for m in component.iter("mediatype")]
    assert provided == [assets.BOARD_MIME, assets.RECORDING_MIME]


def test_the_file_types_match_the_formats_magic() -> None:
    """A board or a recording is known by its content too (renamed, or with no extension):
    the MIME magic must be the bytes the formats begin with."""
    root = ElementTree.fromstring(assets.mime_types().read_bytes())
    found = {}
    for mime in root.iter(f"{MIME_NS}mime-type"):
        match = mime.find(f"{MIME_NS}magic/{MIME_NS}match")
        assert match is not None and match.get("offset") == "0"
        value = match.get("value", "").encode("latin-1").decode("unicode_escape")
        glob = mime.find(f"{MIME_NS}glob")
        assert glob is not None
        found[mime.get("type")] = (value.encode("latin-1"), glob.get("pattern"))
    assert found == {
        assets.BOARD_MIME: (BOARD_MAGIC, "*.wbd"),
        assets.RECORDING_MIME: (LOG_MAGIC, "*.wblog"),
    }


def test_the_sample_recording_reads_whole() -> None:
    samples = assets.samples()
    assert len(samples) == 3  # one session, each member's log
    sessions = set()
    for sample in samples:
        log = read_log(str(sample))
        report = log.report
        assert report.warnings == () and report.clean_end and report.torn_bytes == 0
        assert report.skipped == 0 and len(log.records) > 100
        sessions.add(log.header.group)
    assert len(sessions) == 1
