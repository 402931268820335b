"""MTP's wire constants (RFC 1301 §2.2): sizes, the packet types and their modifiers, the
message statuses and member classes, and the decode error. ``mtp.wire`` re-exports every name
here; the packet records and the codec live there (kept apart so that neither module passes the
800-line limit).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from enum import IntEnum
from types import MappingProxyType
from typing import TypeAlias, TypeVar

MTP_VERSION = 1  # RFC 1301 §2.2.1: "the version field has a value of 0x01"
HEADER_SIZE = 28  # RFC 1301 Figure 1 and Figure 2: seven 32-bit words
MAX_DATAGRAM = 65_507  # the largest UDP payload over IPv4: 65,535 - 20 (IP) - 8 (UDP)
MAX_DATA_PART = MAX_DATAGRAM - HEADER_SIZE  # 65,479 bytes
UNKNOWN_CONNECTION_ID = 0  # RFC 1301 §2.2.5, §2.3.1: the destination of join[request] only
STATUS_COUNT = 12  # RFC 1301 §2.2.6: the status vector covers the last 12 messages
JOIN_DATA_SIZE = 12  # RFC 1301 Figure 3: three 32-bit words after the header
TSAP_SIZE = 12  # ours (docs/mtp-wire.md): IPv4 address, UDP port, reserved, connection id
NAK_ENTRY_SIZE = 4  # ours: a (message, packet) sequence number pair, 16 bits each
CREDIBILITY_SIZE = 4  # ours: isMember[confirm]'s credibility, 32 bits of milliseconds
MAX_NAK_ENTRIES = 4096  # per nak: bounds decoding work; far above window x retention in practice
MAX_TSAPS = 256  # per token[confirm]: one multicast TSAP per network in the web (§2.3.2)
MTP_IP_PROTOCOL = 92  # RFC 1301 Appendix A.2: MTP's IP protocol number (we run over UDP)
MTP_HOST_GROUP = "224.0.1.9"  # RFC 1301 Appendix A.1: MTP's permanent IP host group

_HEADER = struct.Struct("!BBBBIIIHHIHH")
_JOIN = struct.Struct("!BBBBHHI")
_TSAP = struct.Struct("!IHHI")
_NAK_ENTRY = struct.Struct("!HH")
_CREDIBILITY = struct.Struct("!I")
_STATUS_MASK = 0x3
_STATUS_BITS = 2


class PacketType(IntEnum):
    """RFC 1301 §2.2.2: the second byte of the header."""

    DATA = 0
    NAK = 1
    EMPTY = 2
    JOIN = 3
    QUIT = 4
    TOKEN = 5
    IS_MEMBER = 6

    @property
    def rfc_name(self) -> str:
        """The RFC's spelling, as in ``isMember[confirm]``."""
        return rfc_name(self)


class DataModifier(IntEnum):
    """RFC 1301 §2.2.2: data(0) carries user data; eow(1) also ends the sender's window for
    this heartbeat; eom(2) also ends the message and surrenders the token (it implies eow)."""

    DATA = 0
    EOW = 1
    EOM = 2


class NakModifier(IntEnum):
    """RFC 1301 §2.2.2, §3.2.6: request(0) asks for retransmissions; deny(1) says the producer
    can no longer retransmit (some of) them."""

    REQUEST = 0
    DENY = 1


class EmptyModifier(IntEnum):
    """RFC 1301 §2.2.2, §3.2.3: dally(0) keeps synchronisation without data; cancel(1) gives
    an unneeded token back; hibernate(2) is the idle master's slow keep-alive.

    Two extensions for master failover (docs/mtp.md): succession(3), the master's heartbeat
    that also names, in a TSAP list, the members that take over if it dies, in order; and
    dissolve(4), a master yielding to another web met on the same group (a partition healed):
    its data part is that web's multicast TSAP, and its members join that web at once."""

    DALLY = 0
    CANCEL = 1
    HIBERNATE = 2
    SUCCESSION = 3
    DISSOLVE = 4


class JoinModifier(IntEnum):
    """RFC 1301 §2.2.2, §3.1: request(0) to the unknown TSAP; the master's confirm(1) or
    deny(2), unicast to the requester."""

    REQUEST = 0
    CONFIRM = 1
    DENY = 2


