"""``whiteboard sim --log-dir``: every simulated member records its session as a real one would
(whiteboard/sim/recording.py), so that the logs replay to the very boards the members had."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest

from tests.processes import run_whiteboard
from whiteboard.board import Board, decode_op
from whiteboard.presence import decode_presence, is_presence
from whiteboard.sessionlog import (
    DeliveredRecord,
    LocalOpRecord,
    SessionLog,
    StateReceivedRecord,
    read_log,
)
from whiteboard.sessionlog.format import to_us
from whiteboard.sim.network import Impairment
from whiteboard.sim.recording import DEFAULT_START, SimRecorder, parse_start
from whiteboard.sim.scenario import ScenarioConfig, params_for_transport, run_scenario
from whiteboard.sim.session import SimSession
from whiteboard.sim.workload import collab_plan

START = DEFAULT_START.timestamp()


def collab(transport: str, log_dir: Path | None, **options: object) -> ScenarioConfig:
    settings: dict[str, object] = {
        "peers": 3,
        "messages": 60,
        "seed": 4,
        "impairment": Impairment(loss=0.02, delay_ms=2.0, jitter_ms=1.0),
        "workload": "collab",
        "log_dir": log_dir,
        "params": {"profile": "lan"},
        **options,
    }
    return ScenarioConfig(transport, **settings)


def delivered_ops_replayed(log: SessionLog) -> Board:
    """A fresh board fed the log's DELIVERED ops, as the member's replica was."""
    board = Board()
    for record in log.records:
        if isinstance(record, DeliveredRecord) and not is_presence(record.payload):
            board.apply(record.order_key, decode_op(record.payload))
    return board


def replayed_with_states(log: SessionLog) -> Board:
    """Also the boards given to the member on joining, merged as Replica.load_state does."""
    board = Board()
    for record in log.records:
        if isinstance(record, StateReceivedRecord):
            incoming = Board.from_snapshot(record.state)
            for key, op in board.log():
                incoming.apply(key, op)
            board = incoming
        elif isinstance(record, DeliveredRecord) and not is_presence(record.payload):
            board.apply(record.order_key, decode_op(record.payload))
    return board


def read_clean(path: Path) -> SessionLog:
    log = read_log(path)
    assert log.report.warnings == () and log.report.torn_bytes == 0
    return log


def without(result: dict[str, object], *keys: str) -> dict[str, object]:
    return {k: v for k, v in result.items() if k not in keys}


@pytest.mark.parametrize("transport", ["rmp", "mtp"])
def test_each_member_writes_one_log_that_replays_to_its_final_board(
    transport: str, tmp_path: Path
) -> None:
    result = run_scenario(collab(transport, tmp_path))
    assert result["complete"] and result["converged"] and result["left_cleanly"]
    logs = [Path(p) for p in result["logs"]]
    assert sorted(logs) == sorted(tmp_path.glob("*.wblog")) and len(logs) == 3
    names = set()
    for path in logs:
        log = read_clean(path)
        assert log.report.clean_end
        header = log.header
        assert header.t_us == to_us(START)
        assert path.name == f"20240311-093000-{header.session_id}.wblog"
        assert header.transport == transport and header.params["profile"] == "lan"
        assert header.group.startswith("239.255.") and header.ttl == 1
        names.add(header.member_name)
        kinds = Counter(record.kind.name for record in log.records)
        assert kinds["READY"] == 1 and kinds["END"] == 1 and kinds["COUNTERS"] >= 2
        assert kinds["MEMBER"] >= 2 and kinds["LOCAL_OP"] >= 1
        # What the member saw is exactly what it had: the log replays to its board.
        assert delivered_ops_replayed(log).hash() == result["board_hash"]
        # Everyone sees everyone's presence, as in the app.
        presences = {
            decode_presence(r.payload).name
            for r in log.records
            if isinstance(r, DeliveredRecord) and is_presence(r.payload)
        }
        assert presences == {"member-1", "member-2", "member-3"}
        # Times are the wall clock's, from the start on: the end, virtual time's end.
        assert all(to_us(START) <= r.t_us <= to_us(START + 3600) for r in log.records)
    assert names == {"member-1", "member-2", "member-3"}
    if transport == "mtp":
        roles = {read_log(p).header.member_name: read_log(p).header.params["role"] for p in logs}
        assert roles["member-1"] == "master" and roles["member-2"] == "producer"


def test_a_members_local_ops_are_what_its_plan_gave_it_to_send(tmp_path: Path) -> None:
    config = collab("rmp", tmp_path, impairment=Impairment())
    result = run_scenario(config)
    session = SimSession("rmp", 3, config.seed)  # for the member ids the run drew
    plan = collab_plan([p.member_id for p in session.peers], config.messages, config.seed)
    for path in result["logs"]:
        log = read_clean(Path(path))
        index = int(log.header.member_name.split("-")[1]) - 1
        sent = [
            decode_op(r.payload)
            for r in log.records
            if isinstance(r, LocalOpRecord) and not is_presence(r.payload)
        ]
        assert sent == [p.op for p in plan.ops if p.member == index]
        assert log.header.member_id == session.peers[index].member_id


def test_recording_only_observes_the_run(tmp_path: Path) -> None:
    for config in (
        collab("rmp", None),
        ScenarioConfig("mtp", peers=3, messages=80, seed=2, impairment=Impairment(loss=0.05)),
    ):
        plain = run_scenario(config)
        recorded = run_scenario(dataclasses.replace(config, log_dir=tmp_path / config.transport))
        assert without(recorded, "wall_s", "logs") == without(plain, "wall_s")


def test_the_same_run_writes_the_same_logs_and_refuses_to_overwrite_them(tmp_path: Path) -> None:
    first = run_scenario(collab("rmp", tmp_path / "a"))
    second = run_scenario(collab("rmp", tmp_path / "b"))
    names = [Path(p).name for p in first["logs"]]
    assert names == [Path(p).name for p in second["logs"]]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with pytest.raises(ValueError, match="already exists"):
        run_scenario(collab("rmp", tmp_path / "a"))
    with pytest.raises(ValueError, match="not a folder"):
        run_scenario(collab("rmp", tmp_path / "a" / names[0]))
    # Another start or seed is another session: its own ids, its own files.
    later = run_scenario(collab("rmp", tmp_path / "a", start=START + 86400))
    assert not set(names) & {Path(p).name for p in later["logs"]}


def test_a_restarted_member_writes_a_new_log_and_the_crashed_one_has_no_end(
    tmp_path: Path,
) -> None:
    session = SimSession("rmp", 3, seed=12, params_for=params_for_transport("rmp", {}))
    recorder = SimRecorder(session, tmp_path, START, run_key="restart")
    for index in range(3):
        session.start(index)
    session.schedule_draws(30, 10.0, 2.0, [0, 1, 2])
    session.network.schedule(4.0, lambda: session.crash(2))
    session.network.schedule(9.0, lambda: session.start(2))
    session.schedule_draws(20, 10.0, 20.0, [0, 1, 2])
    session.network.run(until=40.0)
    paths = recorder.finish()
    assert len(paths) == 4 and sorted(paths) == sorted(tmp_path.glob("*.wblog"))
    logs = [read_clean(path) for path in paths]
    by_member = Counter(log.header.member_name for log in logs)
    assert by_member == {"member-1": 1, "member-2": 1, "member-3": 2}
    crashed, restarted = (log for log in logs if log.header.member_name == "member-3")
    assert not crashed.report.clean_end and restarted.report.clean_end
    assert crashed.header.session_id != restarted.header.session_id
    assert restarted.header.t_us == to_us(START + 9.0)
    assert any(isinstance(r, StateReceivedRecord) for r in restarted.records)
    assert session.converged()
    finals = [logs[0], logs[1], restarted]
    for index, log in enumerate(finals):
        board = replayed_with_states(log)
        assert board.hash() == session.peers[index].replica.board.hash()
        assert len(board) == 50


def test_parse_start_reads_iso_times_in_utc_by_default() -> None:
    assert parse_start("2024-03-11T09:30:00Z") == START
    assert parse_start("2024-03-11T09:30:00") == START
    assert parse_start("2024-03-11T10:30:00+01:00") == START
    with pytest.raises(ValueError, match="not an ISO time"):
        parse_start("yesterday")


def test_the_cli_writes_the_logs_and_says_where(tmp_path: Path) -> None:
    run = run_whiteboard(
        "sim",
        "--transport",
        "rmp",
        "--workload",
        "collab",
        "--peers",
        "2",
        "--messages",
        "20",
        "--log-dir",
        str(tmp_path),
        "--start",
        "2025-01-02T03:04:05Z",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    (line,) = run.stdout.strip().splitlines()
    result = json.loads(line)
    assert result["workload"] == "collab" and result["complete"]
    logs = sorted(Path(p) for p in result["logs"])
    assert logs == sorted(tmp_path.glob("*.wblog")) and len(logs) == 2
    assert all(p.name.startswith("20250102-030405-") for p in logs)
    assert f"2 session logs in {tmp_path}" in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--start", "2025-01-02T03:04:05Z"], "needs --log-dir"),
        (["--log-dir", "x", "--start", "soon"], "not an ISO time"),
        (["--workload", "chaos"], "invalid choice"),
    ],
)
def test_bad_log_options_get_a_readable_message(args: list[str], message: str) -> None:
    run = run_whiteboard("sim", "--transport", "raw", "--messages", "1", *args)
    assert run.returncode == 2 and message in run.stderr
