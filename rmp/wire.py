"""RMP's datagram (Dabbous & Kiss, INRIA RR-2100, 1993, §2.2 and §4): the 8-byte RTP version 1
fixed header, a chain of options, then a data part in data packets only.

    0                   1                   2                   3
    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |V=1| channel   |P|S|  format   |        sequence number        |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |  timestamp: seconds (16 bits) | timestamp: fraction (16 bits) |
   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
   |F|    type     |  option body (option sizes are multiples of 4)
   +-+-+-+-+-+-+-+-+- ... more options while F=0; F=1 marks the final one
   | data part: after a final Data or Image option, to the end of the datagram

Every layout choice the report leaves open (the figures are lost from our copy) is written down,
with a byte diagram per option, in docs/rmp-wire.md; the tests check the diagrams byte for byte.

The encoding is canonical: ``decode`` accepts exactly the bytes ``encode`` can produce, so
``encode(decode(b)) == b`` for every datagram that decodes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar, TypeAlias, TypeVar

from coreapi import MAX_INTRODUCTION
from coreapi.memo import DecodeMemo
from rmp.batch import batch_problem
from rmp.fragment import piece_problem
from rmp.timestamps import MIDDLE32_WRAP_SECONDS as MIDDLE32_WRAP_SECONDS
from rmp.timestamps import NTP_UNIX_OFFSET as NTP_UNIX_OFFSET
from rmp.timestamps import ntp_middle32 as ntp_middle32
from rmp.timestamps import seconds_from_middle32 as seconds_from_middle32

RTP_VERSION = 1  # the 1993 RTP drafts are version 1 (RFC 1889 §5.1 says so of its predecessor)
# RR-2100 §2.2: the RTP "content" field "should indicate Reliable Multicast", but no value is
# given. 63, the last 6-bit value, is ours; it stays clear of the draft profile's audio and video
# codes, which count up from 0.
FORMAT_RMP = 63
# [extension] The side channel's packets (rmp/side.py): another RTP payload to any other RMP.
FORMAT_EPHEMERAL = 62
HEADER_SIZE = 8
SOURCE_SIZE = 8  # the Source option [extension]: F|74, three zero bytes, the 32-bit identifier
MAX_DATAGRAM = 65_507  # the largest UDP payload over IPv4: 65,535 - 20 (IP) - 8 (UDP)
MAX_OPTIONS = 256  # per packet (and per embedded packet): bounds decoding work per datagram
MAX_RETRANSMIT_LENGTH = 0x7FFF  # RR-2100 §4.2.7: the Retransmit length field is 15 bits
MAX_NACK_RANGE = 0x8000  # 2**15: a longer gap is ambiguous in 16-bit serial arithmetic (RFC 1982)

_HEADER = struct.Struct("!BBHI")
_NACK = struct.Struct("!BBHI")  # F|type, number or pad, sequence number, source identifier
_NACK_RANGE = struct.Struct("!BBHIHH")  # the Nack layout, then count and 16 bits of padding
_PIECE = struct.Struct("!BBHHH")  # F|type, pad, index, count, 16 bits of padding
_SHORT = struct.Struct("!BBBB")  # the 4-byte options: F|type and three bytes
_RETRANSMIT = struct.Struct("!BBHI")  # F|type, pad, pad bit + 15-bit length, source identifier
_P_BIT = 0x80  # header byte 1: options follow (RR-2100 §4.1)
_S_BIT = 0x40  # header byte 1: end or start of a synchronisation unit (§4.1)
_FINAL = 0x80  # the F bit: set on the final option (see docs/rmp-wire.md, "The F bit")
_TYPE_MASK = 0x7F
_FLAG = 0x80  # the one-bit flags (Image's Last, our Join answer) are the top bit of byte 1 or 2


class OptionType(IntEnum):
    """The 7-bit option types of RR-2100 §4.2, and our one extension."""

    JOIN = 66
    NACK = 67
    CONFIRM = 68
    REMIND = 69
    IMAGE = 70
    DATA = 71
    RETRANSMIT = 72
    # Not in RR-2100: a Nack naming a run of consecutive missing packets (docs/rmp-wire.md).
    NACK_RANGE = 73
    # [extension] the sender's 32-bit source identifier; see RmpPacket.source.
    SOURCE = 74
    # [extension] after a Join request: the joiner's introduction follows as the data part.
    INTRO = 75
    # [extension] like Data, but the data part holds several payloads (rmp/batch.py).
    BATCH = 76
    # [extension] like Data, but the data part is one piece of a longer payload (rmp/fragment.py).
    PIECE = 77


def _label(kind: OptionType) -> str:
    """The option's record name, for messages: NACK_RANGE -> NackRange."""
    return "".join(part.title() for part in kind.name.split("_"))


