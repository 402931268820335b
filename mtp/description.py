"""MTP as the layers above see it: ``whiteboard.transport.registry`` reads ``DESCRIPTION``."""

from __future__ import annotations

from coreapi.description import (
    EventKind,
    Link,
    ParamNote,
    PhaseMeaning,
    Role,
    TransportDescription,
    describe_params,
)
from mtp.codes import HEADER_SIZE
from mtp.params import PROFILES, TRANSPORT_TYPES, params_from_mapping
from mtp.side import is_side_channel

_N = ParamNote
_NOTES: dict[str, ParamNote] = {
    "transport_type": _N(
        "NxN: everyone may send; 1xN: only the master sends (§3.1.1)", choices=TRANSPORT_TYPES
    ),
    "heartbeat": _N("The web's heartbeat (§3.4)", 0.01, 60.0, unit="s"),
    "heartbeat_min": _N("Lowest heartbeat the master may adjust to (§3.4.1)", 0.01, 60.0, unit="s"),
    "heartbeat_max": _N(
        "Highest heartbeat the master may adjust to (§3.4.1)", 0.01, 60.0, unit="s"
    ),
    "window": _N("Data packets a producer may send per heartbeat (§3.4)", 1, 1024, unit="packets"),
    "window_min": _N("Lowest window the master may adjust to (§3.4.1)", 1, 1024, unit="packets"),
    "window_max": _N("Highest window the master may adjust to (§3.4.1)", 1, 1024, unit="packets"),
    "retention": _N("Heartbeats a message is kept for repair (§3.4)", 1, 255, unit="heartbeats"),
    "retention_min": _N(
        "Lowest retention the master may adjust to (§3.4.1)", 1, 255, unit="heartbeats"
    ),
    "retention_max": _N(
        "Highest retention the master may adjust to (§3.4.1)", 1, 255, unit="heartbeats"
    ),
    "padding": _N(
        "Packets a message is padded to with dallies, after its verdict too (§3.2.3); 0: "
        "the web's retention",
        0,
        64,
        unit="packets",
    ),
    "message_packets": _N(
        "0: messages are padded as padding says (§3.2.3); N: to N packets, no padding once "
        "decided (cheapest; overrides padding)",
        0,
        64,
        unit="packets",
    ),
    "max_data_unit": _N("Client bytes per data packet (§3.1.1)", 64, 1400, unit="bytes"),
    "min_throughput": _N(
        "Kilobytes per second this member needs of the web (§3.1.1)", 0, 0xFFFF, unit="KB/s"
    ),
    "tokens": _N("Transmit tokens outstanding at once (TR §5.1)", 1, 12),
    "silence_limit": _N(
        "No word from the master for this long: the web is abandoned (§3.2.5)",
        0.001,
        3600.0,
        unit="s",
    ),
    "holder_silence": _N(
        "The master checks a silent token holder after this long (§3.2.1)", 0.001, 3600.0, unit="s"
    ),
    "probe_count": _N(
        "Join requests a new master sends to see whether a web answers (§3.1)", 1, 1000
    ),
    "join_report_after": _N("Unanswered join requests before saying so", 1, 100_000),
    "hibernate_after": _N("Idle heartbeats before the master hibernates (§3.2.3)", 1, 100_000),
    "hibernate_heartbeat": _N("The heartbeat while hibernating (§3.2.3)", 0.01, 3600.0, unit="s"),
    "nak_dally": _N("Wait a random 0 to retention-2 heartbeats before a nak (§3.4.2)"),
    "nak_spread": _N(
        "Without nak_dally, a first nak waits a random time up to this many heartbeats per "
        "doubling of the web, at most retention-2 (extension, after §3.4.2)",
        0.0,
        16.0,
        unit="heartbeats",
    ),
    "reorder_wait": _N(
        "A gap is asked for only after this long (extension; §3.2.4 naks at once)",
        0.0,
        60.0,
        unit="s",
    ),
    "join_with_state": _N("A joiner receives the board before newer data (TR §3.4)"),
    "member_cache_age": _N(
        "How long an isMember answer is believed (§3.4.3)", 0.001, 86_400.0, unit="s"
    ),
    "repair_cache": _N(
        "Accepted messages the master keeps to repair (extension)", 1, 100_000, unit="messages"
    ),
    "state_timeout": _N(
        "How long the master waits for the application's board", 0.001, 3600.0, unit="s"
    ),
    "failover": _N(
        "When the master dies, a successor it named re-forms the web (extension; "
        "false: the web ends, as RFC 1301 §3.2.5)"
    ),
    "takeover_gap": _N(
        "Seconds each later successor waits for an earlier one's web before taking over",
        0.001,
        3600.0,
        unit="s",
    ),
}

DESCRIPTION = TransportDescription(
    name="mtp",
    title="MTP: reliable and ordered, one member hosts (RFC 1301)",
    summary="A master numbers every message and grants the right to send; everyone delivers "
    "the same messages in the same order.",
    params=describe_params(PROFILES, _NOTES, hidden=frozenset({"role", "group"})),
    check=params_from_mapping,
    # Each chunk would be a message of its own, waiting for a token and the master's verdict:
    # a stroke goes whole at pen-up, as one message.
    live_strokes=False,
    resyncable=True,
    largest_datagram=HEADER_SIZE + 1400,  # RFC 1301 Figure 1's header and max_data_unit's top
    is_side_channel=is_side_channel,
    roles=(
        Role(
            "master",
            "host",
            "Host",
            sends=True,
            hosts=True,
            help="runs the board (one per group); if it dies, a participant takes over",
        ),
        Role("producer", "producer", "Participant", sends=True, help="draws"),
        Role("consumer", "viewer", "Viewer", sends=False, help="watches"),  # RFC 1301 §3.1.1
    ),
    role_param="role",
    # MTP names the web's multicast NSAP in its packets (RFC 1301 §2.3.2).
    group_param="group",
    events={"nak_sent": EventKind.NACK_SENT, "took_over": EventKind.TOOK_OVER},
    # mtp.link.Phase, by value. Until ready, sends are queued and go once a token is granted.
    phases={
        "new": PhaseMeaning(Link.JOINING, "starting", sends=False),
        "probing": PhaseMeaning(Link.JOINING, "looking for a host on the group", sends=True),
        "joining": PhaseMeaning(Link.JOINING, "asking the host to let us in", sends=True),
        "syncing": PhaseMeaning(Link.JOINING, "receiving the board from the host", sends=True),
        "ready": PhaseMeaning(Link.CONNECTED, "", sends=True),
        "leaving": PhaseMeaning(Link.LEAVING, "sending what is left, then leaving", sends=False),
        "quitting": PhaseMeaning(Link.LEAVING, "telling the host we leave", sends=False),
        "finished": PhaseMeaning(Link.ENDED, "", sends=False),
    },
)
