"""Joining and the image (RR-2100 §2.8, §5) alone: ``Joiner`` (our join) and ``JoinAnswers``
(answering others'), each on a bare context with its links stubbed; no core around them."""

from __future__ import annotations

import random
import struct
import tracemalloc
import zlib

import pytest

from coreapi.boardstate import StateFormat, pack_state
from rmp.answer import Answer, AnswerLinks, JoinAnswers, answer_list_bytes, image_holes
from rmp.context import Phase
from rmp.image import split_image
from rmp.join import Joiner, JoinLinks
from rmp.ordering import Delivery
from rmp.sequencing import Sequencer
from rmp.stations import Station
from rmp.wire import Confirm, Image, Join, RmpPacket, encode, ntp_middle32
from tests.rmp.core_harness import A, B, J, addr_of, control_packet, data_packet, payload_of
from tests.rmp.parts import Consumed, Context
from whiteboard.transport.events import (
    BoardStateReceived,
    BoardStateRequested,
    Delivered,
    Failure,
    Ready,
)


class Joining:
    """A Joiner whose links record: phases entered, paces asked for; held packets are
    delivered through a real Delivery."""

    def __init__(self, phase: Phase = Phase.NEW, **params: object) -> None:
        self.ctx = Context(J, phase, **params)
        self.phases: list[Phase] = []
        self.paced: list[float] = []
        self.consumed = Consumed()
        self.sequencer = Sequencer(self.ctx.shared, self.consumed)
        links = JoinLinks(
            self.sequencer, Delivery(self.ctx.shared), self.known, self.enter, self.paced.append
        )
        self.part = Joiner(self.ctx.shared, links)

    def enter(self, phase: Phase) -> None:
        self.ctx.shared.phase = phase
        self.phases.append(phase)

    def known(self, ident: int, now: float) -> Station | None:
        station = self.ctx.shared.stations.get(ident)
        return station if station is not None else self.ctx.station(ident)


def join_numbers(joining: Joining) -> list[tuple[int, object]]:
    """The join requests sent since the last call: their numbers and destinations."""
    sent = joining.ctx.sent()
    joins = [(p.options[0], to) for p, to in sent if isinstance(p.options[0], Join)]
    assert len(joins) == len(sent)
    return [(join.join_number, to) for join, to in joins]


def image_packets(
    source: int,
    first_seq: int,
    state: bytes,
    joiner: int = J,
    form: StateFormat = StateFormat.RAW,
) -> list[RmpPacket]:
    """The image of ``state``, as is by default (as members before issue 18 sent it, still
    taken: the tests here count its parts by its size), or already packed in ``form``."""
    parts = split_image(joiner, state, 1024, form)
    last = len(parts) - 1
    return [
        RmpPacket(
            seq=first_seq + i,
            timestamp=0,
            options=(Image(i == last),),
            data=part,
            s_bit=i == last,
            source=source,
        )
        for i, part in enumerate(parts)
    ]


def answer_packet(answerer: int, at: float, *listed: tuple[int, int]) -> RmpPacket:
    confirms = [Confirm(seq, ident) for ident, seq in listed]
    return control_packet(answerer, listed[0][1], at, Join(0, answer=True), *confirms)


# -- our join -----------------------------------------------------------------------------------


def test_s2_8_join_numbers_grow_each_interval_then_the_station_is_alone() -> None:
    joining = Joining(join_tries=3, join_interval=1.0)
    joining.part.start(0.0)
    assert joining.phases == [Phase.JOINING]
    for now in (0.5, 1.0, 2.0):
        joining.part.timers(now)
    assert join_numbers(joining) == [(0, None), (1, None), (2, None)]
    joining.part.timers(3.0)
    assert joining.phases == [Phase.JOINING, Phase.READY] and joining.paced == [3.0]
    assert joining.ctx.shared.stations.depth == 1 and joining.part.next_join_at is None
    assert Ready() in joining.ctx.drain()
    assert not [e for e in joining.ctx.events if isinstance(e, Failure)]  # nobody heard


def test_s5_a_passive_joiner_listens_then_asks_the_first_station_heard_directly() -> None:
    joining = Joining(passive_join=True, join_tries=5, join_interval=1.0)
    joining.part.start(0.0)
    assert joining.phases == [Phase.LISTENING] and joining.part.next_join_at == 5.0
    assert list(joining.part.deadlines()) == [5.0]
    joining.part.heard(joining.ctx.station(A), 1.0)
    assert joining.phases == [Phase.LISTENING, Phase.JOINING]
    assert join_numbers(joining) == [(255, addr_of(A))]  # 255 obliges it whatever its depth
    assert joining.part.heard_active and joining.part.heard_from == A


