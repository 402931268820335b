"""The package boundary: ``rmp`` is independent of the whiteboard, yet its core conforms to the
whiteboard's transport interface (structurally) and the registry finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

import rmp
import rmp.wire
from tests.boundary import whiteboard_imports_in, whiteboard_modules_loaded_by

PACKAGE = Path(rmp.__file__).resolve().parent


def test_importing_rmp_loads_nothing_of_the_whiteboard() -> None:
    assert whiteboard_modules_loaded_by("rmp", PACKAGE.parent) == []


@pytest.mark.parametrize("source", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_no_module_of_rmp_imports_the_whiteboard(source: Path) -> None:
    assert whiteboard_imports_in(source) == []


def test_rmp_exports_the_wire_api_and_a_core_factory() -> None:
    for name in set(rmp.__all__) & set(rmp.wire.__dict__):
        assert getattr(rmp, name) is getattr(rmp.wire, name)
    assert {"RmpPacket", "encode", "decode", "RmpDecodeError", "OptionType"} <= set(rmp.__all__)
    assert "make_core" in rmp.__all__


def test_the_core_conforms_to_the_transport_interface_and_the_registry_finds_it() -> None:
    import random

    from whiteboard.transport.events import EventQueue
    from whiteboard.transport.interface import COUNTER_NAMES, TransportCore
    from whiteboard.transport.registry import core_factory

    assert core_factory("rmp") is rmp.make_core
    core = rmp.make_core(7, EventQueue(clock=lambda: 0.0), random.Random(1), {})
    assert isinstance(core, TransportCore)
    assert set(COUNTER_NAMES) <= set(core.counters())
