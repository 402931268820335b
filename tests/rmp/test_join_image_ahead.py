"""The image and the packets around it (RR-2100 §2.8 with §2.3's WI expiry): a joiner must take
nothing twice that the image it loads already holds, whichever answer it acted on (issue 17,
campaign seeds 207, 405, 834, 857)."""

from __future__ import annotations

from collections import Counter

from rmp.answer import Answer, image_holes
from rmp.context import Phase
from rmp.stations import Missing
from rmp.wire import Join, NackRange
from tests.rmp.core_harness import A, B, C, J, control_packet, data_packet
from tests.rmp.test_join_image import Answering, Joining, answer_packet
from whiteboard.sim.campaign import Violation, run_seed


def test_s2_8_the_answer_counts_the_packets_delivered_ahead_and_lists_the_holes() -> None:
    # B's 5, 6 and 8 were delivered at WI expiry (§2.3): they are on the board the image is cut
    # from, and 4 and 7 are not. Listed at 3 alone, the joiner would take 5, 6, 8 again.
    answering = Answering()
    joiner = answering.ctx.station(J)
    b = answering.ctx.station(B, last_valid=3)
    b.delivered_ahead = {5, 6, 8}
    b.missing = {4: Missing(0.0, 0.0), 7: Missing(0.0, 0.0)}
    answering.ctx.station(C, last_valid=2)
    answering.ctx.shared.seq = 6
    answering.ctx.shared.stations.depth = 1
    answering.part.on_request(joiner, Join(1), 1.0)
    (request,) = answering.requests()
    answer = answering.part.take(request)
    holes = (NackRange(0, 4, B, 1), NackRange(0, 7, B, 1))
    assert answer == Answer(J, {J: 0, B: 8, C: 2, A: 6}, 1, holes)
    answering.part.send_answer(answer, 1.1)
    ((packet, _),) = answering.ctx.sent()
    assert packet.options[-2:] == holes  # after the list, which the joiner reads first


def test_s2_8_holes_that_do_not_fit_the_answer_leave_the_last_valid_number() -> None:
    answering = Answering()
    b = answering.ctx.station(B, last_valid=3)
    b.delivered_ahead = set(range(5, 1000, 2))  # 498 holes: far beyond one datagram
    assert image_holes([b]) == ({B: 3}, ())


def test_s2_8_the_joiner_takes_again_only_the_holes_the_image_lacks() -> None:
    joining = Joining(Phase.JOINING)
    a = joining.ctx.station(A)
    answer = answer_packet(A, 0.4, (A, 4), (B, 8))
    holes = (NackRange(0, 4, B, 1), NackRange(0, 7, B, 1))
    answer = control_packet(A, 4, 0.4, *answer.options, *holes)
    joining.part.on_answer(a, answer, 0.5)
    b = joining.ctx.shared.stations.get(B)
    assert b is not None and b.last_valid == 3 and b.delivered_ahead == {5, 6, 8}
    assert sorted(b.missing) == [4, 7]  # asked for: the answerer's NACKs may be lost
    for seq in (5, 4, 6, 8, 7):  # repairs, as they come (never live: another station's)
        joining.sequencer.on_data(b, data_packet(B, seq, 0.1), 0.6, live=False)
    assert [seq for _, seq, _ in joining.consumed.items] == [4, 7]
    assert b.last_valid == 8 and b.delivered_ahead == set()


def test_s2_8_a_second_answer_starts_afresh_with_what_was_held_under_the_first() -> None:
    # The first answerer listed B at 5 and stalled mid-image; we held B's 6..10. The second
    # answer's image holds B up to 7: 6 and 7 are dropped, 8..10 taken again in sequence, once.
    joining = Joining(Phase.JOINING)
    a, c = joining.ctx.station(A), joining.ctx.station(C)
    joining.part.on_answer(a, answer_packet(A, 0.4, (A, 4), (B, 5)), 0.5)
    b = joining.ctx.shared.stations.get(B)
    assert b is not None
    for seq in range(6, 11):
        b.last_valid = seq
        joining.part.hold(b, data_packet(B, seq, 0.6))
    joining.ctx.shared.phase = Phase.JOINING  # the image stalled: we asked again
    joining.part.on_answer(c, answer_packet(C, 5.4, (C, 9), (B, 7)), 5.5)
    joining.sequencer.on_data(b, data_packet(B, 8, 0.6), 5.6, live=False)  # a late repair
    taken = [h.seq for h in joining.part.held] + [seq for _, seq, _ in joining.consumed.items]
    assert Counter(taken) == Counter({8: 1, 9: 1, 10: 1})
    assert b.last_valid == 10


def test_s2_8_campaign_seeds_deliver_nothing_twice_after_an_image() -> None:
    # 405: the answerer crashed mid-image and the second answerer's board held packets it had
    # delivered at WI expiry; 207, 834, 857: a restarted member joined the same way.
    for seed in (207, 405, 834, 857):
        outcome = run_seed("rmp", seed)
        assert outcome.violations[Violation.DUPLICATE] == 0, seed
        assert outcome.violations[Violation.DIVERGED] == 0, seed
        assert not outcome.violations[Violation.ERROR], (seed, outcome.detail)
