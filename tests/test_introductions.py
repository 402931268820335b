"""A joiner's name card travels with its join (issue 17: "the name and colour travel with the
join"; a joiner is never shown as a bare id, a viewer that never sends is named): on each
transport's wire, reported by the cores of the members already there as ``Introduced``, once
per card; the card codec refuses what a peer may send that is not one."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coreapi import MAX_INTRODUCTION
from mtp.wire import JoinData, MemberClass, MtpPacket
from mtp.wire import decode as mtp_decode
from mtp.wire import encode as mtp_encode
from rmp.wire import Intro, Join, RmpPacket, ntp_middle32
from rmp.wire import decode as rmp_decode
from rmp.wire import encode as rmp_encode
from tests.mtp.core_harness import P1, founded_master, join_request
from tests.mtp.core_harness import Node as MtpNode
from tests.rmp.core_harness import B, J, ready_node
from tests.rmp.core_harness import Node as RmpNode
from whiteboard.presence import (
    MAX_NAME,
    NameCard,
    PresenceDecodeError,
    decode_name_card,
    encode_name_card,
)
from whiteboard.transport.events import EventQueue, Introduced
from whiteboard.transport.raw import make_core as make_raw

CARD = encode_name_card(NameCard("Ada", 0xFF1E88E5))


def introduced(events: list[object]) -> list[tuple[int, bytes]]:
    return [(e.member, e.introduction) for e in events if isinstance(e, Introduced)]


# -- RMP: an Intro option after the Join request (docs/rmp-wire.md) ------------------------------


def test_rmp_join_requests_carry_the_card_and_members_report_it_once() -> None:
    joiner = RmpNode(B, {"profile": "lan"})
    joiner.core.introduce(CARD)
    joiner.start(0.0)
    request = joiner.sent[0].packet
    assert request.options == (Join(0), Intro()) and request.data == CARD
    member = ready_node(J)
    member.receive(joiner.sent[0].raw, 6.0)
    member.receive(joiner.sent[0].raw, 6.1)  # asked again: not reported again
    assert introduced(member.events) == [(B, CARD)]
    changed = encode_name_card(NameCard("Ada L.", 0xFF1E88E5))
    packet = RmpPacket(0, ntp_middle32(6.2), (Join(1), Intro()), changed, source=B)
    member.receive(packet, 6.2)  # a restart with another name: told
    assert introduced(member.events) == [(B, CARD), (B, changed)]


def test_rmp_an_intro_only_follows_a_join_request_and_is_bounded() -> None:
    with pytest.raises(ValueError, match="only after a Join request"):
        RmpPacket(1, 2, (Intro(),), b"card", source=B)
    with pytest.raises(ValueError, match="introduction of"):
        RmpPacket(1, 2, (Join(0), Intro()), bytes(MAX_INTRODUCTION + 1), source=B)
    ok = RmpPacket(1, 2, (Join(0), Intro()), bytes(MAX_INTRODUCTION), source=B)
    assert rmp_decode(rmp_encode(ok)) == ok


# -- MTP: after the join[request]'s Figure 3 fields (docs/mtp-wire.md) ---------------------------


def test_mtp_members_and_master_report_a_joiners_card() -> None:
    master = founded_master()
    joiner = MtpNode(P1, {"role": "consumer"})
    joiner.core.introduce(CARD)
    joiner.start(0.0)
    (request,) = [s for s in joiner.sent if s.packet.name == "join[request]"][:1]
    body = request.packet.body
    assert isinstance(body, JoinData) and body.introduction == CARD
    master.receive(request.raw, master.now + 0.01)
    master.receive(request.raw, master.now + 0.02)  # a retry: told once
    assert introduced(master.events) == [(P1, CARD)]


def test_mtp_only_a_join_request_carries_an_introduction() -> None:
    packet = join_request(P1, MemberClass.CONSUMER)
    assert isinstance(packet.body, JoinData) and packet.body.introduction == b""
    with pytest.raises(ValueError, match="at most"):
        JoinData(MemberClass.CONSUMER, introduction=bytes(MAX_INTRODUCTION + 1))
    body = JoinData(MemberClass.CONSUMER, introduction=CARD)
    carried = MtpPacket(packet.header, body)
    assert mtp_decode(mtp_encode(carried)) == carried


# -- raw: every HELLO carries it, so later joiners learn it too ------------------------------------


def test_raw_hellos_carry_the_card() -> None:
    now = [0.0]
    ann_upper, bob_upper = EventQueue(lambda: now[0]), EventQueue(lambda: now[0])
    ann = make_raw(1, ann_upper, random.Random(1), {})
    bob = make_raw(2, bob_upper, random.Random(2), {})
    ann.introduce(CARD)
    ann.start(0.0)
    bob.start(0.0)
    for data, _ in ann.datagrams_to_send(0.0) * 2:  # the HELLO twice: reported once
        bob.receive_datagram(data, ("h", 1), 0.0)
    assert introduced(list(bob_upper.drain())) == [(1, CARD)]


# -- the card itself -----------------------------------------------------------------------------


@given(st.text(min_size=1, max_size=MAX_NAME), st.integers(0, 0xFFFFFFFF), st.booleans())
def test_every_card_fits_an_introduction_and_comes_back(
    name: str, colour: int, chosen: bool
) -> None:
    card = NameCard(name, colour, chosen)
    data = encode_name_card(card)
    assert len(data) <= MAX_INTRODUCTION
    assert decode_name_card(data) == card


@given(st.binary(max_size=MAX_INTRODUCTION))
def test_a_card_decoder_raises_only_its_error(data: bytes) -> None:
    with contextlib.suppress(PresenceDecodeError):
        decode_name_card(data)
