"""The side channel's short way in (rmp/side.py ``receive_laid_out``): a datagram laid out as
ours are is taken without the general decoder, and every datagram, laid out so or not, ends
as it would through the decoder: the same payloads handed up, the same counters."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coreapi.ephemeral import MAX_EPHEMERAL
from rmp.wire import FORMAT_EPHEMERAL, Data, RmpPacket, encode
from tests.rmp.core_harness import A, B, C, Node, data_packet, ready_node
from whiteboard.transport.events import EphemeralReceived

# The bytes of the head that the short way reads: the header's first two, the Source
# option's lead and the Data option's lead.
HEAD_BYTES = [0, 1, 8, 9, 10, 11, 16, 17, 18, 19]


def side_datagram(source: int, seq: int, payload: bytes) -> bytes:
    packet = RmpPacket(
        seq=seq, timestamp=7, options=(Data(),), data=payload, format=FORMAT_EPHEMERAL,
        source=source,
    )  # fmt: skip
    return encode(packet)


def knowing_b(short_way: bool) -> Node:
    node = ready_node(A)
    node.receive(data_packet(B, 1, 5.1), 5.1)  # B is a station we know; C is not
    if not short_way:
        node.core._side.receive_laid_out = lambda data, source, now: False  # type: ignore[method-assign]
    return node


def outcome(node: Node) -> tuple[list[tuple[int, bytes]], dict[str, int]]:
    taken = [(e.origin, e.payload) for e in node.events if isinstance(e, EphemeralReceived)]
    return taken, node.core.counters()


def test_a_pointer_from_a_known_station_is_taken_the_short_way() -> None:
    node = knowing_b(short_way=True)
    node.core._side.receive = None  # type: ignore[assignment,method-assign]  # never reached
    node.receive(side_datagram(B, 3, b"where"), 5.2)
    node.receive(side_datagram(C, 3, b"stranger"), 5.3)
    node.receive(side_datagram(B, 2, b"older"), 5.4)  # latest wins: an older number is dropped
    malformed = node.counter("malformed_dropped")
    node.receive(side_datagram(B, 4, bytes(MAX_EPHEMERAL + 1)), 5.5)  # no sender of ours makes it
    assert outcome(node)[0] == [(B, b"where")]
    assert node.counter("malformed_dropped") == malformed + 1


@settings(max_examples=300, deadline=None)
@given(
    source=st.sampled_from([B, C]),
    seq=st.integers(0, 0xFFFF),
    payload=st.binary(max_size=600),
    changes=st.lists(
        st.tuples(st.sampled_from(HEAD_BYTES), st.integers(0, 255)), max_size=2
    ),
    cut=st.integers(0, 30),
)
def test_every_datagram_ends_as_through_the_decoder(
    source: int, seq: int, payload: bytes, changes: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(side_datagram(source, seq, payload))
    for index, value in changes:
        data[index] = value
    datagram = bytes(data[: len(data) - cut] if cut <= 20 else data)
    short, general = knowing_b(short_way=True), knowing_b(short_way=False)
    for node in (short, general):
        node.receive(datagram, 5.2)
        node.receive(side_datagram(B, (seq + 1) & 0xFFFF, b"next"), 5.3)
    assert outcome(short) == outcome(general)
