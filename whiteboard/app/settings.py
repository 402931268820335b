"""What a person chooses before joining a board (transport, group, interface, name, colour,
MTP role, protocol parameters), how it is checked, and how it is kept between runs.

No widgets: the dialogs edit a :class:`SessionSettings`, and the app turns one into the
:class:`~whiteboard.net.runtime.NetConfig` and transport parameters it opens a session with.
Protocol parameters are checked by the transport's own params factory, so the settings never
accept what the transport would then refuse."""

from __future__ import annotations

import contextlib
import getpass
import ipaddress
import json
import logging
import math
import random
import zlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from PySide6.QtCore import QSettings

from coreapi.description import PROFILES, ParamSpec, Role
from whiteboard.app.interfaces import local_ipv4_addresses
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.security import SessionKey, open_session_key
from whiteboard.security.keys import PassphraseError, check_secret
from whiteboard.transport.registry import (
    TransportUnavailable,
    available_transports,
    describe,
    transport_names,
)

log = logging.getLogger(__name__)

ORGANIZATION = "Whiteboard"
APPLICATION = "Whiteboard"

DEFAULT_GROUP = "239.255.42.99:47999"
DEFAULT_TTL = 1
NAME_MAX = 40
# The toolbar's colours but black (window.COLOURS): a default colour tells people apart, and
# it is one the toolbar shows checked.
PALETTE: tuple[int, ...] = (0xFFE53935, 0xFF1E88E5, 0xFF43A047, 0xFFFB8C00, 0xFF8E24AA)

GROUP_MESSAGE = (
    "Group must be a multicast address (224.0.0.0-239.255.255.255) and a port, "
    f"like {DEFAULT_GROUP}"
)
TTL_MESSAGE = "TTL must be 0-255"
NAME_MESSAGE = f"Name must be 1-{NAME_MAX} characters"


def login_name() -> str:
    try:
        name = getpass.getuser().strip()
    except (OSError, KeyError):
        # No USER variable and no passwd entry (some containers): any name will do.
        name = ""
    return name[:NAME_MAX] or "anonymous"


def colour_for_name(name: str) -> int:
    """A palette colour picked by the name, the same on every machine and run (crc32: Python's
    own string hash is salted per process)."""
    return PALETTE[zlib.crc32(name.encode("utf-8")) % len(PALETTE)]


def fresh_group(rng: random.Random | None = None) -> str:
    """A random group for a new board, in 239.255.0.0/16 (IPv4 local scope, RFC 2365), on a
    port below Linux's ephemeral range, where the members' own unicast sockets live."""
    rng = rng or random.SystemRandom()
    return f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}:{rng.randrange(20000, 32768)}"


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    field: str  # a SessionSettings field name; "advanced.<transport>" for protocol parameters
    message: str  # for a person: says what is wrong and what would be right


# -- protocol parameters ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransportParamsSpec:
    """A transport's parameters as the settings see them: the factory that checks a mapping,
    and the fields a person may override with each profile's value (from the transport's
    description)."""

    transport: str
    build: Callable[[Mapping[str, object]], object]
    fields: tuple[ParamSpec, ...]

    def default(self, profile: str, name: str) -> object:
        return self.param(name).default(profile)

    def param(self, name: str) -> ParamSpec:
        return describe(self.transport).param(name)


# A parameter no transport may take as an override: the profile setting owns it.
_RESERVED = frozenset({"profile"})


def params_spec(transport: str) -> TransportParamsSpec:
    """From the transport's description, which the registry imports on first use, so that the
    settings load in a build without one of the protocol packages."""
    description = describe(transport)
    offered = tuple(p for p in description.params if p.name not in description.session_params)
    return TransportParamsSpec(transport, description.check, offered)


def transports() -> tuple[str, ...]:
    """The transports a person may choose: those in this build, in the order offered."""
    return tuple(description.name for description in available_transports())


def role_words() -> tuple[str, ...]:
    """Every role the transports offer, in the app's words (host, producer, viewer)."""
    words: dict[str, None] = {}
    for description in available_transports():
        words.update(dict.fromkeys(role.word for role in description.roles))
    return tuple(words)


