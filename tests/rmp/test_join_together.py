"""Members who start within a moment of each other (a meeting's start): each joins as fast as
one alone does. §2.8's answer names no joiner, so two joining together both took the first
answer, and the one it was not for waited image_stall (5 s) for an image that never came."""

from __future__ import annotations

import random

import pytest

from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import params_for_transport
from whiteboard.sim.session import SimSession
from whiteboard.transport.events import Event, ProtocolEvent


@pytest.mark.parametrize("seed", [1, 3, 4, 6])
def test_members_started_within_a_second_and_a_half_all_join_promptly(seed: int) -> None:
    members = 3
    session = SimSession(
        "rmp", members, seed, Impairment(), params_for_transport("rmp", {"profile": "lan"})
    )
    asked_again: list[int] = []

    def watch(peer, params, handler):  # type: ignore[no-untyped-def]
        def handle(event: Event) -> None:
            if isinstance(event, ProtocolEvent) and event.name == "image_for_another":
                asked_again.append(peer.index)
            handler(event)

        return handle

    session.handler_wrappers.append(watch)
    rng = random.Random(seed)
    starts = sorted(rng.uniform(0.0, 1.5) for _ in range(members))
    for index, at in enumerate(starts):
        session.network.schedule(at, lambda index=index: session.start(index))
    session.network.run(30.0, stop=lambda: all(p.ready for p in session.peers))
    waits = [p.ready_at - starts[p.index] for p in session.peers if p.ready_at is not None]
    assert len(waits) == members
    # Listening (1.5 s) and an answer: never the 5 s of a stalled image on top.
    assert max(waits) < 2.5, waits
    assert asked_again  # these seeds start two joiners together (each waited ~6 s before)
    for index in range(members):
        session.draw(index)
    session.network.run(session.network.now + 10.0)
    assert session.converged()
    assert all(len(p.replica.board) == members for p in session.peers)
