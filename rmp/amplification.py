"""No amplification (our extension, issue 21 point 5): what a member sends point to point to an
address is bounded by what it heard from that address.

RR-2100 §2.7 answers a NACK with a point-to-point retransmission to whoever asked. The asker's
address is the datagram's source address, which anyone on the LAN can forge: a few bytes of
forged NACKs, each naming many packets, had members send kilobytes to any host (an amplifier,
1,015 times the forged bytes). So, as QUIC does before it has validated an address (RFC 9000
§8.1), a member sends an address at most AMPLIFICATION times the bytes it received from it.
Nothing on a LAN without a passphrase validates an address (every datagram can be forged, a
drawing member's too), so the bound holds for every address; a member that draws earns its
repairs with its own traffic (a stroke's packet, ~500 bytes, covers three). A repair the credit
does not cover is multicast instead: the requester still gets it, and the group, not a third
host, carries it, at the rates the repair engine already bounds.
"""

from __future__ import annotations

from collections import OrderedDict

from coreapi import Address

AMPLIFICATION = 3  # bytes sent per byte received, to any address
MAX_CREDIT = 256 * 1024  # bytes of credit an address may hold
MAX_ADDRESSES = 1024  # addresses tracked (least recently heard forgotten)


class AddressCredit:
    def __init__(self) -> None:
        self._credit: OrderedDict[Address, int] = OrderedDict()

    def received(self, address: Address, size: int) -> None:
        credit = self._credit
        held = credit.get(address)
        if held is None:  # a new address, the most recently heard (at the end)
            credit[address] = min(MAX_CREDIT, AMPLIFICATION * size)
            if len(credit) > MAX_ADDRESSES:
                credit.popitem(last=False)
            return
        if held < MAX_CREDIT:  # (at the bound it stays there)
            credit[address] = min(MAX_CREDIT, held + AMPLIFICATION * size)
        credit.move_to_end(address)

    def spend(self, address: Address, size: int) -> bool:
        """Whether ``size`` bytes may go to ``address`` point to point (and, if so, spent)."""
        credit = self._credit.get(address, 0)
        if credit < size:
            return False
        self._credit[address] = credit - size
        return True
