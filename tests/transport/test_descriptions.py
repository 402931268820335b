"""The built-in transports' descriptions say what their packages do: defaults inside the
bounds, bounds the package's own factory enforces at the low end, roles it accepts."""

from __future__ import annotations

import importlib

import pytest

from coreapi.description import PROFILES, Link, ParamSpec, TransportDescription
from whiteboard.transport.registry import REGISTRY, TransportUnavailable, describe

BUILT_IN = ("rmp", "mtp", "raw")


def descriptions() -> list[TransportDescription]:
    return [describe(name) for name in BUILT_IN]


def test_the_registry_offers_the_built_in_transports_in_order() -> None:
    assert REGISTRY.names() == BUILT_IN
    assert [d.name for d in REGISTRY.available()] == list(BUILT_IN)
    with pytest.raises(TransportUnavailable, match="choose one of: rmp, mtp, raw"):
        describe("pigeon")


@pytest.mark.parametrize("description", descriptions(), ids=lambda d: d.name)
def test_every_default_is_of_its_kind_and_inside_its_bounds(
    description: TransportDescription,
) -> None:
    assert description.params
    for spec in description.params:
        assert spec.help, f"{spec.name} has no help"
        for profile in PROFILES:
            value = spec.default(profile)
            assert type(value) is spec.kind or (spec.kind is float and type(value) is int)
            if spec.minimum is not None:
                assert isinstance(value, int | float) and spec.minimum <= value
            if spec.maximum is not None:
                assert isinstance(value, int | float) and value <= spec.maximum
            if spec.choices:
                assert value in spec.choices
            # The package's own factory takes each profile's values back.
            description.check({"profile": profile, spec.name: value})


def _below(spec: ParamSpec) -> int | float:
    assert spec.minimum is not None
    if spec.kind is int:
        return int(spec.minimum) - 1
    return 0.0 if spec.minimum > 0 else spec.minimum - 1.0


@pytest.mark.parametrize("description", descriptions(), ids=lambda d: d.name)
def test_the_factory_refuses_what_is_below_a_minimum(description: TransportDescription) -> None:
    bounded = [s for s in description.params if s.minimum is not None]
    assert bounded
    for spec in bounded:
        with pytest.raises(ValueError, match=spec.name):
            description.check({"profile": "lan", spec.name: _below(spec)})


def test_mtp_roles_are_the_rfcs_member_classes() -> None:
    mtp = describe("mtp")
    assert [r.value for r in mtp.roles] == ["master", "producer", "consumer"]
    assert mtp.host_role is not None and mtp.host_role.value == "master"
    assert mtp.member_role is not None and mtp.member_role.value == "producer"
    assert mtp.session_params == {"role", "group"}
    assert not mtp.live_strokes and mtp.resyncable
    for role in mtp.roles:
        params = mtp.core_params("seed", {}, role.word)
        assert params == {"profile": "seed", "role": role.value}
        mtp.check(params)
        assert mtp.can_send(params) is role.sends
    assert not any(spec.name in mtp.session_params for spec in mtp.params)


def test_rmp_and_raw_have_no_roles_and_no_session_params() -> None:
    for name, resyncable in (("rmp", True), ("raw", False)):
        description = describe(name)
        assert description.roles == () and description.session_params == frozenset()
        assert description.live_strokes and description.resyncable is resyncable
        assert description.core_params("lan", {"x": 1}) == {"profile": "lan", "x": 1}
        assert description.can_send({"profile": "lan"})


@pytest.mark.parametrize(
    ("name", "phases"),
    [("rmp", "rmp.context"), ("mtp", "mtp.link")],
)
def test_every_phase_a_core_enters_says_what_it_means_for_the_session(
    name: str, phases: str
) -> None:
    """The app derives the session state a person sees from the core's ``phase`` events
    (whiteboard/app/session_state.py): a phase the description leaves out would show as
    nothing in particular."""
    phase = importlib.import_module(phases).Phase
    described = describe(name).phases
    assert set(described) == {p.value for p in phase}
    assert described["ready"].link is Link.CONNECTED and described["ready"].sends
    assert described["finished"].link is Link.ENDED and not described["finished"].sends
    for meaning in described.values():
        assert meaning.link in (Link.CONNECTED, Link.ENDED) or meaning.doing
