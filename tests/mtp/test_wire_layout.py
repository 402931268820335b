"""Byte-exact encodings, computed by hand from the diagrams in docs/mtp-wire.md. Each hex string
below also appears verbatim in that document's worked examples, and the document's table of
types and modifiers is checked against the enums, so document, tests and code cannot drift."""

from __future__ import annotations

from ipaddress import IPv4Address
from pathlib import Path

import pytest

from mtp.wire import (
    MODIFIERS,
    AcceptanceRecord,
    DataModifier,
    EmptyModifier,
    IsMemberModifier,
    JoinData,
    JoinModifier,
    MemberClass,
    MemberConfirm,
    MessageStatus,
    MtpHeader,
    MtpPacket,
    NakList,
    NakModifier,
    PacketId,
    PacketType,
    QuitModifier,
    TokenModifier,
    Tsap,
    TsapList,
    decode,
    encode,
    kind_name,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "mtp-wire.md"

A, P, R = MessageStatus.ACCEPTED, MessageStatus.PENDING, MessageStatus.REJECTED
QOS = dict(heartbeat=200, window=20, retention=3)  # 0x000000c8, 0x0014, 0x0003
PRODUCER = 0x0A0B0C0D  # a producer's unicast connection id
JOINER = 7
MASTER = 1
WEB = 0xBEEF  # the web's multicast connection id
ME = Tsap(IPv4Address("10.0.0.7"), 40000, JOINER)  # 0a 00 00 07, 9c 40, 00 00, 00 00 00 07
GROUP = Tsap(IPv4Address("224.0.1.9"), 5000, WEB)  # e0 00 01 09, 13 88, 00 00, 00 00 be ef
WISHES = JoinData(MemberClass.PRODUCER, min_throughput=64, max_data_unit=1400)


def record(message: int, *statuses: MessageStatus, sync: int = 0) -> AcceptanceRecord:
    return AcceptanceRecord(sync, statuses + (A,) * (12 - len(statuses)), message, 0)


EXAMPLES: list[tuple[str, MtpPacket, str]] = [
    # Statuses pending, accepted, rejected, then 9 x accepted: 01 00 10 00 | 0 ... -> 48 00 00.
    (
        "data[eom]",
        MtpPacket(
            MtpHeader(
                PacketType.DATA,
                DataModifier.EOM,
                PRODUCER,
                0x11223344,
                acceptance=AcceptanceRecord(0, (P, A, R) + (A,) * 9, 5, 3),
                subchannel=2,
                **QOS,
            ),
            b"hi",
        ),
        "01 00 02 02 0a 0b 0c 0d 11 22 33 44 00 48 00 00 00 05 00 03 00 00 00 c8 00 14 00 03 68 69",
    ),
    (
        "data[eow] with the sync flag",
        MtpPacket(
            MtpHeader(
                PacketType.DATA, DataModifier.EOW, JOINER, WEB, acceptance=record(6, sync=1), **QOS
            ),
            b"x",
        ),
        "01 00 01 00 00 00 00 07 00 00 be ef 01 00 00 00 00 06 00 00 00 00 00 c8 00 14 00 03 78",
    ),
    (
        "join[request]",
        MtpPacket(MtpHeader(PacketType.JOIN, JoinModifier.REQUEST, JOINER, 0, **QOS), WISHES),
        "01 03 00 00 00 00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 c8 00 14 00 03 "
        "01 00 00 00 00 40 05 78 00 00 00 00",
    ),
    (
        "join[confirm]",
        MtpPacket(
            MtpHeader(
                PacketType.JOIN, JoinModifier.CONFIRM, MASTER, JOINER, acceptance=record(9), **QOS
            ),
            JoinData(MemberClass.PRODUCER, min_throughput=64, max_data_unit=1400, multicast_id=WEB),
        ),
        "01 03 01 00 00 00 00 01 00 00 00 07 00 00 00 00 00 09 00 00 00 00 00 c8 00 14 00 03 "
        "01 00 00 00 00 40 05 78 00 00 be ef",
    ),
    (
        "nak[request]",
        MtpPacket(
            MtpHeader(
                PacketType.NAK, NakModifier.REQUEST, JOINER, PRODUCER, acceptance=record(6), **QOS
            ),
            NakList((PacketId(5, 1), PacketId(5, 2), PacketId(6, 0))),
        ),
        "01 01 00 00 00 00 00 07 0a 0b 0c 0d 00 00 00 00 00 06 00 00 00 00 00 c8 00 14 00 03 "
        "00 05 00 01 00 05 00 02 00 06 00 00",
    ),
    # The grant of message 10: message 9 (element 0) is pending -> 01 00 ... -> 40 00 00.
    (
        "token[confirm]",
        MtpPacket(
            MtpHeader(
                PacketType.TOKEN,
                TokenModifier.CONFIRM,
                MASTER,
                JOINER,
                acceptance=record(10, P),
                **QOS,
            ),
            TsapList((GROUP,)),
        ),
        "01 05 01 00 00 00 00 01 00 00 00 07 00 40 00 00 00 0a 00 00 00 00 00 c8 00 14 00 03 "
        "e0 00 01 09 13 88 00 00 00 00 be ef",
    ),
    (
        "empty[hibernate]",
        MtpPacket(
            MtpHeader(
                PacketType.EMPTY,
                EmptyModifier.HIBERNATE,
                MASTER,
                WEB,
                heartbeat=2000,
                window=20,
                retention=3,
                acceptance=record(10),
            )
        ),
        "01 02 02 00 00 00 00 01 00 00 be ef 00 00 00 00 00 0a 00 00 00 00 07 d0 00 14 00 03",
    ),
    (
        "isMember[confirm]",
        MtpPacket(
            MtpHeader(
                PacketType.IS_MEMBER,
                IsMemberModifier.CONFIRM,
                MASTER,
                PRODUCER,
                acceptance=record(10),
                **QOS,
            ),
            MemberConfirm(ME, 1500),
        ),
        "01 06 01 00 00 00 00 01 0a 0b 0c 0d 00 00 00 00 00 0a 00 00 00 00 00 c8 00 14 00 03 "
        "0a 00 00 07 9c 40 00 00 00 00 00 07 00 00 05 dc",
    ),
    (
        "quit[request]",
        MtpPacket(
            MtpHeader(
                PacketType.QUIT, QuitModifier.REQUEST, JOINER, MASTER, acceptance=record(10), **QOS
            ),
            ME,
        ),
        "01 04 00 00 00 00 00 07 00 00 00 01 00 00 00 00 00 0a 00 00 00 00 00 c8 00 14 00 03 "
        "0a 00 00 07 9c 40 00 00 00 00 00 07",
    ),
]


@pytest.mark.parametrize(
    ("packet", "wire"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES]
)
def test_worked_examples_encode_and_decode_byte_for_byte(packet: MtpPacket, wire: str) -> None:
    assert encode(packet).hex(" ") == wire
    assert decode(bytes.fromhex(wire)) == packet


@pytest.mark.parametrize("wire", [e[2] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_worked_examples_appear_verbatim_in_the_document(wire: str) -> None:
    assert wire in DOC.read_text(encoding="utf-8")


def test_the_document_tables_every_kind_with_its_values() -> None:
    text = DOC.read_text(encoding="utf-8")
    for packet_type in PacketType:
        for modifier in MODIFIERS[packet_type]:
            row = (
                f"| `{kind_name(packet_type, modifier)}` | {packet_type.value} | {modifier.value} |"
            )
            assert row in text, row
