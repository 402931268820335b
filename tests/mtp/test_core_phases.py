"""MtpCore changes its phase in one place, _enter, and reports every change as a ``phase``
protocol event, so that a session log shows the transitions (docs/mtp.md, Phases)."""

from __future__ import annotations

from mtp.link import Phase
from mtp.wire import MessageStatus
from tests.mtp.core_harness import (
    C1,
    HEARTBEAT,
    MASTER,
    P1,
    Node,
    empty,
    founded_master,
    joined_member,
)


def transitions(node: Node) -> list[tuple[str, str]]:
    events = node.protocol_events("phase")
    return [(str(e.fields["from"]), str(e.fields["to"])) for e in events]


def test_a_master_probes_then_founds_the_web() -> None:
    node = founded_master()
    assert transitions(node) == [("new", "probing"), ("probing", "ready")]


def test_a_member_joins_and_leaves() -> None:
    node = joined_member(P1)
    assert transitions(node) == [("new", "joining"), ("joining", "ready")]
    node.leave(1.0)
    node.run_until(1.0 + 40 * HEARTBEAT)
    assert node.core.phase is Phase.FINISHED
    assert transitions(node)[2:] == [
        ("ready", "leaving"),
        ("leaving", "quitting"),
        ("quitting", "finished"),
    ]


def test_a_member_that_falls_behind_goes_back_to_joining() -> None:
    """TR §3.2, RFC 1301 §2.2.6: a member more than 12 messages behind the master rejoins;
    the phase events show it leaving the web it was in."""
    node = joined_member(C1, role="consumer")
    accepted = dict.fromkeys(range(1, 13), MessageStatus.ACCEPTED)
    node.receive(empty(MASTER, 13, statuses=accepted), 0.1)  # message 0 shifted out unseen
    assert node.counter("rejoins") == 1 and node.core.phase is Phase.JOINING
    assert transitions(node) == [("new", "joining"), ("joining", "ready"), ("ready", "joining")]
