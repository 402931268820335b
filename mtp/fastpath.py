"""The packet a member hears most, taken without the general path (issue 18, pure speed).

RFC 1301 §3.2.3 pads a producer's short message with empty[dally]s, about one a heartbeat, and
goes on after the master decided it; every member hears each of them, and by then it has
delivered the message (or the message is its own). Such a dally changes nothing but the
address book (``MtpCore._on_packet``) and is dropped by ``MtpCore._on_empty``'s first check.
``past_padding`` makes the same decision with the same effect in one call, so that the
general path (routing, the master's part, the range checks) is left to packets that need it.
"""

from __future__ import annotations

from collections.abc import Container

from coreapi import Address
from mtp.link import Link
from mtp.wire import EmptyModifier, MtpHeader, PacketType


def past_padding(link: Link, own: Container[int], header: MtpHeader, addr: Address) -> bool:
    """Whether ``header`` is another producer's empty[dally] (§3.2.3) in our web for a
    message we already delivered or sent ourselves; if so it is taken here (its sender's
    address remembered, as ``MtpCore._on_packet`` does) and needs nothing else.

    Only for a member that is not the master (the master's part hears every packet, §3.2.1)
    and is in a web (not probing or joining): the caller checks both."""
    web = link.web
    if (
        header.packet_type is not PacketType.EMPTY
        or header.modifier is not EmptyModifier.DALLY
        or header.destination != web.id
        or header.source == web.master_id  # the master's heartbeat: its statuses to learn
    ):
        return False
    number = web.number(header.acceptance.message_seq)
    if number >= web.next_deliver and number not in own:
        return False
    if addr != web.master_addr:  # not a relay (docs/mtp.md): the producer's own address
        link.remember(header.source, addr)
    return True