def _advanced_problems(
    advanced: object, profile: str
) -> tuple[dict[str, dict[str, object]], list[SettingsProblem]]:
    """The per-transport overrides that pass the transport's own factory, and a problem for
    each transport whose overrides do not (with the factory's message)."""
    if not isinstance(advanced, Mapping):
        return {}, [SettingsProblem("advanced", "Advanced settings must be a table per transport")]
    good: dict[str, dict[str, object]] = {}
    problems: list[SettingsProblem] = []
    # In the order the transports are offered, so messages come in a stable order.
    # Every transport the registry knows: one missing from this build is "not installed".
    order = {t: i for i, t in enumerate(transport_names())}
    for transport, overrides in sorted(advanced.items(), key=lambda kv: order.get(kv[0], 99)):
        where = f"advanced.{transport}"
        if transport not in order:
            problems.append(SettingsProblem(where, f"No transport is called {transport!r}"))
            continue
        if not isinstance(overrides, Mapping) or not all(isinstance(k, str) for k in overrides):
            problems.append(SettingsProblem(where, f"{transport} parameters must be named"))
            continue
        try:
            spec = params_spec(transport)
        except TransportUnavailable:
            problems.append(SettingsProblem(where, f"The {transport} transport is not installed"))
            continue
        owned = describe(transport).session_params
        taken = sorted(set(overrides) & (owned | _RESERVED))
        if taken:
            problems.append(
                SettingsProblem(
                    where,
                    f"{transport} parameter {taken[0]} is set by the session settings "
                    "(profile, role, group), not as an advanced parameter",
                )
            )
            continue
        bad_number = next(
            (k for k, v in overrides.items() if isinstance(v, float) and not math.isfinite(v)),
            None,
        )
        if bad_number is not None:
            problems.append(
                SettingsProblem(where, f"{transport} parameter {bad_number} must be finite")
            )
            continue
        try:
            spec.build({"profile": profile, **overrides})
        except ValueError as exc:
            problems.append(SettingsProblem(where, str(exc)))
            continue
        good[transport] = dict(overrides)
    return good, problems


# -- the settings -----------------------------------------------------------------------------


def _default_colour() -> int:
    return colour_for_name(login_name())


# A picture's limits: below these a screenshot is unreadable; above, it is more than the
# board's ops carry (3 MiB) or than a screen shows.
PICTURE_SIDE, PICTURE_KIB = 2048, 2048
PICTURE_RANGES = {
    "picture_side": (256, 4096, "A picture's long side must be 256 to 4,096 pixels"),
    "picture_kib": (64, 3072, "A picture's size must be 64 to 3,072 KiB"),
}


