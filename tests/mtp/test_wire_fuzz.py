"""Whatever a peer sends, decode raises MtpDecodeError or returns a packet that re-encodes to
the very same bytes (the encoding is canonical); never any other exception."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coreapi.boardstate import StateFormat
from mtp.framing import (
    MAX_STATE_BYTES,
    FramingError,
    decode_state,
    decode_verdicts,
    encode_state,
    state_format,
)
from mtp.wire import MAX_DATAGRAM, MtpDecodeError, MtpPacket, decode, encode
from tests.fuzzing import mutated as shared_mutated
from tests.mtp.strategies import packets

FUZZ = settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(data: bytes) -> MtpPacket | None:
    packet = None
    with contextlib.suppress(MtpDecodeError):
        packet = decode(data)
    if packet is not None:
        assert encode(packet) == data
    return packet


@FUZZ
@given(st.binary(max_size=256))
def test_arbitrary_bytes_raise_only_the_documented_error(data: bytes) -> None:
    check(data)


# Bytes that get past the version byte with a real (or nearly real) type and modifier, ids and a
# status vector that are often valid, and a data part made of 4-byte words that are mostly zero,
# so the fuzzing reaches every rule and every data-part parser instead of stopping at byte 0.
mostly_zero = st.one_of(st.just(0), st.just(0), st.just(1), st.integers(0, 255))
small = st.one_of(st.just(0), st.integers(0, 3), st.integers(0, 255))
word = st.one_of(
    st.just(bytes(4)),
    st.binary(min_size=4, max_size=4),
    st.lists(mostly_zero, min_size=4, max_size=4).map(bytes),
)
header_noise = st.builds(
    lambda first, ids, vector, rest: bytes(first) + ids + vector + rest,
    st.tuples(st.just(1), st.integers(0, 7), st.integers(0, 3), small),
    st.one_of(st.binary(min_size=8, max_size=8), st.just(b"\x00\x00\x00\x07\x00\x00\x00\x09")),
    st.one_of(
        st.just(bytes(4)),
        st.builds(
            lambda sync, v: bytes([sync]) + v.to_bytes(3, "big"),
            small,
            st.integers(0, (1 << 24) - 1),
        ),
    ),
    st.binary(min_size=12, max_size=12),
)
tails = st.one_of(
    st.lists(word, max_size=12).map(b"".join),
    st.binary(max_size=20),
)


@FUZZ
@given(header_noise, tails)
def test_header_shaped_noise_raises_only_the_documented_error(head: bytes, tail: bytes) -> None:
    check(head + tail)


def mutated() -> st.SearchStrategy[bytes]:
    return shared_mutated(packets().map(encode))


@FUZZ
@given(mutated())
def test_mutated_valid_encodings_raise_only_the_documented_error(data: bytes) -> None:
    check(data)


@settings(max_examples=300, deadline=None)
@given(packets(), st.data())
def test_every_proper_prefix_is_caught_or_is_itself_canonical(
    packet: MtpPacket, data: st.DataObject
) -> None:
    wire = encode(packet)
    cut = data.draw(st.integers(0, len(wire) - 1))
    check(wire[:cut])


def test_datagrams_beyond_the_udp_maximum_are_refused_before_parsing() -> None:
    with pytest.raises(MtpDecodeError, match="exceeds the maximum 65507"):
        decode(bytes(MAX_DATAGRAM + 1))


# -- the board message's client bytes (mtp/framing.py, TR §3.4), its board packed --------------

board_messages = st.builds(
    lambda number, state, verdicts, form: encode_state(number, state, verdicts, form),
    st.integers(0, 2**64 - 1),
    st.binary(max_size=600),
    st.lists(st.booleans(), max_size=40),
    st.sampled_from(list(StateFormat)),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=200), shared_mutated(board_messages)))
def test_board_messages_decode_or_raise_only_the_framing_error(data: bytes) -> None:
    try:
        _, state = decode_state(data)
    except FramingError:
        return
    assert len(state) <= MAX_STATE_BYTES


@given(board_messages)
def test_board_messages_round_trip(data: bytes) -> None:
    number, state = decode_state(data)
    assert (
        encode_state(number, state, decode_verdicts(data), StateFormat(state_format(data))) == data
    )
