"""Malformed datagrams are refused with a message that says what is wrong (and where); records
refuse to be built in a shape the wire cannot carry or the RFC forbids."""

from __future__ import annotations

import struct
from collections.abc import Callable
from ipaddress import IPv4Address

import pytest

from coreapi import MAX_INTRODUCTION
from mtp.wire import (
    MAX_DATA_PART,
    MAX_NAK_ENTRIES,
    MAX_TSAPS,
    AcceptanceRecord,
    DataModifier,
    EmptyModifier,
    IsMemberModifier,
    JoinData,
    JoinModifier,
    MemberClass,
    MemberConfirm,
    MessageStatus,
    MtpDecodeError,
    MtpHeader,
    MtpPacket,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    QuitModifier,
    TokenModifier,
    TransportClass,
    TransportType,
    Tsap,
    TsapList,
    decode,
    encode,
)


def raw(
    packet_type: int = 0,
    modifier: int = 0,
    *,
    version: int = 1,
    subchannel: int = 0,
    source: int = 7,
    destination: int = 9,
    sync: int = 0,
    vector: int = 0,
    message_seq: int = 0,
    packet_seq: int = 0,
) -> bytes:
    """A 28-byte header: heartbeat 200 ms, window 20, retention 3."""
    return struct.pack(
        "!BBBBIIIHHIHH",
        version,
        packet_type,
        modifier,
        subchannel,
        source,
        destination,
        sync << 24 | vector,
        message_seq,
        packet_seq,
        200,
        20,
        3,
    )


def tsap(address: int = 0x0A000007, port: int = 40000, reserved: int = 0, cid: int = 7) -> bytes:
    return struct.pack("!IHHI", address, port, reserved, cid)


def join(member: int = 1, tclass: int = 0, ttype: int = 0, reserved: int = 0, mc: int = 0) -> bytes:
    return struct.pack("!BBBBHHI", member, tclass, ttype, reserved, 64, 1400, mc)


def nak(*pairs: tuple[int, int]) -> bytes:
    return b"".join(struct.pack("!HH", m, p) for m, p in pairs)


JOIN_REQUEST = raw(3, 0, destination=0)
NAK_REQUEST = raw(1, 0)
TOKEN_CONFIRM = raw(5, 1)

