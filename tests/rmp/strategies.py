"""Hypothesis strategies for valid RMP packets: every option type, in every arrangement the
wire format allows (Remind first, data-bearing option or Retransmit last, Join rules)."""

from __future__ import annotations

from hypothesis import strategies as st

from coreapi import MAX_INTRODUCTION
from rmp.batch import pack_batch
from rmp.fragment import MAX_PIECES
from rmp.wire import (
    FORMAT_RMP,
    MAX_NACK_RANGE,
    Batch,
    Confirm,
    Data,
    Image,
    Intro,
    Join,
    Nack,
    NackRange,
    Option,
    Piece,
    Remind,
    Retransmit,
    RmpPacket,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
payloads = st.binary(max_size=300)
batch_payloads = st.lists(st.binary(max_size=100), min_size=2, max_size=12)

nacks = st.builds(Nack, u8, u16, u32)
nack_ranges = st.builds(NackRange, u8, u16, u32, st.integers(1, MAX_NACK_RANGE))
confirms = st.builds(Confirm, u16, u32)
controls = st.one_of(nacks, nack_ranges, confirms)  # options that may repeat anywhere

SHAPES = (
    "control", "data", "batch", "piece", "image", "retransmit", "join_request", "join_answer"
)  # fmt: skip


@st.composite
def pieces(draw: st.DrawFn) -> tuple[Piece, bool]:
    """A Piece option and the S bit that goes with it (set on the last piece only)."""
    count = draw(st.one_of(st.integers(2, 8), st.integers(2, MAX_PIECES)))
    index = draw(st.one_of(st.just(0), st.just(count - 1), st.integers(0, count - 1)))
    return Piece(index, count), index == count - 1


@st.composite
def packets(draw: st.DrawFn, *, shapes: tuple[str, ...] = SHAPES) -> RmpPacket:
    shape = draw(st.sampled_from(shapes))
    s_bit = draw(st.booleans())
    piece: Piece | None = None
    if shape == "piece":
        piece, s_bit = draw(pieces())
    header = {
        "seq": draw(u16),
        "timestamp": draw(u32),
        "channel": draw(st.integers(0, 63)),
        "format": draw(st.one_of(st.just(FORMAT_RMP), st.integers(0, 63))),
        "s_bit": s_bit,
    }
    if shape == "join_request":
        introduction = draw(st.one_of(st.none(), st.binary(max_size=MAX_INTRODUCTION)))
        if introduction is None:
            return RmpPacket(options=(Join(draw(u8)),), **header)
        return RmpPacket(options=(Join(draw(u8)), Intro()), data=introduction, **header)
    options: list[Option] = []
    if draw(st.booleans()):
        options.append(Remind(draw(u8)))
    middle = draw(st.lists(controls, max_size=6))
    if shape == "join_answer":
        middle.insert(draw(st.integers(0, len(middle))), Join(draw(u8), answer=True))
    options += middle
    data: bytes | None = None
    if shape == "data":
        options.append(Data())
        data = draw(payloads)
    elif shape == "batch":
        batch = draw(batch_payloads)
        options.append(Batch(len(batch)))
        data = pack_batch(batch)
    elif shape == "image":
        options.append(Image(last=s_bit))
        data = draw(payloads)
    elif piece is not None:
        options.append(piece)
        data = draw(st.binary(min_size=1, max_size=300))
    elif shape == "retransmit":
        inner = packets(shapes=("data", "batch", "piece", "image"))
        options.append(Retransmit(draw(u32), draw(inner)))
    return RmpPacket(options=tuple(options), data=data, **header)


def _alone(option: st.SearchStrategy[Option]) -> st.SearchStrategy[RmpPacket]:
    return st.builds(
        lambda o, seq, ts: RmpPacket(seq=seq, timestamp=ts, options=(o,)), option, u16, u32
    )


# One strategy per option type, the option alone in its packet (§4.2: each option type).
single_option_packets: dict[str, st.SearchStrategy[RmpPacket]] = {
    "Join": _alone(st.builds(Join, u8)),
    "Nack": _alone(nacks),
    "NackRange": _alone(nack_ranges),
    "Confirm": _alone(confirms),
    "Remind": _alone(st.builds(Remind, u8)),
    "Image": st.builds(
        lambda last, data: RmpPacket(
            seq=1, timestamp=2, options=(Image(last),), data=data, s_bit=last
        ),
        st.booleans(),
        payloads,
    ),
    "Data": st.builds(
        lambda data: RmpPacket(seq=1, timestamp=2, options=(Data(),), data=data), payloads
    ),
    "Batch": st.builds(
        lambda batch: RmpPacket(
            seq=1, timestamp=2, options=(Batch(len(batch)),), data=pack_batch(batch)
        ),
        batch_payloads,
    ),
    "Piece": st.builds(
        lambda piece, data: RmpPacket(
            seq=1, timestamp=2, options=(piece[0],), data=data, s_bit=piece[1]
        ),
        pieces(),
        st.binary(min_size=1, max_size=300),
    ),
    "Intro": st.builds(
        lambda number, data: RmpPacket(
            seq=1, timestamp=2, options=(Join(number), Intro()), data=data
        ),
        u8,
        st.binary(max_size=MAX_INTRODUCTION),
    ),
    "Retransmit": st.builds(
        lambda source, inner: RmpPacket(seq=1, timestamp=2, options=(Retransmit(source, inner),)),
        u32,
        packets(shapes=("data", "image")),
    ),
}
