"""No amplification (our extension, issue 21 point 5): what a member sends point to point to an
address is bounded by what it heard from that address, until the address is proven.

RR-2100 §2.7 answers a NACK with a point-to-point retransmission to whoever asked. The asker's
address is the datagram's source address, which anyone on the LAN can forge: a few bytes of
forged NACKs, each naming many packets, would have members send kilobytes to any host (an
amplifier; measured at ~1,700x before this). So, as QUIC does before it has validated an
address (RFC 9000 §8.1), a member sends an address at most AMPLIFICATION times the bytes it
received from it. An address is proven once a data packet of a station came from it in
sequence: a member drawing with us. A repair that the credit does not cover is multicast
instead (the requester still gets it; the group, not a third host, carries it), at the rates
the repair engine already bounds.
"""

from __future__ import annotations

from collections import OrderedDict

from coreapi import Address

AMPLIFICATION = 3  # bytes sent per byte received, to an address not proven
MAX_CREDIT = 64 * 1024  # bytes of credit an address may hold (a quiet member's keepalives add up)
MAX_ADDRESSES = 1024  # addresses tracked (least recently heard forgotten), proven or not


class AddressCredit:
    def __init__(self) -> None:
        self._credit: OrderedDict[Address, int] = OrderedDict()
        self._proven: OrderedDict[Address, None] = OrderedDict()

    def received(self, address: Address, size: int) -> None:
        credit = self._credit
        credit[address] = min(MAX_CREDIT, credit.get(address, 0) + AMPLIFICATION * size)
        credit.move_to_end(address)
        if len(credit) > MAX_ADDRESSES:
            credit.popitem(last=False)

    def prove(self, address: Address) -> None:
        """A station's data came from ``address`` in sequence: it is a member's."""
        proven = self._proven
        proven[address] = None
        proven.move_to_end(address)
        if len(proven) > MAX_ADDRESSES:
            proven.popitem(last=False)

    def is_proven(self, address: Address) -> bool:
        return address in self._proven

    def spend(self, address: Address, size: int) -> bool:
        """Whether ``size`` bytes may go to ``address`` point to point (and, if so, spent)."""
        if address in self._proven:
            return True
        credit = self._credit.get(address, 0)
        if credit < size:
            return False
        self._credit[address] = credit - size
        return True
