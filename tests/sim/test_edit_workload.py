"""The ``edit`` workload (issue 20, point 9): a seeded session mixing every op kind, so that
the protocols carry restyles, reorders and text edits as well as drawings, erases, moves,
undos and redos; run under loss on RMP and MTP, every member ends complete and converged."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from whiteboard.board import OpKind
from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import ScenarioConfig, run_scenario
from whiteboard.sim.workload import COLLAB, EDIT, collab_plan

MEMBERS = [11, 12, 13, 14, 15, 16]


def kinds(seed: int) -> Counter[OpKind]:
    return Counter(planned.op.kind for planned in collab_plan(MEMBERS, 100, seed, EDIT).ops)


def test_an_edit_session_mixes_every_op_kind_but_clear() -> None:
    seen: Counter[OpKind] = Counter()
    for seed in range(10):
        seen.update(kinds(seed))
    assert set(seen) == set(OpKind) - {OpKind.CLEAR}
    # Most of it is still drawing, and the new edits each come up often.
    drawings = sum(seen[k] for k in (OpKind.STROKE, OpKind.TEXT, OpKind.RECT, OpKind.LINE))
    assert drawings > 0.4 * sum(seen.values())
    for kind in (OpKind.RESTYLE, OpKind.REORDER, OpKind.EDIT_TEXT, OpKind.TRANSFORM):
        assert seen[kind] >= 20


def test_an_edit_session_is_ten_times_faster_than_a_collab_one() -> None:
    # Without pictures, whose two ops share a slot (a plan of 100 ops then ends sooner).
    edit = collab_plan(MEMBERS, 100, 4, dataclasses.replace(EDIT, picture=0.0))
    collab = collab_plan(MEMBERS, 100, 4, COLLAB)
    assert edit.duration == pytest.approx(collab.duration * 0.1, abs=0.01)


@pytest.mark.parametrize("transport", ["rmp", "mtp"])
def test_fifty_seeds_under_loss_are_complete_and_converged(transport: str) -> None:
    """``whiteboard sim --transport rmp|mtp --workload edit --loss 0.05 --peers 6``."""
    failed = []
    for seed in range(1, 51):
        config = ScenarioConfig(
            transport=transport,
            peers=6,
            messages=100,
            impairment=Impairment(loss=0.05),
            seed=seed,
            workload="edit",
        )
        result = run_scenario(config)
        if not (result["complete"] and result["converged"] and result["losses_injected"]):
            failed.append((seed, result["complete"], result["converged"]))
    assert failed == []
