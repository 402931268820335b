"""RR-2100 §2.8 (joining a group: join requests, the answer, the image, the clock offset) and the
§5 passive join."""

from __future__ import annotations

import pytest

from coreapi.boardstate import StateFormat, unpack_state
from rmp.core import Phase
from rmp.image import FRAME, split_image
from rmp.wire import Confirm, Data, Image, Join, RmpPacket, ntp_middle32
from tests.rmp.core_harness import (
    A,
    B,
    C,
    J,
    Node,
    addr_of,
    control_packet,
    core_of,
    data_packet,
    incompressible,
    payload_of,
    ready_node,
    rmp_session,
    start_all_alone,
    timestamp_seconds,
)
from whiteboard.board import Board
from whiteboard.transport.events import BoardStateReceived, Delivered, MemberChanged, Ready


def _join_request(source: int, number: int, at: float) -> RmpPacket:
    return RmpPacket(seq=0, timestamp=ntp_middle32(at), options=(Join(number),), source=source)


def _image_packets(
    source: int, first_seq: int, state: bytes, at: float, joiner: int = J
) -> list[RmpPacket]:
    parts = split_image(joiner, state, 1024)  # an image is tagged with its joiner's id
    return [
        RmpPacket(
            seq=first_seq + index,
            timestamp=ntp_middle32(at),
            options=(Image(index == len(parts) - 1),),
            data=part,
            s_bit=index == len(parts) - 1,
            source=source,
        )
        for index, part in enumerate(parts)
    ]


# -- the join requests -----------------------------------------------------------------------


@pytest.mark.parametrize(("tries", "expected_ready"), [(5, 5.0), (2, 2.0)])
def test_s2_8_the_join_number_grows_up_to_join_tries_then_the_station_is_alone(
    tries: int, expected_ready: float
) -> None:
    node = Node(J, {"join_tries": tries})
    node.start(0.0)
    node.run_until(expected_ready - 0.001)
    assert node.core.phase is Phase.JOINING and not node.is_ready()
    node.run_until(expected_ready)
    assert node.core.phase is Phase.READY and node.is_ready()
    joins = [(s.at, s.packet.options, s.dest, s.packet.data) for s in node.sent]
    assert joins == [(float(n), (Join(n),), None, None) for n in range(tries)]
    assert node.states_received() == []  # alone: an empty board
    assert MemberChanged(J, "active") in node.events
    node.run_until(30.0)
    assert not [s for s in node.sent if s.options_of(Join)][tries:]


def test_s5_a_joiner_that_hears_members_but_gets_no_answer_keeps_asking() -> None:
    node = Node(J, {"join_tries_when_heard": 8})
    node.start(0.0)
    node.receive(data_packet(B, 4, 0.5), 0.5)  # someone is there: not alone after 5 tries
    node.run_until(20.0)
    joins = [(s.options_of(Join)[0].join_number, s.dest) for s in node.sent if s.options_of(Join)]
    # Five multicast tries (0..4), then, since every depth may exceed our numbers, the
    # station we heard is asked directly with 255, as a passive join does.
    assert [n for n, _ in joins] == [0, 1, 2, 3, 4, 255, 255, 255]
    assert all(dest is None for _, dest in joins[:5])
    assert all(dest is not None for _, dest in joins[5:])
    assert node.is_ready() and node.core.phase is Phase.READY
    assert any("no member answered" in getattr(e, "reason", "") for e in node.events)


# -- the answer ------------------------------------------------------------------------------


def _answerer_at_depth_one() -> Node:
    node = ready_node()
    node.receive(data_packet(B, 1, 5.1), 5.1)
    node.send(b"own 1", 5.2)
    node.send(b"own 2", 5.3)
    for seq in (1, 2, 3):
        node.receive(data_packet(C, seq, 5.4), 5.4 + seq / 100)
    assert node.core.depth == 1
    return node


