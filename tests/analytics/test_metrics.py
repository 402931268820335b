"""Every metric of the ``metrics`` job on the hand-made logs of handmade.py, against numbers
worked out by hand there and here. Spark runs the job once for the module from the .wblog
files, and once more from their JSON-lines export, which must give the very same tables."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from analytics import TABLES
from analytics.load import InputFormat, LoadedRows, load_rows
from analytics.metrics import MetricsConfig, compute
from tests.analytics.handmade import (
    ANN,
    BOARD1,
    BOARD2,
    BOARD3,
    BOARD4,
    BOB,
    CY,
    DEE,
    EVE,
    FAY,
    G1,
    G2,
    GUS,
    HAL,
    IVY,
    at,
    write_logs,
)
from whiteboard.board import decode_op
from whiteboard.presence import is_presence
from whiteboard.sessionlog import DeliveredRecord, SideRecord, read_log
from whiteboard.sessionlog.export import export_logs

Tables = dict[str, list[dict[str, Any]]]


CONFIG = MetricsConfig(idle_s=60, window_s=10, near_px=150, cell_px=64)


def collected(loaded: LoadedRows) -> Tables:
    tables = compute(loaded.rows, CONFIG)
    return {
        name: [row.asDict(recursive=True) for row in frame.collect()]
        for name, frame in tables.items()
    }


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("handmade")
    write_logs(folder)
    return folder


@pytest.fixture(scope="module")
def tables(spark: SparkSession, logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Tables:
    return collected(load_rows(spark, [str(logs)], tmp_path_factory.mktemp("staging")))


@pytest.fixture(scope="module")
def jsonl_export(
    spark: SparkSession, logs: Path, tmp_path_factory: pytest.TempPathFactory
) -> LoadedRows:
    out = tmp_path_factory.mktemp("export")
    export_logs([logs], out, "jsonl")
    loaded = load_rows(spark, [str(out)], tmp_path_factory.mktemp("unused"))
    assert loaded.format is InputFormat.JSONL
    return loaded


@pytest.fixture(scope="module")
def tables_from_export(jsonl_export: LoadedRows) -> Tables:
    return collected(jsonl_export)


def by(rows: list[dict[str, Any]], *keys: str) -> dict[Any, dict[str, Any]]:
    return {tuple(row[k] for k in keys) if len(keys) > 1 else row[keys[0]]: row for row in rows}


def member_rows(tables: Tables, name: str, board: str = BOARD1) -> Iterator[tuple[int, dict]]:
    for row in tables[name]:
        if row["board_session"] == board:
            yield row["member"], row


def test_every_table_is_computed(tables: Tables) -> None:
    assert list(tables) == list(TABLES)


def test_logs_of_one_group_that_overlap_in_time_make_one_board_session(tables: Tables) -> None:
    sessions = by(tables["sessions"], "board_session")
    assert set(sessions) == {BOARD1, BOARD2, BOARD3, BOARD4}
    one = sessions[BOARD1]
    assert (one["transport"], one["group"], one["logs"]) == ("rmp", G1, 2)
    assert (one["start_us"], one["end_us"]) == (at(-2), at(200))
    # ann delivered 10 ops, bob 8: ann's log is the reference.
    assert one["reference_session_id"] == f"ann-{ANN}-log"
    assert (one["members"], one["ops"]) == (4, 10)
    assert (one["first_op_us"], one["last_op_us"], one["op_span_s"]) == (at(0), at(181), 181.0)
    assert (one["idle_gaps"], one["idle_s"]) == (2, 91.0 + 76.0)
    # eve's log, same group but after board 1 ended; fay's, same time on another group.
    # eve's stroke, picture and dot: the picture's BLOB is not an op of the board's.
    assert (sessions[BOARD2]["logs"], sessions[BOARD2]["ops"]) == (1, 3)
    assert sessions[BOARD3]["group"] == G2
    assert (sessions[BOARD3]["ops"], sessions[BOARD3]["first_op_us"]) == (0, None)
    assert (sessions[BOARD3]["idle_gaps"], sessions[BOARD3]["idle_s"]) == (0, 0.0)


def test_members_are_everyone_seen_named_by_their_logs_and_presences(tables: Tables) -> None:
    names = {member: row["name"] for member, row in member_rows(tables, "contribution")}
    # cy drew but recorded nothing and sent no presence; dee only became active and said hi.
    assert names == {ANN: "ann", BOB: "bob", CY: None, DEE: "dee"}


def test_contribution(tables: Tables) -> None:
    rows = dict(member_rows(tables, "contribution"))
    expected = {
        # member: ops, strokes, ink (sum of segment lengths), active s (own gaps <= 60 s)
        ANN: (4, 2, 11.0 + 1.0, 2 + 6),  # ops at 0, 2, 8, 104: the 96 s gap is idle
        BOB: (4, 2, 10.0 + 2.0, 4 + 1),  # 5, 9, 180, 181
        CY: (2, 1, 5.0, 3),  # 100, 103
        DEE: (0, 0, 0.0, 0),
    }
    for member, (ops, strokes, ink, active) in expected.items():
        row = rows[member]
        assert (row["ops"], row["strokes"], row["ink_length"]) == (ops, strokes, ink)
        assert row["active_s"] == pytest.approx(active)
        assert row["op_share"] == pytest.approx(ops / 10)
        assert row["ink_share"] == pytest.approx(ink / 29)
        assert row["active_share"] == pytest.approx(active / 16)
    eve = dict(member_rows(tables, "contribution", BOARD2))[EVE]
    # A stroke, a picture (its IMAGE: the BLOB of its bytes is no op) with no ink, and a dot.
    columns = ("ops", "strokes", "images", "ink_length", "active_s")
    assert tuple(eve[c] for c in columns) == (3, 2, 1, 50.0, 2.0)
    assert {row["images"] for _, row in member_rows(tables, "contribution")} == {0}


def test_participation_gini_over_op_counts_zero_for_silent_members_included(
    tables: Tables,
) -> None:
    rows = by(tables["participation"], "board_session")
    one = rows[BOARD1]
    # Counts sorted 0, 2, 4, 4: 2 * (1*0 + 2*2 + 3*4 + 4*4) / (4 * 10) - 5/4 = 0.35; the
    # same as the mean absolute difference over all ordered pairs, 28 / 16, over 2 * 2.5.
    assert one["gini"] == pytest.approx(0.35)
    assert (one["members"], one["contributors"], one["ops"]) == (4, 3, 10)
    assert one["top_op_share"] == pytest.approx(0.4)
    assert rows[BOARD2]["gini"] == pytest.approx(0.0)  # one member: nobody to be unequal to
    assert rows[BOARD3]["gini"] is None  # no ops at all


def test_turn_taking(tables: Tables) -> None:
    rows = by(tables["turns"], "board_session")
    one = rows[BOARD1]
    # ann ann | bob | ann | bob | cy cy | ann | bob bob
    assert (one["turns"], one["handoffs"]) == (7, 6)
    assert one["ops_per_turn"] == pytest.approx(10 / 7)
    assert one["op_span_min"] == pytest.approx(181 / 60)
    assert one["handoffs_per_min"] == pytest.approx(6 / (181 / 60))
    shares = (3 / 7, 3 / 7, 1 / 7)
    assert one["turn_entropy_bits"] == pytest.approx(-sum(p * math.log2(p) for p in shares))
    members = dict(member_rows(tables, "turns_by_member"))
    assert {m: r["turns"] for m, r in members.items()} == {ANN: 3, BOB: 3, CY: 1, DEE: 0}
    assert members[ANN]["turn_share"] == pytest.approx(3 / 7)
    assert members[ANN]["ops_per_turn"] == pytest.approx(4 / 3)
    assert members[DEE]["ops_per_turn"] is None
    two, three = rows[BOARD2], rows[BOARD3]
    assert (two["turns"], two["handoffs"], two["handoffs_per_min"]) == (1, 0, 0.0)
    assert two["turn_entropy_bits"] == 0.0
    assert (three["turns"], three["handoffs"], three["handoffs_per_min"]) == (0, 0, None)


def test_simultaneity(tables: Tables) -> None:
    rows = by(tables["simultaneity"], "board_session")
    one = rows[BOARD1]
    # Active 10 s after each op, merged per member: ann [0,18) [104,114), bob [5,19)
    # [180,191), cy [100,113). Anyone: 19 + 14 + 11 = 44 s; two or more: [5,18) + [104,113).
    assert (one["active_s"], one["simultaneous_s"]) == (44.0, 13.0 + 9.0)
    assert one["simultaneity"] == pytest.approx(0.5)
    assert one["peak_members"] == 2
    two = rows[BOARD2]
    assert (two["active_s"], two["simultaneous_s"], two["simultaneity"]) == (12.0, 0.0, 0.0)
    three = rows[BOARD3]
    assert (three["active_s"], three["simultaneity"], three["peak_members"]) == (0.0, None, 0)


def test_idle_gaps_are_the_silences_longer_than_the_threshold(tables: Tables) -> None:
    gaps = sorted(
        (g["start_us"], g["end_us"], g["gap_s"], g["member_before"], g["member_after"])
        for g in tables["idle_gaps"]
    )
    assert gaps == [(at(9), at(100), 91.0, BOB, CY), (at(104), at(180), 76.0, ANN, BOB)]


def test_edits_of_others_work(tables: Tables) -> None:
    rows = dict(member_rows(tables, "edits"))
    columns = (
        "erases",
        "moves",
        "erases_of_others",
        "moves_of_others",
        "targets_of_others",
        "edited_by_others",
        "undos_of_others",
    )
    expected = {
        ANN: (0, 0, 0, 0, 0, 1, 0),  # bob erased her a:2; she undid her own a:3
        BOB: (1, 0, 1, 0, 1, 1, 1),  # erased a:2; cy moved his b:1; he "undid" cy's c:1
        CY: (0, 1, 0, 1, 1, 0, 0),  # moved c:1 (own) and b:1 (bob's): one target of others'
        DEE: (0, 0, 0, 0, 0, 0, 0),
    }
    assert {m: tuple(rows[m][c] for c in columns) for m in rows} == expected


def test_network_health_per_member_from_their_own_logs(tables: Tables) -> None:
    rows = {(r["board_session"], r["member"]): r for r in tables["network"]}
    assert set(rows) == {
        (BOARD1, ANN),
        (BOARD1, BOB),
        (BOARD2, EVE),
        (BOARD3, FAY),
        (BOARD4, GUS),
    }
    columns = ("transport", "logs", "join_ms", "nacks_sent", "nacks_received", "retransmissions")
    columns += ("delivered", "late_deliveries")
    assert tuple(rows[BOARD1, ANN][c] for c in columns) == ("rmp", 1, 1500.0, 3, 1, 2, 11, 1)
    assert tuple(rows[BOARD1, BOB][c] for c in columns) == ("rmp", 1, 3000.0, 0, 5, 4, 8, 2)
    assert rows[BOARD1, ANN]["late_share"] == pytest.approx(1 / 11)  # ten ops, one presence
    assert rows[BOARD1, BOB]["late_share"] == pytest.approx(2 / 8)
    eve, fay = rows[BOARD2, EVE], rows[BOARD3, FAY]
    assert (eve["join_ms"], eve["nacks_sent"], eve["late_share"]) == (500.0, None, 0.0)
    assert eve["delivered"] == 4  # two strokes, and a picture's BLOB and IMAGE
    assert (fay["join_ms"], fay["delivered"], fay["late_share"]) == (None, 0, None)
    gus = rows[BOARD4, GUS]  # no COUNTERS record: the counts are unknown, not 0
    assert (gus["join_ms"], gus["nacks_sent"], gus["delivered"]) == (500.0, None, 11)
    [rmp] = tables["network_by_transport"]
    assert rmp["transport"] == "rmp"
    assert (rmp["board_sessions"], rmp["members"], rmp["logs"]) == (4, 5, 5)
    assert (rmp["nacks_sent"], rmp["nacks_received"], rmp["retransmissions"]) == (3, 6, 6)
    # 11 + 8 + 2 + 11, and eve's picture: its BLOB and IMAGE (the transport delivered the
    # bytes, so they count here, unlike in the board's ops).
    assert (rmp["delivered"], rmp["late_deliveries"]) == (21 + 2 + 11, 3)
    assert rmp["late_share"] == pytest.approx(3 / 34)
    assert rmp["join_ms_mean"] == pytest.approx((1500 + 3000 + 500 + 500) / 4)
    assert (rmp["join_ms_max"], rmp["never_ready"]) == (3000.0, 1)


def test_interactions_pair_drawings_near_in_time_and_space_and_edits_both_ways(
    tables: Tables,
) -> None:
    columns = ("name_a", "name_b", "co_edits", "edits_a_to_b", "edits_b_to_a", "shared_cells")
    rows = {
        (r["board_session"], r["member_a"], r["member_b"]): (*(r[c] for c in columns), r["weight"])
        for r in tables["interactions"]
    }
    assert rows == {
        # Board 1: every drawing is within 150 units of every other. ann's 0, 2 and 8 s
        # drawings are within 10 s of bob's at 5 s; cy drew at 100 s, alone. bob erased
        # ann's a:2; cy moved bob's b:1, bob "undid" cy's c:1. The drawings all touch the
        # four cells around the origin (cy's only the one right of and below it).
        (BOARD1, ANN, BOB): ("ann", "bob", 3, 0, 1, 4, 4),
        (BOARD1, ANN, CY): ("ann", None, 0, 0, 0, 1, 0),
        (BOARD1, ANN, DEE): ("ann", "dee", 0, 0, 0, 0, 0),
        (BOARD1, BOB, CY): ("bob", None, 0, 1, 1, 1, 2),
        (BOARD1, BOB, DEE): ("bob", "dee", 0, 0, 0, 0, 0),
        (BOARD1, CY, DEE): (None, "dee", 0, 0, 0, 0, 0),
        # Board 4: #1 and #2 (2 s, 48 units apart), #9 and #10 (5 s; #9 inside #10's box)
        # co-edit; #2 and #3 are 2 s but 878 units apart, #1 and #4 8 units but 28 s apart.
        # #4 and #5, 7 s and 19 units apart, are in different 10 s buckets. hal erased ivy's
        # ivy:2 and undid her ivy:1; ivy moved two of gus's. #10 covers too many cells for
        # territory, so hal shares only (1,0) with gus.
        (BOARD4, GUS, HAL): ("gus", "hal", 2, 0, 0, 1, 2),
        (BOARD4, GUS, IVY): ("gus", None, 1, 0, 2, 1, 3),
        (BOARD4, HAL, IVY): ("hal", None, 0, 2, 0, 0, 2),
    }  # boards 2 and 3 have one member each: no pairs


def test_territory_is_the_grid_cells_drawn_in_and_who_else_drew_there(tables: Tables) -> None:
    columns = ("drawings", "oversized", "cells", "own_cells", "territoriality", "overlap")
    rows = {
        (r["board_session"], r["member"]): tuple(r[c] for c in columns) for r in tables["territory"]
    }
    assert rows == {
        (BOARD1, ANN): (3, 0, 4, 0, 0.0, 1.0),
        (BOARD1, BOB): (2, 0, 4, 0, 0.0, 1.0),
        (BOARD1, CY): (1, 0, 1, 0, 0.0, 1.0),
        (BOARD1, DEE): (0, 0, 0, 0, None, None),
        # Her stroke's 4 cells; the dot and the picture (a drawing: 10,10 - 50,40) in (0,0).
        (BOARD2, EVE): (3, 0, 4, 4, 1.0, 0.0),
        (BOARD3, FAY): (0, 0, 0, 0, None, None),
        # gus: (0,0) with ivy, (1,0) with hal, (31,31..33) alone; ivy: (0,0), (15,15) alone.
        (BOARD4, GUS): (3, 0, 5, 3, 0.6, 0.4),
        (BOARD4, HAL): (2, 1, 1, 0, 0.0, 1.0),
        (BOARD4, IVY): (2, 0, 2, 1, 0.5, 0.5),
    }
    sessions = by(tables["sessions"], "board_session")
    board = {
        b: tuple(sessions[b][c] for c in ("co_edits", "cells", "shared_cells")) for b in sessions
    }
    assert board == {BOARD1: (3, 4, 4), BOARD2: (0, 4, 0), BOARD3: (0, 0, 0), BOARD4: (3, 6, 2)}
    assert sessions[BOARD1]["overlap_index"] == 1.0
    assert sessions[BOARD2]["overlap_index"] == 0.0
    assert sessions[BOARD3]["overlap_index"] is None
    assert sessions[BOARD4]["overlap_index"] == pytest.approx(2 / 6)


def test_timeline_has_every_member_in_every_minute_of_the_board(tables: Tables) -> None:
    columns = ("minute_us", "ops", "ink_length", "active_s", "active")
    rows = {
        (r["board_session"], r["member"], r["minute"]): tuple(r[c] for c in columns)
        for r in tables["timeline"]
    }
    minute = 60_000_000
    m0 = at(0)  # 10:00:00, a whole minute
    board1 = {
        # ann: 0, 2, 8 s (active 0-8), then her UNDO at 104 s (after an idle 96 s)
        (ANN, 0): (m0, 3, 12.0, 8.0, True),
        (ANN, 1): (m0 + minute, 1, 0.0, 0.0, True),
        # bob: 5, 9 s, then 180, 181 s
        (BOB, 0): (m0, 2, 10.0, 4.0, True),
        (BOB, 3): (m0 + 3 * minute, 2, 2.0, 1.0, True),
        (CY, 1): (m0 + minute, 2, 5.0, 3.0, True),
    }
    for member in (ANN, BOB, CY, DEE):
        for n in range(4):  # 10:00 to 10:03: the minutes of the first and last op
            expected = board1.get((member, n), (m0 + n * minute, 0, 0.0, 0.0, False))
            assert rows.pop((BOARD1, member, n)) == expected, (member, n)
    m33 = at(1980)  # 10:33:00; the board's ops run from 10:33:20 to 10:34:10
    board4 = {
        # gus: 2000, 2035 | 2045 s; active 2000-2045, split at 2040 (10:34:00)
        (GUS, 0): (m33, 2, 40.0, 40.0, True),
        (GUS, 1): (m33 + minute, 1, 130.0, 5.0, True),
        # hal: 2002, 2036, 2038 | 2050 s
        (HAL, 0): (m33, 3, 20.0, 38.0, True),
        (HAL, 1): (m33 + minute, 1, 0.0, 10.0, True),
        # ivy: 2004, 2028, 2037
        (IVY, 0): (m33, 3, 10.0, 33.0, True),
        (IVY, 1): (m33 + minute, 0, 0.0, 0.0, False),
    }
    for (member, n), expected in board4.items():
        assert rows.pop((BOARD4, member, n)) == expected, (member, n)
    # Board 2 (eve, 1001, 1002 (the picture: one op) and 1003 s: one minute); board 3 has
    # no ops, so no minutes.
    assert rows == {(BOARD2, EVE, 0): (at(960), 3, 50.0, 2.0, True)}
    # Each member's active time in the timeline adds up to their contribution's.
    contribution = {
        (r["board_session"], r["member"]): r["active_s"] for r in tables["contribution"]
    }
    active: dict[tuple[str, int], float] = {}
    for r in tables["timeline"]:
        key = (r["board_session"], r["member"])
        active[key] = active.get(key, 0.0) + r["active_s"]
    assert active == pytest.approx({k: v for k, v in contribution.items() if k[0] != BOARD3})


def test_attention_counts_own_pointing_laser_uses_and_following_both_ways(
    tables: Tables,
) -> None:
    """handmade.py's attention notes, worked out by hand (docs/analytics.md "attention")."""
    rows = dict(member_rows(tables, "attention"))
    assert set(rows) == {ANN, BOB}  # only members with a log that pointed or followed
    ann, bob = rows[ANN], rows[BOB]
    assert (ann["pointer_samples"], ann["pointer_active_s"]) == (12, 2)
    assert (ann["laser_samples"], ann["laser_uses"], ann["follow_requests"]) == (4, 2, 1)
    assert (ann["follows"], ann["following_s"], ann["followed_by_s"]) == (0, 0.0, 70.0)
    assert (bob["pointer_samples"], bob["laser_uses"]) == (0, 0)  # his pointer was ann's view
    assert (bob["follows"], bob["following_s"], bob["followed_by_s"]) == (2, 70.0, 0.0)
    assert not list(member_rows(tables, "attention", BOARD4))