class RmpDecodeError(ValueError):
    """A datagram that is not a valid RMP packet; the message says what is wrong and where."""


def _check_uint(name: str, value: int, bits: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not 0 <= value < 1 << bits:
        raise ValueError(f"{name} {value} does not fit in {bits} bits")


def _check_flag(name: str, value: bool) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {type(value).__name__}")


_Record = TypeVar("_Record")


def _decoded(cls: type[_Record], *values: object) -> _Record:
    """A record of ``cls`` from decoded fields, in field order, without its ``__post_init__``:
    the decoder's fields fit their widths by construction (each comes out of a ``struct``
    format of that width) and ``decode`` checks the packet's structure once itself. Checking
    them again cost a member more than half its decoding time under a flood (issue 17)."""
    record = object.__new__(cls)
    for name, value in zip(cls.__slots__, values, strict=True):  # type: ignore[attr-defined]
        object.__setattr__(record, name, value)
    return record


# --- options (RR-2100 §4.2) ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Join:
    """RR-2100 §4.2.1, §2.8: a station asks to join; sent at most ~5 times, counting in
    ``join_number``. ``answer`` is our extension: set in the answer, whose Confirm options then
    list the last sequence number of every station the answerer knows, its own included."""

    join_number: int
    answer: bool = False

    TYPE: ClassVar[OptionType] = OptionType.JOIN
    SIZE: ClassVar[int] = 4

    def __post_init__(self) -> None:
        _check_uint("join_number", self.join_number, 8)
        _check_flag("answer", self.answer)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Nack:
    """RR-2100 §4.2.2, §2.6: packet ``seq`` of station ``source`` is missing; this is the
    ``nack_number``-th time the Nack is sent (stations at that depth or less answer)."""

    nack_number: int
    seq: int
    source: int

    TYPE: ClassVar[OptionType] = OptionType.NACK
    SIZE: ClassVar[int] = 8

    def __post_init__(self) -> None:
        _check_uint("nack_number", self.nack_number, 8)
        _check_uint("seq", self.seq, 16)
        _check_uint("source", self.source, 32)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class NackRange:
    """Our extension (not in RR-2100): ``count`` consecutive packets of ``source`` are missing,
    from ``first`` on (modulo 2**16). Its first 8 bytes are laid out as a Nack for ``first``."""

    nack_number: int
    first: int
    source: int
    count: int

    TYPE: ClassVar[OptionType] = OptionType.NACK_RANGE
    SIZE: ClassVar[int] = 12

    def __post_init__(self) -> None:
        _check_uint("nack_number", self.nack_number, 8)
        _check_uint("first", self.first, 16)
        _check_uint("source", self.source, 32)
        _check_uint("count", self.count, 16)
        if not 1 <= self.count <= MAX_NACK_RANGE:
            raise ValueError(f"NackRange count {self.count} is not in 1..{MAX_NACK_RANGE}")

    @property
    def wire_size(self) -> int:
        return self.SIZE

    @property
    def last(self) -> int:
        return (self.first + self.count - 1) & 0xFFFF

    def missing(self) -> Iterator[int]:
        """The missing sequence numbers, in order, wrapping past 65535 to 0."""
        return ((self.first + i) & 0xFFFF for i in range(self.count))


@dataclass(frozen=True, slots=True)
class Confirm:
    """RR-2100 §4.2.3, §2.3: every packet of ``source`` up to ``seq`` was received. One pair per
    option; a packet confirming several stations carries several Confirm options (§4.2: options
    may repeat unless noted). In a join answer the Confirms are the station list of §2.8."""

    seq: int
    source: int

    TYPE: ClassVar[OptionType] = OptionType.CONFIRM
    SIZE: ClassVar[int] = 8

    def __post_init__(self) -> None:
        _check_uint("seq", self.seq, 16)
        _check_uint("source", self.source, 32)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Remind:
    """RR-2100 §4.2.4, §2.4: the sender's last data packet, repeated for the
    ``remind_number``-th time (modulo 256). Must be the first option of its packet."""

    remind_number: int

    TYPE: ClassVar[OptionType] = OptionType.REMIND
    SIZE: ClassVar[int] = 4

    def __post_init__(self) -> None:
        _check_uint("remind_number", self.remind_number, 8)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Image:
    """RR-2100 §4.2.5, §2.8: the data part is a piece of the board state (a refresh); ``last``
    marks the piece that completes it, and must equal the RTP header's S bit."""

    last: bool = False

    TYPE: ClassVar[OptionType] = OptionType.IMAGE
    SIZE: ClassVar[int] = 4

    def __post_init__(self) -> None:
        _check_flag("last", self.last)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Data:
    """RR-2100 §4.2.6, §2.2: a data part (new data or a command on existing data) follows."""

    TYPE: ClassVar[OptionType] = OptionType.DATA
    SIZE: ClassVar[int] = 4

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Batch:
    """Our extension, in place of Data: the data part holds ``count`` payloads, each a 16-bit
    length and its bytes (rmp/batch.py), delivered in their order (issue 18)."""

    count: int

    TYPE: ClassVar[OptionType] = OptionType.BATCH
    SIZE: ClassVar[int] = 4

    def __post_init__(self) -> None:
        _check_uint("count", self.count, 16)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Piece:
    """Our extension, in place of Data: the data part is piece ``index`` (from 0) of a run of
    ``count`` consecutive data packets that together carry one payload (rmp/fragment.py); the
    header's S bit marks the last piece (issue 20)."""

    index: int
    count: int

    TYPE: ClassVar[OptionType] = OptionType.PIECE
    SIZE: ClassVar[int] = 8

    def __post_init__(self) -> None:
        _check_uint("index", self.index, 16)
        _check_uint("count", self.count, 16)

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Intro:
    """Our extension: in a join request only, after the Join option; the data part is the
    joiner's introduction (at most MAX_INTRODUCTION bytes, the application's name card), so
    the members already there know who asks before it may send anything (issue 17). It is not
    data: it takes no sequence number and is never stored, repaired or delivered."""

    TYPE: ClassVar[OptionType] = OptionType.INTRO
    SIZE: ClassVar[int] = 4

    @property
    def wire_size(self) -> int:
        return self.SIZE


@dataclass(frozen=True, slots=True)
class Retransmit:
    """RR-2100 §4.2.7, §2.7, §3: a stored data packet of ``source`` (its original sender, needed
    for ordering), sent again whole. The 15-bit length is the embedded packet's encoded size."""

    source: int
    packet: RmpPacket

    TYPE: ClassVar[OptionType] = OptionType.RETRANSMIT
    HEAD_SIZE: ClassVar[int] = 8

    def __post_init__(self) -> None:
        _check_uint("source", self.source, 32)
        if not isinstance(self.packet, RmpPacket):
            raise TypeError(f"packet must be an RmpPacket, not {type(self.packet).__name__}")
        if any(isinstance(option, Retransmit) for option in self.packet.options):
            raise ValueError("a retransmitted packet cannot itself hold a Retransmit (§2.7)")
        if self.packet.data is None:
            raise ValueError(
                "only data packets are retransmitted: the embedded packet has no data part "
                "(§2.2: control packets are not stored)"
            )
        if self.length > MAX_RETRANSMIT_LENGTH:
            raise ValueError(
                f"embedded packet of {self.length} bytes exceeds the 15-bit Retransmit length "
                f"({MAX_RETRANSMIT_LENGTH})"
            )

    @property
    def length(self) -> int:
        return self.packet.wire_size

    @property
    def wire_size(self) -> int:
        return self.HEAD_SIZE + _padded(self.length)


Option: TypeAlias = (
    Join | Nack | NackRange | Confirm | Remind | Image | Data | Batch | Piece | Intro | Retransmit
)
_OPTION_TYPES = {int(kind): kind for kind in OptionType}  # a dict lookup: the enum call is slow
_CONFIRM = int(OptionType.CONFIRM)  # a Confirm's first byte with F=0 (_decode_options)
_DATA = Data()  # it has no fields: one instance serves every decoded packet
_INTRO = Intro()
_OPTION_CLASSES = (
    Join, Nack, NackRange, Confirm, Remind, Image, Data, Batch, Piece, Intro, Retransmit
)  # fmt: skip
# The options "indicating the presence of data" (§2.2), and the introduction (ours).
_CARRIES_DATA = (Data, Batch, Piece, Image, Intro)
_MUST_BE_FINAL = (Data, Batch, Piece, Image, Intro, Retransmit)


def _padded(size: int) -> int:
    return (size + 3) & ~3


# --- the packet ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RmpPacket:
    """One RMP datagram. ``timestamp`` is the RTP header's 32-bit value (the middle 32 bits of an
    NTP time: see ``ntp_middle32``). ``data`` is None in control packets and bytes (possibly
    empty) exactly when the final option is Data or Image. The P bit is ``bool(options)``."""

    seq: int
    timestamp: int
    options: tuple[Option, ...] = ()
    data: bytes | None = None
    channel: int = 0
    s_bit: bool = False
    format: int = FORMAT_RMP
    # [extension] The sender's 32-bit identifier, the "station identifier" of RR-2100 §2.1 that
    # Nack, Confirm and Retransmit name. The report takes it from the lower layer (the IP
    # address), but several members may share a host and an address, so, as RTP v1 did with
    # its SSRC option, it travels in a Source option, always the first. 0: absent.
    source: int = 0

    def __post_init__(self) -> None:
        _check_uint("seq", self.seq, 16)
        _check_uint("source", self.source, 32)
        _check_uint("timestamp", self.timestamp, 32)
        _check_uint("channel", self.channel, 6)
        _check_uint("format", self.format, 6)
        _check_flag("s_bit", self.s_bit)
        if not isinstance(self.options, tuple):
            raise TypeError(f"options must be a tuple, not {type(self.options).__name__}")
        if self.data is not None and not isinstance(self.data, bytes):
            raise TypeError(f"data must be bytes or None, not {type(self.data).__name__}")
        for index, option in enumerate(self.options):
            if not isinstance(option, _OPTION_CLASSES):
                raise TypeError(f"option {index} is a {type(option).__name__}, not an RMP option")
        size = len(self.data) if self.data is not None else None
        problem = _structure_problem(self.options, size, self.s_bit) or _batch_problem(
            self.options, self.data
        )
        if problem is not None:
            raise ValueError(problem)
        if self.wire_size > MAX_DATAGRAM:
            raise ValueError(f"packet of {self.wire_size} bytes exceeds {MAX_DATAGRAM}")

    @property
    def p_bit(self) -> bool:
        return bool(self.options) or bool(self.source)

    @property
    def wire_size(self) -> int:
        size = HEADER_SIZE + (SOURCE_SIZE if self.source else 0)
        size += sum(option.wire_size for option in self.options)
        return size + (len(self.data) if self.data is not None else 0)


def _structure_problem(
    options: tuple[Option, ...], data_size: int | None, s_bit: bool
) -> str | None:
    """What is wrong with this sequence of options, or None. Shared by the constructor (a
    ValueError) and ``decode`` (an RmpDecodeError), so both enforce the same rules."""
    if len(options) > MAX_OPTIONS:
        return f"{len(options)} options, more than {MAX_OPTIONS}"
    joins = [option for option in options if isinstance(option, Join)]
    for index, option in enumerate(options):
        name = type(option).__name__
        if isinstance(option, Remind) and index != 0:
            # §2.4: later options are treated differently when the remind number is not the
            # receiver's depth, so the receiver must see it before them.
            return f"Remind must be the first option (RR-2100 §2.4), found at position {index}"
        if isinstance(option, _MUST_BE_FINAL) and index != len(options) - 1:
            # §2.2: the data part follows the last option; §4.2.7: Retransmit has F=1.
            return f"{name} must be the final option, found at position {index} of {len(options)}"
        if isinstance(option, Image) and option.last != s_bit:
            return (
                f"the Image option's Last bit ({int(option.last)}) disagrees with the RTP "
                f"header's S bit ({int(s_bit)}); RR-2100 §2.8 and §4.2.5 mark the last image "
                "part with both"
            )
    if len(joins) > 1:
        return f"{len(joins)} Join options; Join is unique in its packet (RR-2100 §4.2.1)"
    intro = bool(options) and isinstance(options[-1], Intro)
    if joins and not joins[0].answer and len(options) > (2 if intro else 1):
        return (
            "a Join request must be the only option in its packet (RR-2100 §4.2.1), but for "
            "an Intro after it"
        )
    if intro and not (len(options) == 2 and joins and not joins[0].answer):
        return "an Intro option comes only after a Join request (our extension)"
    if intro and data_size is not None and data_size > MAX_INTRODUCTION:
        return f"an introduction of {data_size} bytes, more than {MAX_INTRODUCTION}"
    if joins and not intro and isinstance(options[-1], _MUST_BE_FINAL):
        return (
            f"a Join answer is a control packet and cannot carry {type(options[-1]).__name__} "
            "(RR-2100 §2.8: the board state follows in separate Image packets)"
        )
    announces_data = bool(options) and isinstance(options[-1], _CARRIES_DATA)
    has_data = data_size is not None
    if announces_data and not has_data:
        return f"a final {type(options[-1]).__name__} option needs a data part (data=b'' if empty)"
    if has_data and not announces_data:
        return "a data part needs a final Data, Image or Intro option (RR-2100 §2.2)"
    if announces_data and isinstance(options[-1], Piece):
        return piece_problem(options[-1].index, options[-1].count, s_bit, data_size)
    return None


def _batch_problem(options: tuple[Option, ...], data: bytes | None) -> str | None:
    """What is wrong with a Batch packet's data part (its framing), or None."""
    if not options or not isinstance(options[-1], Batch) or data is None:
        return None
    return batch_problem(data, options[-1].count)


# --- encoding ------------------------------------------------------------------------------------


def encode(packet: RmpPacket) -> bytes:
    """The datagram for ``packet``. Never fails: the records validate themselves when built."""
    out = bytearray()
    _encode_into(packet, out)
    return bytes(out)


def _encode_into(packet: RmpPacket, out: bytearray) -> None:
    first = RTP_VERSION << 6 | packet.channel
    second = (_P_BIT if packet.p_bit else 0) | (_S_BIT if packet.s_bit else 0) | packet.format
    out += _HEADER.pack(first, second, packet.seq, packet.timestamp)
    count = len(packet.options)
    if packet.source:
        lead = OptionType.SOURCE | (_FINAL if count == 0 else 0)
        out += _NACK.pack(lead, 0, 0, packet.source)
    for index, option in enumerate(packet.options):
        lead = option.TYPE | (_FINAL if index == count - 1 else 0)
        match option:
            case Join(join_number=number, answer=answer):
                out += _SHORT.pack(lead, number, _FLAG if answer else 0, 0)
            case Nack(nack_number=number, seq=seq, source=source):
                out += _NACK.pack(lead, number, seq, source)
            case NackRange(nack_number=number, first=first, source=source, count=run):
                out += _NACK_RANGE.pack(lead, number, first, source, run, 0)
            case Confirm(seq=seq, source=source):
                out += _NACK.pack(lead, 0, seq, source)
            case Remind(remind_number=number):
                out += _SHORT.pack(lead, number, 0, 0)
            case Image(last=last):
                out += _SHORT.pack(lead, _FLAG if last else 0, 0, 0)
            case Data() | Intro():
                out += _SHORT.pack(lead, 0, 0, 0)
            case Batch(count=count):
                out += _SHORT.pack(lead, 0, count >> 8, count & 0xFF)
            case Piece(index=index, count=count):
                out += _PIECE.pack(lead, 0, index, count, 0)
            case Retransmit(source=source, packet=inner):
                length = inner.wire_size
                out += _RETRANSMIT.pack(lead, 0, length, source)
                _encode_into(inner, out)
                out += bytes(_padded(length) - length)
    if packet.data is not None:
        out += packet.data


# --- decoding ------------------------------------------------------------------------------------


def peek_source(data: bytes) -> int:
    """The identifier in the Source option of a datagram laid out as ours (the option first,
    right after the header), or 0; nothing is checked beyond that. For a look at who sent a
    datagram before the work of decoding it (rmp/admission.py)."""
    if len(data) < HEADER_SIZE + SOURCE_SIZE or data[HEADER_SIZE] & _TYPE_MASK != OptionType.SOURCE:
        return 0
    return int.from_bytes(data[HEADER_SIZE + 4 : HEADER_SIZE + 8], "big")


def decode(data: bytes | bytearray | memoryview) -> RmpPacket:
    """The packet in ``data``; RmpDecodeError (and nothing else) if it is not a valid one."""
    if len(data) > MAX_DATAGRAM:
        raise RmpDecodeError(f"datagram of {len(data)} bytes exceeds the maximum {MAX_DATAGRAM}")
    return _decode(memoryview(data).cast("B"), embedded=False)


def _decode(view: memoryview, *, embedded: bool) -> RmpPacket:
    end = len(view)
    if end < HEADER_SIZE:
        raise RmpDecodeError(f"{end} bytes is shorter than the {HEADER_SIZE}-byte RTP header")
    first, second, seq, timestamp = _HEADER.unpack_from(view)
    version = first >> 6
    if version != RTP_VERSION:
        raise RmpDecodeError(f"RTP version {version}; RMP runs on version {RTP_VERSION}")
    p_bit, s_bit = bool(second & _P_BIT), bool(second & _S_BIT)
    options: list[Option] = []
    data: bytes | None = None
    source = 0
    if not p_bit:
        if end > HEADER_SIZE:
            raise RmpDecodeError(
                f"P bit clear (no options) but {end - HEADER_SIZE} bytes follow the header; "
                "a data part needs a Data option (RR-2100 §2.2)"
            )
    elif end == HEADER_SIZE:
        raise RmpDecodeError("P bit set but no option follows the header")
    else:
        options, data, source = _decode_options(view, embedded=embedded)
    options_tuple = tuple(options)
    problem = _structure_problem(options_tuple, len(data) if data is not None else None, s_bit)
    if problem is None:
        problem = _batch_problem(options_tuple, data)
    if problem is not None:
        raise RmpDecodeError(problem)
    return _decoded(
        RmpPacket, seq, timestamp, options_tuple, data, first & 0x3F, s_bit, second & 0x3F, source
    )


def _decode_options(view: memoryview, *, embedded: bool) -> tuple[list[Option], bytes | None, int]:
    """The option chain after the header (P bit set): the options, the data part, the Source."""
    end = len(view)
    options: list[Option] = []
    source = 0
    offset = HEADER_SIZE
    while True:  # one option per turn, until the final one (F=1)
        if offset + 8 <= end and view[offset] == _CONFIRM and not view[offset + 1]:
            # A Confirm (F=0, zero pad), the usual option (one per station, §2.3), read inline
            # as the general path below reads it (which raises for anything amiss; issue 18).
            if len(options) == MAX_OPTIONS:
                raise RmpDecodeError(f"more than {MAX_OPTIONS} options")
            _, _, seq, confirmed = _NACK.unpack_from(view, offset)
            options.append(_decoded(Confirm, seq, confirmed))
            offset += 8
            continue
        kind, final = _option_lead(view, offset, len(options))
        if kind is OptionType.SOURCE:
            source = _decode_source(view, offset)
            offset += SOURCE_SIZE
            if final:
                if offset != end:
                    raise RmpDecodeError(
                        f"option chain ends early: the final option (F=1) is the Source "
                        f"option, yet {end - offset} bytes follow it"
                    )
                return options, None, source
            continue
        option, size = _decode_option(kind, view, offset, embedded=embedded)
        options.append(option)
        if isinstance(option, _MUST_BE_FINAL) and not final:
            raise RmpDecodeError(
                f"{_label(kind)} option at offset {offset} has F=0 but must be the final "
                "option (RR-2100 §2.2, §4.2.7)"
            )
        offset += size
        if isinstance(option, _CARRIES_DATA):
            # §2.2: the rest of the datagram is the data part
            return options, bytes(view[offset:]), source
        if final:
            if offset != end:
                raise RmpDecodeError(
                    f"option chain ends early: the final option (F=1) is a "
                    f"{_label(kind)} option, yet {end - offset} bytes follow it at offset "
                    f"{offset}; only a Data or Image option may be followed by a data part "
                    "(RR-2100 §2.2)"
                )
            return options, None, source


def _option_lead(view: memoryview, offset: int, count: int) -> tuple[OptionType, bool]:
    """The type and F bit of the option at ``offset``, the ``count``-th decoded so far."""
    end = len(view)
    if count == MAX_OPTIONS:
        raise RmpDecodeError(f"more than {MAX_OPTIONS} options")
    if offset == end:
        raise RmpDecodeError(
            f"option chain never ends: the datagram ends at offset {end} and no option "
            "has the F bit set (F=1 marks the final option)"
        )
    lead = view[offset]
    kind = _OPTION_TYPES.get(lead & _TYPE_MASK)
    if kind is None:
        raise RmpDecodeError(f"unknown option type {lead & _TYPE_MASK} at offset {offset}")
    return kind, bool(lead & _FINAL)


def _decode_source(view: memoryview, offset: int) -> int:
    """The Source option's identifier; it must come first (our extension, docs/rmp-wire.md)."""
    kind = OptionType.SOURCE
    if offset != HEADER_SIZE:
        raise RmpDecodeError(f"Source option at offset {offset}; it must be the first option")
    _need(kind, view, offset, SOURCE_SIZE)
    _, pad, pad16, source = _NACK.unpack_from(view, offset)
    if pad or pad16:
        raise _padding_error(kind, offset)
    if source == 0:
        raise RmpDecodeError("Source option with the reserved identifier 0")
    return int(source)


def _need(kind: OptionType, view: memoryview, offset: int, size: int) -> None:
    if offset + size > len(view):
        raise RmpDecodeError(
            f"truncated {_label(kind)} option at offset {offset}: it needs {size} bytes, "
            f"{len(view) - offset} remain"
        )


def _padding_error(kind: OptionType, offset: int) -> RmpDecodeError:
    return RmpDecodeError(f"nonzero padding in the {_label(kind)} option at offset {offset}")


def _decode_option(
    kind: OptionType, view: memoryview, offset: int, *, embedded: bool
) -> tuple[Option, int]:
    """The option of type ``kind`` at ``offset`` and its size on the wire, padding included."""
    option: Option
    if kind in (OptionType.NACK, OptionType.CONFIRM):
        _need(kind, view, offset, 8)
        _, number, seq, source = _NACK.unpack_from(view, offset)
        if kind is OptionType.NACK:
            return _decoded(Nack, number, seq, source), 8
        if number:
            raise _padding_error(kind, offset)
        return _decoded(Confirm, seq, source), 8
    if kind is OptionType.NACK_RANGE:
        _need(kind, view, offset, 12)
        _, number, first, source, count, pad = _NACK_RANGE.unpack_from(view, offset)
        if pad:
            raise _padding_error(kind, offset)
        if not 1 <= count <= MAX_NACK_RANGE:
            raise RmpDecodeError(
                f"NackRange at offset {offset} names {count} packets, not 1..{MAX_NACK_RANGE}"
            )
        return _decoded(NackRange, number, first, source, count), 12
    if kind is OptionType.RETRANSMIT:
        return _decode_retransmit(view, offset, embedded=embedded)
    if kind is OptionType.PIECE:
        _need(kind, view, offset, Piece.SIZE)
        _, pad, index, count, pad16 = _PIECE.unpack_from(view, offset)
        if pad or pad16:
            raise _padding_error(kind, offset)
        return _decoded(Piece, index, count), Piece.SIZE
    _need(kind, view, offset, 4)
    _, one, two, three = _SHORT.unpack_from(view, offset)
    if kind is OptionType.JOIN:
        if two & ~_FLAG or three:
            raise _padding_error(kind, offset)
        option = _decoded(Join, one, bool(two & _FLAG))
    elif kind is OptionType.REMIND:
        if two or three:
            raise _padding_error(kind, offset)
        option = _decoded(Remind, one)
    elif kind is OptionType.IMAGE:
        if one & ~_FLAG or two or three:
            raise _padding_error(kind, offset)
        option = _decoded(Image, bool(one & _FLAG))
    elif kind is OptionType.BATCH:
        if one:
            raise _padding_error(kind, offset)
        option = _decoded(Batch, two << 8 | three)
    else:  # OptionType.DATA, OptionType.INTRO
        if one or two or three:
            raise _padding_error(kind, offset)
        option = _DATA if kind is OptionType.DATA else _INTRO
    return option, 4


def _decode_retransmit(view: memoryview, offset: int, *, embedded: bool) -> tuple[Option, int]:
    kind = OptionType.RETRANSMIT
    if embedded:
        # §2.7: a retransmission carries an original data packet, never another retransmission;
        # one level of embedding also bounds the recursion whatever a peer sends.
        raise RmpDecodeError(f"a Retransmit option inside a retransmitted packet, at {offset}")
    _need(kind, view, offset, Retransmit.HEAD_SIZE)
    _, pad, length, source = _RETRANSMIT.unpack_from(view, offset)
    if pad or length & 0x8000:
        raise _padding_error(kind, offset)
    start = offset + Retransmit.HEAD_SIZE
    remaining = len(view) - start
    if length > remaining:
        raise RmpDecodeError(
            f"Retransmit at offset {offset} has length {length}, which runs past the end of the "
            f"datagram ({remaining} bytes remain)"
        )
    stop = start + _padded(length)
    if stop > len(view):
        raise RmpDecodeError(
            f"Retransmit at offset {offset}: its {length}-byte packet is not padded to a "
            "32-bit boundary"
        )
    if any(view[start + length : stop]):
        raise RmpDecodeError(
            f"nonzero padding after the packet embedded in the Retransmit at offset {offset}"
        )
    try:
        inner = _decode(view[start : start + length], embedded=True)
    except RmpDecodeError as exc:
        raise RmpDecodeError(
            f"the packet embedded in the Retransmit at offset {offset} is malformed "
            f"(offsets below are within it): {exc}"
        ) from None
    if inner.data is None:
        raise RmpDecodeError(
            f"the packet embedded in the Retransmit at offset {offset} is a control packet; "
            "only data packets are stored and retransmitted (RR-2100 §2.2, §2.7)"
        )
    if stop != len(view):
        raise RmpDecodeError(
            f"{len(view) - stop} bytes follow the Retransmit option at offset {offset}, which "
            "must end the datagram (RR-2100 §4.2.7)"
        )
    return _decoded(Retransmit, source, inner), stop - offset


# The cores decode through this: in the simulator one multicast datagram object reaches every
# member, and it is decoded once (coreapi/memo.py).
decode_once = DecodeMemo(decode)
