"""Private sessions in the simulator (issue 21): every transport's datagrams sealed below its
core. Members of one private session draw together; another passphrase, or none, on the same
group is another session that sees nothing of it and is told so, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from whiteboard.security import SessionKey, derive_session_key
from whiteboard.security.channel import REFUSAL_MESSAGES, SEALED_IN_PUBLIC
from whiteboard.security.envelope import SealFailure
from whiteboard.sim.network import Impairment
from whiteboard.sim.session import SimSession
from whiteboard.transport.registry import describe

GROUP = "239.255.9.9:5009"
# Peers 0-2: passphrase one; 3-4: passphrase two; 5: none. The first of each hosts (MTP).
HOSTS = (0, 3, 5)


def drawn_session(
    transport: str,
    peers: int,
    hosts: tuple[int, ...],
    keys: dict[int, SessionKey],
    loss: float,
    seed: int,
    rounds: int,
) -> SimSession:
    """``peers`` members with ``keys`` (the others in clear), ``hosts`` hosting (MTP), each
    drawing ``rounds`` strokes in turn at ``loss``; run until settled."""
    description = describe(transport)
    host, member = description.host_role, description.member_role

    def params_for(index: int) -> dict[str, object]:
        if host is None or member is None:
            return {}
        return {description.role_param: (host if index in hosts else member).value}

    session = SimSession(
        transport, peers, seed=seed, impairment=Impairment(loss=loss), params_for=params_for
    )
    session.keys = keys
    for index in range(peers):
        session.start(index)
    session.network.run(until=5.0)
    for _ in range(rounds):
        for index in range(peers):
            session.draw(index)
    session.network.run(until=40.0)
    return session


@pytest.mark.parametrize(
    ("transport", "loss", "second"),
    [
        ("raw", 0.0, "second passphrase"),
        ("rmp", 0.05, "second passphrase"),
        ("mtp", 0.05, "second passphrase"),
        # The same passphrase, but a session that lets people watch: another session too
        # (keys.py); test_viewers.py holds its view code to that as well.
        ("mtp", 0.05, "first passphrase"),
    ],
)
def test_sessions_with_other_passphrases_share_a_group_and_see_nothing_of_each_other(
    transport: str, loss: float, second: str
) -> None:
    one = derive_session_key("first passphrase", GROUP, "review")
    two = derive_session_key(second, GROUP, "review", viewers=True)
    keys = {0: one, 1: one, 2: one, 3: two, 4: two}
    session = drawn_session(transport, 6, HOSTS, keys, loss, seed=4, rounds=30)
    boards = [peer.replica.board for peer in session.peers]
    assert [len(board) for board in boards] == [90, 90, 90, 60, 60, 30]
    assert boards[0].hash() == boards[1].hash() == boards[2].hash()
    assert boards[3].hash() == boards[4].hash()
    counters = [peer.station.driver.counters() for peer in session.peers]
    for index in range(5):
        assert counters[index]["foreign_key_dropped"] > 0 and counters[index]["clear_dropped"] > 0
        assert counters[index]["auth_failures"] == counters[index]["replays_dropped"] == 0
        told = session.peers[index].failures_since_start
        assert told.count(REFUSAL_MESSAGES[SealFailure.FOREIGN_KEY]) == 1
        assert told.count(REFUSAL_MESSAGES[SealFailure.NOT_SEALED]) == 1
    assert counters[5]["sealed_dropped"] > 0
    assert session.peers[5].failures_since_start.count(SEALED_IN_PUBLIC) == 1
    assert counters[5].get("malformed_dropped", 0) == 0  # the core never saw an envelope


def test_a_private_session_keeps_every_datagram_within_the_mtu() -> None:
    """RMP fills its data packets with Confirms up to its datagram limit; in a private session
    the limit leaves room for the envelope (the simulator refuses anything over its MTU)."""
    key = derive_session_key("a passphrase for all", GROUP)
    session = SimSession("rmp", 40, seed=2)
    session.keys = dict.fromkeys(range(40), key)
    for index in range(40):
        session.start(index)
    session.network.run(until=3.0)
    for index in range(40):
        session.draw(index)
    session.network.run(until=15.0)
    assert all(len(peer.replica.board) == 40 for peer in session.peers)
    assert session.converged()


def test_the_simulators_loss_accounting_sees_through_the_envelope() -> None:
    """Recoveries and source-loss events are found by looking for strokes' bytes in the lost
    datagrams: in a private session the simulator takes them out of their envelopes first."""
    from whiteboard.sim.scenario import ScenarioConfig, run_scenario

    key = derive_session_key("a long and private passphrase", "simulator")
    impairment = Impairment(loss=0.1, source_loss=0.05)
    results = [
        run_scenario(
            ScenarioConfig("rmp", peers=4, messages=80, seed=9, impairment=impairment, key=k)
        )
        for k in (None, key)
    ]
    clear, private = results
    assert private["complete"] and private["converged"]
    assert int(private["recoveries"]) > 0 and int(private["source_loss_events"]) > 0  # type: ignore[call-overload]
    assert private["source_loss_events"] == clear["source_loss_events"]


def test_a_private_session_lowers_datagrams_to_fit_and_never_raises_them() -> None:
    rmp, mtp, raw = (describe(name) for name in ("rmp", "mtp", "raw"))
    assert rmp.params_within({}, 1428) == {"max_datagram": 1428}
    assert rmp.params_within({"max_datagram": 1300}, 1428) == {"max_datagram": 1300}
    assert rmp.params_within({"max_datagram": 1472}, 1428) == {"max_datagram": 1428}
    assert mtp.params_within({"role": "master"}, 1428) == {"role": "master"}
    assert raw.params_within({}, 1428) == {}
    with pytest.raises(ValueError, match="more than the 1400"):
        mtp.params_within({}, 1400)


@pytest.mark.parametrize(("transport", "loss"), [("raw", 0.0), ("rmp", 0.05), ("mtp", 0.05)])
def test_a_viewer_watches_everything_and_none_of_its_ops_is_applied(
    transport: str, loss: float
) -> None:
    """Peers 0-2 hold the passphrase, peer 3 the view code; everyone draws 20 strokes. The
    drawers' 60 reach everyone, proven; the viewer's 20 are delivered by the transport and
    applied nowhere, its own board included (issue 21 point 2)."""
    from whiteboard.security.keys import session_key_from_view_code

    drawer = derive_session_key("the drawing passphrase", GROUP, "review", viewers=True)
    viewer = session_key_from_view_code(drawer.view_code())
    keys = {0: drawer, 1: drawer, 2: drawer, 3: viewer}
    session = drawn_session(transport, 4, (0,), keys, loss, seed=6, rounds=20)
    replicas = [peer.replica for peer in session.peers]
    assert [len(replica.board) for replica in replicas] == [60, 60, 60, 60]
    assert len({replica.board.hash() for replica in replicas}) == 1
    assert [replica.stats.unproven for replica in replicas] == [20, 20, 20, 20]
    viewer_id = session.peers[3].member_id
    assert all(op.id.author != viewer_id for _, op in replicas[0].board.log())


def test_a_private_sessions_recordings_replay_with_every_proof_of_its_day(
    tmp_path: Path,
) -> None:
    """The simulator's recordings carry wall-clock times from their start (2024 by default);
    the members' proofs must be of those days, else a replay, which judges each op at its
    record's time as the member did, refuses them all."""
    from whiteboard.replay.timeline import load_timeline
    from whiteboard.sim.scenario import ScenarioConfig, run_scenario

    key = derive_session_key("a long and private passphrase", "simulator")
    config = ScenarioConfig("rmp", peers=3, messages=30, seed=5, key=key, log_dir=tmp_path)
    result = run_scenario(config)
    assert result["complete"]
    logs = sorted(tmp_path.glob("*.wblog"))
    assert len(logs) == 3
    for log in logs:
        timeline = load_timeline(log)
        assert len(timeline.drawings()) == 30 and timeline.refused == 0, log.name
