"""The side channel (issue 19, coreapi/ephemeral.py) on real loopback multicast: two members
of each transport in one selector loop see each other's latest pointer, in clear and in a
private session (sealed like every other datagram)."""

from __future__ import annotations

import pytest

from whiteboard.net.reactor import SelectorReactor
from whiteboard.net.runtime import NetConfig, open_transport
from whiteboard.net.sockets import GroupAddress
from whiteboard.replica import Replica
from whiteboard.security import derive_session_key
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import EphemeralReceived, Event, Ready
from whiteboard.transport.registry import describe

WAIT = 30.0  # generous: the machine stalls for up to a second or two


class Member:
    def __init__(
        self, reactor: SelectorReactor, group: GroupAddress, transport: str, host: bool, key: object
    ) -> None:
        self.events: list[Event] = []
        description = describe(transport)
        role = description.host_role if host else description.member_role
        params: dict[str, object] = {"profile": "lan"}
        if role is not None:
            params[description.role_param] = role.value
        config = NetConfig(group=group, iface="127.0.0.1", ttl=0)
        self.transport: CoreDriver
        self.replica = Replica()  # answers a joiner's request for the board (MTP, RMP)
        self.transport, _ = open_transport(
            transport,
            config,
            reactor,
            self._on_event,
            params,
            key=key,  # type: ignore[arg-type]
        )

    def _on_event(self, event: Event) -> None:
        self.events.append(event)
        self.replica.handle(event, self.transport)

    def ready(self) -> bool:
        return any(isinstance(e, Ready) for e in self.events)

    def latest(self) -> dict[int, bytes]:
        return {e.origin: e.payload for e in self.events if isinstance(e, EphemeralReceived)}


@pytest.mark.parametrize(
    ("transport", "private"), [("raw", False), ("rmp", False), ("mtp", False), ("rmp", True)]
)
def test_two_members_see_each_others_latest_pointer(
    group: GroupAddress, transport: str, private: bool
) -> None:
    key = derive_session_key("a long and private passphrase", str(group)) if private else None
    reactor = SelectorReactor()
    a = Member(reactor, group, transport, True, key)
    a.transport.open()
    assert reactor.run(stop=a.ready, timeout=WAIT)
    b = Member(reactor, group, transport, False, key)
    b.transport.open()
    assert reactor.run(stop=b.ready, timeout=WAIT)
    a_id, b_id = a.transport.member_id, b.transport.member_id

    def both_see(step: int) -> bool:
        return a.latest().get(b_id) == b"b %d" % step and b.latest().get(a_id) == b"a %d" % step

    # Until both have heard each other (a newcomer is known after its first packets), then on.
    for step in range(1, 200):
        a.transport.send_ephemeral(b"a %d" % step)
        b.transport.send_ephemeral(b"b %d" % step)
        if reactor.run(stop=lambda step=step: both_see(step), timeout=0.1):  # type: ignore[misc]
            break
    else:
        pytest.fail(f"no pointer crossed: a saw {a.latest()}, b saw {b.latest()}")
    final = step + 1
    a.transport.send_ephemeral(b"a %d" % final)
    b.transport.send_ephemeral(b"b %d" % final)
    assert reactor.run(stop=lambda: both_see(final), timeout=WAIT)
    assert a.transport.counters()["ephemeral_sent"] >= 2
    for member in (a, b):
        member.transport.close()
    reactor.run(stop=lambda: a.transport.finished and b.transport.finished, timeout=WAIT)
