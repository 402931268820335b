"""Malformed datagrams are refused with a message that says what and where; records refuse to
be built in a shape the wire cannot carry."""

from __future__ import annotations

import struct

import pytest

from rmp.wire import (
    FORMAT_RMP,
    MAX_OPTIONS,
    Confirm,
    Data,
    Image,
    Join,
    Nack,
    NackRange,
    Remind,
    Retransmit,
    RmpDecodeError,
    RmpPacket,
    decode,
    encode,
)


def header(*, p: bool = True, s: bool = False, version: int = 1, seq: int = 1) -> bytes:
    return struct.pack("!BBHI", version << 6, p << 7 | s << 6 | FORMAT_RMP, seq, 0)


DATA = b"\xc7\x00\x00\x00"  # a final Data option
CONFIRM = b"\x44\x00\x00\x07\x0a\x00\x00\x01"  # Confirm seq 7 of 10.0.0.1, F=0
FINAL_CONFIRM = b"\xc4" + CONFIRM[1:]
DATA_PACKET = header() + DATA + b"stroke"  # 18 bytes


def retransmit(inner: bytes, *, length: int | None = None, final: bool = True) -> bytes:
    size = len(inner) if length is None else length
    lead = 0xC8 if final else 0x48
    return struct.pack("!BBHI", lead, 0, size, 0x0A000002) + inner


