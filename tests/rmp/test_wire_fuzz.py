"""Whatever a peer sends, decode raises RmpDecodeError or returns a packet that re-encodes to
the very same bytes (the encoding is canonical); never any other exception."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coreapi.boardstate import StateFormat, pack_state
from rmp.image import MAX_IMAGE_BYTES, ImageAssembly, ImageError, StateFormatError, split_image
from rmp.wire import (
    FORMAT_RMP,
    MAX_DATAGRAM,
    OptionType,
    RmpDecodeError,
    RmpPacket,
    decode,
    encode,
    peek_source,
)
from tests.fuzzing import mutated as shared_mutated
from tests.rmp.strategies import packets

FUZZ = settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(data: bytes) -> None:
    packet = None
    source = peek_source(data)  # the look before decoding (rmp/admission.py): never raises
    with contextlib.suppress(RmpDecodeError):
        packet = decode(data)
    if packet is not None:
        assert encode(packet) == data
        assert source == packet.source  # the look names whom the decoder would


@FUZZ
@given(st.binary(max_size=256))
def test_arbitrary_bytes_raise_only_the_documented_error(data: bytes) -> None:
    check(data)


# Bytes that get past the header (version 1, P set) and start with real option types, so the
# fuzzing reaches the option parser and the Retransmit recursion instead of stopping at byte 0.
option_leads = st.builds(
    lambda kind, final: bytes([kind | (0x80 if final else 0)]),
    st.sampled_from([int(kind) for kind in OptionType] + [0, 65, 74, 127]),
    st.booleans(),
)
mostly_zero = st.one_of(st.just(0), st.just(0), st.just(0x80), st.integers(0, 255))
option_bodies = st.builds(
    lambda lead, body: lead + bytes(body),
    option_leads,
    st.sampled_from([3, 7, 11]).flatmap(lambda n: st.lists(mostly_zero, min_size=n, max_size=n)),
)
chunks = st.one_of(option_bodies, option_leads, st.binary(min_size=1, max_size=4))
header = st.builds(
    lambda channel, s_bit, rest: bytes([0x40 | channel, 0x80 | s_bit << 6 | FORMAT_RMP]) + rest,
    st.integers(0, 63),
    st.integers(0, 1),
    st.binary(min_size=6, max_size=6),
)


@FUZZ
@given(header, st.lists(chunks, max_size=24))
def test_option_shaped_noise_raises_only_the_documented_error(
    head: bytes, body: list[bytes]
) -> None:
    check(head + b"".join(body))


def mutated() -> st.SearchStrategy[bytes]:
    return shared_mutated(packets().map(encode))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_valid_encodings_raise_only_the_documented_error(data: bytes) -> None:
    check(data)


@settings(max_examples=200, deadline=None)
@given(packets(), st.data())
def test_every_proper_prefix_of_a_packet_is_caught_or_is_itself_canonical(
    packet: RmpPacket, data: st.DataObject
) -> None:
    wire = encode(packet)
    cut = data.draw(st.integers(0, len(wire) - 1))
    check(wire[:cut])


def test_datagrams_beyond_the_udp_maximum_are_refused_before_parsing() -> None:
    wire = encode(RmpPacket(seq=1, timestamp=0))
    with pytest.raises(RmpDecodeError, match="exceeds the maximum 65507"):
        decode(wire + bytes(MAX_DATAGRAM))


# -- the image (rmp/image.py): its parts' frames and the packed state they carry -----------------


def _image_parts(state: bytes, size: int, form: int) -> list[bytes]:
    packed = pack_state(state) if form == StateFormat.ZLIB else state
    return split_image(7, packed, size, StateFormat(form))


image_parts = st.builds(
    _image_parts, st.binary(max_size=600), st.integers(64, 200), st.sampled_from([0, 1])
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(image_parts, st.data())
def test_image_parts_mutated_assemble_or_raise_only_the_documented_errors(
    parts: list[bytes], data: st.DataObject
) -> None:
    """Whatever the parts of an image hold (a frame, a format, a packed state), assembling and
    unpacking them raises ImageError or StateFormatError, or gives a state within the limit."""
    index = data.draw(st.integers(0, len(parts) - 1))
    parts[index] = data.draw(shared_mutated(st.just(parts[index])))
    try:
        assembly = ImageAssembly.start(parts[0])
        for part in parts[1:]:
            assembly.add(part)
        if assembly.complete:
            assert len(assembly.state()) <= MAX_IMAGE_BYTES
    except (ImageError, StateFormatError):
        pass
