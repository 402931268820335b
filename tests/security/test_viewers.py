"""Viewers (issue 21 point 2): a view code opens a private session but makes no op that any
member applies, whatever way the op comes: delivered, handed on, or in a board given to a
joiner. Drawers' ops are proven (a MAC for drawers, a signature for viewers) and their proofs
travel with them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.board.board_strategies import ops_by_kind
from tests.test_carry import Outbox
from whiteboard.board import Board, Clear, Op, OpId, Stroke, Tool, decode_op, encode_op
from whiteboard.board.signed import PROOF_SIZE, SIGNED_OVERHEAD, decode_signed, encode_signed
from whiteboard.carry import encode_carried
from whiteboard.replica import Replica
from whiteboard.security import (
    OpAuthority,
    Opener,
    PassphraseError,
    Sealer,
    SealError,
    SealFailure,
    derive_session_key,
    is_view_code,
    open_session_key,
)
from whiteboard.security.keys import session_key_from_view_code
from whiteboard.transport.events import BoardStateReceived, Delivered

GROUP = "239.255.9.9:5009"
DRAWER = derive_session_key("the drawing passphrase", GROUP, "review", viewers=True)
VIEWER = session_key_from_view_code(DRAWER.view_code())
OTHER = derive_session_key("another session's phrase", GROUP, "review", viewers=True)


def _stroke(author: int, counter: int) -> Stroke:
    return Stroke(OpId(author, counter), (0.0, 0.0, 10.0, 5.0), 0xFF0000FF, 2.0, Tool.PEN)


def _replica(key: object) -> Replica:
    return Replica(authority=OpAuthority.of(key))  # type: ignore[arg-type]


def _deliver(replica: Replica, payload: bytes, origin: int, seq: int) -> object:
    return replica.apply_delivered(Delivered(origin, (seq,), 0.0, payload, False, 0.0))


def test_a_view_code_opens_the_same_session_without_the_drawing_key() -> None:
    code = DRAWER.view_code()
    assert is_view_code(code) and len(code) == 76
    assert (VIEWER.root, VIEWER.key_id) == (DRAWER.root, DRAWER.key_id)
    assert VIEWER.drawing_public == DRAWER.drawing_public
    assert DRAWER.can_draw and not VIEWER.can_draw
    assert open_session_key(f"  {code}\n", GROUP).key_id == DRAWER.key_id
    assert VIEWER.view_code() == code  # a viewer may pass it on, and nothing more
    assert "drawing_secret" not in repr(DRAWER) and DRAWER.drawing_secret not in code.encode()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("wbview1-" + "A" * 10, "incomplete or mistyped"),
        ("wbview1-" + "!" * 68, "characters a view code never has"),
    ],
)
def test_a_broken_view_code_says_what_is_wrong(code: str, message: str) -> None:
    with pytest.raises(PassphraseError, match=message):
        session_key_from_view_code(code)


def test_letting_people_watch_is_chosen_at_the_start_and_is_another_session() -> None:
    """Without viewers (the default) nobody but a passphrase's holder can seal a datagram, so
    ops travel unproven, at no cost; no view code exists, and a view code of the session with
    viewers opens nothing of it."""
    closed = derive_session_key("the drawing passphrase", GROUP, "review")
    assert not closed.viewers and closed.can_draw and DRAWER.viewers
    assert closed.key_id != DRAWER.key_id and closed.root != DRAWER.root
    # The view code opens nothing of it, and makes nothing it opens.
    for sealer_key, opener_key in ((VIEWER, closed), (closed, VIEWER), (DRAWER, closed)):
        with pytest.raises(SealError) as refused:
            Opener(opener_key).open(Sealer(sealer_key).seal(b"a stroke"))
        assert refused.value.failure is SealFailure.FOREIGN_KEY
    with pytest.raises(PassphraseError, match="started without viewers"):
        closed.view_code()
    assert OpAuthority.for_session(closed) is None
    with pytest.raises(ValueError, match="without viewers"):
        OpAuthority.of(closed)
    replica = Replica(authority=OpAuthority.for_session(closed))
    op = _stroke(1, 1)
    assert replica.payload_overhead == 0 and replica.payload_of(op) == encode_op(op)
    assert replica.can_draw
    proven = Replica(authority=OpAuthority.for_session(DRAWER))
    assert len(proven.payload_of(op)) > len(encode_op(op)) + PROOF_SIZE


def test_a_mistyped_view_code_is_told_not_taken_for_another_session() -> None:
    code = DRAWER.view_code()
    typo = code[:20] + ("B" if code[20] != "B" else "C") + code[21:]
    with pytest.raises(PassphraseError, match="mistyped"):
        session_key_from_view_code(typo)


def test_drawers_check_by_mac_viewers_by_signature_and_neither_accepts_a_change() -> None:
    drawer, viewer, other = (OpAuthority.of(k) for k in (DRAWER, VIEWER, OTHER))
    op = encode_op(_stroke(1, 1))
    proof = drawer.prove(op)
    assert len(proof) == PROOF_SIZE
    assert drawer.check(op, proof) and viewer.check(op, proof)
    assert not other.check(op, proof)
    changed = op[:-1] + bytes([op[-1] ^ 1])
    assert not drawer.check(changed, proof) and not viewer.check(changed, proof)
    # The MAC alone does not convince a viewer, nor the signature alone a drawer; and the
    # MAC covers the signature, so a relayed copy cannot carry a spoiled one.
    day, mac, signature = proof[:4], proof[4:20], proof[20:]
    assert not viewer.check(op, day + mac + bytes(64))
    assert not drawer.check(op, day + bytes(16) + signature)
    assert not drawer.check(op, day + mac + bytes(64))
    with pytest.raises(PermissionError, match="viewer"):
        viewer.prove(op)


def test_a_viewers_ops_are_applied_nowhere_however_they_are_dressed() -> None:
    drawer, viewer = _replica(DRAWER), _replica(VIEWER)
    assert drawer.can_draw and not viewer.can_draw
    own = viewer.payload_of(_stroke(7, 1))
    assert own == encode_op(_stroke(7, 1))  # a viewer has no proof to give
    genuine = drawer.payload_of(_stroke(1, 1))
    _, genuine_proof = decode_signed(genuine)
    forgeries = [
        own,
        encode_signed(encode_op(_stroke(7, 2)), bytes(PROOF_SIZE)),
        encode_signed(encode_op(_stroke(7, 3)), genuine_proof),  # a proof lifted from another
        encode_signed(encode_op(Clear(OpId(7, 4))), genuine_proof),
    ]
    for replica in (drawer, viewer):
        for seq, payload in enumerate(forgeries):
            assert _deliver(replica, payload, 7, seq) is None
        assert replica.stats.unproven == len(forgeries) and len(replica.board) == 0
        assert "was not applied" in replica.last_rejection
        assert _deliver(replica, genuine, 1, 10) is not None
        assert len(replica.board) == 1


def test_proofs_travel_with_ops_to_joiners_and_forged_entries_are_left_out() -> None:
    drawer = _replica(DRAWER)
    for counter in range(1, 4):
        _deliver(drawer, drawer.payload_of(_stroke(1, counter)), 1, counter)
    # A viewer gives a joiner the board, with an op of its own slipped in.
    viewer = _replica(VIEWER)
    viewer.load_state(drawer.snapshot())
    assert len(viewer.board) == 3 and viewer.stats.unproven == 0
    tampered = viewer.board.copy()
    tampered.apply((9,), Clear(OpId(7, 1)))
    for key in (DRAWER, VIEWER):
        joiner = _replica(key)
        lacking = joiner.load_state(tampered.snapshot(viewer.proofs))
        assert lacking == [] and joiner.stats.unproven == 1
        assert joiner.board.hash() == drawer.board.hash()
        # And the joiner can give the board on in turn, proofs and all.
        again = _replica(key)
        again.load_state(joiner.snapshot())
        assert again.stats.unproven == 0 and again.board.hash() == drawer.board.hash()


def test_carried_ops_keep_their_proofs_and_unproven_ones_are_refused() -> None:
    drawer = _replica(DRAWER)
    _deliver(drawer, drawer.payload_of(_stroke(1, 1)), 1, 1)
    empty = Board()
    sink = Outbox()
    drawer.handle(BoardStateReceived(empty.snapshot()), sink)
    assert len(sink.sent) == 1 and drawer.stats.carried_sent == 1
    for key in (DRAWER, VIEWER):
        other = _replica(key)
        assert _deliver(other, sink.sent[0], 5, 1) is not None
        forged = encode_carried((2,), _stroke(7, 1))
        assert _deliver(other, forged, 7, 2) is None
        assert other.stats.unproven == 1 and len(other.board) == 1


def test_a_drawer_vouches_for_the_board_it_brings_into_a_private_session() -> None:
    replica = Replica()
    replica.board.apply((1,), _stroke(3, 1))
    replica.use_authority(OpAuthority.of(DRAWER))
    joiner = _replica(VIEWER)
    joiner.load_state(replica.snapshot())
    assert len(joiner.board) == 1 and joiner.stats.unproven == 0


def test_signing_leaves_room_within_its_stated_overhead() -> None:
    drawer = _replica(DRAWER)
    for size in (2, 200, 40_000):
        op = Stroke(OpId(1, 1), tuple(float(i) for i in range(size)), 1, 1.0, Tool.PEN)
        assert len(drawer.payload_of(op)) - len(encode_op(op)) <= SIGNED_OVERHEAD


@settings(max_examples=300, deadline=None)
@given(st.one_of(*ops_by_kind.values()))
def test_every_op_kind_re_encodes_to_the_bytes_its_proof_covers(op: Op) -> None:
    """A joiner checks an op of a board it was given against its proof by encoding it again:
    that must give the very bytes the drawer proved, for every op kind."""
    data = encode_op(op)
    assert encode_op(decode_op(data)) == data
    drawer, viewer = OpAuthority.of(DRAWER), OpAuthority.of(VIEWER)
    proof = drawer.prove(data)
    board = Board()
    board.apply((1,), op)
    joiner = Replica(authority=viewer)
    joiner.load_state(board.snapshot({op.id: proof}))
    assert joiner.stats.unproven == 0 and len(joiner.board) == 1


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.binary(max_size=200).map(
    lambda tail: encode_signed(encode_op(_stroke(1, 1)), bytes(PROOF_SIZE))[:20] + tail
)))
def test_any_bytes_as_a_signed_op_are_refused_calmly(payload: bytes) -> None:
    """Whatever a member is sent as an op in a private session: refused and counted, never an
    exception, never applied."""
    for key in (DRAWER, VIEWER):
        replica = _replica(key)
        assert _deliver(replica, payload, 7, 1) is None
        assert replica.stats.rejected + replica.stats.unproven == 1


DAY = 86_400.0
NOW = 20_000 * DAY + 3_600.0


def test_a_proof_is_of_its_day_and_an_old_days_op_is_not_delivered_again() -> None:
    """A viewer keeps a drawer's Clear of last week's session (same passphrase) and sends it
    today, as a delivery or handed on: refused. In a board given to a joiner it is history,
    and taken."""
    last_week = Replica(authority=OpAuthority.of(DRAWER, wall=lambda: NOW - 7 * DAY))
    old_clear = last_week.payload_of(Clear(OpId(0xAAAA, 5)))
    yesterday = Replica(authority=OpAuthority.of(DRAWER, wall=lambda: NOW - DAY))
    late_stroke = yesterday.payload_of(_stroke(0xBBBB, 1))  # a session across midnight
    for key in (DRAWER, VIEWER):
        today = Replica(authority=OpAuthority.of(key, wall=lambda: NOW))
        assert _deliver(today, old_clear, 0xAAAA, 1) is None
        assert "not of today" in today.last_rejection
        assert _deliver(today, late_stroke, 0xBBBB, 2) is not None
        board = Board()
        op_bytes, proof = decode_signed(old_clear)
        board.apply((1,), decode_op(op_bytes))
        joiner = Replica(authority=OpAuthority.of(key, wall=lambda: NOW))
        joiner.load_state(board.snapshot({OpId(0xAAAA, 5): proof}))
        assert len(joiner.board) == 1 and joiner.stats.unproven == 0


def test_a_viewer_cannot_hand_on_a_drawers_op_at_a_place_of_its_choosing() -> None:
    drawer = _replica(DRAWER)
    strokes = [drawer.payload_of(_stroke(0xBBBB, n)) for n in range(3)]
    for n, payload in enumerate(strokes):
        _deliver(drawer, payload, 0xBBBB, n)
    clear = Replica(authority=OpAuthority.of(DRAWER)).payload_of(Clear(OpId(0xBBBB, 9)))
    op_bytes, proof = decode_signed(clear)
    # The genuine op and its author's proof, carried to the end by a viewer: no drawer
    # proved the hand-on, so nobody takes it.
    moved = encode_carried((10**6,), decode_op(op_bytes), proof)
    for key in (DRAWER, VIEWER):
        replica = _replica(key)
        for n, payload in enumerate(strokes):
            _deliver(replica, payload, 0xBBBB, n)
        assert _deliver(replica, moved, 0xCCCC, 10) is None
        assert replica.stats.unproven == 1 and len(replica.board.objects()) == 3
    # And a viewer given a board that lacks its ops does not try to hand them on.
    viewer, sink = _replica(VIEWER), Outbox()
    _deliver(viewer, strokes[0], 0xBBBB, 0)
    viewer.handle(BoardStateReceived(Board().snapshot()), sink)
    assert sink.sent == [] and viewer.stats.carried_sent == 0


def test_a_drawer_keeps_no_proof_a_viewer_spoiled_in_relaying_it() -> None:
    """An RMP repair can come from a viewer: one that zeroes the signature of a drawer's op
    must not leave drawers keeping a proof that viewers given their board would refuse."""
    author, drawer = _replica(DRAWER), _replica(DRAWER)
    payload = author.payload_of(_stroke(0xB, 1))
    op_bytes, proof = decode_signed(payload)
    spoiled = encode_signed(op_bytes, proof[:20] + bytes(64))
    assert _deliver(drawer, spoiled, 0xB, 1) is None and drawer.stats.unproven == 1
    assert _deliver(drawer, payload, 0xB, 1) is not None
    joiner = _replica(VIEWER)
    joiner.load_state(drawer.snapshot())
    assert len(joiner.board) == 1 and joiner.stats.unproven == 0
