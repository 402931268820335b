"""Session settings: checks with people's messages, transport parameters through the real
params factories, and persistence that survives garbage (always a temporary INI file, never
the user's own settings)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from whiteboard.app.interfaces import SYSTEM_DEFAULT_LABEL, list_interfaces, local_ipv4_addresses
from whiteboard.app.settings import (
    DEFAULT_GROUP,
    GROUP_MESSAGE,
    PALETTE,
    TTL_MESSAGE,
    SessionSettings,
    SettingsProblem,
    colour_for_name,
    fresh_group,
    load_settings,
    params_spec,
    read_settings,
    save_settings,
)
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.transport.registry import core_factory

LOCAL = frozenset({"127.0.0.1", "192.168.7.20"})


@pytest.fixture
def store(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)


def problems_of(settings: SessionSettings) -> dict[str, str]:
    return {p.field: p.message for p in settings.validate(LOCAL)}


def test_the_defaults_are_valid_and_the_documented_ones() -> None:
    settings = SessionSettings()
    assert settings.validate(LOCAL) == []
    assert (settings.transport, settings.group, settings.iface, settings.ttl) == (
        "rmp",
        DEFAULT_GROUP,
        "",
        1,
    )
    assert (settings.profile, settings.mtp_role, settings.advanced) == ("lan", "producer", {})
    assert 1 <= len(settings.display_name) <= 40
    assert settings.colour == colour_for_name(settings.display_name)


@pytest.mark.parametrize(
    "group", ["10.0.0.1:5000", "239.1.2.3", "239.1.2.3:0", "239.1.2.3:70000", "nowhere:80", ""]
)
def test_a_bad_group_says_what_a_group_is(group: str) -> None:
    assert problems_of(SessionSettings(group=group)) == {"group": GROUP_MESSAGE}
    assert "239.255.42.99:47999" in GROUP_MESSAGE


@pytest.mark.parametrize("ttl", [-1, 256, 1000])
def test_ttl_out_of_range(ttl: int) -> None:
    assert problems_of(SessionSettings(ttl=ttl)) == {"ttl": TTL_MESSAGE}


def test_interface_must_be_an_address_of_this_machine() -> None:
    assert problems_of(SessionSettings(iface="192.168.7.20")) == {}
    assert "not on this machine" in problems_of(SessionSettings(iface="198.51.100.7"))["iface"]
    assert "IPv4 address" in problems_of(SessionSettings(iface="eth0"))["iface"]
    # Without an explicit list, the machine's own addresses: loopback is always one.
    assert SessionSettings(iface="127.0.0.1").validate() == []


@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "tab\there"])
def test_bad_names(name: str) -> None:
    assert "display_name" in problems_of(SessionSettings(display_name=name))


def test_other_fields_name_their_choices() -> None:
    problems = problems_of(
        SessionSettings(transport="pigeon", mtp_role="master", profile="wan", colour=-5)
    )
    assert problems.keys() == {"transport", "mtp_role", "profile", "colour"}
    assert "rmp, mtp, raw" in problems["transport"]
    assert "host, producer, viewer" in problems["mtp_role"]
    assert "lan, seed" in problems["profile"]


def test_advanced_overrides_go_through_the_transports_own_params() -> None:
    ok = SessionSettings(advanced={"mtp": {"window": 50}, "rmp": {"wait_interval": 5.0}})
    assert ok.validate(LOCAL) == []
    bad = SessionSettings(
        advanced={
            "mtp": {"window": 5000},
            "rmp": {"bogus": 1},
            "raw": {"hello_interval": 100.0},
        }
    )
    assert bad.validate(LOCAL) == [
        SettingsProblem("advanced.rmp", "unknown rmp parameter 'bogus'"),
        SettingsProblem("advanced.mtp", "mtp window must be at most 1024 packets"),
        SettingsProblem(
            "advanced.raw", "raw parameters need hello_interval < suspect_after < forget_after"
        ),
    ]


def test_advanced_is_checked_against_the_chosen_profile() -> None:
    # reorder_wait may not exceed heartbeat_min: 0.02 s in the lan profile, 0.16 s in seed.
    overrides = {"mtp": {"reorder_wait": 0.1}}
    assert "advanced.mtp" in problems_of(SessionSettings(profile="lan", advanced=overrides))
    assert problems_of(SessionSettings(profile="seed", advanced=overrides)) == {}


def test_settings_owned_parameters_are_refused_in_advanced() -> None:
    for key in ("role", "group", "profile"):
        message = problems_of(SessionSettings(advanced={"mtp": {key: "x"}}))["advanced.mtp"]
        assert f"parameter {key} is set by the session settings" in message


def test_transport_params_carry_profile_role_and_overrides() -> None:
    mtp = SessionSettings(
        transport="mtp",
        mtp_role="host",
        profile="seed",
        advanced={"mtp": {"tokens": 2}, "rmp": {"rate": 10.0}},
    )
    assert mtp.to_transport_params() == {"profile": "seed", "tokens": 2, "role": "master"}
    assert SessionSettings(transport="mtp", mtp_role="viewer").role == "consumer"
    rmp = SessionSettings(transport="rmp", advanced={"rmp": {"rate": 10.0}, "mtp": {"tokens": 2}})
    assert rmp.to_transport_params() == {"profile": "lan", "rate": 10.0}
    # What the factory gets, it takes (group is added by open_transport for MTP).
    core_factory("mtp")  # importable
    params_spec("mtp").build({**mtp.to_transport_params(), "group": "239.1.1.1:5"})
    params_spec("rmp").build(rmp.to_transport_params())


def test_net_config() -> None:
    settings = SessionSettings(group="239.255.1.2:5000", iface="127.0.0.1", ttl=0)
    assert settings.net_config() == NetConfig(
        group=GroupAddress("239.255.1.2", 5000), iface="127.0.0.1", ttl=0
    )
    assert SessionSettings().net_config().iface is None  # "" is the system's choice
    with pytest.raises(ValueError, match="multicast"):
        SessionSettings(group="10.1.1.1:5").net_config()


def test_a_callers_dict_does_not_change_the_settings() -> None:
    overrides = {"mtp": {"tokens": 2}}
    settings = SessionSettings(advanced=overrides)
    overrides["mtp"]["tokens"] = 99
    assert settings.overrides("mtp") == {"tokens": 2}


def test_param_fields_come_from_the_params_dataclass() -> None:
    mtp = {f.name: f for f in params_spec("mtp").fields}
    assert "role" not in mtp and "group" not in mtp  # other settings own them
    assert (mtp["window"].kind, mtp["heartbeat"].kind, mtp["nak_dally"].kind) == (
        int,
        float,
        bool,
    )
    assert mtp["transport_type"].choices == ("nxn", "1xn")
    assert params_spec("rmp").default("seed", "wait_interval") == 10.0
    assert params_spec("rmp").default("lan", "wait_interval") == 3.0


def test_palette_colour_is_stable_and_from_the_palette() -> None:
    assert colour_for_name("Ada") == colour_for_name("Ada")
    assert {colour_for_name(n) for n in ("Ada", "Bob", "Cy", "Dee", "Eve", "Fay")} <= set(PALETTE)


def test_fresh_groups_are_local_scope_multicast() -> None:
    rng = random.Random(3)
    groups = {fresh_group(rng) for _ in range(20)}
    assert len(groups) == 20
    for text in groups:
        group = GroupAddress.parse(text)
        assert group.host.startswith("239.255.")
        assert 20000 <= group.port < 32768


# -- persistence ------------------------------------------------------------------------------


def test_saved_settings_load_back(store: QSettings, tmp_path: Path) -> None:
    settings = SessionSettings(
        transport="mtp",
        group="239.255.9.8:40000",
        iface="192.168.7.20",
        ttl=4,
        display_name="Ada, Countess",  # a comma: INI would read an unquoted one as a list
        colour=0xFF123456,
        mtp_role="viewer",
        profile="seed",
        advanced={"mtp": {"tokens": 2, "nak_dally": True, "heartbeat": 0.18}, "rmp": {"rate": 9.5}},
        picture_side=1024,
        picture_kib=512,
    )
    save_settings(store, settings)
    # Another QSettings on the same file: what a later run of the app reads.
    again = QSettings(str(tmp_path / "whiteboard.ini"), QSettings.Format.IniFormat)
    loaded = read_settings(again, LOCAL)
    assert loaded.reset == ()
    assert loaded.settings == settings


def test_nothing_saved_is_the_defaults_and_nothing_reported(store: QSettings) -> None:
    loaded = read_settings(store, LOCAL)
    assert loaded == read_settings(store, LOCAL)
    assert loaded.settings == SessionSettings()
    assert loaded.reset == ()


def test_garbage_falls_back_per_field_and_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "hand-edited.ini"
    path.write_text(
        "[session]\n"
        "transport=pigeon\n"
        "group=239.255.1.1:1234\n"  # good: kept
        "iface=not-an-address\n"
        "ttl=lots\n"
        "display_name=Bea\n"  # good: kept, and the reset colour follows it
        "colour=#zzzz\n"
        "mtp_role=master\n"
        "profile=seed\n"  # good: kept
        'advanced="{not json"\n'
    )
    store = QSettings(str(path), QSettings.Format.IniFormat)
    loaded = read_settings(store, LOCAL)
    assert loaded.settings == SessionSettings(
        group="239.255.1.1:1234",
        display_name="Bea",
        colour=colour_for_name("Bea"),
        profile="seed",
    )
    assert [p.field for p in loaded.reset] == [
        "transport",
        "iface",
        "ttl",
        "colour",
        "mtp_role",
        "advanced",
    ]
    transport = loaded.reset[0].message
    assert "'pigeon'" in transport and "using the default" in transport


def test_a_list_where_text_belongs_is_garbage(tmp_path: Path) -> None:
    path = tmp_path / "list.ini"
    path.write_text("[session]\ndisplay_name=a, b\ngroup=239.255.1.1:1234\n")
    loaded = read_settings(QSettings(str(path), QSettings.Format.IniFormat), LOCAL)
    assert loaded.settings.display_name == SessionSettings().display_name
    assert [p.field for p in loaded.reset] == ["display_name"]


def test_an_interface_gone_from_this_machine_is_reset(store: QSettings) -> None:
    save_settings(store, SessionSettings(iface="192.168.7.20", ttl=3))
    loaded = read_settings(store, frozenset({"127.0.0.1"}))
    assert (loaded.settings.iface, loaded.settings.ttl) == ("", 3)
    assert "not on this machine" in loaded.reset[0].message


def test_advanced_overrides_that_fail_are_dropped_per_transport(
    store: QSettings, caplog: pytest.LogCaptureFixture
) -> None:
    store.setValue(
        "session/advanced", '{"mtp": {"window": 5000}, "rmp": {"rate": 10.0}, "ftp": {}}'
    )
    loaded = read_settings(store, LOCAL)
    assert loaded.settings.advanced == {"rmp": {"rate": 10.0}}
    assert [p.field for p in loaded.reset] == ["advanced.mtp", "advanced.ftp"]
    assert "mtp window must be at most 1024 packets" in loaded.reset[0].message
    # load_settings is the same, with what was reset in the log.
    assert load_settings(store, LOCAL) == loaded.settings
    assert "mtp window must be at most 1024 packets" in caplog.text


# -- interfaces -------------------------------------------------------------------------------


def test_interfaces_start_with_the_system_default_and_label_loopback() -> None:
    choices = list_interfaces()
    assert (choices[0].label, choices[0].address) == (SYSTEM_DEFAULT_LABEL, "")
    [loopback] = [c for c in choices if c.address == "127.0.0.1"]
    assert "loopback" in loopback.label
    assert all(c.address in local_ipv4_addresses() for c in choices[1:])
    assert "127.0.0.1" in local_ipv4_addresses()


def test_a_chosen_colour_is_saved_as_chosen_and_older_settings_are_default_colours(
    tmp_path: Path,
) -> None:
    store = QSettings(str(tmp_path / "chosen.ini"), QSettings.Format.IniFormat)
    save_settings(store, SessionSettings(display_name="Ada", colour=0xFF123456, own_colour=True))
    loaded = read_settings(store, LOCAL)
    assert loaded.reset == () and loaded.settings.own_colour
    assert loaded.settings.colour == 0xFF123456
    # Saved by a version that did not ask: its colour was the login name's default.
    older = tmp_path / "older.ini"
    older.write_text("[session]\ndisplay_name=Bea\ncolour=#ffe53935\n")
    settings = read_settings(QSettings(str(older), QSettings.Format.IniFormat), LOCAL).settings
    assert not settings.own_colour
