"""The side channel (issue 19, point 1; coreapi/ephemeral.py) on every transport, in the
simulator: best effort, latest wins, never repaired, never part of the board, and no work
for the reliable protocol (no NACK, no retransmission, no token)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtp.core import MtpCore
from mtp.side import encode_side
from rmp.wire import FORMAT_EPHEMERAL, Data, RmpPacket
from rmp.wire import encode as rmp_encode
from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import params_for_transport
from whiteboard.sim.session import SimSession
from whiteboard.transport.raw.wire import RawPacket, RawType
from whiteboard.transport.registry import describe

TRANSPORTS = ["raw", "rmp", "mtp"]
PEERS = 3


def joined(transport: str, seed: int = 1, loss: float = 0.0) -> SimSession:
    session = SimSession(
        transport,
        PEERS,
        seed,
        Impairment(loss=loss),
        params_for_transport(transport, {"profile": "lan"}),
    )
    session.start(0)
    network = session.network
    network.run(network.now + 5.0, stop=lambda: session.peers[0].ready)
    for index in range(1, PEERS):
        session.start(index)
    network.run(network.now + 30.0, stop=lambda: all(p.ready for p in session.peers))
    assert all(p.ready for p in session.peers)
    network.run(network.now + 3.0)  # everyone has heard from everyone
    return session


def pointer(index: int, step: int) -> bytes:
    return f"pointer {index} {step}".encode()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_each_member_sees_the_others_latest_and_never_its_own(transport: str) -> None:
    session = joined(transport)
    network = session.network
    for step in range(1, 31):  # a second at 30 a second
        for index in range(PEERS):
            session.send_ephemeral(index, pointer(index, step))
        network.run(network.now + 1 / 30)
    network.run(network.now + 0.5)
    for peer in session.peers:
        others = {p.member_id: pointer(p.index, 30) for p in session.peers if p is not peer}
        assert peer.latest_ephemeral == others
        assert peer.ephemeral_received == 30 * (PEERS - 1)  # no loss: every one, once
    # Never part of the board.
    assert all(len(p.replica.board) == 0 for p in session.peers)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_flood_is_paced_and_the_last_position_still_arrives(transport: str) -> None:
    session = joined(transport)
    network = session.network
    counters = session.peers[0].station.transport.counters
    before = counters()["ephemeral_sent"]
    for step in range(1, 1001):  # 1,000 at one instant
        session.send_ephemeral(0, pointer(0, step))
    network.run(network.now + 1.0)
    sent = counters()["ephemeral_sent"] - before
    assert 8 <= sent <= 8 + 60 + 1  # the burst, then what the rate allows: the held one
    assert counters()["ephemeral_superseded"] == 1000 - sent
    for peer in session.peers[1:]:
        assert peer.latest_ephemeral[session.peers[0].member_id] == pointer(0, 1000)


@pytest.mark.parametrize(("transport", "repairs"), [("raw", False), ("rmp", True), ("mtp", True)])
def test_the_side_channel_costs_the_reliable_protocol_nothing(
    transport: str, repairs: bool
) -> None:
    """5% loss on the reliable traffic, 30% on the side channel (its draws are its own, so
    the reliable traffic meets the same losses): every board is what it is in the same run
    without the side channel (complete and converged, for a transport that repairs), and the
    protocol's repairs and tokens are exactly those of that run."""

    def run(side: bool) -> tuple[SimSession, dict[str, int]]:
        session = joined(transport, seed=4, loss=0.05)
        session.network.side_impairment = Impairment(loss=0.3)
        network = session.network
        drawers = list(range(PEERS)) if describe(transport).host_role is None else [1, 2]
        for step in range(150):
            session.draw(drawers[step % len(drawers)])
            if side:
                for index in range(PEERS):
                    session.send_ephemeral(index, pointer(index, step))
            network.run(network.now + 1 / 30)
        network.run(network.now + 20.0)
        return session, session.counters_total()

    with_side, counters = run(side=True)
    without, reference = run(side=False)
    assert with_side.hashes() == without.hashes()
    if repairs:
        assert with_side.converged()
        assert all(len(p.replica.board) == 150 for p in with_side.peers)
    assert with_side.network.side_losses_injected > 0
    assert all(p.ephemeral_received > 0 for p in with_side.peers)
    for name in ("nacks_sent", "retransmissions", "tokens_requested", "tokens_granted"):
        assert counters.get(name, 0) == reference.get(name, 0), name
    assert counters["delivered"] == reference["delivered"]