def test_s2_8_the_station_within_the_join_number_answers_with_all_last_sequence_numbers() -> None:
    node = _answerer_at_depth_one()
    node.receive(_join_request(J, 0, 6.0), 6.0)
    assert node.requests() == []  # depth 1 > join number 0
    node.receive(_join_request(J, 1, 7.0), 7.0)
    (request,) = node.requests()
    mark = len(node.sent)
    state = incompressible(2560)  # packed to 2,575 bytes: three parts of 1,024 at most
    node.provide(request, state, 7.0)
    node.run_until(7.5)
    sent = node.sent_after(mark)
    answer = sent[0]
    assert answer.dest is None and answer.packet.data is None
    assert answer.packet.options[0] == Join(answer.packet.options[0].join_number, answer=True)
    listed = answer.options_of(Confirm)
    assert listed[0] == Confirm(2, A)  # its own, first
    assert {Confirm(2, A), Confirm(1, B), Confirm(3, C)} <= set(listed)
    # Then the image, as data packets with the next sequence numbers, S bit on the last.
    parts = [s for s in sent[1:] if s.is_data and s.remind is None]
    assert [s.packet.seq for s in parts] == [3, 4, 5]
    # (Confirmations may ride on them, as on every data packet: §2.3.)
    assert [s.packet.options[-1] for s in parts] == [Image(False), Image(False), Image(True)]
    assert [s.packet.s_bit for s in parts] == [False, False, True]
    packed = b"".join(s.packet.data[FRAME.size :] for s in parts)
    assert unpack_state(StateFormat.ZLIB, packed, len(state)) == state
    assert all(s.dest is None for s in parts)


def test_s2_8_the_answer_repeats_the_join_number_of_the_request() -> None:
    node = _answerer_at_depth_one()
    node.receive(_join_request(J, 3, 7.0), 7.0)
    (request,) = node.requests()
    node.provide(request, b"state", 7.0)
    (answer,) = [s for s in node.sent if any(j.answer for j in s.options_of(Join))]
    assert answer.packet.options[0] == Join(3, answer=True)


def test_s2_8_in_a_group_only_the_front_of_the_queue_answers_the_first_join() -> None:
    session, recorder = rmp_session(4, 5)
    for index in range(3):
        session.start(index)
    session.network.run(6.0)
    for k, index in enumerate((1, 2, 0)):  # queue: 0 (depth 0), 2, 1
        session.network.schedule(6.0 + k, lambda index=index: session.draw(index))
    session.network.run(9.5)
    assert [core_of(session, i).depth for i in range(3)] == [0, 2, 1]
    session.start(3)
    session.network.run(15.0)
    answers = [
        w for w in recorder.wires if any(getattr(o, "answer", False) for o in w.packet.options)
    ]
    assert [w.sender for w in answers] == [0]
    requests = [w for w in recorder.sent_by(3) if w.packet.options[:1] == (Join(0),)]
    assert len(requests) == 1  # answered at the first try
    assert session.peers[3].ready and session.converged()
    assert len(session.peers[3].replica.board.log()) == 3


def test_s2_8_in_an_idle_group_the_front_of_the_queue_answers_the_first_join() -> None:
    """Nobody drew since the last join, so no depth is 0 and §2.8's rule alone leaves join
    number 0 unanswered until the next try. Our extension: the station nobody is in front of
    answers it (rmp/answer.py); one with a station in front of it still does not."""
    alone = ready_node()  # joined alone: depth 1, nothing emitted since
    assert alone.core.depth == 1
    alone.receive(RmpPacket(0, ntp_middle32(6.0), (Join(0),), source=J), 6.0)
    alone.run_until(6.1)
    assert len(alone.requests()) == 1
    behind = ready_node()
    behind.receive(data_packet(B, 1, 5.9), 5.9)  # B emitted: in front of us, at depth 0
    assert behind.core.depth == 2
    behind.receive(RmpPacket(0, ntp_middle32(6.0), (Join(0),), source=J), 6.0)
    behind.run_until(6.1)
    assert behind.requests() == []


