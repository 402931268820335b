"""The package boundary: ``mtp`` is independent of the whiteboard, yet its core conforms to the
whiteboard's transport interface (structurally) and the registry finds it."""

from __future__ import annotations

import random
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


def test_mtp_exports_the_wire_api_and_a_core_factory() -> None:
    for name in set(mtp.__all__) & set(mtp.wire.__dict__):
        assert getattr(mtp, name) is getattr(mtp.wire, name)
    assert {"MtpPacket", "MtpHeader", "encode", "decode", "MtpDecodeError"} <= set(mtp.__all__)
    assert "make_core" in mtp.__all__


def test_the_core_conforms_to_the_transport_interface_and_the_registry_finds_it() -> None:
    from whiteboard.transport.events import EventQueue
    from whiteboard.transport.interface import COUNTER_NAMES, TransportCore
    from whiteboard.transport.registry import core_factory

    assert core_factory("mtp") is mtp.make_core
    for role in ("master", "producer", "consumer"):
        core = mtp.make_core(7, EventQueue(clock=lambda: 0.0), random.Random(1), {"role": role})
        assert isinstance(core, TransportCore)
        assert set(COUNTER_NAMES) <= set(core.counters())


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"role": "boss"}, "mtp role must be one of master, producer, consumer"),
        ({"profile": "wan"}, "unknown mtp profile 'wan'"),
        ({"windoww": 3}, "unknown mtp parameter 'windoww'"),
        ({"tokens": 13}, "tokens must be from 1 to 12"),
        ({"window": "x"}, "window must be a number"),
        ({"group": "nowhere"}, "group must be host:port"),
        ({"transport_type": "2xn"}, "transport_type must be one of nxn, 1xn"),
    ],
)
def test_bad_parameters_get_a_readable_message(params: dict[str, object], message: str) -> None:
    from whiteboard.transport.events import EventQueue

    with pytest.raises(ValueError, match=message):
        mtp.make_core(7, EventQueue(clock=lambda: 0.0), random.Random(1), params)