def test_an_export_gives_the_very_same_tables(tables: Tables, tables_from_export: Tables) -> None:
    for name, rows in tables.items():
        keys = TABLES[name]
        from_logs = by(rows, *keys)
        from_export = by(tables_from_export[name], *keys)
        assert from_export == from_logs, name


def test_spark_reads_the_base64_payloads_of_json_lines_back_as_the_ops_bytes(
    jsonl_export: LoadedRows, logs: Path
) -> None:
    read = {
        (row.session_id, row.seq): row.payload
        for row in jsonl_export.rows.filter("payload is not null")
        .select("session_id", "seq", "payload")
        .collect()
    }
    expected = {}
    for path in logs.glob("*.wblog"):
        log = read_log(path)
        for seq, record in enumerate(log.records, start=1):
            # Ops, and the side channel's pointers and views, bytes as recorded.
            op = isinstance(record, DeliveredRecord) and not is_presence(record.payload)
            if op or isinstance(record, SideRecord):
                expected[log.header.session_id, seq] = record.payload
    ops = {key: p for key, p in expected.items() if b"wb-pointer" not in p}
    assert len(ops) == 10 + 8 + 4 + 10 and len(expected) - len(ops) == 10 + 2 + 1 + 4 + 1
    assert {key: bytes(value) for key, value in read.items()} == expected
    assert all(decode_op(payload) for payload in ops.values())
