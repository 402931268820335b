"""The thin core's phase: changed in ``RmpCore._enter`` only, every change reported as a
``phase`` protocol event (so a session log shows it)."""

from __future__ import annotations

import ast
from pathlib import Path

import rmp
from rmp.wire import Confirm, Join
from tests.rmp.core_harness import A, J, Node, control_packet, ready_node

PACKAGE = Path(rmp.__file__).resolve().parent


def phases(node: Node) -> list[tuple[str, str]]:
    return [(str(e.fields["from"]), str(e.fields["to"])) for e in node.protocol_events("phase")]


def test_a_station_alone_goes_new_joining_ready_then_leaving_finished() -> None:
    node = ready_node(A)
    assert phases(node) == [("new", "joining"), ("joining", "ready")]
    node.send(b"x", 5.0)
    node.leave(5.1)
    node.run_until(30.0)
    assert phases(node)[2:] == [("ready", "leaving"), ("leaving", "finished")]
    assert node.core.finished


def test_an_answered_join_goes_through_the_image_phase() -> None:
    node = Node(J)
    node.start(0.0)
    node.receive(control_packet(A, 4, 0.4, Join(0, answer=True), Confirm(4, A)), 0.5)
    assert phases(node) == [("new", "joining"), ("joining", "image")]


def test_a_passive_joiner_reports_listening() -> None:
    node = Node(J, {"passive_join": True})
    node.start(0.0)
    assert phases(node) == [("new", "listening")]


def test_leaving_before_joined_finishes_at_once() -> None:
    node = Node(J)
    node.start(0.0)
    node.leave(0.5)
    assert phases(node) == [("new", "joining"), ("joining", "finished")]


def _phase_writers() -> list[str]:
    """Every function in rmp/ that assigns to an attribute named ``phase``."""
    writers = []
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            for node in ast.walk(func):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign | ast.AugAssign)
                    else []
                )
                for target in targets:
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    if any(isinstance(t, ast.Attribute) and t.attr == "phase" for t in elements):
                        writers.append(f"{path.name}:{func.name}")
    return writers


def test_only_enter_changes_the_phase() -> None:
    # Shared.__init__ sets the first phase; RmpCore._enter every later one.
    assert sorted(_phase_writers()) == ["context.py:__init__", "core.py:_enter"]
