"""RMP as the layers above see it: ``whiteboard.transport.registry`` reads ``DESCRIPTION``."""

from __future__ import annotations

from coreapi.description import (
    EventKind,
    Link,
    ParamNote,
    PhaseMeaning,
    TransportDescription,
    describe_params,
)
from rmp.params import PROFILES, params_from_mapping
from rmp.side import is_side_channel

_N = ParamNote
_NOTES: dict[str, ParamNote] = {
    "nack_retry": _N("An unanswered NACK is sent again this often (§2.3)", 0.001, 60.0, unit="s"),
    "nack_delay": _N(
        "A first NACK waits a random time up to this per doubling of the group, so that a "
        "merely reordered packet arrives first and others' NACKs can be heard; retries are "
        "jittered by as much and back off; 0: off (extension)",
        0.0,
        10.0,
        unit="s",
    ),
    "wait_interval": _N(
        "WI: after this, a packet waiting for a lost one is delivered anyway (§2.3)",
        0.001,
        3600.0,
        unit="s",
    ),
    "remind_min": _N(
        "Shortest time between reminders of our last packet (§2.4)", 0.001, 60.0, unit="s"
    ),
    "remind_max": _N(
        "Longest time between reminders of our last packet (§2.4)", 0.001, 60.0, unit="s"
    ),
    "remind_limit": _N("Reminders sent for one packet before giving up on confirmation", 1, 10_000),
    "join_tries": _N("Join requests sent before deciding we are alone (§2.8)", 1, 255),
    "join_interval": _N("Time between join requests (§2.8)", 0.001, 60.0, unit="s"),
    "join_tries_when_heard": _N(
        "Join requests in all while others are heard but none answers (§5)", 1, 255
    ),
    "passive_join": _N("Listen first, then ask the first active station for the image (§5)"),
    "batch": _N("Strokes queued behind the next one share its packet (extension)"),
    "image_stall": _N(
        "Ask for the image again after this long without progress (§2.8)", 0.001, 600.0, unit="s"
    ),
    "answer_spread": _N(
        "An eligible answerer to a join waits a random time up to this and stands down if "
        "another answers (extension)",
        0.0,
        10.0,
        unit="s",
    ),
    "retention_age": _N("Packets are kept for repair this long (§2.7)", 0.001, 86_400.0, unit="s"),
    "retention_count": _N("Packets kept for repair, at most (§2.7)", 2, 1_000_000),
    "multicast_threshold": _N(
        "Repairs go to the group once this many stations ask for one packet (§2.7)", 1, 10_000
    ),
    "repair_hold": _N(
        "How long requests for one packet are gathered before repairing it", 0.0, 10.0, unit="s"
    ),
    "rate": _N(
        "Our data packets per second, at most (§5: flow control)",
        0.001,
        1_000_000.0,
        unit="packets/s",
    ),
    "window": _N("Image parts sent but not yet confirmed by the joiner, at most (§5)", 1, 999_999),
    "image_part": _N("Bytes of board state per image packet", 64, 1300, unit="bytes"),
    "max_datagram": _N(
        "The largest datagram sent; a private session sets it to leave room for its envelope",
        1300,
        1472,
        unit="bytes",
    ),
    "keepalive": _N(
        "An idle station multicasts its confirmations this often (extension)",
        0.001,
        3600.0,
        unit="s",
    ),
    "suspect_after": _N(
        "Silence after which a station is shown as not heard from", 0.001, 3600.0, unit="s"
    ),
    "forget_after": _N("Silence after which a station is taken as gone", 0.001, 86_400.0, unit="s"),
    "give_up_after": _N(
        "Stop asking for a lost packet after this long (reported)", 0.001, 86_400.0, unit="s"
    ),
    "leave_linger": _N(
        "On leaving, serve repairs until confirmed, at most this long", 0.001, 600.0, unit="s"
    ),
}

DESCRIPTION = TransportDescription(
    name="rmp",
    title="RMP: reliable (INRIA RR-2100)",
    summary="Reliable multicast with NACKs; every member is alike and a joiner gets the board.",
    params=describe_params(PROFILES, _NOTES, hidden=frozenset()),
    check=params_from_mapping,
    live_strokes=True,
    resyncable=True,
    datagram_param="max_datagram",
    is_side_channel=is_side_channel,
    events={"nack_sent": EventKind.NACK_SENT, "retransmission": EventKind.RETRANSMISSION},
    # rmp.context.Phase, by value. A joining member's sends are queued (RR-2100 §2.8).
    phases={
        "new": PhaseMeaning(Link.JOINING, "starting", sends=False),
        "listening": PhaseMeaning(Link.JOINING, "listening for the others (§5)", sends=True),
        "joining": PhaseMeaning(Link.JOINING, "asking the others to let us in", sends=True),
        "image": PhaseMeaning(Link.JOINING, "receiving the board from the others", sends=True),
        "ready": PhaseMeaning(Link.CONNECTED, "", sends=True),
        "leaving": PhaseMeaning(Link.LEAVING, "sending what is left, then leaving", sends=False),
        "finished": PhaseMeaning(Link.ENDED, "", sends=False),
    },
)