def test_s2_8_with_a_busy_group_heard_later_tries_go_to_a_station_heard() -> None:
    joining = Joining(join_tries=2, join_tries_when_heard=3, join_interval=1.0)
    joining.part.start(0.0)
    joining.part.heard(joining.ctx.station(A), 0.5)
    for now in (1.0, 2.0):
        joining.part.timers(now)
    assert join_numbers(joining) == [(0, None), (1, None), (255, addr_of(A))]
    joining.part.timers(3.0)
    assert joining.phases[-1] is Phase.READY
    (failure,) = [e for e in joining.ctx.drain() if isinstance(e, Failure)]
    assert "no member answered" in failure.reason


def test_s2_8_the_answer_sets_each_sequence_our_s_n_and_starts_the_image() -> None:
    joining = Joining(Phase.JOINING)
    b = joining.ctx.station(B)
    joining.sequencer.on_data(b, data_packet(B, 9, 0.1), 0.1, live=True)  # in the image
    joining.sequencer.on_data(b, data_packet(B, 12, 0.1), 0.1, live=True)  # after it
    a = joining.ctx.station(A)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4), (B, 9), (J, 7)), 0.5)
    assert joining.phases == [Phase.IMAGE] and joining.part.answerer == A
    assert joining.ctx.shared.seq == 7  # §2.8: a rejoining station resumes its S_n
    assert (a.last_valid, b.last_valid) == (4, 9) and list(b.waiting) == [12]
    assert sorted(b.missing) == [10, 11]  # between the list and what waits
    assert joining.ctx.shared.clock_offset == 0.0  # under 0.5 s: taken as null
    assert list(joining.part.deadlines()) == [0.5 + 20.0]  # image_stall
    (event,) = joining.ctx.protocol_events("join_answered")
    assert event.fields["answerer"] == A and event.fields["stations"] == 2


def test_s2_8_the_clock_offset_is_taken_from_the_answers_timestamp() -> None:
    joining = Joining(Phase.JOINING)
    a = joining.ctx.station(A)
    answer = answer_packet(A, 0.0, (A, 4))
    stamped = RmpPacket(
        seq=answer.seq, timestamp=ntp_middle32(102.0), options=answer.options, source=A
    )
    joining.part.on_answer(a, stamped, 2.0)
    assert abs(joining.ctx.shared.clock_offset - 100.0) < 1e-3


def test_s2_8_the_image_parts_make_the_board_then_held_drawings_are_delivered() -> None:
    joining = Joining(Phase.JOINING)
    a, b = joining.ctx.station(A), joining.ctx.station(B)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4), (B, 9)), 0.5)
    b.last_valid = 10
    joining.part.hold(b, data_packet(B, 10, 0.6))
    state = b"S" * 2500
    parts = image_packets(A, 5, state)
    for index, packet in enumerate(parts):
        a.last_valid = 5 + index
        joining.part.on_image_part(a, packet, 0.7 + index / 10)
    events = joining.ctx.drain()
    kinds = [type(e) for e in events if isinstance(e, BoardStateReceived | Ready | Delivered)]
    assert kinds == [BoardStateReceived, Ready, Delivered]
    assert BoardStateReceived(state) in events
    assert [e.payload for e in events if isinstance(e, Delivered)] == [payload_of(B, 10)]
    assert joining.phases == [Phase.IMAGE, Phase.READY]
    ((confirm, to),) = joining.ctx.sent()  # our progress, to the answerer (§5)
    assert confirm.options == (Confirm(7, A),) and to == addr_of(A)


def test_an_image_for_another_joiner_first_makes_us_ask_again_at_once() -> None:
    """§2.8's answer names no joiner: the one we took may have been another's. Its image
    coming before any part of ours, we ask again now (once per answer), not after
    image_stall; its parts are never taken for ours."""
    joining = Joining(Phase.JOINING)
    a = joining.ctx.station(A)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4)), 0.5)
    joining.part.on_image_part(a, image_packets(A, 5, b"x", joiner=B)[0], 0.6)
    assert joining.part.image is None and joining.phases == [Phase.IMAGE, Phase.JOINING]
    assert join_numbers(joining) == [(0, None)]
    assert [e.fields for e in joining.ctx.protocol_events("image_for_another")] == [
        {"answerer": A}
    ]