MALFORMED: list[tuple[str, bytes, str]] = [
    ("short", b"\x40\xbf\x00", r"3 bytes is shorter than the 8-byte RTP header"),
    ("empty", b"", r"0 bytes is shorter than the 8-byte RTP header"),
    ("version 2", header(version=2) + DATA, r"RTP version 2; RMP runs on version 1"),
    ("version 0", header(version=0, p=False), r"RTP version 0"),
    ("P clear, bytes follow", header(p=False) + DATA + b"x", r"P bit clear .* 5 bytes follow"),
    ("P set, nothing follows", header(), r"P bit set but no option follows"),
    ("unknown type", header() + b"\x81\x00\x00\x00", r"unknown option type 1 at offset 8"),
    (
        "type 0x7f",
        header() + CONFIRM + b"\xff\x00\x00\x00",
        r"unknown option type 127 at offset 16",
    ),
    (
        "truncated",
        header() + FINAL_CONFIRM[:3],
        r"truncated Confirm option at offset 8: .* 3 remain",
    ),
    (
        "truncated 2nd",
        header() + CONFIRM + b"\xc9\x00",
        r"truncated NackRange option at offset 16",
    ),
    ("chain never ends", header() + CONFIRM, r"option chain never ends: .* offset 16"),
    ("ends early", header() + FINAL_CONFIRM + b"xy", r"ends early: .* Confirm .* 2 bytes follow"),
    ("data part, no Data", header() + FINAL_CONFIRM + DATA, r"only a Data or Image option may be"),
    (
        "Data not final",
        header() + b"\x47\x00\x00\x00" + FINAL_CONFIRM,
        r"Data option at offset 8 has F=0",
    ),
    (
        "Confirm padding",
        header() + b"\xc4\x01" + FINAL_CONFIRM[2:],
        r"nonzero padding in the Confirm option at offset 8",
    ),
    ("Join padding", header() + b"\xc2\x01\x01\x00", r"nonzero padding in the Join option"),
    ("Join padding 2", header() + b"\xc2\x01\x00\x01", r"nonzero padding in the Join option"),
    (
        "Remind padding",
        header() + b"\x45\x01\x00\x01" + DATA,
        r"nonzero padding in the Remind option",
    ),
    ("Image padding", header() + b"\xc6\x01\x00\x00", r"nonzero padding in the Image option"),
    ("Data padding", header() + b"\xc7\x00\x01\x00", r"nonzero padding in the Data option"),
    (
        "NackRange padding",
        header() + b"\xc9\x00\x00\x01\x00\x00\x00\x01\x00\x02\x00\x01",
        r"nonzero padding in the NackRange",
    ),
    (
        "NackRange of 0",
        header() + b"\xc9\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00",
        r"names 0 packets, not 1..32768",
    ),
    (
        "NackRange too long",
        header() + b"\xc9\x00\x00\x01\x00\x00\x00\x01\x80\x01\x00\x00",
        r"names 32769 packets",
    ),
    (
        "Remind not first",
        header() + CONFIRM + b"\x45\x01\x00\x00" + DATA,
        r"Remind must be the first option .* position 1",
    ),
    (
        "two Reminds",
        header() + b"\x45\x01\x00\x00\x45\x01\x00\x00" + DATA,
        r"Remind must be the first option",
    ),
    ("two Joins", header() + b"\x42\x01\x80\x00\xc2\x01\x80\x00", r"2 Join options"),
    (
        "Join request + Confirm",
        header() + b"\x42\x01\x00\x00" + FINAL_CONFIRM,
        r"Join request must be the only option",
    ),
    (
        "Join answer + Data",
        header() + b"\x42\x01\x80\x00" + DATA + b"x",
        r"Join answer is a control packet",
    ),
    (
        "Image vs S bit",
        header(s=False) + b"\xc6\x80\x00\x00",
        r"Last bit \(1\) disagrees with the RTP header's S bit \(0\)",
    ),
    (
        "S bit vs Image",
        header(s=True) + b"\xc6\x00\x00\x00",
        r"Last bit \(0\) disagrees .* S bit \(1\)",
    ),
    (
        "Retransmit past end",
        header() + retransmit(DATA_PACKET, length=40),
        r"length 40, which runs past the end .*\(18 bytes remain\)",
    ),
    ("Retransmit unpadded", header() + retransmit(DATA_PACKET), r"18-byte packet is not padded"),
    (
        "Retransmit pad",
        header() + retransmit(DATA_PACKET) + b"\x00\x01",
        r"nonzero padding after the packet embedded",
    ),
    (
        "Retransmit 16th bit",
        header() + b"\xc8\x00\x80\x12\x0a\x00\x00\x02" + DATA_PACKET + b"\0\0",
        r"nonzero padding in the Retransmit",
    ),
    (
        "Retransmit trailing",
        header() + retransmit(DATA_PACKET) + b"\0\0" + DATA,
        r"4 bytes follow the Retransmit option at offset 8",
    ),
    (
        "Retransmit not final",
        header() + retransmit(DATA_PACKET, final=False) + b"\0\0",
        r"Retransmit option at offset 8 has F=0",
    ),
    (
        "Retransmit of nothing",
        header() + retransmit(b""),
        r"embedded .* malformed .* 0 bytes is shorter than the 8-byte",
    ),
    (
        "Retransmit of junk",
        header() + retransmit(header(version=3) + DATA),
        r"embedded in the Retransmit at offset 8 is malformed.*RTP version 3",
    ),
    (
        "Retransmit of a control packet",
        header() + retransmit(header() + FINAL_CONFIRM),
        r"is a control packet; only data packets",
    ),
    (
        "Retransmit of a Retransmit",
        header() + retransmit(header() + retransmit(DATA_PACKET) + b"\0\0"),
        r"malformed.*a Retransmit option inside a retransmitted packet",
    ),
    (
        "Retransmit, Remind late",
        header() + retransmit(header() + CONFIRM + b"\x45\x00\x00\x00" + DATA + b"ab") + b"\0\0",
        r"malformed.*Remind must be the first",
    ),
    (
        "too many options",
        header() + CONFIRM * MAX_OPTIONS + FINAL_CONFIRM,
        r"more than 256 options",
    ),
    (
        "oversized",
        header() + DATA + bytes(65_500),
        r"datagram of 65512 bytes exceeds the maximum 65507",
    ),
]


@pytest.mark.parametrize(
    ("data", "message"), [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED]
)
def test_malformed_datagrams_are_explained(data: bytes, message: str) -> None:
    with pytest.raises(RmpDecodeError, match=message):
        decode(data)


def test_the_decode_error_is_a_value_error() -> None:
    assert issubclass(RmpDecodeError, ValueError)


def test_valid_neighbours_of_the_malformed_cases_decode() -> None:
    """The fixtures above are each one fault away from these, so a case cannot pass by failing
    earlier for an unrelated reason."""
    assert decode(DATA_PACKET).data == b"stroke"
    assert decode(header() + CONFIRM + FINAL_CONFIRM).options == (Confirm(7, 0x0A000001),) * 2
    assert decode(header() + retransmit(DATA_PACKET) + b"\0\0").options[0] == Retransmit(
        0x0A000002, decode(DATA_PACKET)
    )
    assert decode(header() + CONFIRM * (MAX_OPTIONS - 1) + FINAL_CONFIRM).p_bit
    assert decode(header(s=True) + b"\xc6\x80\x00\x00").options == (Image(last=True),)
    assert decode(header() + b"\x42\x01\x80\x00" + FINAL_CONFIRM).options[0] == Join(1, True)


