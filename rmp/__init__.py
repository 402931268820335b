"""RMP, the reliable multicast protocol of Dabbous & Kiss (INRIA RR-2100, 1993).

``rmp.wire`` is the packet format (docs/rmp-wire.md); ``rmp.core`` the sans-I/O protocol engine
(docs/rmp.md), which ``make_core`` builds for the whiteboard's transport registry. The package
depends on the standard library only, and in particular not on the whiteboard.
"""

from rmp.core import RmpCore, make_core
from rmp.description import DESCRIPTION
from rmp.params import LAN, SEED, RmpParams
from rmp.wire import (
    FORMAT_RMP,
    HEADER_SIZE,
    MAX_DATAGRAM,
    MAX_NACK_RANGE,
    MAX_OPTIONS,
    MAX_RETRANSMIT_LENGTH,
    MIDDLE32_WRAP_SECONDS,
    NTP_UNIX_OFFSET,
    RTP_VERSION,
    Batch,
    Confirm,
    Data,
    Image,
    Join,
    Nack,
    NackRange,
    Option,
    OptionType,
    Remind,
    Retransmit,
    RmpDecodeError,
    RmpPacket,
    decode,
    encode,
    ntp_middle32,
    seconds_from_middle32,
)

__all__ = [
    "DESCRIPTION",
    "FORMAT_RMP",
    "HEADER_SIZE",
    "LAN",
    "MAX_DATAGRAM",
    "MAX_NACK_RANGE",
    "MAX_OPTIONS",
    "MAX_RETRANSMIT_LENGTH",
    "MIDDLE32_WRAP_SECONDS",
    "NTP_UNIX_OFFSET",
    "RTP_VERSION",
    "SEED",
    "Batch",
    "Confirm",
    "Data",
    "Image",
    "Join",
    "Nack",
    "NackRange",
    "Option",
    "OptionType",
    "Remind",
    "Retransmit",
    "RmpCore",
    "RmpDecodeError",
    "RmpPacket",
    "RmpParams",
    "decode",
    "encode",
    "make_core",
    "ntp_middle32",
    "seconds_from_middle32",
]