def test_once_ours_has_begun_another_joiners_image_is_only_ignored() -> None:
    joining = Joining(Phase.JOINING)
    a = joining.ctx.station(A)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4)), 0.5)
    ours = image_packets(A, 5, b"x" * 5000)  # ours (J): several parts
    joining.part.on_image_part(a, ours[0], 0.6)
    joining.part.on_image_part(a, image_packets(A, 11, b"y", joiner=B)[0], 0.7)
    assert joining.part.image is not None and joining.phases == [Phase.IMAGE]
    assert not joining.ctx.protocol_events("image_for_another")


def test_s2_8_held_drawings_the_new_list_counts_are_dropped() -> None:
    joining = Joining(Phase.JOINING)
    a, b = joining.ctx.station(A), joining.ctx.station(B)
    for seq in (8, 9, 10):
        b.last_valid = seq
        joining.part.hold(b, data_packet(B, seq, 0.1))
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4), (B, 9)), 0.5)
    # 10 goes back into B's sequence (held again by the core, handed on here), once.
    held = [h.seq for h in joining.part.held]
    assert held + [seq for _, seq, _ in joining.consumed.items] == [10]


def test_a_stalled_image_asks_again() -> None:
    joining = Joining(Phase.JOINING, image_stall=5.0)
    a = joining.ctx.station(A)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4)), 0.5)
    joining.part.timers(5.4)
    assert joining.phases == [Phase.IMAGE]
    joining.part.timers(5.5)
    assert joining.phases == [Phase.IMAGE, Phase.JOINING] and joining.part.answerer is None
    assert join_numbers(joining) == [(0, None)]
    assert [e.fields for e in joining.ctx.protocol_events("image_stalled")] == [{"answerer": A}]


# -- answering others' joins --------------------------------------------------------------------


class Answering:
    def __init__(self, **params: object) -> None:
        self.ctx = Context(A, Phase.READY, **params)
        self.sending: set[int] = set()
        sequencer = Sequencer(self.ctx.shared, Consumed())
        links = AnswerLinks(self.sending.__contains__, sequencer.settle, sequencer.resumed)
        self.part = JoinAnswers(self.ctx.shared, links)

    def requests(self) -> list[int]:
        return [e.request for e in self.ctx.drain() if isinstance(e, BoardStateRequested)]


def test_s2_8_a_station_whose_depth_allows_asks_for_the_board_at_once() -> None:
    answering = Answering()
    joiner = answering.ctx.station(J)
    answering.ctx.station(B, last_valid=3)
    answering.ctx.shared.stations.emitted(B)  # B drew last: in front of us, at depth 0
    answering.ctx.shared.seq = 6
    answering.ctx.shared.stations.depth = 1
    answering.part.on_request(joiner, Join(0), 1.0)
    assert answering.requests() == []
    answering.part.on_request(joiner, Join(1), 1.0)
    assert answering.requests() == [1]
    answer = answering.part.take(1)
    assert answer == Answer(J, {J: 0, B: 3, A: 6}, 1) and answering.part.take(1) is None


def test_s2_8_the_answer_lists_us_first_and_is_repeated_for_a_repeated_request() -> None:
    answering = Answering()
    joiner = answering.ctx.station(J)
    answering.part.send_answer(Answer(J, {J: 0, B: 3, A: 6}, 2), 1.0)
    ((packet, to),) = answering.ctx.sent()
    assert to is None  # multicast: others hear the join is answered
    assert packet.options == (Join(2, answer=True), Confirm(6, A), Confirm(0, J), Confirm(3, B))
    answering.part.on_request(joiner, Join(3), 2.0)
    ((again, _),) = answering.ctx.sent()
    assert again.options == packet.options and answering.requests() == []
    assert list(answering.part.deadlines()) == [1.0 + 20.0]
    answering.part.forget(21.0)
    assert answering.part.answered == {}


def test_an_answer_heard_from_another_station_makes_ours_stand_down() -> None:
    answering = Answering(answer_spread=0.2, seed=1)
    joiner = answering.ctx.station(J)
    answering.part.on_request(joiner, Join(255), 1.0)
    ((due, number),) = answering.part.due.values()
    assert 1.0 < due <= 1.2 and number == 255
    answering.part.heard_answer(answer_packet(B, 1.0, (B, 1), (J, 0)), 1.01)
    answering.part.answer_due(due)
    assert answering.requests() == [] and answering.part.due == {}


def test_no_second_answer_while_an_image_is_on_its_way_or_before_ready() -> None:
    answering = Answering()
    joiner = answering.ctx.station(J)
    answering.sending.add(J)
    answering.part.on_request(joiner, Join(255), 1.0)
    answering.sending.clear()
    answering.ctx.shared.phase = Phase.IMAGE
    answering.part.on_request(joiner, Join(255), 1.0)
    assert answering.requests() == [] and answering.part.due == {}


