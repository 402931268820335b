"""A recorded session whose live boards are known: the fixture of the replay tests.

Four RMP members of the simulator draw as people do (the collab workload: turns, idle gaps,
erases, moves, undos, presences) on a lossy, jittery network, so that their logs hold NACKs,
retransmissions and ops delivered late; the last member joins half way through and is given
the board. Every member records its session exactly as the app does
(whiteboard/sim/recording.py). While it runs, each member's live board hash is noted every few
seconds at its own clock's time, which is the time its log gives its records: replaying a log
to that time must give that hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from whiteboard.board import Board, OpDecodeError, decode_op
from whiteboard.presence import is_presence
from whiteboard.replica import Replica
from whiteboard.sessionlog import DeliveredRecord, StateReceivedRecord, read_log
from whiteboard.sessionlog.format import to_us
from whiteboard.sim.network import Impairment
from whiteboard.sim.recording import DEFAULT_START, SimRecorder
from whiteboard.sim.scenario import params_for_transport
from whiteboard.sim.session import SimSession
from whiteboard.sim.workload import CollabWorkload
from whiteboard.transport.events import Delivered

PEERS = 4
LATE = PEERS - 1  # the member that joins half way
OPS = 120
SEED = 11
PROBE_EVERY_S = 3.7  # not a round number: probes should not fall on the workload's own times


@dataclass(frozen=True, slots=True)
class LiveMoment:
    """Member ``peer``'s board hash at ``t_us`` on its own clock (the time in its log)."""

    peer: int
    t_us: int
    board_hash: str


@dataclass
class RecordedSession:
    logs: dict[int, Path]  # each member's log
    member_ids: list[int]
    moments: list[LiveMoment]
    final_boards: dict[int, Board]  # each member's board when the session ended

    def final_hash(self, peer: int) -> str:
        return self.final_boards[peer].hash()


def record_session(log_dir: Path) -> RecordedSession:
    impairment = Impairment(loss=0.05, delay_ms=2.0, jitter_ms=4.0)
    session = SimSession(
        "rmp", PEERS, SEED, impairment, params_for_transport("rmp", {"profile": "lan"})
    )
    workload = CollabWorkload(session, SEED)
    recorder = SimRecorder(session, log_dir, DEFAULT_START.timestamp(), run_key="replay-tests")
    network = session.network
    moments: list[LiveMoment] = []

    def probe() -> None:
        for peer in session.peers:
            if peer.station.up:
                t_us = to_us(recorder.wall(peer.station.now()))
                moments.append(LiveMoment(peer.index, t_us, peer.replica.board.hash()))

    for index in range(PEERS - 1):
        session.start(index)
    network.run(until=60.0, stop=lambda: all(p.ready for p in session.peers[:LATE]))
    first = network.now + 0.1
    last = workload.schedule(OPS, first)
    network.schedule(first + (last - first) / 2, lambda: session.start(LATE))
    when = first + 0.05
    while when < last + 20.0:
        network.schedule(when, probe)
        when += PROBE_EVERY_S
    network.run(
        until=last + 120.0,
        stop=lambda: (
            network.now > last + 20.0 and len({p.replica.board.hash() for p in session.peers}) == 1
        ),
    )
    workload.stop()
    for peer in session.peers:
        peer.station.transport.close()
    everyone = session.peers
    network.run(until=network.now + 30.0, stop=lambda: all(p.station.released for p in everyone))
    paths = recorder.finish()
    assert len(paths) == PEERS, "each member started once: one log each"
    logs = {index: path for index, path in enumerate(paths)}
    # Logs are created in the order members start: the late joiner's is the last.
    for index, path in logs.items():
        assert read_log(path).header.member_id == session.peers[index].member_id
    return RecordedSession(
        logs=logs,
        member_ids=[p.member_id for p in session.peers],
        moments=moments,
        final_boards={p.index: p.replica.board for p in session.peers},
    )


def untied(recorded: RecordedSession, peer: int) -> list[LiveMoment]:
    """The member's moments with no op delivered in the same microsecond of its log (which
    could be before or after the probe: the log's times cannot say)."""
    times = {
        r.t_us
        for r in read_log(recorded.logs[peer]).records
        if isinstance(r, DeliveredRecord) and not is_presence(r.payload)
    }
    return [m for m in recorded.moments if m.peer == peer and m.t_us not in times]


def reference_board(log_path: Path, t_us: int, hidden: frozenset[int] = frozenset()) -> Board:
    """The board a member's log gives at ``t_us``, made by a live :class:`Replica` fed the
    log's records up to then, as the member's own was fed (ops of ``hidden`` authors left out,
    from boards given on joining too). Independent of whiteboard.replay: what it is tested
    against."""
    replica = Replica()
    for record in read_log(log_path).records:
        if record.t_us > t_us:
            break
        if isinstance(record, DeliveredRecord):
            if not is_presence(record.payload) and _author(record.payload) in hidden:
                continue
            replica.apply_delivered(
                Delivered(
                    record.origin,
                    record.order_key,
                    record.sent_us / 1e6,
                    record.payload,
                    record.late,
                    record.t_us / 1e6,
                )
            )
        elif isinstance(record, StateReceivedRecord) and record.state:
            state = record.state
            if hidden:
                given = Board()
                for key, op in Board.from_snapshot(state).log():
                    if op.id.author not in hidden:
                        given.apply(key, op)
                state = given.snapshot()
            replica.load_state(state)
    return replica.board


def _author(payload: bytes) -> int | None:
    try:
        return decode_op(payload).id.author
    except OpDecodeError:
        return None
