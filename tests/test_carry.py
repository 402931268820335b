"""Carried ops (whiteboard/carry.py): what a member hands on when it is given a board that lacks
ops it has (after an MTP master failover, or two webs merging), filed by every replica at the key
it was first delivered under, so that boards converge by hash."""

from __future__ import annotations

import contextlib
import random

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from whiteboard.board import Board, Stroke, decode_op, encode_op
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.carry import CarryDecodeError, decode_carried, encode_carried, is_carried
from whiteboard.presence import is_presence
from whiteboard.replica import Replica
from whiteboard.sessionlog.format import DeliveredRecord, SessionHeader
from whiteboard.sessionlog.rows import record_row
from whiteboard.transport.events import BoardStateReceived, Delivered

ANN, BOB, CY = 0xA, 0xB, 0xC


def stroke(author: int, counter: int) -> Stroke:
    return synthetic_stroke(author, counter, random.Random(author * 1000 + counter))


def delivered(origin: int, key: tuple[int, ...], payload: bytes) -> Delivered:
    return Delivered(origin, key, 0.0, payload, False, 0.0)


class Outbox:
    """A transport as a replica sees it: what it is asked to send is kept."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def provide_board_state(self, request: int, state: bytes) -> None:
        raise AssertionError("not asked in these tests")

    def send(self, payload: bytes) -> None:
        self.sent.append(payload)


def test_a_carried_op_round_trips_and_is_told_apart_from_ops_and_presences() -> None:
    op = stroke(ANN, 1)
    payload = encode_carried((7, 0), op)
    assert is_carried(payload) and not is_presence(payload)
    assert not is_carried(encode_op(op))
    carried = decode_carried(payload)
    assert carried.order_key == (7, 0) and carried.op == op


@pytest.mark.parametrize(
    "item, reason",
    [
        (["wb-carry", 2, [1], b""], "version"),
        (["wb-carry", 1, [], b""], "order key"),
        (["wb-carry", 1, [1.5], b""], "order key"),
        (["wb-carry", 1, [1], "text"], "must be bytes"),
        (["wb-carry", 1, [1], b"\x93\x01\x02"], "unusable"),
        (["wb-carry", 1, [1]], "must be"),
    ],
)
def test_a_bad_carried_op_is_refused_with_a_reason(item: list[object], reason: str) -> None:
    with pytest.raises(CarryDecodeError, match=reason):
        decode_carried(msgpack.packb(item, use_bin_type=True))


@given(st.binary(max_size=300))
def test_decoding_arbitrary_bytes_raises_only_carry_decode_error(data: bytes) -> None:
    with contextlib.suppress(CarryDecodeError):
        decode_carried(b"\x94\xa8wb-carry" + data)


def test_a_member_given_a_board_that_lacks_its_ops_hands_them_on_with_their_keys() -> None:
    """Ann delivered ops 1-3 of the old web; the new master's board holds only 1-2."""
    ann = Replica()
    ops = [stroke(BOB, n) for n in (1, 2, 3)]
    for n, op in enumerate(ops, start=1):
        ann.handle(delivered(BOB, (n, 0), encode_op(op)), Outbox())
    given_board = Board()
    for n, op in enumerate(ops[:2], start=1):
        given_board.apply((n, 0), op)
    out = Outbox()
    ann.handle(BoardStateReceived(given_board.snapshot()), out)
    assert [decode_carried(p) for p in out.sent] == [decode_carried(encode_carried((3, 0), ops[2]))]
    assert ann.stats.carried_sent == 1 and len(ann.board) == 3

    # Everyone files it at its old key: the master that lacked it, and Cy who had it.
    master = Replica()
    master.load_state(given_board.snapshot())
    master.handle(delivered(ANN, (40, 0), out.sent[0]), Outbox())
    cy = Replica()
    for n, op in enumerate(ops, start=1):
        cy.handle(delivered(BOB, (n, 0), encode_op(op)), Outbox())
    cy.handle(delivered(ANN, (40, 0), out.sent[0]), Outbox())
    assert master.board.key(ops[2].id) == (3, 0)
    assert master.stats.carried_applied == 1
    assert cy.stats.carried_known == 1 and cy.stats.duplicates_delivered == 0
    assert master.board.hash() == cy.board.hash() == ann.board.hash()


def test_nothing_is_handed_on_when_the_given_board_holds_everything() -> None:
    ann = Replica()
    op = stroke(ANN, 1)
    ann.handle(delivered(ANN, (1, 0), encode_op(op)), Outbox())
    out = Outbox()
    ann.handle(BoardStateReceived(ann.board.snapshot()), out)
    assert out.sent == [] and ann.stats.carried_sent == 0


def test_a_transport_that_refuses_the_hand_on_is_counted_not_raised() -> None:
    class Closed(Outbox):
        def send(self, payload: bytes) -> None:
            raise RuntimeError("the transport is not in a session")

    ann = Replica()
    ann.handle(delivered(ANN, (1, 0), encode_op(stroke(ANN, 1))), Outbox())
    ann.handle(BoardStateReceived(Board().snapshot()), Closed())
    assert ann.stats.carry_failures == 1
    assert "could not be handed on" in ann.last_rejection


def test_a_bad_carried_payload_is_refused_and_counted() -> None:
    ann = Replica()
    assert ann.handle(delivered(BOB, (1, 0), b"\x94\xa8wb-carry\x01\x90\xc4\x00"), Outbox()) is None
    assert ann.stats.rejected == 1 and len(ann.board) == 0


def test_the_session_log_export_labels_a_carried_op_and_describes_it() -> None:
    op = stroke(BOB, 4)
    header = SessionHeader(1, "s", "0.1", "mtp", {}, "239.255.1.1:5000", None, 0, ANN, "ann")
    record = DeliveredRecord(10, ANN, (9, 0), 10, False, encode_carried((3, 0), op))
    row = record_row(header, 1, record)
    assert row["payload_kind"] == "carried"
    assert row["op_author"] == BOB and row["op_counter"] == 4
    assert decode_op(encode_op(op)) == op