class QuitModifier(IntEnum):
    """RFC 1301 §2.2.2, §3.3: request(0) and confirm(1). The RFC defines no quit[deny]."""

    REQUEST = 0
    CONFIRM = 1


class TokenModifier(IntEnum):
    """RFC 1301 §2.2.2, §3.2.1: request(0) to the master; the master's grant, confirm(1)."""

    REQUEST = 0
    CONFIRM = 1


class IsMemberModifier(IntEnum):
    """RFC 1301 §2.2.2, §3.4.3: request(0) asks whether a TSAP is a member; confirm(1) and
    deny(2) answer it."""

    REQUEST = 0
    CONFIRM = 1
    DENY = 2


Modifier: TypeAlias = (
    DataModifier
    | NakModifier
    | EmptyModifier
    | JoinModifier
    | QuitModifier
    | TokenModifier
    | IsMemberModifier
)

# RFC 1301 §2.2.2: "The modifiers are valid only in the context of the type."
MODIFIERS: Mapping[PacketType, type[Modifier]] = MappingProxyType(
    {
        PacketType.DATA: DataModifier,
        PacketType.NAK: NakModifier,
        PacketType.EMPTY: EmptyModifier,
        PacketType.JOIN: JoinModifier,
        PacketType.QUIT: QuitModifier,
        PacketType.TOKEN: TokenModifier,
        PacketType.IS_MEMBER: IsMemberModifier,
    }
)


class MessageStatus(IntEnum):
    """RFC 1301 §2.2.6: one element of the acceptance record's status vector. The 2-bit value 3
    is undefined ("There are no undefined fields", §2.2) and is refused on decode."""

    ACCEPTED = 0
    PENDING = 1
    REJECTED = 2


class MemberClass(IntEnum):
    """RFC 1301 §3.1.1: the joining process's intentions; each a superset of the next."""

    MASTER = 0
    PRODUCER = 1
    CONSUMER = 2


class TransportClass(IntEnum):
    """RFC 1301 §3.1.1: reliable(0) generates and processes naks; unreliable(1) is best
    effort."""

    RELIABLE = 0
    UNRELIABLE = 1


class TransportType(IntEnum):
    """RFC 1301 §3.1.1: NxN(0) admits many producers; 1xN(1) one producer fixed a priori."""

    N_X_N = 0
    ONE_X_N = 1


# The constants whose RFC spelling is not their lower-cased Python name. Keyed by class and name:
# IntEnum members of different classes with equal values are equal dictionary keys.
_RFC_SPELLINGS: Mapping[tuple[type[IntEnum], str], str] = MappingProxyType(
    {
        (PacketType, "IS_MEMBER"): "isMember",
        (TransportType, "N_X_N"): "NxN",
        (TransportType, "ONE_X_N"): "1xN",
    }
)


class MtpDecodeError(ValueError):
    """A datagram that is not a valid MTP packet; the message says what is wrong and where."""


def kind_name(packet_type: PacketType, modifier: Modifier) -> str:
    """The RFC's ``type[modifier]`` notation (§2.2.2), e.g. ``isMember[confirm]``."""
    return f"{rfc_name(packet_type)}[{rfc_name(modifier)}]"


def _check_uint(name: str, value: int, bits: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not 0 <= value < 1 << bits:
        raise ValueError(f"{name} {value} does not fit in {bits} bits")


_E = TypeVar("_E", bound=IntEnum)


def _check_enum(name: str, value: object, enum: type[IntEnum]) -> None:
    # Strict: a plain int or another enum with the same value would be a silent mix-up (every
    # modifier enum has a member 1).
    if not isinstance(value, enum):
        raise TypeError(f"{name} must be a {enum.__name__}, not {value!r}")


def rfc_name(member: IntEnum) -> str:
    """How RFC 1301 spells a wire constant: ``isMember``, ``NxN``, ``eom``, ``pending``."""
    return _RFC_SPELLINGS.get((type(member), member.name), member.name.lower())


def _choices(enum: type[IntEnum]) -> str:
    return ", ".join(f"{rfc_name(member)}({member.value})" for member in enum)


def _lookup(enum: type[_E], value: int, what: str, section: str) -> _E:
    """``enum(value)``, or an MtpDecodeError naming the defined values."""
    try:
        return enum(value)
    except ValueError:
        raise MtpDecodeError(
            f"{what} {value} is undefined; RFC 1301 {section} defines {_choices(enum)}"
        ) from None
