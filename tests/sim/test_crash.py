"""``whiteboard sim --crash STATION@SECONDS``: a station dies at a virtual time after drawing
starts; the result says what the survivors have (issue 17, point 7)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from whiteboard.cli import main as whiteboard_main
from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import (
    Crash,
    ScenarioConfig,
    SurvivorWatch,
    _host_stations,
    run_scenario,
)
from whiteboard.sim.session import SimSession


def sim(*argv: str) -> tuple[int, dict[str, object] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = whiteboard_main(["sim", *argv, "--json"])
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
    text = out.getvalue()
    return status, (json.loads(text) if status == 0 else None), err.getvalue()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("7@1", "there is no station 7 (--peers 3 gives stations 0 to 2)"),
        ("1@-0.5", "the time must be a finite number of seconds, 0 or more"),
        ("1@inf", "the time must be a finite number of seconds, 0 or more"),
        ("1@soon", "'soon' is not a number of seconds"),
        ("one@1", "must be STATION@SECONDS"),
        ("1", "must be STATION@SECONDS"),
        ("-1@1", "must be STATION@SECONDS"),
    ],
)
def test_a_bad_crash_is_a_readable_error(value: str, message: str) -> None:
    status, result, err = sim("--transport", "rmp", "--peers", "3", f"--crash={value}")
    assert status == 2 and result is None
    assert message in err
    assert "Traceback" not in err


def test_a_crashed_station_draws_nothing_after_its_crash_and_survivors_have_the_rest() -> None:
    # 4 stations draw 100 strokes round robin at 100/s: station 2 draws strokes 2, 6, 10...
    # at k/100 s. Crashed at 0.5 s, it skips strokes 50, 54, ..., 98 (13 of them), the one at
    # 0.5 s included: a crash at the instant of a stroke comes first.
    status, result, _ = sim(
        "--transport", "rmp", "--peers", "4", "--messages", "100", "--loss", "0.05",
        "--seed", "3", "--crash", "2@0.5",
    )  # fmt: skip
    assert status == 0 and result is not None
    assert result["crashes"] == ["2@0.5"]
    assert result["survivors"] == [0, 1, 3]
    assert result["survivor_ops_missing"] == 0
    assert result["complete"] is True and result["converged"] is True
    assert result["delivered_min"] == result["delivered_max"] == 100 - 13
    assert result["failover_ms"] is None  # RMP has no host: nothing to fail over


def test_without_crashes_every_member_survives_and_nothing_is_missing() -> None:
    result = run_scenario(ScenarioConfig("rmp", peers=3, messages=40, seed=2))
    assert result["crashes"] == [] and result["survivors"] == [0, 1, 2]
    assert result["survivor_ops_missing"] == 0 and result["failover_ms"] is None
    assert result["complete"] is True


def test_mtp_crash_of_a_producer_leaves_the_web_whole() -> None:
    result = run_scenario(
        ScenarioConfig(
            "mtp",
            peers=4,
            messages=120,
            seed=5,
            rate=200.0,
            impairment=Impairment(loss=0.05),
            crashes=(Crash(3, 0.2),),
        )
    )
    assert result["survivors"] == [0, 1, 2]
    assert result["survivor_ops_missing"] == 0
    assert result["complete"] is True and result["converged"] is True
    assert result["failover_ms"] is None  # the master lives


def test_station_0_hosts_an_mtp_session_and_no_station_hosts_rmp() -> None:
    assert _host_stations(ScenarioConfig("mtp", peers=3)) == {0}
    assert _host_stations(ScenarioConfig("rmp", peers=3)) == set()


def test_failover_ms_runs_from_the_hosts_crash_until_every_survivor_has_a_new_op() -> None:
    # On a real session of real cores: station 0 stands for a host that dies at 1.0 s; the
    # survivors 1 and 2 then hear a stroke drawn at 1.2 s one network delay (2 ms) later.
    session = SimSession("raw", 3, seed=1, impairment=Impairment(delay_ms=2.0))
    watch = SurvivorWatch(session, [1, 2], host_crash_at=1.0)
    session.on_delivered = watch.on_delivered
    for index in range(3):
        session.start(index)
    session.network.schedule(0.5, lambda: session.draw(0))  # before the crash: not counted
    session.network.schedule(1.0, lambda: session.crash(0))
    session.network.run(until=1.1)
    assert watch.failover_ms() is None  # nothing drawn since the crash has arrived
    session.network.schedule(1.2, lambda: session.draw(1))
    session.network.run(until=2.0)
    assert watch.failover_ms() == pytest.approx(202.0)
    assert watch.ops_missing() == 0


def test_failover_ms_is_none_while_a_survivor_has_not_resumed() -> None:
    session = SimSession("raw", 3, seed=1)
    watch = SurvivorWatch(session, [1, 2], host_crash_at=0.2)
    session.on_delivered = watch.on_delivered
    for index in range(3):
        session.start(index)
    session.network.run(until=0.1)
    session.network.partition([{0, 1}, {2}])
    session.network.schedule(0.3, lambda: session.draw(1))
    session.network.run(until=1.0)
    assert watch.failover_ms() is None  # station 2 never heard it
    assert watch.ops_missing() == 1  # and it lacks station 1's stroke


def test_survivor_ops_missing_counts_what_the_checker_must_see_missing() -> None:
    # The check can fail: a stroke dropped for one survivor on the raw transport (no repair).
    session = SimSession("raw", 3, seed=1)
    for index in range(3):
        session.start(index)
    session.network.run(until=0.1)
    session.network.set_link(0, 2, Impairment(loss=1.0))
    session.draw(0)
    session.draw(1)
    watch = SurvivorWatch(session, [0, 1, 2], None)
    session.network.run(until=1.0)
    assert watch.ops_missing() == 1
    assert not watch.all_have_all()
