"""Every packet type and modifier of RFC 1301 §2.2.2, with its data part, survives encode and
decode unchanged, and the encoding's size and fixed fields are what the RFC draws."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtp.wire import (
    HEADER_SIZE,
    MAX_DATA_PART,
    MAX_DATAGRAM,
    MODIFIERS,
    MTP_VERSION,
    AcceptanceRecord,
    DataModifier,
    EmptyModifier,
    IsMemberModifier,
    JoinModifier,
    MessageStatus,
    Modifier,
    MtpHeader,
    MtpPacket,
    NakModifier,
    PacketType,
    QuitModifier,
    TokenModifier,
    decode,
    encode,
)
from tests.mtp.strategies import FULL_NAK, FULL_TSAPS, KINDS, packets, packets_of


@pytest.mark.parametrize(
    ("packet_type", "modifier"), KINDS, ids=[f"{t.rfc_name}[{m.name.lower()}]" for t, m in KINDS]
)
@settings(max_examples=60)
@given(data=st.data())
def test_every_kind_round_trips(
    packet_type: PacketType, modifier: Modifier, data: st.DataObject
) -> None:
    packet = data.draw(packets_of(packet_type, modifier))
    wire = encode(packet)
    assert len(wire) == packet.wire_size
    assert wire[:4] == bytes([MTP_VERSION, packet_type, modifier, packet.header.subchannel])
    again = decode(wire)
    assert again == packet
    assert type(again.modifier) is MODIFIERS[packet_type]
    assert encode(again) == wire


@settings(max_examples=300)
@given(packets())
def test_any_packet_round_trips_through_every_buffer_type(packet: MtpPacket) -> None:
    wire = encode(packet)
    assert decode(wire) == packet
    assert decode(bytearray(wire)) == packet
    assert decode(memoryview(wire)) == packet


@settings(max_examples=200)
@given(packets())
def test_the_header_is_the_28_bytes_of_figure_1(packet: MtpPacket) -> None:
    header = packet.header
    record = header.acceptance
    fields = struct.unpack("!BBBBIIBBBBHHIHH", encode(packet)[:HEADER_SIZE])
    vector = fields[7] << 16 | fields[8] << 8 | fields[9]
    assert fields[:7] == (
        1,
        header.packet_type,
        header.modifier,
        header.subchannel,
        header.source,
        header.destination,
        record.sync,
    )
    # §2.2.6: element 0 (message m - 1) is the left-most pair of bits.
    assert [vector >> (22 - 2 * i) & 3 for i in range(12)] == list(record.statuses)
    assert fields[10:] == (
        record.message_seq,
        record.packet_seq,
        header.heartbeat,
        header.window,
        header.retention,
    )


def test_the_rfc_numbers_every_type_and_modifier() -> None:
    # RFC 1301 §2.2.2's table, value for value (with the failover extension's two).
    assert {t.rfc_name: t.value for t in PacketType} == {
        "data": 0,
        "nak": 1,
        "empty": 2,
        "join": 3,
        "quit": 4,
        "token": 5,
        "isMember": 6,
    }
    table = {t.rfc_name: {m.name.lower(): m.value for m in MODIFIERS[t]} for t in PacketType}
    assert table == {
        "data": {"data": 0, "eow": 1, "eom": 2},
        "nak": {"request": 0, "deny": 1},
        # and two of our own for master failover (docs/mtp-wire.md)
        "empty": {"dally": 0, "cancel": 1, "hibernate": 2, "succession": 3, "dissolve": 4},
        "join": {"request": 0, "confirm": 1, "deny": 2},
        "quit": {"request": 0, "confirm": 1},
        "token": {"request": 0, "confirm": 1},
        "isMember": {"request": 0, "confirm": 1, "deny": 2},
    }
    assert [(s.name, s.value) for s in MessageStatus] == [
        ("ACCEPTED", 0),
        ("PENDING", 1),
        ("REJECTED", 2),
    ]
    assert len(KINDS) == 18 + 2  # the RFC's 18 kinds and the failover extension's 2
    assert {DataModifier, NakModifier, EmptyModifier, JoinModifier} <= set(MODIFIERS.values())
    assert {QuitModifier, TokenModifier, IsMemberModifier} <= set(MODIFIERS.values())


def test_the_largest_lists_and_payloads_round_trip() -> None:
    base = dict(source=7, destination=9, heartbeat=200, window=20, retention=3)
    for packet in (
        MtpPacket(MtpHeader(PacketType.NAK, NakModifier.REQUEST, **base), FULL_NAK),
        MtpPacket(MtpHeader(PacketType.TOKEN, TokenModifier.CONFIRM, **base), FULL_TSAPS),
        MtpPacket(MtpHeader(PacketType.DATA, DataModifier.DATA, **base), bytes(MAX_DATA_PART)),
    ):
        wire = encode(packet)
        assert len(wire) <= MAX_DATAGRAM
        assert decode(wire) == packet
    assert len(encode(packet)) == MAX_DATAGRAM


def test_status_of_reads_the_vector_relative_to_the_message_number() -> None:
    statuses = (MessageStatus.PENDING,) + (MessageStatus.ACCEPTED,) * 10 + (MessageStatus.REJECTED,)
    record = AcceptanceRecord(statuses=statuses, message_seq=5)
    assert record.status_of(4) is MessageStatus.PENDING  # m - 1
    assert record.status_of(5) is None  # m itself: not in the vector
    assert record.status_of((5 - 12) & 0xFFFF) is MessageStatus.REJECTED  # m - 12, wrapped
    assert record.status_of((5 - 11) & 0xFFFF) is MessageStatus.ACCEPTED
    assert record.status_of((5 - 13) & 0xFFFF) is None
    assert not record.synchronize and AcceptanceRecord(sync=0x80).synchronize
    assert AcceptanceRecord().is_zero and not record.is_zero