# -- the joiner ------------------------------------------------------------------------------


def test_s2_8_the_joiner_may_not_send_until_the_image_is_complete() -> None:
    node = Node(J)
    node.start(0.0)
    node.send(b"early", 0.1)
    assert [s.packet.options for s in node.sent] == [(Join(0),)]
    answer = control_packet(A, 4, 0.4, Join(0, answer=True), Confirm(4, A), Confirm(9, B))
    node.receive(answer, 0.5)
    assert node.core.phase is Phase.IMAGE
    state = b"S" * 2500
    image = _image_packets(A, 5, state, 0.6)
    node.receive(image[0], 0.6)
    node.receive(data_packet(B, 10, 0.62), 0.62)  # B's next drawing: held for after the image
    node.receive(image[1], 0.7)
    node.run_until(1.5)
    assert not [s for s in node.sent if s.is_data]  # still not a joined member
    assert node.deliveries() == [] and not node.is_ready()
    node.receive(image[2], 1.6)
    kinds = [type(e).__name__ for e in node.events if not isinstance(e, MemberChanged)]
    assert kinds.index("BoardStateReceived") < kinds.index("Ready") < kinds.index("Delivered")
    assert node.states_received() == [state]
    assert [d.payload for d in node.deliveries()] == [payload_of(B, 10), b"early"]
    (sent,) = [s for s in node.sent if s.is_data]
    assert sent.at == 1.6 and sent.packet.data == b"early" and sent.packet.seq == 1


def test_s2_8_a_rejoining_station_resumes_its_own_sequence_number_from_the_list() -> None:
    node = Node(J)
    node.start(0.0)
    answer = control_packet(A, 4, 0.4, Join(0, answer=True), Confirm(4, A), Confirm(7, J))
    node.receive(answer, 0.5)
    for packet in _image_packets(A, 5, b"board", 0.6):
        node.receive(packet, 0.6)
    assert node.is_ready()
    node.send(b"again", 1.0)
    (sent,) = [s for s in node.sent if s.is_data]
    assert sent.packet.seq == 8


def test_s2_8_a_restarted_member_resumes_its_sequence_and_the_group_takes_its_drawings() -> None:
    session, recorder = rmp_session(3, 12)
    start_all_alone(session)
    for k in range(3):
        session.network.schedule(6.0 + k / 10, lambda: session.draw(1))
    session.network.schedule(8.0, lambda: session.crash(1))
    session.network.schedule(9.0, lambda: session.start(1))
    # Members 0 and 2 never drew (depth 3): the fourth request, join number 3, is answered.
    session.network.run(15.0)
    assert session.peers[1].ready_at == pytest.approx(12.0, abs=0.1)
    restarted_at = 9.0
    session.draw(1)
    session.network.run(25.0)
    member = session.peers[1].member_id
    after = [
        w.packet.seq
        for w in recorder.sent_by(1)
        if w.at > restarted_at
        and w.packet.data is not None
        and isinstance(w.packet.options[-1], Data)
    ]
    assert after and set(after) == {4}
    assert session.converged()
    for peer in session.peers:
        assert peer.replica.stats.delivered_by_origin[member] == 4 or peer.index == 1
    assert len(session.peers[0].replica.board.log()) == 4


@pytest.mark.parametrize(("offset", "corrected"), [(2.0, True), (-2.0, True), (0.3, False)])
def test_s2_8_the_joiner_corrects_its_clock_from_the_answers_timestamp(
    offset: float, corrected: bool
) -> None:
    session, recorder = rmp_session(2, 9)
    session.start(0)
    session.network.run(6.0)
    session.draw(0)
    session.network.run(7.0)
    session.network.set_clock(session.peers[1].station, offset)  # its clock is off
    session.start(1)
    session.network.run(10.0)
    assert session.peers[1].ready
    session.draw(1)  # at network time 10.0; the joiner's own clock says 10 + offset
    session.network.run(12.0)
    (drawing,) = [w for w in recorder.sent_by(1) if w.packet.data is not None][:1]
    stamped = timestamp_seconds(drawing.packet, 10.0)
    expected = 10.0 if corrected else 10.0 + offset  # < 0.5 s is taken as null
    assert stamped == pytest.approx(expected, abs=0.01)
    assert session.converged()


