"""The package boundary: ``rmp`` is the wire format only, independent of the whiteboard, and
without a ``make_core`` the app keeps reporting RMP as not built yet."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rmp
import rmp.wire

PACKAGE = Path(rmp.__file__).resolve().parent


def test_importing_rmp_loads_nothing_of_the_whiteboard() -> None:
    code = (
        "import sys, rmp, rmp.wire; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'whiteboard'))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PACKAGE.parent
    )
    assert run.stdout.strip() == "[]"


@pytest.mark.parametrize("source", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_of_rmp_imports_the_whiteboard(source: Path) -> None:
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        assert not [n for n in names if n.split(".")[0] == "whiteboard"], source.name


def test_rmp_exports_the_wire_api_only_and_no_core() -> None:
    assert not hasattr(rmp, "make_core")
    assert not hasattr(rmp.wire, "make_core")
    for name in rmp.__all__:
        assert getattr(rmp, name) is getattr(rmp.wire, name)
    assert {"RmpPacket", "encode", "decode", "RmpDecodeError", "OptionType"} <= set(rmp.__all__)


def test_the_registry_still_reports_rmp_as_not_built_yet() -> None:
    from whiteboard.transport.registry import TransportUnavailable, core_factory

    with pytest.raises(TransportUnavailable, match="has no make_core"):
        core_factory("rmp")
