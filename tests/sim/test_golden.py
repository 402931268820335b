"""Behaviour unchanged: every transport's ``whiteboard sim --json`` result over the golden table
(tests/sim/golden.py) is identical, line for line, to the one recorded."""

from __future__ import annotations

import json

import pytest

from tests.sim.golden import GOLDEN, line, scenarios

_RECORDED = [json.loads(text) for text in GOLDEN.read_text().splitlines()]


def test_the_table_is_the_recorded_one() -> None:
    assert [entry["argv"] for entry in _RECORDED] == scenarios()
    assert len(_RECORDED) >= 30
    # The table exercises what it claims: repair, loss, every transport, both workloads.
    assert {entry["result"]["transport"] for entry in _RECORDED} == {"raw", "rmp", "mtp"}
    assert any(entry["result"]["retransmissions"] for entry in _RECORDED)
    assert any(entry["result"].get("workload") == "collab" for entry in _RECORDED)


@pytest.mark.parametrize(
    "argv", scenarios(), ids=lambda argv: "-".join(argv[2:3] + argv[-4:-1:2] + argv[4:5])
)
def test_sim_result_is_unchanged(argv: list[str]) -> None:
    recorded = next(e for e in _RECORDED if e["argv"] == argv)
    assert json.loads(line(argv)) == recorded