MALFORMED: list[tuple[str, bytes, str]] = [
    ("empty", b"", r"^0 bytes is shorter than the 28-byte MTP header$"),
    ("short", raw()[:27], r"^27 bytes is shorter than the 28-byte MTP header$"),
    ("version 2", raw(version=2), r"^MTP version 2; this is version 1 \(RFC 1301 §2\.2\.1\)$"),
    ("version 0", raw(version=0), r"^MTP version 0;"),
    (
        "type 7",
        raw(7),
        r"^packet type 7 is undefined; RFC 1301 §2\.2\.2 defines data\(0\), nak\(1\), "
        r"empty\(2\), join\(3\), quit\(4\), token\(5\), isMember\(6\)$",
    ),
    ("type 255", raw(255), r"^packet type 255 is undefined"),
    (
        "data modifier 3",
        raw(0, 3),
        r"^modifier 3 is undefined for packet type data\(0\); RFC 1301 §2\.2\.2 defines "
        r"data\(0\), eow\(1\), eom\(2\)$",
    ),
    ("nak modifier 2", raw(1, 2), r"modifier 2 is undefined for packet type nak\(1\);"),
    ("empty modifier 5", raw(2, 5), r"modifier 5 is undefined for packet type empty\(2\);"),
    (
        "quit[deny] does not exist",
        raw(4, 2) + tsap(),
        r"modifier 2 is undefined for packet type quit\(4\); .* request\(0\), confirm\(1\)$",
    ),
    ("token modifier 2", raw(5, 2), r"modifier 2 is undefined for packet type token\(5\)"),
    ("isMember modifier 3", raw(6, 3), r"undefined for packet type isMember\(6\)"),
    (
        "status 3, first element",
        raw(vector=0b11 << 22),
        r"^message status 3 at element 0 of the acceptance record \(offset 13\) is undefined; "
        r"RFC 1301 §2\.2\.6 defines accepted\(0\), pending\(1\), rejected\(2\)$",
    ),
    ("status 3, last element", raw(vector=0b11), r"status 3 at element 11 .*\(offset 15\)"),
    (
        "subchannel on a control packet",
        NAK_REQUEST[:3] + b"\x05" + NAK_REQUEST[4:] + nak((1, 1)),
        r"^nak\[request\] has subchannel 5; packets other than data must have subchannel 0 "
        r"\(RFC 1301 §2\.2\.3\)$",
    ),
    (
        "source 0",
        raw(source=0),
        r"^data\[data\] has source connection id 0; every packet must carry its sender's",
    ),
    (
        "destination 0 outside join[request]",
        raw(2, 1, destination=0),
        r"^empty\[cancel\] has destination connection id 0 \(unknown\), which is used only by "
        r"join\[request\] \(RFC 1301 §2\.2\.5\)$",
    ),
    (
        "join[request] not to the unknown TSAP",
        raw(3, 0) + join(),
        r"^join\[request\] has destination connection id 0x9; it goes to the unknown TSAP",
    ),
    (
        "sync flag on a control packet",
        raw(2, 0, sync=0x80),
        r"^empty\[dally\] has synchronisation flag 0x80; control packets carry 0 "
        r"\(RFC 1301 §2\.2\.6\)$",
    ),
    (
        "join[request] with acceptance fields",
        raw(3, 0, destination=0, message_seq=1) + join(),
        r"^join\[request\] must contain zeros in all of the acceptance fields",
    ),
    (
        "join[request] with a status",
        raw(3, 0, destination=0, vector=1) + join(),
        r"^join\[request\] must contain zeros in all of the acceptance fields",
    ),
    (
        "bytes after empty",
        raw(2, 2) + b"\x00\x00\x00\x00",
        r"^empty\[hibernate\] has no data part, yet 4 bytes follow the header at offset 28$",
    ),
    ("bytes after token[request]", raw(5, 0) + b"x", r"^token\[request\] has no data part"),
    (
        "nak with no entries",
        NAK_REQUEST,
        r"^nak\[request\] data part of 0 bytes is not a list of 1\.\.4096 4-byte "
        r"\(message, packet\) sequence number pairs$",
    ),
    ("nak of 6 bytes", raw(1, 1) + b"\x00" * 6, r"^nak\[deny\] data part of 6 bytes"),
    (
        "nak not ascending",
        NAK_REQUEST + nak((5, 2), (5, 1)),
        r"^nak entries must be strictly ascending \(RFC 1301 §3\.2\.4\): entry 1 \(5, 1\) "
        r"does not follow \(5, 2\)$",
    ),
    (
        "nak with a duplicate",
        NAK_REQUEST + nak((1, 0), (2, 3), (2, 3)),
        r"entry 2 \(2, 3\) does not follow \(2, 3\)",
    ),
    (
        "nak message order first",
        NAK_REQUEST + nak((6, 0), (5, 9)),
        r"entry 1 \(5, 9\) does not follow \(6, 0\)",
    ),
    (
        "nak too long",
        NAK_REQUEST + nak(*((0, i) for i in range(MAX_NAK_ENTRIES + 1))),
        r"data part of 16388 bytes is not a list of 1\.\.4096",
    ),
    (
        "join data too short",
        JOIN_REQUEST + join()[:8],
        r"^join\[request\] data part is 8 bytes; its join data \(RFC 1301 Figure 3\) is 12 bytes$",
    ),
    (
        "join data too long",
        JOIN_REQUEST + join() + bytes(MAX_INTRODUCTION + 1),
        rf"data part is {12 + MAX_INTRODUCTION + 1} bytes; .* the introduction after it at most",
    ),
    ("join without data", JOIN_REQUEST, r"^join\[request\] data part is 0 bytes"),
    (
        "join confirm with an introduction",
        raw(3, 1) + join(mc=9) + b"Ada",
        r"^join\[confirm\] data part is 15 bytes; its join data \(RFC 1301 Figure 3\) is 12",
    ),
    (
        "join reserved byte",
        JOIN_REQUEST + join(reserved=1),
        r"^join\[request\]: the reserved byte of the join data \(offset 31\) is 0x01; reserved "
        r"fields must be zero",
    ),
    (
        "member class 3",
        JOIN_REQUEST + join(member=3),
        r"^member class 3 is undefined; RFC 1301 §3\.1\.1 defines master\(0\), producer\(1\), "
        r"consumer\(2\)$",
    ),
    (
        "transport class 2",
        JOIN_REQUEST + join(tclass=2),
        r"^transport class 2 is undefined; .* reliable\(0\), unreliable\(1\)$",
    ),
    (
        "transport type 2",
        JOIN_REQUEST + join(ttype=2),
        r"^transport type 2 is undefined; .* NxN\(0\), 1xN\(1\)$",
    ),
    (
        "join[request] names a multicast id",
        JOIN_REQUEST + join(mc=5),
        r"^join\[request\] carries multicast connection id 0x5; only join\[confirm\] tells it",
    ),
    (
        "join[deny] names a multicast id",
        raw(3, 2) + join(mc=5),
        r"^join\[deny\] carries multicast connection id 0x5",
    ),
    (
        "join[confirm] without a multicast id",
        raw(3, 1) + join(mc=0),
        r"^join\[confirm\] must carry the web's multicast connection id, not 0",
    ),
    (
        "token[confirm] without TSAPs",
        TOKEN_CONFIRM,
        r"^token\[confirm\] data part of 0 bytes is not a list of 1\.\.256 12-byte multicast "
        r"TSAPs$",
    ),
    ("token[confirm] of 13 bytes", TOKEN_CONFIRM + tsap() + b"\x00", r"data part of 13 bytes"),
    (
        "token[confirm] too long",
        TOKEN_CONFIRM + tsap() * (MAX_TSAPS + 1),
        r"data part of 3084 bytes is not a list of 1\.\.256",
    ),
    (
        "token[confirm] with a duplicate",
        TOKEN_CONFIRM + tsap() + tsap(),
        r"^a token\[confirm\] lists the same multicast TSAP twice$",
    ),
    (
        "TSAP reserved field",
        TOKEN_CONFIRM + tsap() + tsap(reserved=1, cid=8),
        r"^multicast TSAP 1 at offset 40: reserved field is 0x0001; reserved fields must be zero",
    ),
    (
        "TSAP port 0",
        raw(4, 0) + tsap(port=0),
        r"^target TSAP at offset 28: TSAP 10\.0\.0\.7:0/0x7 has port 0",
    ),
    (
        "TSAP connection id 0",
        raw(6, 0) + tsap(cid=0),
        r"^target TSAP at offset 28: TSAP 10\.0\.0\.7:40000/0x0 has the unknown connection id 0",
    ),
    (
        "quit without target",
        raw(4, 1),
        r"^quit\[confirm\] data part is 0 bytes; its target TSAP is 12 bytes$",
    ),
    ("quit target short", raw(4, 0) + tsap()[:11], r"^quit\[request\] data part is 11 bytes"),
    (
        "isMember[confirm] without credibility",
        raw(6, 1) + tsap(),
        r"^isMember\[confirm\] data part is 12 bytes; its target TSAP and credibility is 16 "
        r"bytes$",
    ),
    (
        "isMember[deny] with credibility",
        raw(6, 2) + tsap() + b"\x00\x00\x00\x01",
        r"^isMember\[deny\] data part is 16 bytes; its target TSAP is 12 bytes$",
    ),
    (
        "too long for UDP",
        raw() + bytes(MAX_DATA_PART + 1),
        r"^datagram of 65508 bytes exceeds the maximum 65507$",
    ),
]


