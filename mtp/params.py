"""MTP's parameters: the RFC's values (the ``seed`` profile) and a ``lan`` profile.

Every value can be overridden by name (``--param window=32``). Times are in seconds here and
in milliseconds on the wire (RFC 1301 §2.2.7)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from ipaddress import IPv4Address

from mtp.bounds import MIN_DATA_UNIT

ROLES = ("master", "producer", "consumer")
TRANSPORT_TYPES = ("nxn", "1xn")


# Parameters for which 0 means something: no throughput needed, no reorder wait, the RFC's
# padding to retention packets (§3.2.3).
_MAY_BE_ZERO = ("min_throughput", "reorder_wait", "padding", "message_packets", "nak_spread")


@dataclass(frozen=True, slots=True)
class MtpParams:
    role: str = "producer"  # RFC 1301 §3.1.1: the member class asked for at join
    transport_type: str = "nxn"  # §3.1.1: NxN, or 1xN (the master is the only producer)
    # §3.4 and Appendix: heartbeat (seconds), window (data packets per heartbeat) and
    # retention (heartbeats), and the bounds the master keeps them in when they are adjusted
    # during the web's life (§3.4.1).
    heartbeat: float = 0.2
    heartbeat_min: float = 0.16
    heartbeat_max: float = 0.2
    window: int = 20
    window_min: int = 17
    window_max: int = 20
    retention: int = 3
    retention_min: int = 3
    retention_max: int = 5
    # §3.2.3: a message is at least retention packets (data, then empty[dally]) so that a
    # consumer sees one of them and can name the producer, "retention [having]
    # approximately the correct properties for that insurance": padding 0 pads to the web's
    # retention, the rule as written; N pads to N packets, after the verdict too (the lan
    # profile's 3: §3.4.2's minimum retention, see LAN below).
    padding: int = 0
    # Our cheapest padding, which overrides ``padding``: a positive value pads to that many
    # packets and stops once the message is decided (slower repairs under loss).
    message_packets: int = 0
    max_data_unit: int = 1400  # §3.1.1: client bytes per data packet
    min_throughput: int = 0  # §3.1.1: kilobytes per second this member needs of the web
    tokens: int = 3  # TR 90-1141 §5.1: transmit tokens outstanding at once (at most 12)
    # §3.2.5: a member that hears nothing from the master for this long abandons the web
    # (the RFC's retention heartbeats, 0.6 s in the seed profile; longer on a lan, whose hosts
    # stall for a second without being gone). The master's check of a silent token holder
    # (§3.2.1) starts after holder_silence, then asks retention times with isMember.
    silence_limit: float = 0.6
    holder_silence: float = 0.6
    probe_count: int = 5  # §3.1: join[request]s a new master sends to see if a web answers
    join_report_after: int = 25  # join[request]s without an answer before we say so
    hibernate_after: int = 10  # idle heartbeats before the master hibernates (§3.2.3)
    hibernate_heartbeat: float = 1.0
    nak_dally: bool = False  # §3.4.2: wait a random 0..retention-2 heartbeats before a nak
    # Extension (issue 18), used when nak_dally is off: a first nak waits a random time,
    # uniform over nak_spread heartbeats per doubling of the web's size, at most §3.4.2's
    # retention - 2 heartbeats (at least one), so that when every member lost the same packet
    # the producer's multicast retransmission, asked for by the first, spares the others'
    # naks. 0: at once (§3.2.4).
    nak_spread: float = 0.25
    # Extension: a gap seen in arriving packets is asked for only after this many seconds, so
    # that a packet merely overtaken arrives first. §3.2.4 naks at once (the seed profile);
    # a network that reorders, even by a millisecond, would then bring needless repairs.
    reorder_wait: float = 0.0
    join_with_state: bool = True  # TR §3.4: the joiner receives the board before newer data
    member_cache_age: float = 30.0  # §3.4.3: how long an isMember answer is believed
    repair_cache: int = 64  # extension: accepted messages the master keeps to repair
    state_timeout: float = 30.0  # how long the master waits for the application's board
    # Extension (docs/mtp.md, "Master failover"): when the master falls silent (§3.2.5) the
    # web goes on under the first live successor the master named, instead of ending as in
    # RFC 1301. ``failover=false`` keeps the RFC's behaviour (conformance runs). Successor k
    # (from 0) takes over ``k * takeover_gap`` seconds after it gave the master up, if no
    # earlier successor's web has answered its join requests by then.
    failover: bool = True
    takeover_gap: float = 2.0
    group: str = "224.0.1.9:7000"  # the web's multicast NSAP, for the TSAPs we send (§2.3.2)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"mtp role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if self.transport_type not in TRANSPORT_TYPES:
            raise ValueError(
                f"mtp transport_type must be one of {', '.join(TRANSPORT_TYPES)}, "
                f"got {self.transport_type!r}"
            )
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, (bool, str)):
                continue
            if value < 0 or (value == 0 and f.name not in _MAY_BE_ZERO):
                raise ValueError(f"mtp parameter {f.name} must be positive, got {value}")
        for name in ("heartbeat", "window", "retention"):
            low, high = getattr(self, f"{name}_min"), getattr(self, f"{name}_max")
            if not low <= getattr(self, name) <= high:
                raise ValueError(
                    f"mtp parameters need {name}_min <= {name} <= {name}_max, got "
                    f"{low} <= {getattr(self, name)} <= {high}"
                )
        if not (self.heartbeat_min >= 0.01 and self.heartbeat_max <= 60.0):
            raise ValueError("mtp heartbeat must be from 0.01 to 60 seconds")
        if self.window_max > 1024:
            raise ValueError("mtp window must be at most 1024 packets")
        if self.retention_max > 255:
            raise ValueError("mtp retention must be at most 255 heartbeats")
        if not 1 <= self.tokens <= 12:
            raise ValueError(
                "mtp parameter tokens must be from 1 to 12: a 13th token would shift a pending "
                "status out of the acceptance vector (RFC 1301 §2.2.6)"
            )
        if not MIN_DATA_UNIT <= self.max_data_unit <= 1400:
            raise ValueError(
                f"mtp parameter max_data_unit must be from {MIN_DATA_UNIT} to 1400 bytes (one "
                "data packet must fit an Ethernet frame, and a message of max_message bytes "
                "must fit 65,536 packets, RFC 1301 §2.2.6)"
            )
        if self.min_throughput > 0xFFFF:
            raise ValueError("mtp parameter min_throughput must fit 16 bits (kilobytes/s)")
        if self.message_packets > 64:
            raise ValueError("mtp parameter message_packets must be at most 64")
        if self.padding > 64:
            raise ValueError("mtp parameter padding must be at most 64")
        if self.reorder_wait > self.heartbeat_min:
            raise ValueError("mtp parameter reorder_wait must not exceed heartbeat_min")
        if self.hibernate_heartbeat < self.heartbeat:
            raise ValueError("mtp parameter hibernate_heartbeat must not be below heartbeat")
        group_address(self.group)  # raises a readable ValueError

    @property
    def member_class_name(self) -> str:
        return self.role

    @property
    def throughput_kbps(self) -> int:
        """What the web can carry at these values, in kilobytes per second (§3.1.1)."""
        return min(0xFFFF, int(self.window * self.max_data_unit / self.heartbeat / 1000))


def group_address(text: str) -> tuple[IPv4Address, int]:
    """``"host:port"`` as an address and a port; ValueError saying what is wrong."""
    host, sep, port_text = text.rpartition(":")
    try:
        address = IPv4Address(host)
        port = int(port_text)
    except ValueError:
        address, port = IPv4Address(0), -1
    if not sep or not 0 < port < 65536:
        raise ValueError(
            f"mtp parameter group must be host:port, like 239.255.0.1:7000, got {text!r}"
        )
    return address, port


# RFC 1301 §3.4.2 and the appendix: heartbeat 160-200 ms, window 17-20, retention 3 (5 across
# networks), one transmit token at a time as in the RFC's figures plus TR §5.1's few more.
SEED = MtpParams()

# A modern switched LAN: round trips well under a millisecond, so a short heartbeat makes
# repairs and token grants quick; a longer retention (in heartbeats) and silence limits that
# ride out a host that stalls for a second or two; a larger window for joiners' boards.
LAN = MtpParams(
    heartbeat=0.05,
    heartbeat_min=0.02,
    heartbeat_max=0.2,
    # 256 packets of 1,400 bytes a heartbeat: 7 MB/s, what a producer's stroke rate on a LAN
    # may need (issue 18: 32 held a producer to ~1,900 strokes a second); the receivers
    # keep window x retention packets per producer for repairs.
    window=256,
    window_min=8,
    window_max=512,
    retention=20,
    retention_min=10,
    retention_max=60,
    # §3.2.3 pads a message to retention packets because retention "has approximately the
    # correct properties for that insurance" (a consumer sees at least one packet); at the
    # RFC's retention of 3 (§3.4.2's minimum) it does. Ours is 20 to keep data across a
    # host's stall, not for that insurance: 3 packets keep the RFC's (19 dallies a
    # one-packet stroke were 82% of a 100-member web's events, issue 18).
    padding=3,
    silence_limit=3.0,
    holder_silence=2.0,
    probe_count=10,
    join_report_after=100,
    hibernate_after=40,
    hibernate_heartbeat=0.5,
    member_cache_age=10.0,
    repair_cache=256,
    state_timeout=10.0,
    reorder_wait=0.01,
    # A round trip here includes the producer's isMember check of a new requester (§3.4.3):
    # ~4 ms in the simulator, so a wider window keeps 64 members near 3 naks per shared loss.
    nak_spread=0.5,
)

PROFILES = {"seed": SEED, "lan": LAN}
_BOOL_FIELDS = {"nak_dally", "join_with_state", "failover"}
_STR_FIELDS = {"role", "transport_type", "group"}
_INT_FIELDS = {
    "window",
    "window_min",
    "window_max",
    "retention",
    "retention_min",
    "retention_max",
    "padding",
    "message_packets",
    "max_data_unit",
    "min_throughput",
    "tokens",
    "probe_count",
    "join_report_after",
    "hibernate_after",
    "repair_cache",
}
_TRUE = (True, 1, "true", "yes", "1")
_FALSE = (False, 0, "false", "no", "0")


def params_from_mapping(params: Mapping[str, object]) -> MtpParams:
    """The profile named by ``params["profile"]`` (default ``lan``) with overrides applied;
    ``ValueError`` with a readable message for anything unknown or out of range."""
    profile = params.get("profile", "lan")
    if profile not in PROFILES:
        raise ValueError(f"unknown mtp profile {profile!r}; choose one of {', '.join(PROFILES)}")
    base = PROFILES[str(profile)]
    known = {f.name for f in fields(MtpParams)}
    changes: dict[str, object] = {}
    for key, value in params.items():
        if key == "profile":
            continue
        if key not in known:
            raise ValueError(f"unknown mtp parameter {key!r}")
        if key in _BOOL_FIELDS:
            if value not in _TRUE + _FALSE:
                raise ValueError(f"mtp parameter {key} must be true or false, got {value!r}")
            changes[key] = value in _TRUE
        elif key in _STR_FIELDS:
            changes[key] = str(value)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"mtp parameter {key} must be a number, got {value!r}")
        elif key in _INT_FIELDS:
            if value != int(value):
                raise ValueError(f"mtp parameter {key} must be a whole number, got {value}")
            changes[key] = int(value)
        else:
            changes[key] = float(value)
    # Moving a value alone moves its bounds with it where they would otherwise refuse it.
    for name in ("heartbeat", "window", "retention"):
        value = changes.get(name)
        if isinstance(value, int | float):
            low: float = getattr(base, f"{name}_min")
            high: float = getattr(base, f"{name}_max")
            changes.setdefault(f"{name}_min", min(value, low))
            changes.setdefault(f"{name}_max", max(value, high))
    heartbeat = changes.get("heartbeat")
    if isinstance(heartbeat, int | float) and "hibernate_heartbeat" not in changes:
        changes["hibernate_heartbeat"] = max(base.hibernate_heartbeat, heartbeat)
    return replace(base, **changes)  # type: ignore[arg-type]
