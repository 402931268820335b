"""How a transport describes itself to the layers above, so that they ask it instead of
comparing its name.

Each protocol package exports one :class:`TransportDescription` as ``DESCRIPTION`` beside its
``make_core``; ``whiteboard.transport.registry`` finds it by the transport's name. The app, the
settings, the start dialog, the runtime, the simulator, the replay and the analytics read what
they need from it: the roles, whether a stroke shows while it is drawn, whether a board can be
resynced, the parameters (type, default per profile, bounds, help), the names of the
protocol events that mean a NACK or a retransmission, and what each phase the core reports
(the ``phase`` protocol event) means for a person's session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

# The parameter sets every transport offers: ``lan`` (tuned for today's networks) and ``seed``
# (the papers' own values). A transport without profiles accepts both and changes nothing.
PROFILES: tuple[str, ...] = ("lan", "seed")


class EventKind(Enum):
    """What a protocol event means to the layers above (the replay's network lane)."""

    NACK_SENT = "NACK sent"
    RETRANSMISSION = "retransmission"
    # This member took the host role over from one that died or left (MTP failover): the app
    # says so, since others' drawing now depends on this member staying.
    TOOK_OVER = "took over as host"


class Link(Enum):
    """Where a member stands with its session, as a phase of its core means it."""

    JOINING = "joining"  # on its way in: not (yet, or any more) a member
    CONNECTED = "connected"  # a member: what it sends reaches the others
    LEAVING = "leaving"  # on its way out, by its own choice
    ENDED = "ended"  # out: nothing it sends goes anywhere


@dataclass(frozen=True, slots=True)
class PhaseMeaning:
    """What a phase of the core (the ``to`` of its ``phase`` protocol event) means to the app:
    where the member stands, what it is trying meanwhile (a phrase for a person: "asking the
    host to let us in"), and whether sends are accepted (queued until they can go)."""

    link: Link
    doing: str
    sends: bool


@dataclass(frozen=True, slots=True)
class Role:
    """A member's part in a session of a transport that has roles (RFC 1301 §3.1.1)."""

    value: str  # the protocol's own name, passed to the core as the role parameter
    word: str  # the app's word for it (people host a board; they do not "master" one)
    label: str  # for a menu
    sends: bool  # may draw: a role that cannot send watches only
    hosts: bool = False  # the session lives with this member: it ends when the member leaves
    help: str = ""  # one line for a person choosing


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One parameter a person may set (``--param NAME=VALUE``, the settings' advanced form).

    The transport's own parameter factory stays the judge of a value; the bounds here are for
    editors and help, and the tests check that the factory accepts them."""

    name: str
    kind: type  # bool, int, float or str
    defaults: Mapping[str, object]  # profile -> the value
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()  # for str parameters
    unit: str = ""

    def default(self, profile: str) -> object:
        return self.defaults[profile]


@dataclass(frozen=True, slots=True)
class ParamNote:
    """What a package says of a parameter beyond its type and defaults (see
    :func:`describe_params`)."""

    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""


@dataclass(frozen=True, slots=True)
class TransportDescription:
    name: str  # the registry's name: "raw", "rmp", "mtp"
    title: str  # for a menu: what it is and where it comes from
    summary: str  # one sentence for a person choosing
    params: tuple[ParamSpec, ...]
    # The package's own parameter factory: the judge of a ``params`` mapping (``ValueError``
    # with a readable message), which the settings call so as never to accept what the
    # transport would then refuse.
    check: Callable[[Mapping[str, object]], object]
    live_strokes: bool  # a stroke shows to others while it is drawn (sent in chunks)
    resyncable: bool  # a joiner is handed the board: replicas can resync from the others
    roles: tuple[Role, ...] = ()  # empty: every member is alike
    role_param: str = "role"  # the parameter a role is passed in
    group_param: str | None = None  # a parameter the runtime sets to the session's group
    events: Mapping[str, EventKind] = field(default_factory=dict)  # protocol event -> meaning
    # The ``to`` value of the core's ``phase`` protocol event -> its meaning for the session
    # state a person sees (whiteboard/app/session_state.py); empty: no phases reported.
    phases: Mapping[str, PhaseMeaning] = field(default_factory=dict)
    # The largest datagram the core sends (bytes of UDP payload), and the parameter that lowers
    # it, if any: a private session's envelope takes its share (whiteboard/security).
    largest_datagram: int = 1472
    datagram_param: str | None = None
    # Whether a datagram of the core's (in clear) belongs to its side channel
    # (coreapi/ephemeral.py): what the simulator impairs apart from the reliable traffic.
    is_side_channel: Callable[[bytes], bool] | None = None

    def params_within(self, params: Mapping[str, object], limit: int) -> dict[str, object]:
        """``params`` with the core's datagrams kept to ``limit`` bytes; ``ValueError`` if
        this transport cannot make them that small."""
        if self.datagram_param is not None:
            # Lowered to the limit, never raised: a smaller value asked for (a path with a
            # smaller MTU) stays.
            asked = params.get(self.datagram_param)
            if isinstance(asked, int | float) and not isinstance(asked, bool) and asked < limit:
                limit = int(asked)
            return {**params, self.datagram_param: limit}
        if self.largest_datagram > limit:
            raise ValueError(
                f"the {self.name} transport sends datagrams of up to {self.largest_datagram} "
                f"bytes, more than the {limit} a private session leaves"
            )
        return dict(params)

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def role(self, word: str) -> Role:
        """The role a person chose, by the app's word; ``KeyError`` if there is none."""
        for role in self.roles:
            if role.word == word:
                return role
        raise KeyError(word)

    @property
    def host_role(self) -> Role | None:
        """The role a session lives with (the MTP master), if the transport has one."""
        return next((role for role in self.roles if role.hosts), None)

    @property
    def member_role(self) -> Role | None:
        """The role of an ordinary member who draws and hosts nothing."""
        return next((role for role in self.roles if role.sends and not role.hosts), None)

    @property
    def session_params(self) -> frozenset[str]:
        """Parameters other settings own (the role, the group): never set as advanced ones."""
        owned = {self.role_param} if self.roles else set()
        if self.group_param is not None:
            owned.add(self.group_param)
        return frozenset(owned)

    def core_params(
        self, profile: str, overrides: Mapping[str, object], role: str | None = None
    ) -> dict[str, object]:
        """The ``params`` mapping for ``make_core``: the profile, the overrides and the role's
        protocol value (``role`` is the app's word)."""
        params: dict[str, object] = {"profile": profile, **overrides}
        if self.roles:
            chosen = self.role(role) if role is not None else self.member_role
            if chosen is not None:
                params[self.role_param] = chosen.value
        return params

    def role_in(self, params: Mapping[str, object]) -> Role | None:
        """The role a member built with ``params`` plays, by its protocol value; None on a
        transport without roles (or a value it does not know)."""
        value = params.get(self.role_param)
        return next((role for role in self.roles if role.value == value), None)

    def can_send(self, params: Mapping[str, object]) -> bool:
        """Whether a member built with ``params`` may draw (a viewer may not)."""
        role = self.role_in(params)
        return role is None or role.sends


def describe_params(
    profiles: Mapping[str, object], notes: Mapping[str, ParamNote], hidden: frozenset[str]
) -> tuple[ParamSpec, ...]:
    """The :class:`ParamSpec` of every field of a params dataclass, its defaults taken from
    each profile's instance (``profiles``: every name in :data:`PROFILES` -> instance) and
    its kind from the value (bool before int, as bool is an int). Every field not ``hidden``
    needs a note: a parameter nobody explained is a parameter nobody can set well."""
    ordered = {name: profiles[name] for name in PROFILES}
    first = ordered[PROFILES[0]]
    specs = []
    for f in dataclasses.fields(first):  # type: ignore[arg-type]
        if f.name in hidden:
            continue
        note = notes[f.name]
        specs.append(
            ParamSpec(
                name=f.name,
                kind=_kind(getattr(first, f.name)),
                defaults={name: getattr(p, f.name) for name, p in ordered.items()},
                help=note.help,
                minimum=note.minimum,
                maximum=note.maximum,
                choices=note.choices,
                unit=note.unit,
            )
        )
    return tuple(specs)


def _kind(value: object) -> type:
    for kind in (bool, int, float):
        if isinstance(value, kind):
            return kind
    return str
