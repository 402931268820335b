"""The `whiteboard` command's contracts, run as a person runs them (a real process)."""

from __future__ import annotations

import json

import pytest

from tests.processes import run_whiteboard
from tests.sim.test_scenario import SIM_CONTRACT

whiteboard = run_whiteboard


def test_sim_prints_one_json_object_with_the_contract_fields() -> None:
    run = whiteboard(
        "sim",
        "--transport",
        "raw",
        "--peers",
        "3",
        "--messages",
        "30",
        "--loss",
        "0.1",
        "--dup",
        "0.05",
        "--reorder",
        "0.05",
        "--delay-ms",
        "2",
        "--jitter-ms",
        "1",
        "--seed",
        "7",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert set(result) >= SIM_CONTRACT
    assert result["peers"] == 3 and result["messages"] == 30


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sim", "--transport", "raw", "--loss", "2"], "not a probability"),
        (["sim", "--transport", "raw", "--peers", "0"], "at least 1"),
        (
            ["peer", "--transport", "raw", "--group", "10.0.0.1:5000", "--name", "x"],
            "not a multicast address",
        ),
        (["peer", "--transport", "raw", "--group", "239.255.3.3", "--name", "x"], "ADDR:PORT"),
        (["sim", "--transport", "raw", "--param", "bogus=1"], "unknown raw transport parameter"),
    ],
)
def test_bad_arguments_get_a_readable_message(args: list[str], message: str) -> None:
    run = whiteboard(*args)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr
