"""One membership of an MTP web: what a member knows of the web it is in, from the join (or,
for the master, the founding) to the moment it leaves or abandons it.

A member that abandons the web (RFC 1301 §3.2.5, §3.2.8) and joins it again gets a new ``Web``:
nothing of the old membership (its numbering, its statuses, its roster) is carried over or
reset by hand. What outlives a membership (the payloads still to send, the address book, the
web's operating values) is kept by the core and its parts, not here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coreapi import Address
from coreapi.seqnum import unwrap
from mtp.master import Member
from mtp.messages import StatusBook
from mtp.wire import PacketId


@dataclass
class Web:
    """The web as one membership sees it.

    ``next`` is the master's next message number: for the master the next one it will grant
    (§2.2.6: "initialized to zero by the master"), for a member the highest it has heard of.
    ``next_deliver`` is the first message not yet delivered (or skipped) in order (TR §3.2);
    ``join_number`` is s, the message the join[confirm] carried, whose body is the board
    (TR §3.4)."""

    id: int = 0  # the multicast connection id (§2.3.1), 0 until known
    master_id: int = 0
    master_addr: Address | None = None
    heard_master_at: float = 0.0
    book: StatusBook = field(default_factory=StatusBook)
    next: int = 0
    next_deliver: int = 0
    join_number: int = 0
    # The master's roster (§3.1): every member it confirmed and has not removed.
    members: dict[int, Member] = field(default_factory=dict)
    # §3.4.3: naks held until the master vouches for their source, and the isMember[request]s
    # we have out about those sources: target -> (tries, next ask).
    held_naks: dict[int, list[PacketId]] = field(default_factory=dict)
    asked: dict[int, tuple[int, float]] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        """Whether we are in a web yet (its id is never 0, §2.3.1)."""
        return self.id != 0

    def number(self, wire: int) -> int:
        """The unbounded message number of a 16-bit wire number (§2.2.6), read near ``next``."""
        return unwrap(wire, self.next)

    def rebase(self, delta: int) -> None:
        """Adopt the master's unbounded numbering (carried in the board message, TR §3.4), so
        that our order keys are everyone's: the web's own numbers move by ``delta``."""
        self.book.shift(delta)
        self.next += delta
        self.next_deliver += delta
        self.join_number += delta