def test_s2_8_the_clock_offset_is_reported_and_small_ones_are_null() -> None:
    for skew, applied in ((-2.0, True), (0.4, False)):
        node = Node(J)
        node.start(0.0)
        answered_at = 10.0
        answer = control_packet(A, 1, answered_at + skew, Join(0, answer=True), Confirm(1, A))
        node.receive(answer, answered_at)
        (event,) = node.protocol_events("join_answered")
        assert event.fields["clock_offset"] == pytest.approx(skew, abs=1e-4)
        for packet in _image_packets(A, 2, b"x", answered_at):
            node.receive(packet, answered_at)
        node.send(b"stamped", 11.0)
        (sent,) = [s for s in node.sent if s.is_data]
        stamp = timestamp_seconds(sent.packet, 11.0)
        assert stamp == pytest.approx(11.0 + skew if applied else 11.0, abs=1e-4)


def test_s2_8_the_joiner_reports_the_answering_station_active() -> None:
    node = Node(J)
    node.start(0.0)
    node.receive(control_packet(A, 1, 0.4, Join(0, answer=True), Confirm(1, A)), 0.5)
    for packet in _image_packets(A, 2, b"board", 0.6):
        node.receive(packet, 0.6)
    node.receive(data_packet(A, 3, 1.0), 1.0)
    states = [e.state for e in node.events if isinstance(e, MemberChanged) and e.member == A]
    assert states[-1] == "active"


# -- §5: passive join ------------------------------------------------------------------------


def test_s5_a_passive_joiner_asks_the_first_active_station_it_hears_for_the_image() -> None:
    session, recorder = rmp_session(3, 14, params_for=lambda i: {"passive_join": i == 2})
    session.start(0)
    session.start(1)
    session.network.run(6.0)
    session.schedule_draws(4, 4.0, 6.0, [0, 1])
    session.network.run(9.0)
    started = session.network.now
    session.start(2)
    session.network.schedule(9.5, lambda: session.draw(1))
    session.network.run(15.0)
    joiner = session.peers[2]
    address = joiner.station.address
    heard = [
        w for w in recorder.wires if w.sender != 2 and w.at >= started and w.dest in (None, address)
    ]
    (first_request, *_) = recorder.sent_by(2)
    assert first_request.at > started  # it listened first: nothing sent on start
    assert first_request.packet.options == (Join(255),)
    assert first_request.dest == session.peers[heard[0].sender].station.address  # to it only
    assert joiner.ready and session.converged()
    assert len(joiner.replica.board.log()) == 5


def test_s5_a_passive_joiner_that_hears_nobody_is_alone_without_asking() -> None:
    node = Node(J, {"passive_join": True})
    node.start(0.0)
    node.run_until(4.99)
    assert not node.is_ready() and node.sent == []
    node.run_until(5.0)  # as long as the join_tries requests would have taken
    assert node.is_ready()
    node.run_until(30.0)
    assert not [s for s in node.sent if s.options_of(Join)]


def test_s5_passive_join_direct_request_goes_to_the_first_station_heard() -> None:
    node = Node(J, {"passive_join": True})
    node.start(0.0)
    node.receive(data_packet(B, 6, 1.0), 1.0)
    assert [(s.packet.options, s.dest) for s in node.sent] == [((Join(255),), addr_of(B))]
    answer = control_packet(B, 6, 1.1, Join(0, answer=True), Confirm(6, B), Confirm(2, C))
    node.receive(answer, 1.1)
    for packet in _image_packets(B, 7, b"board", 1.2):
        node.receive(packet, 1.2)
    assert node.states_received() == [b"board"] and node.is_ready()
    # B's packet 6, heard before the answer, is in the image: not delivered again.
    assert not [e for e in node.events if isinstance(e, Delivered)]
    assert isinstance(
        next(e for e in node.events if isinstance(e, Ready | BoardStateReceived)),
        BoardStateReceived,
    )


