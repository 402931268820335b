"""The raw transport as the layers above see it: the registry reads ``DESCRIPTION``."""

from __future__ import annotations

from coreapi.description import PROFILES, ParamNote, TransportDescription, describe_params
from whiteboard.transport.raw.core import RawParams
from whiteboard.transport.raw.wire import MAX_DATAGRAM, is_ephemeral

_NOTES: dict[str, ParamNote] = {
    "hello_interval": ParamNote("Time between HELLOs", 0.001, 3600.0, unit="s"),
    "suspect_after": ParamNote(
        "Silence after which a member is shown as not heard from", 0.001, 3600.0, unit="s"
    ),
    "forget_after": ParamNote(
        "Silence after which a member is taken as gone", 0.001, 86_400.0, unit="s"
    ),
}

DESCRIPTION = TransportDescription(
    name="raw",
    title="Raw: plain multicast, no repair",
    summary="Each stroke goes out once; what the network loses is lost. The reference.",
    # raw has no profiles: each name is accepted and changes nothing.
    params=describe_params(dict.fromkeys(PROFILES, RawParams()), _NOTES, hidden=frozenset()),
    check=RawParams.from_mapping,
    live_strokes=True,
    resyncable=False,
    largest_datagram=MAX_DATAGRAM,
    is_side_channel=is_ephemeral,
)