@dataclass(frozen=True, slots=True)
class SessionSettings:
    transport: str = "rmp"
    group: str = DEFAULT_GROUP  # "ADDR:PORT"
    iface: str = ""  # IPv4 address of a local interface; "" for the system's choice
    ttl: int = DEFAULT_TTL  # multicast hops: 1 this network, 0 this computer
    display_name: str = field(default_factory=login_name)
    colour: int = field(default_factory=_default_colour)  # ARGB
    # Whether the person chose ``colour`` (in the settings). If not, the session gives this
    # member a free default colour (whiteboard/presence.py's default_colour) and ``colour``
    # only preselects the settings dialog's picker.
    own_colour: bool = False
    # The role, in the app's words (host, producer, viewer), for a transport that has roles;
    # kept for the others, so switching back loses nothing. Saved under its first name.
    mtp_role: str = "producer"
    profile: str = "lan"
    # Protocol parameters that differ from the profile: {"rmp": {...}, "mtp": {...}}. Kept for
    # every transport, so switching transport and back loses nothing; only the session's
    # transport's are used. Treat as read-only (the dataclass is frozen, a dict is not).
    advanced: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    # A private session's passphrase (issue 21, docs/security.md); "": a session in clear.
    # Never saved with the settings, never shown.
    passphrase: str = field(default="", repr=False)
    # Whether to keep the passphrase in the system keyring (whiteboard/app/remembered.py).
    remember_passphrase: bool = False
    # Whether a private session's recording is encrypted at rest (docs/session-log.md): its
    # passphrase or view code then opens it, and nothing else.
    encrypt_recordings: bool = True
    # Whether a private session lets people watch with a view code (docs/security.md
    # "Viewers"): bound into its key, so everyone in it chooses the same.
    allow_viewers: bool = False
    # Whether the others see where our pointer is on the board (issue 19; View menu).
    share_pointer: bool = True
    # A picture put on the board is brought within these (issue 20; whiteboard/app/
    # image_insert.py): pixels on its long side, KiB encoded.
    picture_side: int = PICTURE_SIDE
    picture_kib: int = PICTURE_KIB

    def __post_init__(self) -> None:
        # A copy, so that the caller mutating its dict later does not change these settings.
        if isinstance(self.advanced, Mapping):
            copy = {t: dict(o) if isinstance(o, Mapping) else o for t, o in self.advanced.items()}
            object.__setattr__(self, "advanced", copy)

    def validate(self, local_addresses: Collection[str] | None = None) -> list[SettingsProblem]:
        """Every problem, each with the field it is about; empty when the settings can be used.

        ``local_addresses``: this machine's IPv4 addresses (default: asked of the system)."""
        problems: list[SettingsProblem] = []
        checks: list[tuple[str, str | None]] = [
            ("transport", _transport_problem(self.transport)),
            ("group", _group_problem(self.group)),
            ("iface", _iface_problem(self.iface, local_addresses)),
            ("ttl", _ttl_problem(self.ttl)),
            ("display_name", _name_problem(self.display_name)),
            ("colour", _colour_problem(self.colour)),
            ("mtp_role", _role_problem(self.mtp_role, self.transport)),
            ("profile", _profile_problem(self.profile)),
            ("passphrase", _passphrase_problem(self.passphrase)),
            ("picture_side", _within("picture_side", self.picture_side)),
            ("picture_kib", _within("picture_kib", self.picture_kib)),
        ]
        problems.extend(SettingsProblem(name, message) for name, message in checks if message)
        if _profile_problem(self.profile) is None:  # else every transport would say so again
            problems.extend(_advanced_problems(self.advanced, self.profile)[1])
        return problems

    def picture_limits(self) -> tuple[int, int]:
        """(pixels on the long side, bytes) a picture put on the board is brought within."""
        return self.picture_side, self.picture_kib * 1024

    def overrides(self, transport: str | None = None) -> dict[str, object]:
        return dict(self.advanced.get(transport or self.transport, {}))

    @property
    def role(self) -> str | None:
        """The protocol's name for this member's role (MTP: ``master``, ``producer``,
        ``consumer``); None on a transport without roles."""
        description = describe(self.transport)
        return description.role(self.mtp_role).value if description.roles else None

    def to_transport_params(self) -> dict[str, object]:
        """The ``params`` mapping for the transport's factory (``open_transport``)."""
        description = describe(self.transport)
        role = self.mtp_role if description.roles else None
        return description.core_params(self.profile, self.overrides(), role)

    def session_key(self) -> SessionKey | None:
        """The private session's key (about 0.2 s to derive), or None for a session in clear.
        Salted with the group: the same passphrase on another group is another session."""
        if not self.passphrase:
            return None
        # One spelling of the group ("…:05000" is "…:5000"), so that every member salts alike.
        group = str(GroupAddress.parse(self.group))
        return open_session_key(self.passphrase, group, viewers=self.allow_viewers)

    def net_config(self) -> NetConfig:
        """Raises ``ValueError`` (readable) if the group or TTL is bad: validate first."""
        if (problem := _ttl_problem(self.ttl)) is not None:
            raise ValueError(problem)
        return NetConfig(
            group=GroupAddress.parse(self.group), iface=self.iface or None, ttl=self.ttl
        )


def _transport_problem(value: object) -> str | None:
    if value in transports():
        return None
    return f"Transport must be one of {', '.join(transports())}"


def _group_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return GROUP_MESSAGE
    try:
        GroupAddress.parse(value.strip())
    except ValueError:
        return GROUP_MESSAGE
    return None if value == value.strip() else GROUP_MESSAGE


