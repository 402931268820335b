"""RMP's parameters: the report's values in the seed profile, a lan profile, every parameter
settable by name, and readable errors."""

from __future__ import annotations

import random
from dataclasses import fields

import pytest

from rmp import LAN, SEED, RmpParams, make_core
from rmp.params import PROFILES, params_from_mapping
from rmp.wire import Join
from tests.rmp.core_harness import A, B, data_packet, ready_node
from whiteboard.transport.events import EventQueue


def test_params_the_seed_profile_has_the_reports_values() -> None:
    seed = params_from_mapping({"profile": "seed"})
    assert seed == SEED
    assert seed.nack_retry == 1.0  # §2.3, §2.6: "every second ... but not more often"
    assert seed.wait_interval == 10.0  # §2.3: "WI ..., say 10 seconds"
    assert (seed.remind_min, seed.remind_max) == (0.5, 1.0)  # §2.4: "0.5 to one second"
    assert seed.join_tries == 5  # §2.8: "typically 5"
    assert seed.retention_age == 300.0  # §2.7: "older than 5 minutes are thrown out"
    assert seed.retention_count == 200  # §2.7: "more than 200 packets"


def test_params_the_lan_profile_differs_and_is_the_default() -> None:
    assert params_from_mapping({"profile": "lan"}) == LAN
    assert params_from_mapping({}) == LAN
    differing = [f.name for f in fields(RmpParams) if getattr(LAN, f.name) != getattr(SEED, f.name)]
    assert {"nack_retry", "wait_interval", "retention_count"} <= set(differing)
    assert LAN.nack_retry < SEED.nack_retry and LAN.wait_interval < SEED.wait_interval
    assert set(PROFILES) == {"seed", "lan"}


def _another_value(name: str, value: object) -> object:
    if name == "max_datagram":
        return 1472 - 44  # its top is the default: lower, as a private session sets it
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    assert isinstance(value, float)
    return value * 1.5 if value else 0.5


@pytest.mark.parametrize("name", [f.name for f in fields(RmpParams)])
@pytest.mark.parametrize("profile", ["seed", "lan"])
def test_params_every_parameter_is_settable_by_name(profile: str, name: str) -> None:
    base = PROFILES[profile]
    value = _another_value(name, getattr(base, name))
    params = params_from_mapping({"profile": profile, name: value})
    assert getattr(params, name) == value != getattr(base, name)
    for other in fields(RmpParams):
        if other.name != name:
            assert getattr(params, other.name) == getattr(base, other.name)
    # And through the factory the transport registry calls.
    core = make_core(
        A, EventQueue(clock=lambda: 0.0), random.Random(0), {"profile": profile, name: value}
    )
    assert getattr(core._p, name) == value


def test_params_max_datagram_keeps_a_whole_payload_and_its_image_parts() -> None:
    with pytest.raises(ValueError, match="max_datagram must be from 1300 to 1472"):
        params_from_mapping({"max_datagram": 1473})
    with pytest.raises(ValueError, match="max_datagram must be from 1300 to 1472"):
        params_from_mapping({"max_datagram": 1299})
    with pytest.raises(ValueError, match="image_part must leave 160 bytes"):
        params_from_mapping({"max_datagram": 1300, "image_part": 1200})


def test_params_take_textual_booleans_and_whole_floats() -> None:
    assert params_from_mapping({"passive_join": "yes"}).passive_join is True
    assert params_from_mapping({"passive_join": "false"}).passive_join is False
    whole = params_from_mapping({"profile": "seed", "retention_count": 500.0})
    assert whole.retention_count == 500 and isinstance(whole.retention_count, int)
    assert params_from_mapping({"wait_interval": 4}).wait_interval == 4.0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"profile": "wan"}, r"unknown rmp profile 'wan'; choose one of seed, lan"),
        ({"nack_rety": 1.0}, r"unknown rmp parameter 'nack_rety'"),
        ({"nack_retry": -1.0}, r"nack_retry must be positive, got -1\.0"),
        ({"wait_interval": 0}, r"wait_interval must be positive"),
        ({"nack_delay": -0.1}, r"nack_delay must not be negative"),
        ({"wait_interval": "10"}, r"wait_interval must be a number, got '10'"),
        ({"join_tries": True}, r"join_tries must be a number, got True"),
        ({"join_tries": 2.5}, r"join_tries must be a whole number, got 2\.5"),
        ({"passive_join": "maybe"}, r"passive_join must be true or false, got 'maybe'"),
        ({"remind_min": 2.0}, r"remind_min <= remind_max"),
        ({"window": 200}, r"window must be below retention_count"),
        ({"join_tries": 40}, r"join_tries <= join_tries_when_heard"),
        ({"keepalive": 30.0}, r"keepalive < suspect_after < forget_after"),
        ({"image_part": 2000}, r"image_part must be from 64 to 1300 bytes"),
    ],
)
def test_params_a_bad_parameter_is_a_value_error_with_a_readable_message(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        params_from_mapping({"profile": "seed", **params} if "profile" not in params else params)
    with pytest.raises(ValueError, match=message):
        make_core(
            A,
            EventQueue(clock=lambda: 0.0),
            random.Random(0),
            {"profile": "seed", **params} if "profile" not in params else params,
        )


def test_params_change_the_protocols_timing() -> None:
    """A parameter is not only stored: the core runs on it (here nack_retry and join_tries)."""
    node = ready_node(params={"nack_retry": 0.25, "join_tries": 2})  # alone at t = 2
    assert [s.at for s in node.sent if s.options_of(Join)] == [0.0, 1.0]
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(B, 3, 5.2), 5.2)
    node.run_until(6.0)
    assert [round(at, 6) for at, _ in node.nacks()] == [5.2, 5.45, 5.7, 5.95]
