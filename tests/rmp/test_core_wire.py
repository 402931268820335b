"""RR-2100 §2.2 and §4 as the core uses them: what it puts on the wire, and what it refuses."""

from __future__ import annotations

import pytest

from rmp.wire import (
    FORMAT_RMP,
    HEADER_SIZE,
    SOURCE_SIZE,
    Confirm,
    Data,
    Image,
    Join,
    Nack,
    NackRange,
    Remind,
    Retransmit,
    RmpPacket,
    encode,
    ntp_middle32,
)
from tests.rmp.core_harness import (
    B,
    C,
    Recorder,
    control_packet,
    data_packet,
    ready_node,
    rmp_session,
)
from whiteboard.sim.network import Impairment
from whiteboard.sim.session import SimSession


@pytest.fixture(scope="module")
def lossy_run() -> tuple[SimSession, Recorder]:
    """Three members drawing over a lossy network, then a fourth joining (an image), with one
    packet kept from a member long enough for NACKs and retransmissions: every packet kind."""
    session, recorder = rmp_session(4, 11, Impairment(loss=0.1, dup=0.05, reorder=0.1))
    for index in range(3):
        session.start(index)
    session.network.run(6.0)
    live = [0, 1, 2]
    session.schedule_draws(60, 20.0, 6.0, live)
    session.network.schedule(7.0, lambda: session.start(3))
    session.network.run(40.0)
    return session, recorder


def test_s2_2_data_packets_carry_one_data_part_after_the_last_option(
    lossy_run: tuple[SimSession, Recorder],
) -> None:
    _, recorder = lossy_run
    data_packets = 0
    for wire in recorder.wires:
        packet = wire.packet
        if packet.data is None:
            continue
        data_packets += 1
        # One data part: exactly one Data or Image option, and it is the last.
        bearers = [o for o in packet.options if isinstance(o, Data | Image)]
        assert len(bearers) == 1 and packet.options[-1] is bearers[0]
        # The data part runs from the end of the last option to the end of the datagram.
        options_end = HEADER_SIZE + SOURCE_SIZE + sum(o.wire_size for o in packet.options)
        assert wire.raw[options_end:] == packet.data
    assert data_packets > 60


def test_s2_2_control_packets_have_no_data_part(lossy_run: tuple[SimSession, Recorder]) -> None:
    _, recorder = lossy_run
    kinds: set[str] = set()
    for wire in recorder.wires:
        packet = wire.packet
        if packet.data is not None:
            kinds.add("image" if isinstance(packet.options[-1], Image) else "data")
            if isinstance(packet.options[0], Remind):
                kinds.add("reminder")
            continue
        assert not any(isinstance(o, Data | Image) for o in packet.options)
        header_and_options = HEADER_SIZE + SOURCE_SIZE + sum(o.wire_size for o in packet.options)
        assert len(wire.raw) == header_and_options
        for option in packet.options:
            kinds.add(type(option).__name__)
            if isinstance(option, Retransmit):
                # §2.7: a retransmission holds a stored *data* packet, not a control packet.
                assert option.packet.data is not None
    # The run exercised every kind of packet the core makes.
    assert {"data", "image", "reminder", "Join", "Confirm", "Retransmit"} <= kinds
    assert kinds & {"Nack", "NackRange"}


def test_s4_every_packet_carries_the_source(lossy_run: tuple[SimSession, Recorder]) -> None:
    session, recorder = lossy_run
    ids = [peer.member_id for peer in session.peers]
    assert recorder.wires
    for wire in recorder.wires:
        assert wire.packet.format == FORMAT_RMP
        assert wire.packet.source == ids[wire.sender]
        for option in wire.packet.options:
            if isinstance(option, Retransmit):
                # The embedded original keeps its own Source, the one the option names (§3).
                assert option.packet.source == option.source != 0
                assert option.source in ids


