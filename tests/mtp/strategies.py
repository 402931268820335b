"""Hypothesis strategies for valid MTP packets: every packet type and modifier of RFC 1301
§2.2.2, each with the data part its kind calls for, and headers that obey the RFC's rules
(subchannel only on data, sync flag only on data, destination 0 exactly for join[request])."""

from __future__ import annotations

from ipaddress import IPv4Address

from hypothesis import strategies as st

from coreapi import MAX_INTRODUCTION
from mtp.wire import (
    MAX_NAK_ENTRIES,
    MAX_TSAPS,
    MODIFIERS,
    STATUS_COUNT,
    UNKNOWN_CONNECTION_ID,
    AcceptanceRecord,
    Body,
    JoinData,
    JoinModifier,
    MemberClass,
    MemberConfirm,
    MessageStatus,
    Modifier,
    MtpHeader,
    MtpPacket,
    NakList,
    PacketId,
    PacketType,
    TransportClass,
    TransportType,
    Tsap,
    TsapList,
    body_class,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
connection_ids = st.integers(1, 0xFFFF_FFFF)
payloads = st.binary(max_size=300)

# Every (type, modifier) pair of RFC 1301 §2.2.2, in table order.
KINDS: list[tuple[PacketType, Modifier]] = [
    (packet_type, modifier) for packet_type in PacketType for modifier in MODIFIERS[packet_type]
]

tsaps = st.builds(Tsap, st.builds(IPv4Address, u32), st.integers(1, 0xFFFF), connection_ids)
statuses = st.lists(st.sampled_from(MessageStatus), min_size=STATUS_COUNT, max_size=STATUS_COUNT)
records = st.builds(AcceptanceRecord, u8, statuses.map(tuple), u16, u16)
packet_ids = st.builds(PacketId, u16, u16)


def nak_lists(max_size: int = 40) -> st.SearchStrategy[NakList]:
    return st.lists(packet_ids, min_size=1, max_size=max_size, unique=True).map(
        lambda ids: NakList(tuple(sorted(ids)))
    )


tsap_lists = st.lists(tsaps, min_size=1, max_size=8, unique=True).map(
    lambda items: TsapList(tuple(items))
)


NO_INTRODUCTION = st.just(b"")


def join_data(
    multicast_id: st.SearchStrategy[int], introductions: st.SearchStrategy[bytes] = NO_INTRODUCTION
) -> st.SearchStrategy[JoinData]:
    return st.builds(
        JoinData,
        st.sampled_from(MemberClass),
        st.sampled_from(TransportClass),
        st.sampled_from(TransportType),
        u16,
        u16,
        multicast_id,
        introductions,
    )


def bodies(packet_type: PacketType, modifier: Modifier) -> st.SearchStrategy[Body]:
    expected = body_class(packet_type, modifier)
    if expected is None:
        return st.none()
    if expected is bytes:
        return payloads
    if expected is JoinData:
        confirm = modifier is JoinModifier.CONFIRM
        if modifier is JoinModifier.REQUEST:  # it may carry the joiner's introduction
            return join_data(st.just(UNKNOWN_CONNECTION_ID), st.binary(max_size=MAX_INTRODUCTION))
        return join_data(connection_ids if confirm else st.just(UNKNOWN_CONNECTION_ID))
    if expected is NakList:
        return nak_lists()
    if expected is TsapList:
        return tsap_lists
    if expected is MemberConfirm:
        return st.builds(MemberConfirm, tsaps, u32)
    return tsaps


@st.composite
def headers(draw: st.DrawFn, packet_type: PacketType, modifier: Modifier) -> MtpHeader:
    is_data = packet_type is PacketType.DATA
    join_request = packet_type is PacketType.JOIN and modifier is JoinModifier.REQUEST
    record = draw(records)
    if join_request:
        record = AcceptanceRecord()  # §3.1.1: zeros in all of the acceptance fields
    elif not is_data:
        record = AcceptanceRecord(0, record.statuses, record.message_seq, record.packet_seq)
    return MtpHeader(
        packet_type=packet_type,
        modifier=modifier,
        source=draw(connection_ids),
        destination=UNKNOWN_CONNECTION_ID if join_request else draw(connection_ids),
        heartbeat=draw(u32),
        window=draw(u16),
        retention=draw(u16),
        acceptance=record,
        subchannel=draw(u8) if is_data else 0,
    )


@st.composite
def packets_of(draw: st.DrawFn, packet_type: PacketType, modifier: Modifier) -> MtpPacket:
    return MtpPacket(draw(headers(packet_type, modifier)), draw(bodies(packet_type, modifier)))


@st.composite
def packets(draw: st.DrawFn) -> MtpPacket:
    packet_type, modifier = draw(st.sampled_from(KINDS))
    return draw(packets_of(packet_type, modifier))


# The longest lists, for the limit tests.
FULL_NAK = NakList(tuple(PacketId(i >> 16, i & 0xFFFF) for i in range(MAX_NAK_ENTRIES)))
FULL_TSAPS = TsapList(tuple(Tsap(IPv4Address("239.1.2.3"), 5000, i + 1) for i in range(MAX_TSAPS)))
