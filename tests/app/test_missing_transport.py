"""A build without one of the protocol packages (here MTP, hidden from the importer) still
runs the others: the dialogs open and offer what there is, default settings are valid, and a
saved choice of the missing transport is explained, not a crash."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import open_dialog as open_settings
from tests.app.test_start_dialog import open_dialog as open_start
from whiteboard.app.main import build_parser
from whiteboard.app.settings import SessionSettings, transports
from whiteboard.transport.registry import TransportUnavailable, describe


@pytest.fixture
def without_mtp(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in [m for m in sys.modules if m == "mtp" or m.startswith("mtp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mtp", None)  # import mtp -> ModuleNotFoundError
    with pytest.raises(TransportUnavailable, match="not in this build"):
        describe("mtp")
    yield


def offered(box: object) -> list[object]:
    from PySide6.QtWidgets import QComboBox

    assert isinstance(box, QComboBox)
    return [box.itemData(i) for i in range(box.count())]


def test_the_dialogs_offer_what_there_is(without_mtp: None, qtbot: QtBot) -> None:
    assert transports() == ("rmp", "raw")
    assert offered(open_start(qtbot).transport_box) == ["rmp", "raw"]
    settings = open_settings(qtbot)
    assert offered(settings.transport_box) == ["rmp", "raw"]
    assert not settings.role_box.isEnabled()


def test_settings_are_valid_without_any_transport_that_has_roles(without_mtp: None) -> None:
    assert SessionSettings(transport="rmp").validate([]) == []
    problems = {p.field: p.message for p in SessionSettings(transport="mtp").validate([])}
    assert problems == {"transport": "Transport must be one of rmp, raw"}
    saved = SessionSettings(transport="rmp", advanced={"mtp": {"window": 8}}).validate([])
    assert [p.message for p in saved] == ["The mtp transport is not installed"]
    # The app's --role takes what it is given when no transport here has roles.
    assert build_parser().parse_args(["--role", "producer"]).role == "producer"