@pytest.mark.parametrize(
    ("data", "message"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_malformed_datagrams_are_refused_with_a_clear_message(data: bytes, message: str) -> None:
    with pytest.raises(MtpDecodeError, match=message):
        decode(data)


def test_the_error_is_a_value_error() -> None:
    assert issubclass(MtpDecodeError, ValueError)


def test_the_helpers_build_valid_packets_when_nothing_is_wrong() -> None:
    # The malformed cases above differ from these in the one way they name.
    assert decode(raw()).body == b""
    assert decode(JOIN_REQUEST + join()).body == JoinData(
        MemberClass.PRODUCER, TransportClass.RELIABLE, TransportType.N_X_N, 64, 1400, 0
    )
    assert decode(raw(3, 1) + join(mc=5)).body.multicast_id == 5
    assert decode(NAK_REQUEST + nak((5, 1), (5, 2), (6, 0))).body.packets[2] == PacketId(6, 0)
    assert decode(TOKEN_CONFIRM + tsap() + tsap(cid=8)).body.tsaps[1].connection_id == 8
    assert decode(raw(6, 1) + tsap() + b"\x00\x00\x05\xdc").body.credibility_ms == 1500
    assert decode(raw(sync=0xFF, vector=0xAAAAAA)).header.acceptance.statuses == (
        (MessageStatus.REJECTED,) * 12
    )


# --- records refuse invalid shapes ------------------------------------------------------------

T = Tsap(IPv4Address("10.0.0.7"), 40000, 7)
H = dict(source=7, destination=9, heartbeat=200, window=20, retention=3)


def header(packet_type: PacketType, modifier: object, **changes: object) -> MtpHeader:
    return MtpHeader(packet_type, modifier, **{**H, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: header(PacketType.DATA, NakModifier.DENY), TypeError, "must be a DataModifier"),
        (lambda: header(PacketType.QUIT, 1), TypeError, "must be a QuitModifier"),
        (lambda: header(3, JoinModifier.DENY), TypeError, "packet type must be a PacketType"),
        (lambda: header(PacketType.DATA, DataModifier.EOM, window=70000), ValueError, "16 bits"),
        (lambda: header(PacketType.DATA, DataModifier.EOM, source=-1), ValueError, "32 bits"),
        (lambda: header(PacketType.DATA, DataModifier.EOM, heartbeat=1.5), TypeError, "an int"),
        (lambda: header(PacketType.EMPTY, EmptyModifier.DALLY, subchannel=1), ValueError, "§2.2.3"),
        (lambda: header(PacketType.TOKEN, TokenModifier.REQUEST, destination=0), ValueError, "0"),
        (lambda: AcceptanceRecord(statuses=(MessageStatus.ACCEPTED,) * 11), ValueError, "11 sta"),
        (lambda: AcceptanceRecord(statuses=(0,) * 12), TypeError, "must be a MessageStatus"),
        (lambda: AcceptanceRecord(statuses=[MessageStatus.ACCEPTED] * 12), TypeError, "tuple"),
        (lambda: AcceptanceRecord(sync=256), ValueError, "sync flag 256 does not fit in 8 bits"),
        (lambda: Tsap("10.0.0.7", 1, 1), TypeError, "must be an IPv4Address"),  # type: ignore[arg-type]
        (lambda: JoinData(1), TypeError, "member class must be a MemberClass"),  # type: ignore[arg-type]
        (lambda: NakList(()), ValueError, "names 0 packets"),
        (lambda: NakList((PacketId(1, 1), PacketId(0, 9))), ValueError, "strictly ascending"),
        (lambda: NakList(((1, 1),)), TypeError, "must be a PacketId"),  # type: ignore[arg-type]
        (lambda: TsapList(()), ValueError, "lists 0 multicast TSAPs"),
        (lambda: TsapList((T, T)), ValueError, "twice"),
        (lambda: MemberConfirm(T, 1 << 32), ValueError, "credibility 4294967296"),
        (
            lambda: MtpPacket(header(PacketType.EMPTY, EmptyModifier.DALLY), b""),
            ValueError,
            r"empty\[dally\] has no data part, yet body is b''",
        ),
        (
            lambda: MtpPacket(header(PacketType.DATA, DataModifier.DATA), bytearray(b"x")),
            TypeError,
            r"the data part of data\[data\] is a bytes, not bytearray",
        ),
        (
            lambda: MtpPacket(header(PacketType.IS_MEMBER, IsMemberModifier.CONFIRM), T),
            TypeError,
            "is a MemberConfirm, not Tsap",
        ),
        (
            lambda: MtpPacket(header(PacketType.QUIT, QuitModifier.REQUEST)),
            TypeError,
            r"the data part of quit\[request\] is a Tsap, not NoneType",
        ),
        (
            lambda: MtpPacket(header(PacketType.DATA, DataModifier.DATA), bytes(MAX_DATA_PART + 1)),
            ValueError,
            "packet of 65508 bytes exceeds 65507",
        ),
    ],
)
def test_records_refuse_invalid_shapes(
    build: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()


def test_encode_output_is_accepted_by_decode_for_a_maximal_packet() -> None:
    packet = MtpPacket(header(PacketType.DATA, DataModifier.DATA), bytes(MAX_DATA_PART))
    assert decode(encode(packet)) == packet
