"""What every part of an MTP member shares for the life of the core: who it is, the upper layer,
its counters, its outbox, the web it is in now, the address book, and the web's operating
values (RFC 1301 §3.4: heartbeat, window, retention, data unit) as it runs them.

The parts (``mtp.receiver``, ``mtp.sender``, ``mtp.master``) send through a ``Link`` and read
the current ``Web`` from it: a rejoin replaces ``link.web``, and every part sees the new one.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import replace
from enum import Enum
from ipaddress import IPv4Address

from coreapi import Address, MemberState, Outgoing, UpperLayer
from coreapi.seqnum import to_wire
from mtp.master import MAX_MEMBERS
from mtp.params import MtpParams, group_address
from mtp.web import Web
from mtp.wire import (
    AcceptanceRecord,
    IsMemberModifier,
    MemberClass,
    Modifier,
    MtpHeader,
    MtpPacket,
    PacketType,
    TransportType,
    Tsap,
    encode,
)

MAX_ADDRESSES = 4096
assert MAX_MEMBERS < MAX_ADDRESSES  # so that a member's address always finds room

COUNTERS = (
    "sent",
    "delivered",
    "datagrams_sent",
    "datagrams_received",
    "nacks_sent",
    "nack_packets",  # the same (one nak[request] per datagram), named as RMP names it
    "nacked_packets",  # distinct packets this member asked for
    "nacks_received",
    "retransmissions",
    "duplicates_dropped",
    "malformed_dropped",
    "oversize_dropped",  # packets past a bound on what we hold for others (mtp/bounds.py)
    "late_delivered",
    "foreign_dropped",  # another web's packets, or packets not for us
    "out_of_range_dropped",  # §2.2.6's range check
    "tokens_requested",
    "tokens_granted",
    "token_confirms_resent",
    "duplicate_confirms",  # a token[confirm] for a message already ours: a nak (§3.2.1)
    "cancels_sent",
    "messages_sent",
    "messages_accepted",
    "messages_rejected",
    "payloads_requeued",  # ours, in a rejected message, sent again under a new token
    "dallies_sent",
    "nak_denies_sent",
    "nak_denies_received",
    "relays",  # the master repairing a message whose producer cannot (extension)
    "ismember_requests_sent",
    "members_removed",
    "banishments_sent",
    "joins_confirmed",
    "joins_denied",
    "rejoins",
    "status_conflicts",
    "hibernations",
    "parameter_changes",
    # Issue 18: boards given to joiners (TR §3.4), as the application gave them, as sent
    # (the message's bytes: the board packed, coreapi/boardstate.py) and in packets; and
    # boards given to us that would not unpack (corrupt, cut short, a bomb), refused.
    "state_bytes",
    "state_bytes_sent",
    "state_packets_sent",
    "states_refused",
)

TRANSPORT_TYPES = {"nxn": TransportType.N_X_N, "1xn": TransportType.ONE_X_N}


class Phase(Enum):
    NEW = "new"
    PROBING = "probing"  # §3.1: a would-be master asking whether a web already answers
    JOINING = "joining"  # §3.1.1: join[request]s out, no answer yet
    SYNCING = "syncing"  # TR §3.4: joined at message s, waiting for the board state
    READY = "ready"
    LEAVING = "leaving"  # sending what is queued, then serving naks for retention heartbeats
    QUITTING = "quitting"  # §3.3: quit[request]s out
    FINISHED = "finished"


_CLASSES = {
    "master": MemberClass.MASTER,
    "producer": MemberClass.PRODUCER,
    "consumer": MemberClass.CONSUMER,
}


class Link:
    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: MtpParams
    ) -> None:
        # Who this member is to the upper layer (origin of its deliveries, member_changed),
        # for the core's life; and ``member_id``, its MTP connection identifier on the wire
        # (§2.2.4), the same at first and new for every instantiation after a rejoin (§3.1.1).
        self.identity = member_id
        self.member_id = member_id
        self._connection_ids = {member_id}  # every one we used: a new one is unique
        # Others' identities, where their connection id is not it (learned from their
        # messages, framing.NAMED_SUBCHANNEL); and the members reported active to the upper
        # layer, so that each is reported once (and again only after it left).
        self.identities: dict[int, int] = {}
        self.reported: set[int] = set()
        # The last introduction each member's join[request] carried (reported when it changes).
        self.introductions: dict[int, bytes] = {}
        self.upper = upper
        self.rng = rng
        self.p = params
        self.member_class = _CLASSES[params.role]
        self.is_master = params.role == "master"
        self.group_ip, self.group_port = group_address(params.group)
        # The web's operating values (§3.4): ours until a master tells us its own.
        self.heartbeat = params.heartbeat
        self.window = params.window
        self.retention = params.retention
        self.unit = params.max_data_unit
        self.outbox: list[Outgoing] = []
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.web = Web()
        self.addresses: dict[int, Address] = {}
        # The (heartbeat ms, window, retention) sets the web ran lately (§3.4.1): a packet
        # carrying one of them is a member that has not heard of a change, not a suggestion.
        self.values_run: deque[tuple[int, int, int]] = deque([self.wire_parameters()], maxlen=16)

    # -- identities (§3.1.1) ----------------------------------------------------------------

    def new_connection_id(self, avoid: int) -> None:
        """§3.1.1: "a new instantiation needs a new, unique id": one we never used, not 0 and
        not ``avoid`` (the web's multicast id)."""
        ident = self.rng.randrange(1, 2**32)
        while ident in self._connection_ids or ident == avoid:
            ident = self.rng.randrange(1, 2**32)
        if len(self._connection_ids) < MAX_ADDRESSES:
            self._connection_ids.add(ident)
        self.member_id = ident

    def identity_of(self, connection_id: int) -> int:
        """The upper layer's identity of the member that uses ``connection_id``."""
        return self.identities.get(connection_id, connection_id)

    def report_active(self, member: int) -> None:
        known = member == self.identity or member in self.reported
        if not known and len(self.reported) < MAX_ADDRESSES:
            self.reported.add(member)
            self.upper.member_changed(member, MemberState.ACTIVE)

    def introduced(self, joiner: int, introduction: bytes) -> None:
        """A join[request] on the group carried who asks (our extension): told to the upper
        layer once per introduction; members and master alike see the request. Bounded like
        every per-member table: the oldest is forgotten first."""
        member = self.identity_of(joiner)
        if not introduction or self.introductions.get(member) == introduction:
            return
        self.introductions.pop(member, None)
        if len(self.introductions) >= MAX_ADDRESSES:
            del self.introductions[next(iter(self.introductions))]
        self.introductions[member] = introduction
        self.upper.member_introduced(member, introduction)

    def report_left(self, member: int) -> None:
        self.reported.discard(member)
        self.upper.member_changed(member, MemberState.LEFT)

    def learn_identity(self, connection_id: int, identity: int) -> None:
        """A message from ``connection_id`` names its producer ``identity`` (a member that
        rejoined under a new connection id): from now on it is reported as that identity."""
        if connection_id == identity or self.identities.get(connection_id) == identity:
            return
        if len(self.identities) < MAX_ADDRESSES:
            self.identities[connection_id] = identity
        if connection_id in self.reported:
            self.report_left(connection_id)  # reported at its join, before we knew

    def set_master(self, master: bool) -> None:
        """A member taking over as master, or a master yielding (failover, mtp/failover.py):
        the class it asks to join with changes with it."""
        self.is_master = master
        if master:
            self.member_class = MemberClass.MASTER
        else:
            self.member_class = _CLASSES["consumer" if self.p.role == "consumer" else "producer"]

    # -- the address book ----------------------------------------------------------------

    def remember(self, source: int, addr: Address) -> None:
        if source in self.addresses or len(self.addresses) < MAX_ADDRESSES:
            self.addresses[source] = addr
        elif source in self.web.members:
            self._forget_a_stranger()
            self.addresses[source] = addr

    def _forget_a_stranger(self) -> None:
        """Make room in the full address book: the oldest address that is not a member's goes
        (members are at most MAX_MEMBERS < MAX_ADDRESSES, so one always can)."""
        for ident in self.addresses:
            if ident not in self.web.members and ident != self.web.master_id:
                del self.addresses[ident]
                return

    def tsap(self, ident: int, addr: Address | None) -> Tsap:
        """A member's TSAP (§2.3.2): its unicast address if we know it. Our own is not known
        to a sans-I/O core; receivers match TSAPs by connection id (docs/mtp.md)."""
        if addr is None:
            addr = self.addresses.get(ident)
        host, port = ("0.0.0.0", self.group_port) if addr is None else addr
        try:
            address = IPv4Address(host)
        except ValueError:
            address = IPv4Address(0)
        return Tsap(address, port or self.group_port, ident)

    def own_tsap(self) -> Tsap:
        return self.tsap(self.member_id, None)

    # -- the web's operating values (§3.4.1) ----------------------------------------------

    def check_bounds(self, heartbeat: float, window: int, retention: int) -> None:
        p = self.p
        if not p.heartbeat_min - 1e-9 <= heartbeat <= p.heartbeat_max + 1e-9:
            raise ValueError(
                f"heartbeat {heartbeat} s is outside {p.heartbeat_min}..{p.heartbeat_max}"
            )
        if not p.window_min <= window <= p.window_max:
            raise ValueError(f"window {window} is outside {p.window_min}..{p.window_max}")
        if not p.retention_min <= retention <= p.retention_max:
            raise ValueError(
                f"retention {retention} is outside {p.retention_min}..{p.retention_max}"
            )

    def checked_parameters(
        self, heartbeat: float | None, window: int | None, retention: int | None
    ) -> tuple[float, int, int]:
        """Ours with the values given in their place, within the bounds (§3.4.1); ValueError
        saying which bound a value breaks."""
        new = (
            self.heartbeat if heartbeat is None else heartbeat,
            self.window if window is None else window,
            self.retention if retention is None else retention,
        )
        self.check_bounds(*new)
        return new

    def set_parameters(self, heartbeat: float, window: int, retention: int) -> None:
        if (heartbeat, window, retention) == (self.heartbeat, self.window, self.retention):
            return
        self.heartbeat, self.window, self.retention = heartbeat, window, retention
        self.values_run.append(self.wire_parameters())
        self.counters["parameter_changes"] += 1
        self.upper.protocol_event(
            "parameters_changed",
            {"heartbeat_ms": round(heartbeat * 1000), "window": window, "retention": retention},
        )

    def adopt_parameters(self, header: MtpHeader) -> None:
        """Every packet carries the web's current values (§2.2.7-§2.2.9); members run the
        master's (sanity-checked: a value outside the wire's sane range is ignored)."""
        heartbeat = header.heartbeat / 1000.0
        if not (
            0.005 <= heartbeat <= 60.0
            and 1 <= header.window <= 1024
            and 1 <= header.retention <= 255
        ):
            return
        if round(heartbeat * 1000) == round(self.heartbeat * 1000):
            heartbeat = self.heartbeat
        self.set_parameters(heartbeat, header.window, header.retention)

    def wire_parameters(self) -> tuple[int, int, int]:
        return round(self.heartbeat * 1000), self.window, self.retention

    def send_is_member_request(self, ask: int, addr: Address, target: int) -> None:
        """§3.4.3: ask ``ask`` (the master, or a token holder itself) whether ``target`` is a
        member of the web."""
        self.counters["ismember_requests_sent"] += 1
        self.send(
            self.control(
                PacketType.IS_MEMBER, IsMemberModifier.REQUEST, ask, self.tsap(target, None)
            ),
            addr,
        )

    # -- packets out ----------------------------------------------------------------------

    def control(
        self,
        kind: PacketType,
        modifier: Modifier,
        destination: int,
        body: object,
        number: int | None = None,
        packet_seq: int = 0,
    ) -> MtpPacket:
        """A control packet: sync 0, our view of the next message number (or ``number``) and
        the statuses before it (§2.2.6)."""
        if number is None:
            number = self.web.next
        header = MtpHeader(
            kind,
            modifier,
            self.member_id,
            destination,
            *self.wire_parameters(),
            acceptance=AcceptanceRecord(
                0, self.web.book.vector(number), to_wire(number), packet_seq
            ),
        )
        return MtpPacket(header, body)  # type: ignore[arg-type]

    def send(
        self,
        packet: MtpPacket,
        to: Address | None,
        parameters: tuple[float, int, int] | None = None,
    ) -> None:
        """Queue ``packet`` for ``to`` (None: the web's multicast group), with ``parameters``
        in place of ours when they are a suggestion to the master (§3.4.1)."""
        if parameters is not None:
            heartbeat, window, retention = parameters
            header = replace(
                packet.header, heartbeat=round(heartbeat * 1000), window=window, retention=retention
            )
            packet = replace(packet, header=header)
        self.outbox.append((encode(packet), to))
        self.counters["datagrams_sent"] += 1
