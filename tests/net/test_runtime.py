"""The multicast runtime on real loopback sockets, in one process and one selector loop."""

from __future__ import annotations

import socket

import pytest

from whiteboard.net.reactor import SelectorReactor
from whiteboard.net.runtime import MulticastCarrier, NetConfig, open_transport
from whiteboard.net.sockets import GroupAddress
from whiteboard.transport.driver import CoreDriver
from whiteboard.transport.events import Delivered, Event, MemberChanged
from whiteboard.transport.raw import RawPacket, RawType
from whiteboard.transport.registry import TransportUnavailable

WAIT = 20.0  # generous: the machine stalls for up to a second or two


class Member:
    def __init__(self, reactor: SelectorReactor, group: GroupAddress, **net: float) -> None:
        self.events: list[Event] = []
        config = NetConfig(group=group, iface="127.0.0.1", ttl=0, **net)  # type: ignore[arg-type]
        self.transport: CoreDriver
        self.carrier: MulticastCarrier
        self.transport, self.carrier = open_transport("raw", config, reactor, self.events.append)

    def payloads(self) -> list[bytes]:
        return [e.payload for e in self.events if isinstance(e, Delivered)]


def test_two_members_deliver_each_others_payloads(group: GroupAddress) -> None:
    reactor = SelectorReactor()
    a, b = Member(reactor, group), Member(reactor, group)
    a.transport.open()
    b.transport.open()
    assert reactor.run(
        stop=lambda: any(
            isinstance(e, MemberChanged) and e.member == b.transport.member_id for e in a.events
        ),
        timeout=WAIT,
    )
    for k in range(20):
        a.transport.send(b"a%d" % k)
        b.transport.send(b"b%d" % k)
    assert reactor.run(
        stop=lambda: len(a.payloads()) == 40 and len(b.payloads()) == 40, timeout=WAIT
    )
    assert sorted(a.payloads()) == sorted(b.payloads())
    a.transport.close()
    b.transport.close()
    assert a.transport.finished and b.transport.finished


def test_rx_loss_injection_is_seeded_and_exact(group: GroupAddress) -> None:
    reactor = SelectorReactor()
    sender = Member(reactor, group)
    lossy = Member(reactor, group, rx_loss=0.3, seed=5)
    sender.transport.open()
    lossy.transport.open()
    count = 200
    for k in range(count):
        sender.transport.send(b"%d" % k)
    # The lossy member gets every datagram it did not drop itself; wait for the sender's BYE
    # as the marker that everything before it has been read.
    sender.transport.close()
    assert reactor.run(
        stop=lambda: (
            any(isinstance(e, MemberChanged) and e.state == "left" for e in lossy.events)
            or lossy.carrier.stats.rx_loss_injected + len(lossy.payloads()) >= count + 1
        ),
        timeout=WAIT,
    )
    reactor.run(stop=lambda: False, timeout=0.2)
    injected = lossy.carrier.stats.rx_loss_injected
    assert 30 < injected < 100
    # Every injected loss hit a datagram (DATA, HELLO or BYE) the member would have had.
    received = lossy.transport.counters()["datagrams_received"]
    assert received + injected >= count
    assert len(lossy.payloads()) >= count - injected
    lossy.transport.close()


def test_tx_loss_injection_drops_a_seeded_share_of_what_is_sent(group: GroupAddress) -> None:
    reactor = SelectorReactor()
    lossy = Member(reactor, group, tx_loss=0.4, seed=3)
    listener = Member(reactor, group)
    listener.transport.open()
    lossy.transport.open()
    count = 200
    for k in range(count):
        lossy.transport.send(b"%d" % k)
    assert len(lossy.payloads()) == count  # the sender's own delivery is not on the wire
    dropped = lossy.carrier.stats.tx_loss_injected
    assert 40 < dropped < 130
    # Of the lossy member's datagrams (H HELLOs and `count` DATA), `dropped` never left; the
    # listener gets every DATA that did (nothing is lost on loopback at this rate).
    hellos = lossy.transport.counters()["datagrams_sent"] - count
    assert reactor.run(stop=lambda: len(listener.payloads()) >= count - dropped, timeout=WAIT)
    reactor.run(stop=lambda: False, timeout=0.3)  # let any stragglers in
    assert count - dropped <= len(listener.payloads()) <= count - dropped + hellos
    lossy.transport.close()
    listener.transport.close()


def test_malformed_datagrams_are_counted_and_the_member_lives_on(group: GroupAddress) -> None:
    reactor = SelectorReactor()
    a, b = Member(reactor, group), Member(reactor, group)
    a.transport.open()
    b.transport.open()
    junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    junk.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
    junk.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 0)
    for data in (b"", b"\x00" * 5, b"\xff" * 100, RawPacket(RawType.DATA, 0, 1, 1, 0).encode()):
        junk.sendto(data, (group.host, group.port))
    junk.close()
    assert reactor.run(stop=lambda: a.transport.counters()["malformed_dropped"] >= 4, timeout=WAIT)
    b.transport.send(b"still alive")
    assert reactor.run(stop=lambda: b"still alive" in a.payloads(), timeout=WAIT)
    assert a.transport.counters()["internal_errors"] == 0
    a.transport.close()
    b.transport.close()


def test_unknown_and_unbuilt_transports_are_reported_clearly(group: GroupAddress) -> None:
    reactor = SelectorReactor()
    config = NetConfig(group=group, iface="127.0.0.1", ttl=0)
    with pytest.raises(TransportUnavailable, match="unknown transport 'tcp'"):
        open_transport("tcp", config, reactor, lambda e: None)
    for name in ("rmp", "mtp"):
        try:
            transport, _ = open_transport(name, config, reactor, lambda e: None)
        except TransportUnavailable as exc:
            assert f"the '{name}' transport is not implemented in this build yet" in str(exc)
        else:
            transport.close()  # it has landed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("239.255.1.1", "ADDR:PORT"),
        ("10.1.2.3:5000", "not a multicast address"),
        ("239.255.1.1:70000", "from 1 to 65535"),
        ("nonsense:5000", "not an IPv4 address"),
    ],
)
def test_group_addresses_are_validated(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GroupAddress.parse(text)


def test_bad_interface_and_ttl_are_refused(group: GroupAddress) -> None:
    reactor = SelectorReactor()
    with pytest.raises(ValueError, match="IPv4 address of a local interface"):
        open_transport("raw", NetConfig(group=group, iface="eth0"), reactor, lambda e: None)
    with pytest.raises(ValueError, match="TTL"):
        open_transport(
            "raw", NetConfig(group=group, iface="127.0.0.1", ttl=300), reactor, lambda e: None
        )
