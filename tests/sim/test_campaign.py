"""The seeded fault campaign's machinery (whiteboard/sim/campaign.py, benchmarks/campaign.py):
scenarios made from their seed alone, the checks able to fail, and a few scenarios per class
that hold today. The full campaign is ``benchmarks/campaign.py --count 1000``."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from whiteboard.sim.campaign import (
    Outcome,
    Scenario,
    ScenarioClass,
    StationEvent,
    Violation,
    _Run,
    classes_for,
    run,
    run_seed,
    scenario_for,
)
from whiteboard.sim.network import Impairment

CAMPAIGN = runpy.run_path(str(Path(__file__).parents[2] / "benchmarks" / "campaign.py"))


def test_a_scenario_is_made_from_its_seed_alone() -> None:
    assert scenario_for("mtp", 17) == scenario_for("mtp", 17)
    assert scenario_for("mtp", 17) != scenario_for("mtp", 18)
    first, again = run_seed("rmp", 5), run_seed("rmp", 5)
    assert (first.violations, first.virtual_s) == (again.violations, again.virtual_s)


def test_scenarios_mix_every_impairment_and_fault_within_bounds() -> None:
    kinds: set[ScenarioClass] = set()
    for seed in range(1, 301):
        scenario = scenario_for("mtp", seed)
        kinds.add(scenario.kind)
        assert 3 <= scenario.peers <= 8
        assert scenario.impairment.loss <= 0.3
        crashed = {c.station for c in scenario.crashes}
        touched = crashed | {j.station for j in scenario.late_joins}
        assert len(touched - {0}) <= scenario.peers - 2  # a member draws throughout
        for restart in scenario.restarts:
            crash = next(c for c in scenario.crashes if c.station == restart.station)
            assert restart.at > crash.at
        for partition in scenario.partitions:
            assert 0 < len(partition.side) < scenario.peers
            assert partition.heal_at > partition.at
        if scenario.kind is ScenarioClass.HOST_CRASH:
            assert [c.station for c in scenario.crashes] == [0]  # station 0 is the master
    assert kinds == set(ScenarioClass)
    assert any(scenario_for("mtp", s).impairment.dup for s in range(1, 50))
    assert any(scenario_for("mtp", s).impairment.jitter_ms > 5 for s in range(1, 50))


def test_only_a_transport_with_a_host_has_host_crashes() -> None:
    assert ScenarioClass.HOST_CRASH in classes_for("mtp")
    assert ScenarioClass.HOST_CRASH not in classes_for("rmp")
    assert all(scenario_for("rmp", s).kind is not ScenarioClass.HOST_CRASH for s in range(200))


def _dropping(transport: str, loss: float = 1.0) -> _Run:
    """Four members drawing 40 strokes; what station 0 sends is lost at station 2 (all of it,
    by default)."""
    scenario = Scenario(transport, 7, ScenarioClass.IMPAIRED, 4, 40, 100.0, "lan", Impairment())
    attempt = _Run(scenario)
    attempt.session.network.set_link(0, 2, Impairment(loss=loss))
    attempt.play()
    return attempt


def test_an_op_dropped_and_never_repaired_is_lost_silently() -> None:
    # raw repairs nothing: station 0's 10 strokes never reach station 2, which is told nothing.
    outcome = _dropping("raw").outcome()
    assert outcome.violations[Violation.LOST_SILENTLY] == 10
    assert outcome.violations[Violation.DIVERGED] == 1
    assert not outcome.clean


def test_a_loss_the_member_was_told_of_is_reported_not_silent() -> None:
    attempt = _dropping("raw")
    station = attempt.session.peers[2].station
    told = attempt.told_at.setdefault((2, station.incarnation), [])
    told.append(0.0)  # told before the strokes were drawn: it does not cover them
    assert attempt.outcome().violations[Violation.LOST_SILENTLY] == 10
    told.append(attempt.session.network.now)  # told after: the loss is not silent
    outcome = attempt.outcome()
    assert Violation.LOST_SILENTLY not in outcome.violations
    assert outcome.violations[Violation.LOST_REPORTED] == 10
    assert Violation.DIVERGED not in outcome.violations  # a told member may differ


def test_rmp_repairs_heavy_loss_on_the_link_so_nothing_is_found() -> None:
    # Half of what station 0 sends lost at station 2: RMP's NACKs and retransmissions repair
    # it (RR-2100 §2.3), and the same checks find nothing.
    attempt = _dropping("rmp", loss=0.5)
    assert attempt.session.network.stats.losses_injected >= 3
    assert attempt.outcome().clean


def test_a_simulator_error_is_a_finding_not_a_crash_of_the_campaign() -> None:
    # A scenario the simulator refuses (a station crashed twice) is reported with its reason.
    broken = Scenario(
        "rmp", 1, ScenarioClass.RESTART, 3, 20, 100.0, "lan", Impairment(),
        restarts=(StationEvent(1, 0.05),),
    )  # fmt: skip
    outcome = run(broken)
    assert outcome.violations[Violation.ERROR] == 1
    assert "already up" in outcome.detail


# Seeds of each class that hold today (found by the full campaign; the failing ones are in
# its report). Two per class and transport, about 10 s in all.
HOLDING: dict[str, dict[str, list[int]]] = {
    "rmp": {
        "impaired": [25, 37],
        "delayed": [3, 8],
        "partition": [6, 10],
        "crash": [30, 31],
        "restart": [1, 14],
        "late_join": [17, 24],
        "mixed": [2, 4],
    },
    "mtp": {
        "impaired": [9, 22],
        "delayed": [2, 4],
        "partition": [8, 36],
        "crash": [3, 12],
        "restart": [5, 16],
        "late_join": [7, 24],
    },
}


@pytest.mark.parametrize(
    ("transport", "seed"),
    [(t, seed) for t, by_class in HOLDING.items() for seeds in by_class.values() for seed in seeds],
)
def test_campaign_scenarios_that_hold_today(transport: str, seed: int) -> None:
    outcome = run_seed(transport, seed)
    assert outcome.clean, CAMPAIGN["describe_outcome"](outcome)


def test_holding_seeds_cover_every_class_they_claim() -> None:
    for transport, by_class in HOLDING.items():
        for kind, seeds in by_class.items():
            assert all(scenario_for(transport, s).kind.value == kind for s in seeds)


def test_the_campaign_command_prints_counts_and_rerun_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = CAMPAIGN["main"](["--transport", "raw", "--count", "4", "--seed", "3"])
    out = capsys.readouterr().out
    assert status == 1  # raw repairs nothing: its scenarios with loss fail
    assert "raw: 4 scenarios, seeds 3-6" in out
    assert "lost_silently:" in out
    assert "--transport raw --seed " in out and "--count 1 -v" in out
    assert "wall time" in out
    results: list[Outcome] = [run_seed("raw", 3)]
    assert "class" in CAMPAIGN["report"]("raw", results, 0.1)


def test_the_campaign_command_runs_one_class_on_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert CAMPAIGN["seeds_of"]("rmp", 1, 2, "crash") == [30, 31]
    assert CAMPAIGN["main"](["--transport", "rmp", "--class", "crash", "--count", "2"]) == 0
    out = capsys.readouterr().out
    assert "rmp: 2 scenarios, seeds 30-31" in out
    assert any(line.split()[:3] == ["crash", "2", "0"] for line in out.splitlines())
    with pytest.raises(SystemExit):
        CAMPAIGN["main"](["--transport", "rmp", "--class", "host_crash"])  # RMP has no host
    assert "rmp has no host_crash scenarios" in capsys.readouterr().err
