"""coreapi.memo: one decode per datagram object (or payload value), however many members are
handed it."""

from __future__ import annotations

import pytest

from coreapi.memo import DecodeMemo, ValueMemo
from mtp.wire import decode_once as mtp_decode_once
from rmp.wire import decode_once as rmp_decode_once
from whiteboard.sim.session import SimSession
from whiteboard.transport.raw.wire import RawPacket, RawType
from whiteboard.transport.raw.wire import decode_once as raw_decode_once


class CountingDecoder:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, data: bytes) -> tuple[int, ...]:
        self.calls += 1
        if data.startswith(b"bad"):
            raise ValueError("malformed")
        return tuple(data)


def test_the_same_object_is_decoded_once_and_equal_bytes_each_time() -> None:
    decoder = CountingDecoder()
    memo = DecodeMemo(decoder, size=4)
    datagram = bytes([1, 2, 3])
    first = memo(datagram)
    assert all(memo(datagram) is first for _ in range(99))  # 100 members, one decode
    assert (decoder.calls, memo.hits) == (1, 99)
    twin = bytes(bytearray(datagram))  # equal, another object: another datagram
    assert twin is not datagram and memo(twin) == first and decoder.calls == 2


def test_a_failed_decode_is_not_remembered_and_buffers_are_never_kept() -> None:
    decoder = CountingDecoder()
    memo = DecodeMemo(decoder)
    bad = b"bad datagram"
    for _ in range(3):
        with pytest.raises(ValueError, match="malformed"):
            memo(bad)  # each member counts the malformed datagram itself
    buffer = bytearray(b"\x05\x06")
    assert memo(buffer) == (5, 6)
    buffer[0] = 7  # a mutable buffer may change between two calls: decoded afresh
    assert memo(buffer) == (7, 6)
    assert decoder.calls == 5 and memo.hits == 0


def test_the_memo_is_bounded_and_forgets_the_oldest_first() -> None:
    decoder = CountingDecoder()
    memo = DecodeMemo(decoder, size=3)
    datagrams = [bytes([n, n]) for n in range(5)]
    for datagram in datagrams:
        memo(datagram)
    assert len(memo._entries) == 3
    memo(datagrams[4])  # remembered
    memo(datagrams[0])  # forgotten: decoded again
    assert (decoder.calls, memo.hits) == (6, 1)
    with pytest.raises(ValueError, match="at least one entry"):
        DecodeMemo(decoder, size=0)


def test_every_transport_decodes_through_a_memo() -> None:
    datagram = RawPacket(RawType.HELLO, 5, 1, 0, 0).encode()
    assert raw_decode_once(datagram) is raw_decode_once(datagram)
    for decode_once in (rmp_decode_once, mtp_decode_once):
        assert isinstance(decode_once, DecodeMemo)


def test_a_value_memo_decodes_equal_payloads_once_and_nothing_else() -> None:
    decoder = CountingDecoder()
    memo = ValueMemo(decoder, size=2)
    payload = bytes([1, 2, 3])
    copies = [bytes(bytearray(payload)) for _ in range(99)]  # each member's own copy
    first = memo(payload)
    assert all(memo(copy) is first for copy in copies)
    assert (decoder.calls, memo.hits) == (1, 99)
    for _ in range(2):
        with pytest.raises(ValueError, match="malformed"):
            memo(b"bad payload")  # each replica counts it itself
    buffer = bytearray(b"\x05")
    assert memo(buffer) == (5,)
    buffer[0] = 6
    assert memo(buffer) == (6,)
    memo(b"\x01")
    memo(b"\x02")  # the memo holds two: the oldest, payload, is forgotten
    memo(payload)
    assert decoder.calls == 8
    with pytest.raises(ValueError, match="at least one entry"):
        ValueMemo(decoder, size=0)


def test_the_simulator_decodes_each_stroke_once_for_the_group() -> None:
    session = SimSession("rmp", 4, seed=2)
    for index in range(4):
        session.start(index)
    session.network.run(until=3.0)
    for _ in range(10):
        session.draw(0)
    session.network.run(until=10.0)
    assert all(len(peer.replica.board) == 10 for peer in session.peers)
    assert session.converged()
    # Four replicas (the drawer's own included) are handed each stroke; one decodes it.
    assert session.op_decoder.hits == 3 * 10
