"""MTP's packet (RFC 1301 §2.2, Figure 1): a 28-byte transport header, then a data part whose
content and format depend on the packet type and modifier.

    0                   1                   2                   3
    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   | version = 1   |  packet type  |   modifier    |  subchannel   |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |                  source connection identifier                 |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |               destination connection identifier               |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |  sync flag    |   12 x 2-bit message statuses (m-1 ... m-12)  |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |    message sequence number    |    packet sequence number     |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |                        heartbeat (ms)                         |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |            window             |           retention           |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   | data part: to the end of the datagram (UDP gives its length)
   +-+-+-+-+-+-+-+-+- ...

Every choice the RFC leaves open (what a TSAP is on the wire, what a NAK pair is, the data
parts of quit and isMember) is listed, with a byte diagram per data part, in docs/mtp-wire.md;
the tests check the document's worked examples byte for byte.

The encoding is canonical: ``decode`` accepts exactly the bytes ``encode`` can produce, so
``encode(decode(b)) == b`` for every datagram that decodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import ClassVar, TypeAlias

from coreapi import MAX_INTRODUCTION
from coreapi.memo import DecodeMemo
from mtp.codes import (
    _CREDIBILITY,
    _HEADER,
    _JOIN,
    _NAK_ENTRY,
    _STATUS_BITS,
    _STATUS_MASK,
    _TSAP,
    CREDIBILITY_SIZE,
    HEADER_SIZE,
    JOIN_DATA_SIZE,
    MAX_DATA_PART,
    MAX_DATAGRAM,
    MAX_NAK_ENTRIES,
    MAX_TSAPS,
    MODIFIERS,
    MTP_HOST_GROUP,
    MTP_IP_PROTOCOL,
    MTP_VERSION,
    NAK_ENTRY_SIZE,
    STATUS_COUNT,
    TSAP_SIZE,
    UNKNOWN_CONNECTION_ID,
    DataModifier,
    EmptyModifier,
    IsMemberModifier,
    JoinModifier,
    MemberClass,
    MessageStatus,
    Modifier,
    MtpDecodeError,
    NakModifier,
    PacketType,
    QuitModifier,
    TokenModifier,
    TransportClass,
    TransportType,
    _check_enum,
    _check_uint,
    _choices,
    _lookup,
    kind_name,
    rfc_name,
)

# The names of mtp.codes are this module's too (it was one module).
__all__ = [
    "CREDIBILITY_SIZE",
    "HEADER_SIZE",
    "JOIN_DATA_SIZE",
    "MAX_DATAGRAM",
    "MAX_DATA_PART",
    "MAX_NAK_ENTRIES",
    "MAX_TSAPS",
    "MODIFIERS",
    "MTP_HOST_GROUP",
    "MTP_IP_PROTOCOL",
    "MTP_VERSION",
    "NAK_ENTRY_SIZE",
    "STATUS_COUNT",
    "TSAP_SIZE",
    "UNKNOWN_CONNECTION_ID",
    "AcceptanceRecord",
    "DataModifier",
    "EmptyModifier",
    "IsMemberModifier",
    "JoinData",
    "JoinModifier",
    "MemberClass",
    "MemberConfirm",
    "MessageStatus",
    "Modifier",
    "MtpDecodeError",
    "MtpHeader",
    "MtpPacket",
    "NakList",
    "NakModifier",
    "PacketId",
    "PacketType",
    "QuitModifier",
    "TokenModifier",
    "TransportClass",
    "TransportType",
    "Tsap",
    "TsapList",
    "body_class",
    "decode",
    "encode",
    "kind_name",
    "rfc_name",
]

# --- the acceptance record (RFC 1301 §2.2.6, Figure 2) -------------------------------------------


_STATUS_TYPE = frozenset({MessageStatus})  # the type of every status in a record


@dataclass(frozen=True, slots=True)
class AcceptanceRecord:
    """RFC 1301 §2.2.6, Figure 2: the message acceptance record every packet carries.

    ``sync`` is the 8-bit synchronisation flag ("if not zero, indicates synchronization is
    required"); kept as the byte it is so that every value re-encodes unchanged. ``statuses``
    are the 12 message statuses, left-most first: ``statuses[0]`` is message
    ``message_seq - 1``, ``statuses[11]`` message ``message_seq - 12`` (modulo 2**16).
    ``packet_seq`` numbers the packets of a message from 0."""

    sync: int = 0
    statuses: tuple[MessageStatus, ...] = (MessageStatus.ACCEPTED,) * STATUS_COUNT
    message_seq: int = 0
    packet_seq: int = 0

    def __post_init__(self) -> None:
        _check_uint("sync flag", self.sync, 8)
        _check_uint("message sequence number", self.message_seq, 16)
        _check_uint("packet sequence number", self.packet_seq, 16)
        if not isinstance(self.statuses, tuple):
            raise TypeError(f"statuses must be a tuple, not {type(self.statuses).__name__}")
        if len(self.statuses) != STATUS_COUNT:
            raise ValueError(
                f"{len(self.statuses)} statuses; the acceptance record holds exactly "
                f"{STATUS_COUNT} (RFC 1301 §2.2.6)"
            )
        if set(map(type, self.statuses)) != _STATUS_TYPE:  # in C: every packet has twelve
            for index, status in enumerate(self.statuses):
                _check_enum(f"status {index}", status, MessageStatus)

    @property
    def synchronize(self) -> bool:
        """RFC 1301 §2.2.6: any non-zero flag means synchronisation is required."""
        return self.sync != 0

    @property
    def is_zero(self) -> bool:
        """All fields zero, as join[request] requires (RFC 1301 §3.1.1)."""
        return not (self.sync or self.message_seq or self.packet_seq or any(self.statuses))

    def status_of(self, message: int) -> MessageStatus | None:
        """The status this record gives message number ``message``, or None when the record
        does not cover it (only the 12 messages before ``message_seq`` are covered)."""
        _check_uint("message", message, 16)
        distance = (self.message_seq - message) & 0xFFFF
        return self.statuses[distance - 1] if 1 <= distance <= STATUS_COUNT else None

    @property
    def status_word(self) -> int:
        """The 24-bit status vector as encoded: element 0 in the two most significant bits."""
        word = 0
        for status in self.statuses:
            word = word << _STATUS_BITS | status
        return word


# --- data parts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tsap:
    """A transport service access point over UDP/IPv4 (RFC 1301 §2.1 "TSAP", §2.3, Appendix A):
    the NSAP (an IPv4 address and a UDP port, the "ports" and "multicast addressing" that
    Appendix A says form MTP's NSAP on IP) concatenated with a connection identifier.
    On the wire: address(32), port(16), reserved(16) = 0, connection identifier(32)."""

    address: IPv4Address
    port: int
    connection_id: int

    SIZE: ClassVar[int] = TSAP_SIZE

    def __post_init__(self) -> None:
        if not isinstance(self.address, IPv4Address):
            raise TypeError(f"address must be an IPv4Address, not {self.address!r}")
        _check_uint("port", self.port, 16)
        _check_uint("connection id", self.connection_id, 32)
        if self.port == 0:
            raise ValueError(f"TSAP {self} has port 0, which no UDP datagram can reach")
        if self.connection_id == UNKNOWN_CONNECTION_ID:
            raise ValueError(
                f"TSAP {self} has the unknown connection id 0, which names no process "
                "(RFC 1301 §2.2.5)"
            )

    def __str__(self) -> str:
        return f"{self.address}:{self.port}/{self.connection_id:#x}"


@dataclass(frozen=True, slots=True)
class JoinData:
    """RFC 1301 §3.1.1, Figure 3: the data part of every join packet. In join[request] the
    joiner's class and wishes (``multicast_id`` 0: it does not know it yet); in join[confirm]
    the web's operating values and the web's multicast connection id (§2.3.1, §3.1.2); in
    join[deny] the web's values with the member class asked for (``multicast_id`` 0), so the
    refused joiner can tell why (docs/mtp-wire.md, decision 9).
    ``min_throughput`` is in kilobytes (1,000 bytes) per second; ``max_data_unit`` in bytes of
    client data per data packet. ``introduction`` is our extension: in join[request] only, the
    joiner's name card (at most MAX_INTRODUCTION bytes, opaque here) after the Figure 3 fields,
    so that the members, who see the request on the group, know who asks (docs/mtp-wire.md)."""

    member_class: MemberClass
    transport_class: TransportClass = TransportClass.RELIABLE
    transport_type: TransportType = TransportType.N_X_N
    min_throughput: int = 0
    max_data_unit: int = 0
    multicast_id: int = UNKNOWN_CONNECTION_ID
    introduction: bytes = b""

    SIZE: ClassVar[int] = JOIN_DATA_SIZE

    def __post_init__(self) -> None:
        if not isinstance(self.introduction, bytes) or len(self.introduction) > MAX_INTRODUCTION:
            raise ValueError(f"an introduction is at most {MAX_INTRODUCTION} bytes")
        _check_enum("member class", self.member_class, MemberClass)
        _check_enum("transport class", self.transport_class, TransportClass)
        _check_enum("transport type", self.transport_type, TransportType)
        _check_uint("minimum throughput", self.min_throughput, 16)
        _check_uint("maximum data unit", self.max_data_unit, 16)
        _check_uint("multicast connection id", self.multicast_id, 32)


@dataclass(frozen=True, slots=True, order=True)
class PacketId:
    """One data packet: the (message, packet) sequence number pair of RFC 1301 §2.2.6 ("a
    sequence number of the form (m, p)", Freier & Marzullo §3.3). Ordered as that pair."""

    message: int
    packet: int

    SIZE: ClassVar[int] = NAK_ENTRY_SIZE

    def __post_init__(self) -> None:
        _check_uint("message sequence number", self.message, 16)
        _check_uint("packet sequence number", self.packet, 16)


@dataclass(frozen=True, slots=True)
class NakList:
    """RFC 1301 §2.2.2, §3.2.4: the data part of nak[request] (the packets asked for) and of
    nak[deny] (the packets that cannot be retransmitted): "a list of ascending sequence number
    pairs", each pair a message and a packet sequence number. Strictly ascending as 32-bit
    numbers (message, then packet), 1 to ``MAX_NAK_ENTRIES`` entries."""

    packets: tuple[PacketId, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.packets, tuple):
            raise TypeError(f"packets must be a tuple, not {type(self.packets).__name__}")
        if not 1 <= len(self.packets) <= MAX_NAK_ENTRIES:
            raise ValueError(
                f"a nak names {len(self.packets)} packets, not 1..{MAX_NAK_ENTRIES} "
                "(RFC 1301 §3.2.4: it asks for at least one)"
            )
        previous: PacketId | None = None
        for index, entry in enumerate(self.packets):
            if not isinstance(entry, PacketId):
                raise TypeError(f"nak entry {index} must be a PacketId, not {entry!r}")
            if previous is not None and not previous < entry:
                raise ValueError(
                    f"nak entries must be strictly ascending (RFC 1301 §3.2.4): entry {index} "
                    f"({entry.message}, {entry.packet}) does not follow "
                    f"({previous.message}, {previous.packet})"
                )
            previous = entry

    @property
    def wire_size(self) -> int:
        return NAK_ENTRY_SIZE * len(self.packets)


@dataclass(frozen=True, slots=True)
class TsapList:
    """RFC 1301 §2.3.2, §3.2.1: the data part of token[confirm], every multicast TSAP of the
    web, one per network represented. 1 to ``MAX_TSAPS`` entries, no duplicates; the order is
    the master's and is kept."""

    tsaps: tuple[Tsap, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.tsaps, tuple):
            raise TypeError(f"tsaps must be a tuple, not {type(self.tsaps).__name__}")
        if not 1 <= len(self.tsaps) <= MAX_TSAPS:
            raise ValueError(
                f"a token[confirm] lists {len(self.tsaps)} multicast TSAPs, not 1..{MAX_TSAPS} "
                "(RFC 1301 §3.2.1: all the web's multicast TSAPs, so at least its own)"
            )
        for index, tsap in enumerate(self.tsaps):
            if not isinstance(tsap, Tsap):
                raise TypeError(f"TSAP {index} must be a Tsap, not {tsap!r}")
        if len(set(self.tsaps)) != len(self.tsaps):
            raise ValueError("a token[confirm] lists the same multicast TSAP twice")

    @property
    def wire_size(self) -> int:
        return TSAP_SIZE * len(self.tsaps)


@dataclass(frozen=True, slots=True)
class MemberConfirm:
    """RFC 1301 §3.4.3: the data part of isMember[confirm]: the target TSAP of the request it
    answers, then the credibility, "the time (in milliseconds) since the information was
    confirmed from a reliable source" (32 bits; a sender saturates at 2**32 - 1)."""

    target: Tsap
    credibility_ms: int

    SIZE: ClassVar[int] = TSAP_SIZE + CREDIBILITY_SIZE

    def __post_init__(self) -> None:
        if not isinstance(self.target, Tsap):
            raise TypeError(f"target must be a Tsap, not {self.target!r}")
        _check_uint("credibility", self.credibility_ms, 32)


# What follows the header, by kind (see ``body_class``): user data, one of the records above,
# a bare Tsap (the target of quit[*], isMember[request] and isMember[deny]), or nothing.
Body: TypeAlias = bytes | JoinData | NakList | TsapList | Tsap | MemberConfirm | None


def body_class(packet_type: PacketType, modifier: Modifier) -> type | None:
    """The Python type of the data part of ``type[modifier]``; None: no data part at all."""
    match packet_type:
        case PacketType.DATA:
            return bytes  # RFC 1301 §3.2.2: uninterpreted client bytes, possibly none
        case PacketType.NAK:
            return NakList  # §2.2.2, §3.2.4
        case PacketType.JOIN:
            return JoinData  # §3.1.1, Figure 3
        case PacketType.QUIT:
            return Tsap  # §3.2.8, §3.3.3: the "target field"
        case PacketType.TOKEN:
            return TsapList if modifier is TokenModifier.CONFIRM else None  # §3.2.1
        case PacketType.IS_MEMBER:
            return MemberConfirm if modifier is IsMemberModifier.CONFIRM else Tsap  # §3.4.3
        case PacketType.EMPTY if modifier is EmptyModifier.SUCCESSION:
            return TsapList  # extension: the master's successors, in order (docs/mtp.md)
        case PacketType.EMPTY if modifier is EmptyModifier.DISSOLVE:
            return Tsap  # extension: the web this one yields to (docs/mtp.md)
    return None  # PacketType.EMPTY: §3.2.3, a pure control packet


# --- the header and the packet -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MtpHeader:
    """RFC 1301 §2.2, Figure 1: the 28-byte header every packet starts with (the version byte,
    always 1, is implied). ``source`` and ``destination`` are connection identifiers;
    ``heartbeat`` is in milliseconds, ``window`` in data packets per heartbeat, ``retention``
    in heartbeats (§2.2.7-§2.2.9)."""

    packet_type: PacketType
    modifier: Modifier
    source: int
    destination: int
    heartbeat: int
    window: int
    retention: int
    acceptance: AcceptanceRecord = AcceptanceRecord()
    subchannel: int = 0

    SIZE: ClassVar[int] = HEADER_SIZE

    def __post_init__(self) -> None:
        _check_enum("packet type", self.packet_type, PacketType)
        if not isinstance(self.modifier, MODIFIERS[self.packet_type]):
            _check_enum(
                f"the modifier of a {self.packet_type.rfc_name} packet",
                self.modifier,
                MODIFIERS[self.packet_type],
            )
        _check_uint("subchannel", self.subchannel, 8)
        _check_uint("source connection id", self.source, 32)
        _check_uint("destination connection id", self.destination, 32)
        _check_uint("heartbeat", self.heartbeat, 32)
        _check_uint("window", self.window, 16)
        _check_uint("retention", self.retention, 16)
        if not isinstance(self.acceptance, AcceptanceRecord):
            raise TypeError(f"acceptance must be an AcceptanceRecord, not {self.acceptance!r}")
        is_data = self.packet_type is PacketType.DATA
        join_request = self.modifier is JoinModifier.REQUEST and (
            self.packet_type is PacketType.JOIN
        )
        if self.subchannel and not is_data:
            raise ValueError(
                f"{self.name} has subchannel {self.subchannel}; packets other than data must have "
                "subchannel 0 (RFC 1301 §2.2.3)"
            )
        if self.source == UNKNOWN_CONNECTION_ID:
            raise ValueError(
                f"{self.name} has source connection id 0; every packet must carry its sender's "
                "(RFC 1301 §2.2.4)"
            )
        if join_request and self.destination != UNKNOWN_CONNECTION_ID:
            raise ValueError(
                f"join[request] has destination connection id {self.destination:#x}; it goes "
                "to the unknown TSAP, id 0 (RFC 1301 §2.3.1, §3.1.1)"
            )
        if not join_request and self.destination == UNKNOWN_CONNECTION_ID:
            raise ValueError(
                f"{self.name} has destination connection id 0 (unknown), which is used only by "
                "join[request] (RFC 1301 §2.2.5)"
            )
        if self.acceptance.sync and not is_data:
            raise ValueError(
                f"{self.name} has synchronisation flag {self.acceptance.sync:#04x}; control "
                "packets carry 0 (RFC 1301 §2.2.6)"
            )
        if join_request and not self.acceptance.is_zero:
            raise ValueError(
                "join[request] must contain zeros in all of the acceptance fields (RFC 1301 §3.1.1)"
            )

    @property
    def name(self) -> str:
        return kind_name(self.packet_type, self.modifier)


@dataclass(frozen=True, slots=True)
class MtpPacket:
    """One MTP datagram: a header and the data part its kind calls for (``body_class``):
    ``bytes`` for data packets, ``NakList``, ``JoinData``, ``TsapList`` (token[confirm]),
    ``MemberConfirm`` (isMember[confirm]), a target ``Tsap`` (quit[*], isMember[request],
    isMember[deny]), or None (empty[*], token[request])."""

    header: MtpHeader
    body: Body = None

    def __post_init__(self) -> None:
        if not isinstance(self.header, MtpHeader):
            raise TypeError(f"header must be an MtpHeader, not {self.header!r}")
        header = self.header
        expected = body_class(header.packet_type, header.modifier)
        if expected is None:
            if self.body is not None:
                raise ValueError(f"{header.name} has no data part, yet body is {self.body!r}")
        elif type(self.body) is not expected:
            raise TypeError(
                f"the data part of {header.name} is a {expected.__name__}, "
                f"not {type(self.body).__name__}"
            )
        if isinstance(self.body, JoinData):
            confirm = header.modifier is JoinModifier.CONFIRM
            if confirm and self.body.multicast_id == UNKNOWN_CONNECTION_ID:
                raise ValueError(
                    "join[confirm] must carry the web's multicast connection id, not 0 "
                    "(RFC 1301 §2.3.1, §3.1.2)"
                )
            if self.body.introduction and header.modifier is not JoinModifier.REQUEST:
                raise ValueError(f"{header.name} carries an introduction; only join[request] may")
            if not confirm and self.body.multicast_id != UNKNOWN_CONNECTION_ID:
                raise ValueError(
                    f"{header.name} carries multicast connection id "
                    f"{self.body.multicast_id:#x}; only join[confirm] tells it, the others "
                    "carry 0 (RFC 1301 §2.3.1)"
                )
        if self.wire_size > MAX_DATAGRAM:
            raise ValueError(f"packet of {self.wire_size} bytes exceeds {MAX_DATAGRAM}")

    @property
    def packet_type(self) -> PacketType:
        return self.header.packet_type

    @property
    def modifier(self) -> Modifier:
        return self.header.modifier

    @property
    def name(self) -> str:
        return self.header.name

    @property
    def wire_size(self) -> int:
        body = self.body
        if body is None:
            size = 0
        elif isinstance(body, bytes):
            size = len(body)
        elif isinstance(body, NakList | TsapList):
            size = body.wire_size
        elif isinstance(body, JoinData):
            size = body.SIZE + len(body.introduction)
        else:
            size = body.SIZE
        return HEADER_SIZE + size


# --- encoding --------------------------------------------------------------------------------


def encode(packet: MtpPacket) -> bytes:
    """The datagram for ``packet``. Never fails: the records validate themselves when built."""
    header = packet.header
    record = header.acceptance
    out = bytearray(
        _HEADER.pack(
            MTP_VERSION,
            header.packet_type,
            header.modifier,
            header.subchannel,
            header.source,
            header.destination,
            record.sync << 24 | record.status_word,
            record.message_seq,
            record.packet_seq,
            header.heartbeat,
            header.window,
            header.retention,
        )
    )
    match packet.body:
        case None:
            pass
        case bytes() as payload:
            out += payload
        case JoinData() as join:
            out += _JOIN.pack(
                join.member_class,
                join.transport_class,
                join.transport_type,
                0,  # reserved (Figure 3)
                join.min_throughput,
                join.max_data_unit,
                join.multicast_id,
            )
            out += join.introduction
        case NakList(packets=entries):
            for entry in entries:
                out += _NAK_ENTRY.pack(entry.message, entry.packet)
        case TsapList(tsaps=tsaps):
            for tsap in tsaps:
                _encode_tsap(tsap, out)
        case Tsap() as tsap:
            _encode_tsap(tsap, out)
        case MemberConfirm(target=target, credibility_ms=credibility):
            _encode_tsap(target, out)
            out += _CREDIBILITY.pack(credibility)
    return bytes(out)


def _encode_tsap(tsap: Tsap, out: bytearray) -> None:
    out += _TSAP.pack(int(tsap.address), tsap.port, 0, tsap.connection_id)


# --- decoding --------------------------------------------------------------------------------


def decode(data: bytes | bytearray | memoryview) -> MtpPacket:
    """The packet in ``data``; MtpDecodeError (and nothing else) if it is not a valid one."""
    view = memoryview(data).cast("B")  # sizes in bytes, whatever the buffer's item size
    size = len(view)
    if size > MAX_DATAGRAM:
        raise MtpDecodeError(f"datagram of {size} bytes exceeds the maximum {MAX_DATAGRAM}")
    if size < HEADER_SIZE:
        raise MtpDecodeError(f"{size} bytes is shorter than the {HEADER_SIZE}-byte MTP header")
    (
        version,
        type_value,
        modifier_value,
        subchannel,
        source,
        destination,
        word,
        message_seq,
        packet_seq,
        heartbeat,
        window,
        retention,
    ) = _HEADER.unpack_from(view)
    if version != MTP_VERSION:
        raise MtpDecodeError(
            f"MTP version {version}; this is version {MTP_VERSION} (RFC 1301 §2.2.1)"
        )
    packet_type = _lookup(PacketType, type_value, "packet type", "§2.2.2")
    modifier = _decode_modifier(packet_type, modifier_value)
    statuses = _decode_statuses(word)
    try:
        header = MtpHeader(
            packet_type=packet_type,
            modifier=modifier,
            source=source,
            destination=destination,
            heartbeat=heartbeat,
            window=window,
            retention=retention,
            acceptance=AcceptanceRecord(word >> 24, statuses, message_seq, packet_seq),
            subchannel=subchannel,
        )
        body = _decode_body(header, view[HEADER_SIZE:])
        return MtpPacket(header, body)
    except MtpDecodeError:
        raise
    except ValueError as exc:
        # The records enforce the RFC's rules; decoding reports their verdict in its own type.
        raise MtpDecodeError(str(exc)) from None


def _decode_modifier(packet_type: PacketType, value: int) -> Modifier:
    """RFC 1301 §2.2.2: the modifiers are valid only in the context of the type."""
    modifiers = MODIFIERS[packet_type]
    try:
        return modifiers(value)
    except ValueError:
        raise MtpDecodeError(
            f"modifier {value} is undefined for packet type "
            f"{packet_type.rfc_name}({packet_type.value}); RFC 1301 §2.2.2 defines "
            f"{_choices(modifiers)}"
        ) from None


def _statuses_of_byte(byte: int) -> tuple[MessageStatus, ...] | None:
    values = [byte >> shift & _STATUS_MASK for shift in range(8 - _STATUS_BITS, -1, -_STATUS_BITS)]
    if any(value > max(MessageStatus) for value in values):
        return None
    return tuple(map(MessageStatus, values))


# The statuses of each byte of the vector, None where one is undefined: every packet carries
# twelve, and decoding them one by one was a sixth of a receiver's decoding (issue 18).
_STATUSES_OF_BYTE = tuple(_statuses_of_byte(byte) for byte in range(256))


def _decode_statuses(word: int) -> tuple[MessageStatus, ...]:
    """The 12 two-bit statuses of an acceptance record's second word (§2.2.6, Figure 2)."""
    high = _STATUSES_OF_BYTE[word >> 16 & 0xFF]
    middle = _STATUSES_OF_BYTE[word >> 8 & 0xFF]
    low = _STATUSES_OF_BYTE[word & 0xFF]
    if high is not None and middle is not None and low is not None:
        return high + middle + low
    statuses = []  # one is undefined: found again one by one, to say which
    for index in range(STATUS_COUNT):
        value = word >> (22 - _STATUS_BITS * index) & _STATUS_MASK
        if value > max(MessageStatus):
            raise MtpDecodeError(
                f"message status {value} at element {index} of the acceptance record (offset "
                f"{12 + (8 + _STATUS_BITS * index) // 8}) is undefined; RFC 1301 §2.2.6 "
                f"defines {_choices(MessageStatus)}"
            )
        statuses.append(MessageStatus(value))
    return tuple(statuses)


def _decode_body(header: MtpHeader, rest: memoryview) -> Body:
    expected = body_class(header.packet_type, header.modifier)
    if expected is bytes:
        return bytes(rest)
    name = header.name
    size = len(rest)
    if expected is None:
        if size:
            raise MtpDecodeError(
                f"{name} has no data part, yet {size} bytes follow the header at offset "
                f"{HEADER_SIZE}"
            )
        return None
    if expected is NakList:
        if size % NAK_ENTRY_SIZE or not NAK_ENTRY_SIZE <= size <= NAK_ENTRY_SIZE * MAX_NAK_ENTRIES:
            raise MtpDecodeError(
                f"{name} data part of {size} bytes is not a list of 1..{MAX_NAK_ENTRIES} "
                f"{NAK_ENTRY_SIZE}-byte (message, packet) sequence number pairs"
            )
        return NakList(tuple(PacketId(*pair) for pair in _NAK_ENTRY.iter_unpack(rest)))
    if expected is TsapList:
        if size % TSAP_SIZE or not TSAP_SIZE <= size <= TSAP_SIZE * MAX_TSAPS:
            raise MtpDecodeError(
                f"{name} data part of {size} bytes is not a list of 1..{MAX_TSAPS} "
                f"{TSAP_SIZE}-byte multicast TSAPs"
            )
        return TsapList(
            tuple(
                _decode_tsap(rest, offset, f"multicast TSAP {offset // TSAP_SIZE}")
                for offset in range(0, size, TSAP_SIZE)
            )
        )
    if expected is JoinData:
        return _decode_join(header, rest)
    want = {Tsap: TSAP_SIZE, MemberConfirm: MemberConfirm.SIZE}[expected]
    if size != want:
        raise MtpDecodeError(
            f"{name} data part is {size} bytes; its {_body_label(expected)} is {want} bytes"
        )
    target = _decode_tsap(rest, 0, "target TSAP")
    if expected is Tsap:
        return target
    (credibility,) = _CREDIBILITY.unpack_from(rest, TSAP_SIZE)
    return MemberConfirm(target, credibility)


def _decode_join(header: MtpHeader, rest: memoryview) -> JoinData:
    """Figure 3's 12 bytes; in join[request], then the joiner's introduction (extension)."""
    name, size, want = header.name, len(rest), JOIN_DATA_SIZE
    introduced = header.modifier is JoinModifier.REQUEST
    if introduced and size > want + MAX_INTRODUCTION:
        raise MtpDecodeError(
            f"{name} data part is {size} bytes; its join data (RFC 1301 Figure 3) is {want} "
            f"bytes and the introduction after it at most {MAX_INTRODUCTION}"
        )
    if size != want and not (introduced and size > want):
        raise MtpDecodeError(
            f"{name} data part is {size} bytes; its {_body_label(JoinData)} is {want} bytes"
        )
    (member, transport_class, transport_type, reserved, throughput, mdu, multicast) = (
        _JOIN.unpack_from(rest)
    )
    if reserved:
        raise MtpDecodeError(
            f"{name}: the reserved byte of the join data (offset {HEADER_SIZE + 3}) is "
            f"{reserved:#04x}; reserved fields must be zero (RFC 1301 §2.2, Figure 3)"
        )
    return JoinData(
        member_class=_lookup(MemberClass, member, "member class", "§3.1.1"),
        transport_class=_lookup(TransportClass, transport_class, "transport class", "§3.1.1"),
        transport_type=_lookup(TransportType, transport_type, "transport type", "§3.1.1"),
        min_throughput=throughput,
        max_data_unit=mdu,
        multicast_id=multicast,
        introduction=bytes(rest[want:]),
    )


def _body_label(expected: type) -> str:
    if expected is JoinData:
        return "join data (RFC 1301 Figure 3)"
    if expected is MemberConfirm:
        return "target TSAP and credibility"
    return "target TSAP"


def _decode_tsap(rest: memoryview, offset: int, what: str) -> Tsap:
    address, port, reserved, connection_id = _TSAP.unpack_from(rest, offset)
    at = HEADER_SIZE + offset
    if reserved:
        raise MtpDecodeError(
            f"{what} at offset {at}: reserved field is {reserved:#06x}; reserved fields must "
            "be zero (RFC 1301 §2.2)"
        )
    try:
        return Tsap(IPv4Address(address), port, connection_id)
    except ValueError as exc:
        raise MtpDecodeError(f"{what} at offset {at}: {exc}") from None


# The cores decode through this: in the simulator one multicast datagram object reaches every
# member, and it is decoded once (coreapi/memo.py).
decode_once = DecodeMemo(decode)