def test_s2_8_a_joiner_ends_with_the_board_of_the_group_and_its_early_drawing() -> None:
    session, recorder = rmp_session(3, 2)
    session.start(0)
    session.start(1)
    session.network.run(6.0)
    session.schedule_draws(30, 10.0, 6.0, [0, 1])
    session.network.schedule(7.0, lambda: session.start(2))  # joins while they draw
    session.network.schedule(7.0005, lambda: session.draw(2))  # draws before it has joined
    session.network.run(25.0)
    joiner = session.peers[2]
    assert joiner.ready and joiner.ready_at is not None and joiner.ready_at > 7.0005
    own_data = [w for w in recorder.sent_by(2) if w.packet.data is not None]
    assert own_data and min(w.at for w in own_data) >= joiner.ready_at  # queued until ready
    assert session.converged()
    assert len(joiner.replica.board.log()) == 31
    assert joiner.replica.board.hash() != Board().hash()


def test_s2_8_two_joiners_answered_by_one_busy_station_each_end_with_the_full_board() -> None:
    session, _ = rmp_session(3, 31)
    session.start(0)
    session.network.run(6.0)
    session.schedule_draws(100, 1000.0, 6.0, [0])  # a burst: queued at `rate` (200/s)
    session.network.schedule(6.02, lambda: session.start(1))
    session.network.schedule(6.2, lambda: session.start(2))
    session.network.run(30.0)
    assert all(peer.ready for peer in session.peers)
    assert [len(peer.replica.board.log()) for peer in session.peers] == [100, 100, 100]
    assert session.converged()


def test_s2_8_answerers_spread_out_and_only_one_image_goes_to_a_joiner() -> None:
    """Depths are estimates, so several stations may think they are at the front; each waits
    a random moment and stands down on hearing another answer for the same joiner. An answer
    that was lost is repeated as it was, not replaced by a second image."""
    session, _ = rmp_session(6, seed=4, params={"answer_spread": 0.2})
    network = session.network
    for index in range(5):
        session.start(index)
    network.run(until=30.0, stop=lambda: all(session.peers[i].ready for i in range(5)))
    last = session.schedule_draws(100, 100.0, network.now + 0.1, list(range(5)))
    network.run(until=last + 5.0)
    # Make every drawer believe it is at the front: all answer join number 0 in principle.
    for peer in session.peers[:5]:
        peer.station.transport.core.stations.depth = 0
    session.start(5)
    network.run(until=network.now + 30.0, stop=lambda: session.peers[5].ready)
    assert session.peers[5].ready
    images = sum(p.station.transport.core.counters()["images_sent"] for p in session.peers[:5])
    assert images == 1
    hashes = {p.replica.board.hash() for p in session.peers}
    assert len(hashes) == 1


def test_s2_8_a_repeated_join_request_gets_the_same_answer_again() -> None:
    node = _answerer_at_depth_one()
    node.receive(_join_request(J, 1, 7.0), 7.0)
    (request,) = node.requests()
    node.provide(request, b"board", 7.0)
    node.run_until(7.5)
    first = [s for s in node.sent if s.options_of(Join)]
    node.receive(_join_request(J, 2, 8.0), 8.0)  # the joiner missed the answer
    node.run_until(8.5)
    answers = [s for s in node.sent if s.options_of(Join)]
    assert len(answers) == len(first) + 1
    again, before = answers[-1].packet, answers[len(first) - 1].packet
    assert again.options == before.options  # the same list, resent...
    assert again.timestamp > before.timestamp  # ...with the time it is sent (§2.8 offset)
    assert node.requests() == [request]  # no second board requested, so no second image