def _iface_problem(value: object, local_addresses: Collection[str] | None) -> str | None:
    if value == "":
        return None
    try:
        address = str(ipaddress.IPv4Address(value))
    except ValueError:
        return (
            f"Interface {value!r} must be the IPv4 address of one of this computer's "
            "interfaces, or empty for the system's choice"
        )
    local = local_ipv4_addresses() if local_addresses is None else local_addresses
    if address not in local:
        return f"Interface {address} is not on this machine; choose one from the list"
    return None


def _within(name: str, value: object) -> str | None:
    low, high, message = PICTURE_RANGES[name]
    ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    return None if ok else message


def _ttl_problem(value: object) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 255
    return None if ok else TTL_MESSAGE


def _name_problem(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip() or len(value) > NAME_MAX:
        return NAME_MESSAGE
    if not value.isprintable():
        return "Name must not contain control characters"
    return None


def _passphrase_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return "Passphrase must be text"
    if not value:
        return None
    try:
        check_secret(value)
    except PassphraseError as exc:
        return str(exc).capitalize()
    return None


def _colour_problem(value: object) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFFFFFF
    return None if ok else "Colour must be an ARGB value from 0 to 0xFFFFFFFF"


def _role_problem(value: object, transport: str | None = None) -> str | None:
    """A role must be one of the session's transport's; any transport's is kept for one
    without roles (switching back to it loses nothing). In a build where no transport has
    roles, the role is not used and anything goes."""
    roles: tuple[Role, ...] = ()
    if transport is not None:
        with contextlib.suppress(TransportUnavailable):
            roles = describe(transport).roles
    words = tuple(role.word for role in roles) or role_words()
    if not words or value in words:
        return None
    return f"Role must be one of {', '.join(words)}"


def _profile_problem(value: object) -> str | None:
    return None if value in PROFILES else f"Profile must be one of {', '.join(PROFILES)}"


# -- persistence ------------------------------------------------------------------------------

_SECTION = "session"


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    settings: SessionSettings
    reset: tuple[SettingsProblem, ...]  # saved values that were unusable, now the defaults


def default_qsettings() -> QSettings:
    """The user's own settings store. Tests use ``QSettings(path, QSettings.Format.IniFormat)``."""
    return QSettings(ORGANIZATION, APPLICATION)


def save_settings(qsettings: QSettings, settings: SessionSettings) -> None:
    qsettings.beginGroup(_SECTION)
    try:
        qsettings.setValue("transport", settings.transport)
        qsettings.setValue("group", settings.group)
        qsettings.setValue("iface", settings.iface)
        qsettings.setValue("ttl", settings.ttl)
        qsettings.setValue("display_name", settings.display_name)
        # Hex text: readable in the file, and the same in every QSettings format.
        qsettings.setValue("colour", f"#{settings.colour:08x}")
        qsettings.setValue("own_colour", "true" if settings.own_colour else "false")
        qsettings.setValue(
            "remember_passphrase", "true" if settings.remember_passphrase else "false"
        )
        qsettings.setValue(
            "encrypt_recordings", "true" if settings.encrypt_recordings else "false"
        )
        qsettings.setValue("allow_viewers", "true" if settings.allow_viewers else "false")
        qsettings.setValue("share_pointer", "true" if settings.share_pointer else "false")
        qsettings.setValue("picture_side", settings.picture_side)
        qsettings.setValue("picture_kib", settings.picture_kib)
        qsettings.setValue("mtp_role", settings.mtp_role)
        qsettings.setValue("profile", settings.profile)
        # JSON keeps the values' types, which an INI file would turn into strings.
        qsettings.setValue("advanced", json.dumps(settings.advanced, sort_keys=True))
    finally:
        qsettings.endGroup()
    qsettings.sync()


def read_settings(
    qsettings: QSettings, local_addresses: Collection[str] | None = None
) -> LoadedSettings:
    """The saved settings; a value that is missing is the default, and one that cannot be used
    (a hand-edited file, an older version, an interface this machine no longer has) is the
    default too, reported in ``reset``."""
    defaults = SessionSettings()
    values: dict[str, object] = {}
    reset: list[SettingsProblem] = []
    raw: dict[str, object] = {}
    qsettings.beginGroup(_SECTION)
    try:
        for f in fields(SessionSettings):
            if qsettings.contains(f.name):
                raw[f.name] = qsettings.value(f.name)
    finally:
        qsettings.endGroup()

    def take(
        name: str, parse: Callable[[object], object], check: Callable[[object], str | None]
    ) -> None:
        if name not in raw:
            return
        try:
            value = parse(raw[name])
        except (TypeError, ValueError):
            message = None
        else:
            message = check(value)
            if message is None:
                values[name] = value
                return
        reset.append(SettingsProblem(name, _reset_message(name, raw[name], message)))

    take("transport", _text, _transport_problem)
    take("group", _text, _group_problem)
    take("iface", _text, lambda v: _iface_problem(v, local_addresses))
    take("ttl", _whole_number, _ttl_problem)
    take("display_name", _text, _name_problem)
    take("colour", _argb, _colour_problem)
    # Missing (saved by a version that did not ask): a default colour, which is what that
    # version saved unless the person had changed it.
    take("own_colour", _yes_no, lambda _value: None)
    take("remember_passphrase", _yes_no, lambda _value: None)
    take("encrypt_recordings", _yes_no, lambda _value: None)
    take("allow_viewers", _yes_no, lambda _value: None)
    take("share_pointer", _yes_no, lambda _value: None)
    take("picture_side", _whole_number, lambda value: _within("picture_side", value))
    take("picture_kib", _whole_number, lambda value: _within("picture_kib", value))
    take("mtp_role", _text, _role_problem)
    take("profile", _text, _profile_problem)
    if "display_name" in values and "colour" not in values:
        # Never chosen, or reset: the name's own colour, as for a new user of that name.
        values["colour"] = colour_for_name(str(values["display_name"]))
    if "advanced" in raw:
        try:
            stored = json.loads(_text(raw["advanced"]))
        except (TypeError, ValueError):
            stored = None
        advanced, problems = _advanced_problems(stored, str(values.get("profile", "lan")))
        values["advanced"] = advanced
        reset.extend(
            SettingsProblem(p.field, f"Saved advanced settings dropped: {p.message}")
            for p in problems
        )
    kwargs: dict[str, Any] = {**_as_kwargs(defaults), **values}  # each value checked above
    settings = SessionSettings(**kwargs)
    return LoadedSettings(settings, tuple(reset))


def load_settings(
    qsettings: QSettings, local_addresses: Collection[str] | None = None
) -> SessionSettings:
    """:func:`read_settings`, logging what was reset."""
    loaded = read_settings(qsettings, local_addresses)
    for problem in loaded.reset:
        log.warning("settings: %s", problem.message)
    return loaded.settings


def _as_kwargs(settings: SessionSettings) -> dict[str, object]:
    return {f.name: getattr(settings, f.name) for f in fields(settings)}


def _text(value: object) -> str:
    # An INI value with an unquoted comma comes back as a list: not text we wrote.
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _whole_number(value: object) -> int:
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, int):
        return value
    return int(_text(value).strip())


def _yes_no(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = _text(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(value)
    return text == "true"


def _argb(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = _text(value).strip()
    return int(text.removeprefix("#"), 16)


def _reset_message(name: str, value: object, problem: str | None) -> str:
    why = f" ({problem})" if problem else ""
    return f"The saved {name.replace('_', ' ')} {value!r} could not be used{why}; using the default"


__all__ = [
    "APPLICATION",
    "DEFAULT_GROUP",
    "GROUP_MESSAGE",
    "NAME_MAX",
    "ORGANIZATION",
    "PALETTE",
    "PROFILES",
    "TTL_MESSAGE",
    "LoadedSettings",
    "SessionSettings",
    "SettingsProblem",
    "TransportParamsSpec",
    "colour_for_name",
    "default_qsettings",
    "fresh_group",
    "load_settings",
    "login_name",
    "params_spec",
    "read_settings",
    "role_words",
    "save_settings",
    "transports",
]
