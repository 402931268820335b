"""RMP's parameters: the report's values (the ``seed`` profile) and a ``lan`` profile.

Every value can be overridden by name (``--param wait_interval=5``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

MIN_DATAGRAM = 1300  # bytes: MAX_PAYLOAD (1,200) with its headers, options and a Retransmit


@dataclass(frozen=True, slots=True)
class RmpParams:
    # §2.3, §2.6: an unanswered NACK is re-sent every second, "but not more often".
    nack_retry: float = 1.0
    # Extension (SRM/NORM-style, rmp/suppression.py): a first NACK waits a random time in
    # [0, nack_delay * log2(group size)) so that a merely reordered packet arrives first and
    # other receivers' NACKs for a loss they share are heard first (ours then stands down);
    # retries are jittered over the same window and back off. 0: all of it off (§2.3's timing).
    nack_delay: float = 0.05
    # §2.3: WI, after which a waiting packet is delivered out of sequence.
    wait_interval: float = 10.0
    # §2.4: reminders "typically 0.5 to one second" apart, until confirmed.
    remind_min: float = 0.5
    remind_max: float = 1.0
    remind_limit: int = 120  # bounded: a station that never confirms cannot keep us busy
    # §2.8: join tries, and the time between them (the report says "a few seconds" in all).
    join_tries: int = 5
    join_interval: float = 1.0
    # §5 names the flaw: a joiner that hears others but gets no answer is not alone. It keeps
    # asking, with rising join numbers, up to this many tries in all.
    join_tries_when_heard: int = 30
    passive_join: bool = False  # §5: listen, then ask the first active station for the image
    # Extension (rmp/batch.py): strokes queued behind the next one share its packet (Batch
    # option 76). Off for a group that must hear RR-2100's wire alone.
    batch: bool = True
    image_stall: float = 20.0  # no image progress for this long: ask again (answerer gone?)
    # Extension: an eligible answerer waits a random [0, answer_spread) and stands down if it
    # hears another answer for the same joiner (depth estimates may tie).
    answer_spread: float = 0.2
    # §2.7: the retention store, by age and by count.
    retention_age: float = 300.0
    retention_count: int = 200
    # §2.7: retransmissions are point to point unless this many stations ask for the same
    # packet within repair_hold, then multicast.
    multicast_threshold: int = 2
    repair_hold: float = 0.02
    # §5 (flow control is "missing"): pacing of our own data packets, in packets per second,
    # and at most `window` image parts not yet confirmed by the joiner (below the retention
    # count, so the store never evicts a part the joiner may still ask for).
    rate: float = 200.0
    window: int = 64
    image_part: int = 1024  # bytes of board state per image packet
    # Extensions: an idle station multicasts its confirmations this often (liveness, and
    # third-party gap detection, §2.6), is suspected after suspect_after of silence and
    # removed after forget_after.
    keepalive: float = 5.0
    suspect_after: float = 20.0
    forget_after: float = 60.0
    give_up_after: float = 300.0  # stop asking for a packet (reported as a failure)
    leave_linger: float = 5.0  # on leaving, serve repairs until confirmed, at most this long
    # The largest datagram we send: one Ethernet-sized UDP payload; a private session's
    # envelope (whiteboard/security) takes 44 bytes of it, and sets this to the rest.
    max_datagram: int = 1472

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            if not value > 0 and f.name not in ("nack_delay", "repair_hold", "answer_spread"):
                raise ValueError(f"rmp parameter {f.name} must be positive, got {value}")
            if value < 0:
                raise ValueError(f"rmp parameter {f.name} must not be negative, got {value}")
        if self.remind_min > self.remind_max:
            raise ValueError("rmp parameters need remind_min <= remind_max")
        if self.window >= self.retention_count:
            raise ValueError("rmp parameter window must be below retention_count (§5)")
        if not 1 <= self.join_tries <= self.join_tries_when_heard <= 255:
            raise ValueError("rmp parameters need 1 <= join_tries <= join_tries_when_heard <= 255")
        if not self.keepalive < self.suspect_after < self.forget_after:
            raise ValueError("rmp parameters need keepalive < suspect_after < forget_after")
        if not 64 <= self.image_part <= 1300:
            raise ValueError("rmp parameter image_part must be from 64 to 1300 bytes")
        if not MIN_DATAGRAM <= self.max_datagram <= 1472:
            raise ValueError(
                f"rmp parameter max_datagram must be from {MIN_DATAGRAM} to 1472 bytes "
                "(a payload of 1,200 bytes must fit, with its headers and a Retransmit)"
            )
        if self.image_part > self.max_datagram - 160:
            raise ValueError("rmp parameter image_part must leave 160 bytes of max_datagram")


# The report's own values (RR-2100 §2.3, §2.4, §2.6, §2.7, §2.8).
SEED = RmpParams()

# A modern switched LAN: round trips well under a millisecond, but hosts that stall for a
# second or two (so no failure verdict on one silence), and boards of thousands of strokes to
# hand to a joiner (so a larger store and window, and a faster pace).
LAN = RmpParams(
    nack_retry=0.25,
    nack_delay=0.01,
    wait_interval=3.0,
    remind_min=0.2,
    remind_max=0.4,
    join_tries=5,
    join_interval=0.3,
    image_stall=5.0,
    answer_spread=0.02,
    retention_count=8192,
    repair_hold=0.003,
    rate=4000.0,
    window=1024,
    image_part=1200,
    keepalive=1.0,
    suspect_after=5.0,
    forget_after=30.0,
    give_up_after=120.0,
    leave_linger=3.0,
)

PROFILES = {"seed": SEED, "lan": LAN}
_INT_FIELDS = {
    "remind_limit",
    "join_tries",
    "join_tries_when_heard",
    "retention_count",
    "multicast_threshold",
    "window",
    "image_part",
    "max_datagram",
}


def params_from_mapping(params: Mapping[str, object]) -> RmpParams:
    """The profile named by ``params["profile"]`` (default ``lan``) with overrides applied;
    ``ValueError`` with a readable message for anything unknown or out of range."""
    profile = params.get("profile", "lan")
    if profile not in PROFILES:
        raise ValueError(f"unknown rmp profile {profile!r}; choose one of {', '.join(PROFILES)}")
    base = PROFILES[str(profile)]
    known = {f.name: f for f in fields(RmpParams)}
    changes: dict[str, object] = {}
    for key, value in params.items():
        if key == "profile":
            continue
        if key not in known:
            raise ValueError(f"unknown rmp parameter {key!r}")
        if key in ("passive_join", "batch"):
            if value not in (True, False, 0, 1, "true", "false", "yes", "no"):
                raise ValueError(f"rmp parameter {key} must be true or false, got {value!r}")
            changes[key] = value in (True, 1, "true", "yes")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"rmp parameter {key} must be a number, got {value!r}")
        elif key in _INT_FIELDS:
            if value != int(value):
                raise ValueError(f"rmp parameter {key} must be a whole number, got {value}")
            changes[key] = int(value)
        else:
            changes[key] = float(value)
    return replace(base, **changes)  # type: ignore[arg-type]
