"""What every part of the RMP core shares (Dabbous & Kiss, INRIA RR-2100, 1993).

One :class:`Shared` per core: our identity and S_n (§2.1), the clock offset (§2.8), the station
list (§2.1, §2.5), the retention stores (§2.7), the outbox, the counters, and the phase. The
parts read the phase here; only ``RmpCore._enter`` changes it, so that every change is seen.
"""

from __future__ import annotations

import random
from enum import Enum

from coreapi import Address, Outgoing, UpperLayer
from coreapi.seqnum import to_wire
from rmp.amplification import AddressCredit
from rmp.fragment import MAX_MESSAGE as MAX_MESSAGE
from rmp.params import RmpParams
from rmp.stations import STRANGER_TICK, StationList
from rmp.store import RetentionStore
from rmp.wire import Confirm, Nack, NackRange, RmpPacket, encode, ntp_middle32

# Sizes. A data packet must still fit, wrapped in a Retransmit (8 + 8 + 8 bytes more), in one
# Ethernet-sized UDP payload (1472 bytes, the ``max_datagram`` parameter; less in a private
# session, whose envelope takes its share), so it is kept to 1448 bytes (max_datagram - 24).
MAX_DATAGRAM_OUT = 1472
RETRANSMIT_WRAP = 24
MAX_PACKET = MAX_DATAGRAM_OUT - RETRANSMIT_WRAP
MAX_PAYLOAD = 1200  # sent whole, in one data packet; longer ones (to MAX_MESSAGE) in pieces

COUNTERS = (
    "sent",
    "delivered",
    "datagrams_sent",
    "datagrams_received",
    "nacks_sent",
    "nack_packets",  # datagrams carrying our NACK options (nacks_sent counts the options)
    "nacks_received",
    "nacked_packets",  # distinct packets this station asked for
    "retransmissions",
    "repairs_suppressed",  # our held repairs of our own packets, made by another station first
    "duplicates_dropped",
    "malformed_dropped",
    "late_delivered",
    "wi_expiries",
    "reminders_sent",
    "confirms_sent",
    "joins_sent",
    "join_answers_sent",
    "images_sent",
    "image_parts_sent",
    # Issue 18: the board states given to joiners, as the application gave them and as sent
    # packed (coreapi/boardstate.py), and images given to us refused whole (corrupt, a bomb).
    "image_state_bytes",
    "image_bytes_sent",
    "images_refused",
    "repairs_unavailable",
    "packets_given_up",
    "members_refused",
    # Issue 17's bounds: what was refused or given up rather than let a packet cost unbounded
    # work or state (docs/rmp.md, "Bounds").
    "history_given_up",  # packets before a station's first heard one, not asked for
    "far_jumps_refused",  # data packets beyond MAX_GAP ahead of a known station's sequence
    "gaps_refused",  # gaps not tracked: the station's MAX_GAP (a stranger's STRANGER_GAP) full
    "repairs_refused",  # repairs a requester asked beyond its share (or the pending bound)
    "repairs_to_group_unproven",  # repairs multicast: beyond 3x what the asker's address sent
    "nacks_deferred",  # NACKs for a stranger's gap put off: MAX_STRANGER_NACKS per nack_retry
    "joins_refused",  # join requests left unanswered: MAX_JOINERS_SERVED being served
    "strangers_throttled",  # newcomers' packets beyond STRANGER_RATE, dropped undecoded
    "hearsay_refused",  # a stranger's confirmation of another station's packet it never sent
    # Issue 20: payloads longer than a packet, in runs of pieces (rmp/reassembly.py).
    "messages_refused",  # runs dropped whole (malformed, too large, cut, source gone): told once
    "pieces_dropped",  # the pieces of those runs, and any that came after one was dropped
)


class Phase(Enum):
    NEW = "new"
    LISTENING = "listening"  # passive join (§5): waiting to hear an active station
    JOINING = "joining"  # §2.8: join requests out, no answer yet
    IMAGE = "image"  # answered: receiving the board image
    READY = "ready"
    LEAVING = "leaving"
    FINISHED = "finished"


class Shared:
    """The state that outlives every part and that several of them read or advance."""

    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: RmpParams
    ) -> None:
        self.member_id = member_id
        self.upper = upper
        self.rng = rng
        self.params = params
        # What we may send an address point to point (rmp/amplification.py, issue 21).
        self.credit = AddressCredit()
        self.max_datagram = params.max_datagram
        self.max_packet = params.max_datagram - RETRANSMIT_WRAP  # see MAX_PACKET
        self.phase = Phase.NEW  # written by RmpCore._enter only
        self.stations = StationList(member_id, stranger_tick=params.nack_retry * STRANGER_TICK)
        # §2.7's store, split: our own packets apart from others', so that a burst from others
        # cannot evict a packet of ours that a station may still ask for. The send window
        # (below the count) keeps every unconfirmed packet of ours in it.
        self.own_store = RetentionStore(params.retention_age, params.retention_count)
        self.store = RetentionStore(params.retention_age, params.retention_count)
        self.outbox: list[Outgoing] = []
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.seq = 0  # S_n (§2.1), unbounded; on the wire modulo 2**16
        self.clock_offset = 0.0  # §2.8: added to our clock for timestamps
        # §2.8: our S_n was resumed from a join answer's entry for us (we restarted under an id
        # the group knew); every packet says so until every station has confirmed one of our
        # new run (rmp/remind.py). None: nothing to say.
        self.resumed_after: int | None = None
        self.last_sent_at = 0.0  # our last multicast, for the keepalive

    def knows_sequence(self) -> bool:
        """Before a join answer we cannot tell a gap from history the image will bring."""
        return self.phase not in (Phase.LISTENING, Phase.JOINING)

    def serving(self) -> bool:
        """Joined and not gone: delivering, repairing, reminding (§2.3, §2.4, §2.7)."""
        return self.phase in (Phase.READY, Phase.LEAVING)

    def stored(self, source: int, seq: int) -> RmpPacket | None:
        store = self.own_store if source == self.member_id else self.store
        return store.get(source, seq)

    def timestamp(self, now: float) -> int:
        return ntp_middle32(now + self.clock_offset)

    def transmit(self, packet: RmpPacket, to: Address | None, now: float) -> None:
        data = encode(packet)
        assert len(data) <= self.max_datagram, len(data)
        self.outbox.append((data, to))
        self.counters["datagrams_sent"] += 1
        if to is None:
            self.last_sent_at = now

    def send_control(
        self,
        options: tuple[Nack | NackRange | Confirm, ...],
        to: Address | None,
        now: float,
        last: bool = False,
    ) -> None:
        """A packet without data; its header carries our current S_n (§4.1). ``last``: our
        farewell, the S bit set ("end of a synchronisation unit", §4.1: of our stream)."""
        packet = RmpPacket(
            seq=to_wire(self.seq),
            timestamp=self.timestamp(now),
            options=options,
            source=self.member_id,
            s_bit=last,
        )
        self.transmit(packet, to, now)