PACKET = {"seq": 1, "timestamp": 0}


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: RmpPacket(seq=65_536, timestamp=0), ValueError, "seq 65536 does not fit in 16"),
        (lambda: RmpPacket(seq=1, timestamp=-1), ValueError, "timestamp -1 does not fit"),
        (lambda: RmpPacket(**PACKET, channel=64), ValueError, "channel 64 does not fit in 6"),
        (lambda: RmpPacket(**PACKET, format=64), ValueError, "format 64"),
        (lambda: RmpPacket(**PACKET, options=[Data()], data=b""), TypeError, "must be a tuple"),
        (lambda: RmpPacket(**PACKET, options=(Data(),), data=bytearray()), TypeError, "bytes"),
        (lambda: RmpPacket(**PACKET, options=("x",)), TypeError, "option 0 is a str"),
        (lambda: RmpPacket(**PACKET, options=(Data(),)), ValueError, "needs a data part"),
        (lambda: RmpPacket(**PACKET, data=b"x"), ValueError, "needs a final Data, Image or Intro"),
        (
            lambda: RmpPacket(**PACKET, options=(Confirm(1, 2),), data=b"x"),
            ValueError,
            "needs a final",
        ),
        (
            lambda: RmpPacket(**PACKET, options=(Data(), Confirm(1, 2)), data=b""),
            ValueError,
            "Data must be the final option",
        ),
        (
            lambda: RmpPacket(**PACKET, options=(Confirm(1, 2), Remind(0))),
            ValueError,
            "Remind must be the first",
        ),
        (lambda: RmpPacket(**PACKET, options=(Image(True),), data=b""), ValueError, "disagrees"),
        (lambda: RmpPacket(**PACKET, options=(Join(1), Confirm(1, 2))), ValueError, "only option"),
        (lambda: RmpPacket(**PACKET, options=(Join(1, True), Join(2, True))), ValueError, "2 Join"),
        (lambda: RmpPacket(**PACKET, options=(Confirm(1, 2),) * 257), ValueError, "more than 256"),
        (
            lambda: RmpPacket(**PACKET, options=(Data(),), data=bytes(65_500)),
            ValueError,
            "exceeds 65507",
        ),
        (lambda: Join(256), ValueError, "join_number 256 does not fit in 8 bits"),
        (lambda: Join(1, answer=1), TypeError, "answer must be a bool"),  # type: ignore[arg-type]
        (lambda: Nack(0, 0, 1 << 32), ValueError, "source 4294967296 does not fit in 32"),
        (lambda: Nack(0, True, 0), TypeError, "seq must be an int"),  # type: ignore[arg-type]
        (lambda: NackRange(0, 0, 0, 0), ValueError, "count 0 is not in 1..32768"),
        (lambda: NackRange(0, 0, 0, 32_769), ValueError, "count 32769"),
        (lambda: Remind(-1), ValueError, "remind_number -1"),
        (lambda: Retransmit(1, RmpPacket(**PACKET)), ValueError, "only data packets"),
        (lambda: Retransmit(1, b"raw"), TypeError, "must be an RmpPacket"),  # type: ignore[arg-type]
        (
            lambda: Retransmit(1, RmpPacket(**PACKET, options=(Data(),), data=bytes(32_760))),
            ValueError,
            "exceeds the 15-bit Retransmit length",
        ),
    ],
)
def test_records_refuse_shapes_the_wire_cannot_carry(
    build: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()  # type: ignore[operator]


def test_a_retransmit_cannot_be_built_around_a_retransmit() -> None:
    inner = RmpPacket(seq=1, timestamp=0, options=(Data(),), data=b"x")
    wrapper = RmpPacket(seq=2, timestamp=0, options=(Retransmit(1, inner),))
    with pytest.raises(ValueError, match="cannot itself hold a Retransmit"):
        Retransmit(2, wrapper)


def test_the_largest_retransmittable_packet_fits_exactly() -> None:
    inner = RmpPacket(seq=1, timestamp=0, options=(Data(),), data=bytes(32_767 - 12))
    packet = RmpPacket(seq=2, timestamp=0, options=(Retransmit(1, inner),))
    assert decode(encode(packet)) == packet
