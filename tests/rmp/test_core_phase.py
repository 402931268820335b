"""The thin core's phase: changed in ``RmpCore._enter`` only, every change reported as a
``phase`` protocol event (so a session log shows it)."""

from __future__ import annotations

import ast
from pathlib import Path

import rmp
from coreapi import MemberState
from rmp.timestamps import ntp_middle32
from rmp.wire import Confirm, Join, RmpPacket, decode
from tests.rmp.core_harness import A, B, C, J, Node, control_packet, data_packet, ready_node
from whiteboard.transport.events import MemberChanged

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
    farewell = node.sent[-1].packet  # alone, it owes no Confirm, and still says it goes
    assert farewell.s_bit and farewell.data is None and farewell.options == ()


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


def test_a_member_leaving_multicasts_what_it_holds_of_the_others() -> None:
    """RMP has no leave message: a member that goes tells, in one multicast control packet,
    what it holds of each station's, so that no emitter reminds it of it after it left."""
    node = ready_node(B)
    node.receive(data_packet(A, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.1), 5.1)
    node.receive(data_packet(C, 2, 5.2), 5.2)
    node.send(b"ours", 5.25)  # its data packet confirms theirs (the A flags are set) ...
    node.receive(data_packet(A, 2, 5.26), 5.26)  # ... and A's next one comes after it
    mark = len(node.sent)
    node.leave(5.3)
    for source, seq in ((A, 2), (C, 2)):  # both confirm ours: it may go
        node.receive(control_packet(source, seq, 5.4, Confirm(1, B)), 5.4)
    node.run_until(30.0)
    finished_at = max(e.at for e in node.protocol_events("phase"))
    assert node.core.finished and finished_at < 9.0  # before any keepalive was due
    said = [s for s in node.sent_after(mark) if s.dest is None and not s.is_data]
    assert [(s.at, s.options_of(Confirm)) for s in said] == [(finished_at, [Confirm(2, A)])]
    # Its S bit: "end of a synchronisation unit" (§4.1), of its stream.
    assert said[0].packet.s_bit and decode(said[0].raw).s_bit


def left_at(node: Node, member: int) -> list[float]:
    return [
        node.now
        for e in node.events
        if isinstance(e, MemberChanged) and e.member == member and e.state is MemberState.LEFT
    ]


def test_a_farewell_is_taken_at_once_unless_something_of_it_is_missing() -> None:
    """The others forget a member that said farewell when they lack nothing of it, instead
    of suspecting it after ``suspect_after``: a send window no longer waits for it (a joiner's
    image stalled 3.7 s behind a member that had left). One still missing some of its packets
    keeps it, as they may still be repaired."""
    node = ready_node(A)
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.receive(data_packet(C, 1, 5.1), 5.1)
    bye = RmpPacket(seq=1, timestamp=ntp_middle32(5.2), options=(), source=B, s_bit=True)
    node.receive(bye, 5.2)
    assert left_at(node, B) == [5.2] and node.core.stations.get(B) is None
    node.receive(data_packet(C, 3, 5.3), 5.3)  # C's 2 is missing
    bye = RmpPacket(seq=3, timestamp=ntp_middle32(5.4), options=(), source=C, s_bit=True)
    node.receive(bye, 5.4)
    assert left_at(node, C) == [] and node.core.stations.get(C) is not None


def test_a_member_leaving_before_it_joined_says_nothing() -> None:
    node = Node(J)
    node.start(0.0)
    mark = len(node.sent)
    node.leave(0.5)
    assert node.sent_after(mark) == []
