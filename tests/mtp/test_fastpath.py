"""The fast path for a producer's late padding (mtp/fastpath.py, issue 18): the same effect
as the general path, packet for packet (RFC 1301 §3.2.3's empty[dally]s, §2.2.6)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

import mtp.core
from mtp.wire import DataModifier, EmptyModifier, MessageStatus, MtpPacket
from tests.mtp.core_harness import (
    MASTER,
    P1,
    P2,
    WEB,
    Node,
    addr_of,
    batch,
    data,
    empty,
    joined_member,
)
from whiteboard.transport.interface import Address

ACCEPTED = MessageStatus.ACCEPTED
ELSEWHERE: Address = ("10.0.0.99", 7100)

Step = tuple[MtpPacket, float, Address | None]


def _delivered_from_p2(node: Node) -> None:
    """Message 0, one packet from P2, accepted by the master: delivered."""
    node.receive(data(P2, 0, 0, batch(b"stroke"), DataModifier.EOM), 0.05)
    node.receive(empty(MASTER, 1, statuses={0: ACCEPTED}), 0.06)
    assert node.delivered_payloads() == [b"stroke"]


def _state(node: Node) -> tuple[object, ...]:
    core = node.core
    return (
        [(s.at, s.name, s.dest, s.raw) for s in node.sent],
        [type(e).__name__ for e in node.events],
        core.counters(),
        dict(core._link.addresses),
        core.get_timer(),
        sorted(core._receiver.incoming),
        core.web.next,
        core.web.next_deliver,
    )


def _both_ways(
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[], Node],
    steps: Sequence[Step],
) -> tuple[tuple[object, ...], tuple[object, ...], int]:
    """The state after ``steps`` with the fast path and without it, and how many packets the
    fast path took."""
    taken = 0
    fast_path = mtp.core.past_padding

    def counting(*args: object) -> bool:
        nonlocal taken
        took = fast_path(*args)  # type: ignore[arg-type]
        taken += took
        return took

    monkeypatch.setattr(mtp.core, "past_padding", counting)
    fast = make()
    for packet, at, addr in steps:
        fast.receive(packet, at, addr)
        fast.tick(at + 0.001)
    monkeypatch.setattr(mtp.core, "past_padding", lambda *args: False)
    slow = make()
    for packet, at, addr in steps:
        slow.receive(packet, at, addr)
        slow.tick(at + 0.001)
    return _state(fast), _state(slow), taken


def _consumer() -> Node:
    node = joined_member(P1, role="consumer")
    _delivered_from_p2(node)
    return node


def test_late_padding_of_a_delivered_message_is_taken_by_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # §3.2.3: the padding goes on after the verdict; by then every member delivered it.
    steps: list[Step] = [
        (empty(P2, 0, packet=1), 0.25, None),
        (empty(P2, 0, packet=1), 0.45, ELSEWHERE),  # P2 moved: its new address is learned
        (empty(P2, 0, packet=1), 0.65, addr_of(MASTER)),  # a relay: not P2's address
    ]
    fast, slow, taken = _both_ways(monkeypatch, _consumer, steps)
    assert taken == 3
    assert fast == slow
    assert fast[3][P2] == ELSEWHERE  # learned, and not the relay's


def test_other_packets_take_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[Step] = [
        (empty(P2, 1, packet=2), 0.25, None),  # a message not delivered yet: naked (§2.2.6)
        (empty(P2, 0, EmptyModifier.CANCEL), 0.3, None),  # a token given back (§3.2.3)
        (empty(P2, 0, packet=1, web=WEB + 1), 0.35, None),  # another web's
        (empty(MASTER, 1, statuses={0: ACCEPTED}), 0.4, None),  # the master's heartbeat
        (data(P2, 1, 0, batch(b"more")), 0.5, None),
    ]
    fast, slow, taken = _both_ways(monkeypatch, _consumer, steps)
    assert taken == 0
    assert fast == slow
    assert fast[5] == [1]  # message 1 opened by its dally


def test_the_master_hears_every_padding_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    # §3.2.1: the master's part watches token holders; no fast path on the master.
    def master() -> Node:
        node = Node(MASTER, {"role": "master"})
        node.start(0.0)
        node.run_until(2.0)
        return node

    steps: list[Step] = [(empty(P2, 0, packet=1), 2.1, None)]
    fast, slow, taken = _both_ways(monkeypatch, master, steps)
    assert taken == 0
    assert fast == slow
