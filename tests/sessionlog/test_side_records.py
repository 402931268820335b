"""The side channel in session logs (issue 19; docs/session-log.md): sampled, bounded, read
back, and skipped by a reader that does not know them."""

from __future__ import annotations

from pathlib import Path

from whiteboard.pointer import PointerPosition, decode_side, encode_pointer
from whiteboard.sessionlog import (
    FollowRecord,
    SessionLogWriter,
    SideRecord,
    new_header,
    read_log,
)
from whiteboard.sessionlog.format import RecordKind, decode_record, encode_record
from whiteboard.sessionlog.side import (
    MAX_ORIGINS,
    SIDE_RECORDS_BURST,
    SIDE_RECORDS_HZ,
    SideSampler,
)

T0 = 1_700_000_000.0


def test_the_sampler_keeps_at_most_its_rate_per_origin() -> None:
    sampler = SideSampler()
    kept = {7: 0, 8: 0}
    for step in range(300):  # 10 s at 30 a second, from two origins
        for origin in kept:
            kept[origin] += sampler.keep(origin, T0 + step / 30)
    for count in kept.values():
        assert 10 * SIDE_RECORDS_HZ <= count <= 10 * SIDE_RECORDS_HZ + SIDE_RECORDS_BURST
    assert sampler.kept + sampler.skipped == 600


def test_the_sampler_remembers_a_bounded_number_of_origins() -> None:
    sampler = SideSampler()
    for origin in range(1, 3 * MAX_ORIGINS):
        assert sampler.keep(origin, T0)
    assert len(sampler._buckets) == MAX_ORIGINS


def test_a_log_keeps_side_payloads_sampled_and_whom_we_followed(tmp_path: Path) -> None:
    header = new_header(transport="rmp", params={}, group="239.255.1.1:5000", iface=None,
                        ttl=0, member_id=7, member_name="ann", now=T0)  # fmt: skip
    with SessionLogWriter.create(header, tmp_path) as writer:
        for step in range(90):  # 3 s of pointers at 30 a second, ours and another's
            now = T0 + step / 30
            position = PointerPosition(float(step), 2.0, True, round(now * 1e6))
            writer.record_side(7, encode_pointer(position), now)
            writer.record_side(9, encode_pointer(position), now)
        writer.record_follow(9, T0 + 3)
        writer.record_follow(None, T0 + 4)
    [path] = tmp_path.glob("*.wblog")
    records = read_log(path).records
    sides = [r for r in records if isinstance(r, SideRecord)]
    by_origin = {o: [r for r in sides if r.origin == o] for o in (7, 9)}
    for kept in by_origin.values():
        assert 3 * SIDE_RECORDS_HZ <= len(kept) <= 3 * SIDE_RECORDS_HZ + SIDE_RECORDS_BURST
        assert all(isinstance(decode_side(r.payload), PointerPosition) for r in kept)
    follows = [r.member for r in records if isinstance(r, FollowRecord)]
    assert follows == [9, 0]


def test_an_older_reader_skips_the_new_kinds() -> None:
    """What a reader does with a kind it does not know: None, skipped (as this version skips
    a newer writer's): the kinds' numbers are new, so an older reader finds none of its own."""
    body = encode_record(SideRecord(5, 7, b"x"))
    assert decode_record(body) == SideRecord(5, 7, b"x")
    assert RecordKind.SIDE == 13 and RecordKind.FOLLOW == 14
    assert body[:2] == bytes([0x94, 13])  # [kind, t_us, origin, payload]
    unknown = bytes([0x94, 99]) + body[2:]
    assert decode_record(unknown) is None
