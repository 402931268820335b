"""The counters every core reports (a core may report more, named in its description).

The names are part of the interface: the CLI's JSON, the app's health panel and the session
logs use them verbatim."""

from __future__ import annotations

COUNTER_NAMES: tuple[str, ...] = (
    "sent",  # payloads this member sent
    "delivered",  # payloads delivered to the upper layer (own ones included)
    "datagrams_sent",
    "datagrams_received",
    "nacks_sent",
    "nacks_received",
    "retransmissions",  # datagrams re-sent to repair someone's loss
    "duplicates_dropped",
    "malformed_dropped",  # datagrams that failed to decode: counted, never raised
    "late_delivered",  # payloads delivered behind an already delivered later key
)
