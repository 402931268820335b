"""Hypothesis strategies for session-log records: one per kind, covering each field's range."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from tests.board.board_strategies import any_op
from whiteboard.board import encode_op
from whiteboard.sessionlog.format import (
    CountersRecord,
    DeliveredRecord,
    EndRecord,
    FailureRecord,
    FollowRecord,
    JoinProgressRecord,
    LocalOpRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    Record,
    RecordKind,
    SessionHeader,
    SideRecord,
    StateReceivedRecord,
    StateSentRecord,
    UndeliveredRecord,
)

int64 = st.integers(-(2**63), 2**63 - 1)
counts = st.integers(0, 2**63 - 1)
times = int64
members = st.integers(0, 2**32 - 1)
texts = st.text(max_size=60)
payloads = st.one_of(any_op.map(encode_op), st.binary(max_size=200))
order_keys = st.lists(st.integers(-(2**63), 2**64 - 1), min_size=1, max_size=16).map(tuple)
field_values = st.one_of(
    st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False), texts, st.booleans()
)
field_maps = st.dictionaries(texts, field_values, max_size=6)

headers = st.builds(
    SessionHeader,
    t_us=times,
    session_id=st.text(alphabet="0123456789abcdef", min_size=16, max_size=16),
    app_version=texts,
    transport=st.sampled_from(["raw", "rmp", "mtp"]),
    params=st.dictionaries(texts, st.one_of(field_values, st.none()), max_size=6),
    group=st.just("239.255.42.1:5000"),
    iface=st.one_of(st.none(), st.just("127.0.0.1")),
    ttl=st.integers(0, 255),
    member_id=members,
    member_name=texts,
    key_id=st.one_of(st.none(), st.text(alphabet="0123456789abcdef", min_size=16, max_size=16)),
    drawing_key=st.one_of(
        st.none(), st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
    ),
).map(lambda h: replace(h, drawing_key=None) if h.key_id is None else h)  # only with a key id

records_by_kind: dict[RecordKind, st.SearchStrategy[Record]] = {
    RecordKind.HEADER: headers,
    RecordKind.DELIVERED: st.builds(
        DeliveredRecord, times, members, order_keys, int64, st.booleans(), payloads
    ),
    RecordKind.LOCAL_OP: st.builds(LocalOpRecord, times, payloads),
    RecordKind.MEMBER: st.builds(
        MemberRecord, times, members, st.sampled_from(["joining", "active", "suspected", "left"])
    ),
    RecordKind.READY: st.builds(ReadyRecord, times),
    RecordKind.JOIN_PROGRESS: st.builds(JoinProgressRecord, times, counts, counts),
    RecordKind.STATE_RECEIVED: st.builds(
        StateReceivedRecord, times, counts, int64, st.binary(max_size=300)
    ),
    RecordKind.STATE_SENT: st.builds(StateSentRecord, times, int64, int64),
    RecordKind.FAILURE: st.builds(FailureRecord, times, texts),
    RecordKind.PROTOCOL: st.builds(ProtocolRecord, times, texts, field_maps),
    RecordKind.COUNTERS: st.builds(
        CountersRecord, times, st.dictionaries(texts, int64, max_size=12)
    ),
    RecordKind.END: st.builds(EndRecord, times),
    RecordKind.UNDELIVERED: st.builds(UndeliveredRecord, times, payloads),
    RecordKind.SIDE: st.builds(SideRecord, times, members, st.binary(max_size=80)),
    RecordKind.FOLLOW: st.builds(FollowRecord, times, members),
}

# Records that may follow the header in a file.
body_records: st.SearchStrategy[Record] = st.one_of(
    *(strategy for kind, strategy in records_by_kind.items() if kind is not RecordKind.HEADER)
)