def forged(transport: str, session: SimSession, source: int, seq: int) -> bytes:
    """A side-channel datagram from ``source`` as its transport's wire has it."""
    payload = b"forged"
    if transport == "raw":  # in the run of it the others know (its HELLOs'), if any
        runs = {p.member_id: p.station.transport.core for p in session.peers}
        run = getattr(runs.get(source), "_incarnation", 1)
        return RawPacket(RawType.EPHEMERAL, source, run, seq, 0, payload).encode()
    if transport == "rmp":
        packet = RmpPacket(seq, 0, (Data(),), payload, format=FORMAT_EPHEMERAL, source=source)
        return rmp_encode(packet)
    core = session.peers[1].station.transport.core
    assert isinstance(core, MtpCore)
    return encode_side(seq, source, core.web_id, payload)


def hand(session: SimSession, index: int, data: bytes) -> None:
    session.peers[index].station.transport.datagram_received(data, ("198.18.9.9", 7000))


@pytest.mark.parametrize("transport", ["raw", "rmp"])
def test_a_stranger_is_not_heard_on_the_side_channel(transport: str) -> None:
    """raw and RMP take the side channel only from a member they know (its HELLO or data,
    its RMP packets): a source that sent nothing else is refused and counted."""
    session = joined(transport)
    receiver = session.peers[1]
    counters = receiver.station.transport.counters
    known = session.peers[2].member_id
    hand(session, 1, forged(transport, session, known, 500))
    assert receiver.latest_ephemeral == {known: b"forged"}
    dropped = counters()["ephemeral_dropped"]
    hand(session, 1, forged(transport, session, 0x5A5A5A5A, 1))
    assert receiver.ephemeral_received == 1
    assert counters()["ephemeral_dropped"] == dropped + 1


def test_mtp_takes_the_side_channel_of_its_own_web_only() -> None:
    """An idle MTP member sends nothing others would know it by, so any source is taken, but
    only for the web we are in (its connection id); not our own; a forger's rate is bounded."""
    session = joined("mtp")
    receiver = session.peers[1]
    counters = receiver.station.transport.counters
    hand(session, 1, forged("mtp", session, 0x5A5A5A5A, 1))
    assert receiver.latest_ephemeral == {0x5A5A5A5A: b"forged"}
    other_web = bytearray(forged("mtp", session, 0x5A5A5A5B, 1))
    other_web[8] ^= 0xFF  # the web id's first byte
    hand(session, 1, bytes(other_web))
    hand(session, 1, forged("mtp", session, receiver.member_id, 7))  # our own identity
    assert receiver.ephemeral_received == 1 and counters()["ephemeral_dropped"] == 2
    for source in range(1, 5_001):  # 5,000 made-up members at one instant
        hand(session, 1, forged("mtp", session, 0x10000 + source, 1))
    assert receiver.ephemeral_received <= 1 + 200  # the channel's total burst


@pytest.mark.parametrize("transport", TRANSPORTS)
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tail=st.binary(max_size=600), seq=st.integers(0, 2**16 - 1))
def test_a_malformed_side_channel_datagram_is_counted_and_dropped(
    transport: str, tail: bytes, seq: int
) -> None:
    session = _joined_once(transport)
    known = session.peers[2].member_id
    good = forged(transport, session, known, seq)
    receiver = session.peers[1].station.transport
    before = receiver.counters()
    for data in (good[: len(good) // 2], good[:4] + tail, good + tail, good[:2] + tail):
        receiver.datagram_received(data, ("198.18.9.9", 7000))  # never raises
    after = receiver.counters()
    assert after["datagrams_received"] == before["datagrams_received"] + 4


_SESSIONS: dict[str, SimSession] = {}


def _joined_once(transport: str) -> SimSession:
    if transport not in _SESSIONS:
        _SESSIONS[transport] = joined(transport)
    return _SESSIONS[transport]