def _bad_datagrams() -> dict[str, bytes]:
    good = data_packet(B, 1, 5.5)
    raw = encode(good)
    other_format = RmpPacket(
        seq=1, timestamp=ntp_middle32(5.5), options=(Data(),), data=b"audio", format=5, source=B
    )
    no_source = RmpPacket(seq=1, timestamp=ntp_middle32(5.5), options=(Data(),), data=b"anon")
    original = data_packet(B, 1, 5.5)
    forged = RmpPacket(
        seq=0,
        timestamp=ntp_middle32(5.5),
        options=(Retransmit(C, original),),  # claims C's packet, holds B's
        source=C,
    )
    anonymous_original = RmpPacket(
        seq=1, timestamp=ntp_middle32(5.5), options=(Data(),), data=b"anon"
    )
    anonymous_inside = RmpPacket(
        seq=0,
        timestamp=ntp_middle32(5.5),
        options=(Retransmit(B, anonymous_original),),
        source=C,
    )
    return {
        "empty": b"",
        "garbage": b"\xff" * 40,
        "truncated": raw[: -len(good.data or b"") - 3],
        "rtp_version_3": bytes([raw[0] | 0x80]) + raw[1:],
        "another_rtp_format": encode(other_format),
        "no_source": encode(no_source),
        "retransmit_of_another_source": encode(forged),
        "retransmit_without_source_inside": encode(anonymous_inside),
    }


@pytest.mark.parametrize("name", sorted(_bad_datagrams()))
def test_s4_malformed_datagrams_are_counted_and_dropped_without_raising(name: str) -> None:
    node = ready_node()
    before = node.counter("malformed_dropped")
    node.receive(_bad_datagrams()[name], 5.5, addr=("10.0.0.178", 7000))
    assert node.counter("malformed_dropped") == before + 1
    assert node.deliveries() == []
    assert B not in node.core.stations  # nothing of B's was taken in
    # The core carries on: a good packet afterwards is delivered.
    node.receive(data_packet(B, 1, 5.6), 5.6)
    assert [d.origin for d in node.deliveries()] == [B]
    assert node.counter("malformed_dropped") == before + 1


def test_s4_control_options_of_each_kind_are_accepted_from_a_peer() -> None:
    """The counterpart of the test above: well-formed control packets are not 'malformed'."""
    node = ready_node()
    node.receive(data_packet(B, 1, 5.5), 5.5)
    for option in (Confirm(1, B), Nack(0, 9, C), NackRange(0, 3, C, 2), Join(3)):
        node.receive(
            RmpPacket(seq=1, timestamp=ntp_middle32(5.6), options=(option,), source=C), 5.6
        )
    assert node.counter("malformed_dropped") == 0


def test_hostile_datagrams_cost_bounded_work_and_never_raise() -> None:
    """A Confirm naming a far-off number, NackRanges of 32,768 packets, phantom sources and an
    oversized data packet: counted or ignored, never an exception or a skipped stream."""
    node = ready_node()
    node.receive(data_packet(B, 1, 5.5), 5.5)
    node.receive(data_packet(C, 1, 5.6, confirms=[Confirm(30_000, B)]), 5.6)
    station = node.core.stations.get(B)
    assert station is not None and station.last_valid == 1  # not skipped ahead
    assert len(station.missing) <= 4096
    nacks = tuple(NackRange(0, 0, B, 32768) for _ in range(100))
    node.receive(control_packet(C, 1, 5.7, *nacks), 5.7)
    phantoms = [Confirm(5, 0x7000_0000 + k) for k in range(200)]
    node.receive(data_packet(C, 2, 5.8, confirms=phantoms), 5.8)
    assert len(node.core.stations) == 2
    big = RmpPacket(seq=2, timestamp=0, options=(Data(),), data=b"x" * 1500, source=B)
    before = node.core.counters()["malformed_dropped"]
    node.receive(big, 5.9)
    assert node.core.counters()["malformed_dropped"] == before + 1
    node.run_until(60.0)  # timers over all of it: no exception
    node.receive(data_packet(B, 2, 60.1), 60.1)
    assert station.last_valid == 2  # B's real packets still flow