# -- the packed image (ours, issue 18: coreapi/boardstate.py) ------------------------------------


def _receive_image(joining: Joining, packed: bytes) -> list[object]:
    a = joining.ctx.station(A)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4)), 0.5)
    for index, packet in enumerate(image_packets(A, 5, packed, form=StateFormat.ZLIB)):
        a.last_valid = 5 + index
        joining.part.on_image_part(a, packet, 0.7 + index / 10)
    return list(joining.ctx.drain())


def test_a_packed_image_is_unpacked_into_the_board() -> None:
    state = b"stroke " * 2000
    packed = pack_state(state)
    assert len(packed) < 1024  # one part for 14,000 bytes
    joining = Joining(Phase.JOINING)
    events = _receive_image(joining, packed)
    assert BoardStateReceived(state) in events and Ready() in events
    assert joining.phases == [Phase.IMAGE, Phase.READY]


def _assert_refused(joining: Joining, events: list[object], reason: str) -> None:
    assert not [e for e in events if isinstance(e, BoardStateReceived | Ready)]
    (failure,) = [e for e in events if isinstance(e, Failure)]
    assert "board image from member" in failure.reason and reason in failure.reason
    assert "asking again" in failure.reason
    assert joining.ctx.shared.counters["images_refused"] == 1
    assert [e.fields for e in joining.ctx.protocol_events("image_refused")] == [{"answerer": A}]
    # Asked again at once, as for an answerer gone quiet (§2.8).
    assert joining.phases == [Phase.IMAGE, Phase.JOINING] and joining.part.image is None
    assert [p.options[0] for p, _ in joining.ctx.sent() if isinstance(p.options[0], Join)]


def test_a_corrupt_packed_image_is_refused_counted_reported_and_asked_again() -> None:
    packed = bytearray(pack_state(b"stroke " * 2000))
    packed[20] ^= 0xFF
    joining = Joining(Phase.JOINING)
    _assert_refused(joining, _receive_image(joining, bytes(packed)), "corrupt")


def test_a_truncated_packed_image_is_refused() -> None:
    packed = pack_state(random.Random(1).randbytes(3000))
    joining = Joining(Phase.JOINING)
    _assert_refused(joining, _receive_image(joining, packed[:-100]), "cut short")


def test_a_decompression_bomb_image_is_refused_within_bounded_memory() -> None:
    """32 MiB of zeros in ~32 KB (32 parts) that claim 1 MiB: cut at the claim and refused;
    the joiner never holds the 32 MiB."""
    inflater = zlib.compressobj(9)
    stream = b"".join(inflater.compress(bytes(1 << 20)) for _ in range(32)) + inflater.flush()
    packed = struct.pack("!I", 1 << 20) + stream
    joining = Joining(Phase.JOINING)
    tracemalloc.start()
    try:
        events = _receive_image(joining, packed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    _assert_refused(joining, events, "inflates past")
    assert peak < 6 << 20, f"a bomb image peaked at {peak / (1 << 20):.1f} MiB"


@pytest.mark.parametrize("max_datagram", [1472, 1428, 1300])
def test_an_answer_listing_many_stations_fits_the_datagram_limit(max_datagram: int) -> None:
    """A private session's datagrams are smaller (the envelope's 44 bytes): an answer's list,
    holes included, is sized to ``max_datagram``, not to 1,472 bytes (a private member
    answering a crowd raised an assertion and never answered)."""
    answering = Answering(max_datagram=max_datagram)
    stations = {0x100 + k: 3 for k in range(200)}
    answering.part.send_answer(Answer(J, {A: 6, J: 0, **stations}, 2), 1.0)
    ((packet, _),) = answering.ctx.sent()
    assert len(encode(packet)) <= max_datagram
    listed = [o for o in packet.options if isinstance(o, Confirm)]
    assert listed[0] == Confirm(6, A) and len(listed) == answer_list_bytes(max_datagram) // 8
    station = answering.ctx.station(B, last_valid=2)
    station.delivered_ahead.update(range(4, 400, 2))  # holes enough to overflow the room
    crowd = [answering.ctx.station(0x200 + k, last_valid=1) for k in range(150)]
    _, holes = image_holes([station, *crowd], answer_list_bytes(max_datagram))
    room = answer_list_bytes(max_datagram) - 8 * (len(crowd) + 3)
    assert sum(h.SIZE for h in holes) <= max(room, 0)
