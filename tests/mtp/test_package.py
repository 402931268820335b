"""The package boundary: ``mtp`` depends on nothing of the whiteboard, and until its core lands
it has no ``make_core``, so the whiteboard's registry reports the transport as not built yet."""

from __future__ import annotations

from pathlib import Path

import pytest

import mtp
import mtp.wire
from tests.boundary import whiteboard_imports_in, whiteboard_modules_loaded_by

PACKAGE = Path(mtp.__file__).resolve().parent


def test_importing_mtp_loads_nothing_of_the_whiteboard() -> None:
    assert whiteboard_modules_loaded_by("mtp", PACKAGE.parent) == []


@pytest.mark.parametrize("source", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_of_mtp_imports_the_whiteboard(source: Path) -> None:
    assert whiteboard_imports_in(source) == []


def test_mtp_exports_the_wire_api_and_no_core_factory() -> None:
    for name in mtp.__all__:
        assert getattr(mtp, name) is getattr(mtp.wire, name)
    assert {"MtpPacket", "MtpHeader", "encode", "decode", "MtpDecodeError"} <= set(mtp.__all__)
    assert not hasattr(mtp, "make_core")
    assert not hasattr(mtp.wire, "make_core")


def test_the_registry_reports_mtp_as_not_built_yet() -> None:
    from whiteboard.transport.registry import TransportUnavailable, core_factory

    with pytest.raises(TransportUnavailable, match=r"'mtp' has no make_core"):
        core_factory("mtp")
