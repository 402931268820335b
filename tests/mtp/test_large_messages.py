"""Large messages (issue 20, mtp/bounds.py): a payload of up to MAX_MESSAGE bytes travels as one
MTP message of many packets (RFC 1301 §3.2.2), within bounds on what members hold."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtp.bounds import (
    MAX_BOARD_MESSAGE,
    MAX_INCOMING_BYTES,
    MAX_MESSAGE,
    MAX_MESSAGE_BYTES,
    MAX_PACKETS_PER_MESSAGE,
    MAX_QUEUED_BYTES,
    MAX_SOURCE_BYTES,
    MIN_DATA_UNIT,
    PayloadQueue,
    message_limit,
)
from mtp.framing import encode_named_batch, split
from mtp.params import params_from_mapping
from mtp.wire import encode
from tests.mtp.core_harness import (
    P1,
    addr_of,
    core_of,
    data,
    joined_member,
    mtp_session,
    run_until,
    start_all,
)
from whiteboard.sim.network import Impairment
from whiteboard.sim.session import Peer, SimSession
from whiteboard.transport.events import BoardStateReceived, BoardStateRequested, Delivered, Event

LAN: dict[str, object] = {"profile": "lan", "nak_spread": 0.5}  # lan as it runs
MIB = 1 << 20


def _capture(session: SimSession) -> dict[int, list[bytes]]:
    """What each peer delivers, kept here (random bytes are no whiteboard op)."""
    got: dict[int, list[bytes]] = {peer.index: [] for peer in session.peers}
    handle = session._handle

    def capturing(peer: Peer, event: Event) -> None:
        if isinstance(event, Delivered):
            got[peer.index].append(event.payload)
        else:
            handle(peer, event)

    session._handle = capturing  # type: ignore[method-assign]
    return got


def test_a_four_mib_payload_fits_one_message_at_the_smallest_unit() -> None:
    """§2.2.6: 16-bit packet numbers; at MIN_DATA_UNIT one MAX_MESSAGE payload (named, framed)
    takes 32,769 packets; one byte of unit less is refused as a parameter."""
    body = encode_named_batch(7, [(1.0, bytes(MAX_MESSAGE))])
    assert len(body) == MAX_MESSAGE_BYTES
    assert len(split(body, MIN_DATA_UNIT)) == 32_769 <= MAX_PACKETS_PER_MESSAGE
    assert message_limit(MIN_DATA_UNIT) == MAX_MESSAGE
    params_from_mapping({"max_data_unit": MIN_DATA_UNIT})
    with pytest.raises(ValueError, match="max_data_unit must be from 128"):
        params_from_mapping({"max_data_unit": MIN_DATA_UNIT - 1})
    # A foreign web at 64 bytes: send takes what 65,536 packets hold.
    assert message_limit(64) == MAX_PACKETS_PER_MESSAGE * 64 - 16


@pytest.mark.parametrize(("loss", "within"), [(0.0, 0.2), (0.05, 0.5)])
def test_one_mib_reaches_four_members_once_byte_identical(loss: float, within: float) -> None:
    """A 1 MiB random payload between small ones, lan, 4 members: every member delivers all
    three once, in order, the large one byte-identical, within ``within`` simulated seconds
    (measured: 104 ms lossless, 231 ms at 5% loss, docs/mtp.md "Large messages")."""
    session, recorder = mtp_session(4, 7, Impairment(loss=loss), params=LAN)
    got = _capture(session)
    start_all(session)
    payload = random.Random(20).randbytes(MIB)
    driver = session.peers[1].station.driver
    assert driver is not None
    start, mark = session.network.now, len(recorder.wires)
    driver.send(b"small before")
    driver.send(payload)
    driver.send(b"small after")
    run_until(session, lambda: all(b"small after" in seen for seen in got.values()), 5.0)
    for index, seen in got.items():
        assert [p if len(p) < 100 else len(p) for p in seen[-3:]] == [
            b"small before",
            MIB,
            b"small after",
        ], index
        assert seen.count(payload) == 1 and seen[-2] == payload, index
    elapsed = session.network.now - start
    data_packets = [w for w in recorder.wires[mark:] if w.name.startswith("data")]
    print(
        f"\n1 MiB, lan, 4 members, loss {loss}: {elapsed * 1000:.0f} ms, {len(data_packets)} data"
    )
    assert elapsed < within
    first = {
        (w.packet.header.acceptance.message_seq, w.packet.header.acceptance.packet_seq)
        for w in data_packets
    }
    assert len(first) == -(-(MIB + 2 * 12 + len(b"small before")) // 1400)  # 750: one message
    master = core_of(session, 0)._master
    assert master is not None
    assert master.repair_bytes == sum(m.size for m in master.repair_cache.values())
    if not loss:
        assert len(data_packets) == len(first)  # nothing sent twice
        assert session.counters_total()["nacks_sent"] == 0


def test_a_nak_asks_for_a_window_of_packets_in_several_datagrams() -> None:
    """A receiver that lost 600 packets of one message asks, per heartbeat, for as many as the
    producer may send in one (window 512, §3.2.2): two naks of at most 300 entries."""
    session, recorder = mtp_session(3, 3, params={**LAN, "window": 512})
    got = _capture(session)
    start_all(session)
    lost: set[int] = set()

    def first_600_to_2(sender: int, receiver: int, packet: object) -> bool:
        seq = getattr(getattr(packet, "header", None), "acceptance", None)
        name = getattr(packet, "name", "")
        if receiver != 2 or sender != 1 or not name.startswith("data") or seq is None:
            return False
        if seq.packet_seq < 600 and seq.packet_seq not in lost:
            lost.add(seq.packet_seq)
            return True
        return False

    recorder.drop(first_600_to_2)
    payload = random.Random(3).randbytes(MIB)
    driver = session.peers[1].station.driver
    assert driver is not None
    driver.send(payload)
    run_until(session, lambda: all(payload in seen for seen in got.values()), 5.0)
    naks = [w for w in recorder.sent_by(2) if w.name == "nak[request]"]
    sizes = [len(w.packet.body.packets) for w in naks]  # type: ignore[union-attr]
    assert sizes[:2] == [300, 212] and naks[0].at == naks[1].at, sizes


def test_a_forged_huge_message_is_refused_and_counted() -> None:
    """A stranger's data, as much as it likes: at most MAX_MESSAGE_BYTES of one message and
    MAX_SOURCE_BYTES of one producer are held; the rest is dropped and counted."""
    node = joined_member(P1, role="consumer")
    core = node.core
    body = bytes(1400)
    forger = 0xF0F0
    sent = 0
    for number in (1, 2, 3):  # not the message delivery waits for (0)
        for index in range(3100):
            raw = encode(data(forger, number, index, body))
            core.receive_datagram(raw, addr_of(forger), 0.05)
            sent += 1
    receiver = core._receiver
    held = receiver.holdings.of(forger)
    sizes = [receiver.incoming[n].size for n in (1, 2, 3)]
    print(f"\nforged: {sent} packets sent, {sizes} bytes held per message")
    assert max(sizes) <= MAX_MESSAGE_BYTES and held <= MAX_SOURCE_BYTES
    assert held == sum(sizes) == receiver.incoming_bytes
    assert node.counter("oversize_dropped") == sent - held // 1400 > 0
    # The message delivery waits for is held past the producer's bound, within its own.
    for index in range(3100):
        core.receive_datagram(encode(data(forger, 0, index, body)), addr_of(forger), 0.06)
    assert MAX_MESSAGE_BYTES - 1400 < receiver.incoming[0].size <= MAX_MESSAGE_BYTES
    assert receiver.incoming_bytes <= MAX_INCOMING_BYTES + MAX_MESSAGE_BYTES


def test_the_send_queue_is_bounded_in_bytes() -> None:
    node = joined_member(P1)  # no token comes: everything stays queued
    payload = bytes(MAX_MESSAGE)
    for i in range(MAX_QUEUED_BYTES // MAX_MESSAGE):
        node.send(payload, 0.1 + i / 1000)
    with pytest.raises(RuntimeError, match=r"send queue is full: .* bound of 67108864 bytes"):
        node.send(b"one more", 0.2)
    assert node.core._sender.queue.bytes == MAX_QUEUED_BYTES


def test_a_twenty_mib_board_is_given_to_a_joiner() -> None:
    """TR §3.4: the board goes as one message of ~15,000 packets (lan, 1,400 bytes): 2.9 s."""
    session, _ = mtp_session(3, 3, params=LAN)
    state = random.Random(1).randbytes(20 * MIB)
    received: list[bytes] = []
    handle = session._handle
    joining = [False]

    def with_board(peer: Peer, event: Event) -> None:
        driver = peer.station.driver
        if isinstance(event, BoardStateRequested) and joining[0] and driver is not None:
            driver.provide_board_state(event.request, state)
        elif isinstance(event, BoardStateReceived) and peer.index == 2:
            received.append(event.state)
        else:
            handle(peer, event)

    session._handle = with_board  # type: ignore[method-assign]
    session.start(0)
    session.start(1)
    run_until(session, lambda: session.peers[1].ready, 10.0)
    joining[0] = True
    session.start(2)
    start = session.network.now
    run_until(session, lambda: bool(received), 10.0)
    assert received == [state] and session.network.now - start < 4.0
    assert len(state) < MAX_BOARD_MESSAGE


@given(st.lists(st.tuples(st.booleans(), st.binary(max_size=64)), max_size=40))
def test_the_payload_queue_counts_its_bytes(actions: list[tuple[bool, bytes]]) -> None:
    queue = PayloadQueue()
    model: list[tuple[float, bytes]] = []
    for push, payload in actions:
        if push:
            queue.append((1.0, payload))
            model.append((1.0, payload))
        elif model:
            assert queue.popleft() == model.pop(0)
        else:
            queue.extendleft([(2.0, payload), (3.0, payload)])
            model[:0] = [(3.0, payload), (2.0, payload)]
        assert list(queue) == model and queue.bytes == sum(len(p) for _, p in model)
