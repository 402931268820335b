"""`whiteboard log info` and `export`: the documented schema, one row per record, partitions
by UTC date, Parquet equal to JSON lines, and clear messages for files that are not logs."""

from __future__ import annotations

import argparse
import base64
import json
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sessionlog.strategies import body_records, headers
from whiteboard.board import (
    Clear,
    Erase,
    Move,
    OpId,
    OpKind,
    Redo,
    Shape,
    Stroke,
    Text,
    Undo,
    decode_op,
    encode_op,
)
from whiteboard.presence import BoardFingerprint, Presence, encode_presence
from whiteboard.sessionlog import (
    CountersRecord,
    DeliveredRecord,
    EndRecord,
    FailureRecord,
    JoinProgressRecord,
    LocalOpRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    Record,
    SessionHeader,
    SessionLogWriter,
    SideRecord,
    StateReceivedRecord,
    StateSentRecord,
    UndeliveredRecord,
    new_header,
)
from whiteboard.sessionlog import export as export_module
from whiteboard.sessionlog.cli import add_log_parser, add_recording_options, run_log
from whiteboard.sessionlog.export import PYARROW_HINT, ExportError, export_logs
from whiteboard.sessionlog.rows import (
    BINARY_COLUMNS,
    COLUMNS,
    TEXT_CHAR_WIDTH,
    TEXT_LINE_HEIGHT,
    op_bbox,
    rows_of,
    stroke_length,
    target_authors,
)
from whiteboard.sessionlog.summary import format_summary, summarize

# Five seconds before midnight UTC, so that a session crosses into the next date.
START = datetime(2024, 3, 9, 23, 59, 55, tzinfo=UTC).timestamp()
DAY1, DAY2 = "2024-03-09", "2024-03-10"


def us(seconds_after_start: float) -> int:
    return round((START + seconds_after_start) * 1_000_000)


STROKE = Stroke(OpId(9, 1), (0.0, 0.0, 10.0, 5.0, 20.0, 0.0), 0xFF000000, 2.0)
UNDO = Undo(OpId(7, 2), OpId(7, 1))
PRESENCE = Presence("bob", 0xFF00FF00, BoardFingerprint(3, (5, 9, 1), "ab" * 32), 2, 1, 0)


def every_kind() -> list[Record]:
    return [
        MemberRecord(us(0.1), 9, "active"),
        JoinProgressRecord(us(0.2), 1, 2),
        StateReceivedRecord(us(0.3), 4, 300_000, b"\x91\x01\x90\x90"),
        ReadyRecord(us(0.4)),
        DeliveredRecord(us(1), 9, (us(0.9), 9, 1), us(0.9), False, encode_op(STROKE)),
        DeliveredRecord(us(2), 9, (us(1.9), 9, 2), us(1.9), True, encode_presence(PRESENCE)),
        DeliveredRecord(us(3), 9, (2**64 - 1,), us(2.9), False, b"\x93\x01\x02"),
        LocalOpRecord(us(4), encode_op(UNDO)),
        StateSentRecord(us(6), 3, 1500),
        ProtocolRecord(us(7), "nack_sent", {"source": 9, "options": 2, "ratio": float("nan")}),
        FailureRecord(us(8), "member 9 is not heard from"),
        CountersRecord(us(9), {"sent": 1, "delivered": 3}),
        EndRecord(us(10)),
    ]


def make_header(session_id: str | None = None) -> SessionHeader:
    header = new_header(
        transport="rmp",
        params={"profile": "lan"},
        group="239.255.42.1:5000",
        iface="127.0.0.1",
        ttl=0,
        member_id=7,
        member_name="ann",
        now=START,
    )
    return header if session_id is None else replace(header, session_id=session_id)


def write(folder: Path, records: list[Record], session_id: str | None = None) -> Path:
    with SessionLogWriter.create(make_header(session_id), folder) as writer:
        for record in records:
            writer.append(record)
    return writer.path


def jsonl_rows(out: Path) -> dict[str, list[dict[str, object]]]:
    return {
        file.parent.name: [json.loads(line) for line in file.read_text().splitlines()]
        for file in sorted(out.glob("date=*/*.jsonl"))
    }


def test_jsonl_has_one_row_per_record_with_every_column_partitioned_by_date(
    tmp_path: Path,
) -> None:
    log = write(tmp_path / "logs", every_kind())
    result = export_logs([log], tmp_path / "out", "jsonl")
    assert (result.sessions, result.rows, result.failed) == (1, 14, ())
    sid = log.stem.rsplit("-", 1)[1]  # the session id ends the file name
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in result.files) == [
        f"date={DAY1}/part-{sid}.jsonl",
        f"date={DAY2}/part-{sid}.jsonl",
    ]
    by_date = jsonl_rows(tmp_path / "out")
    rows = by_date[f"date={DAY1}"] + by_date[f"date={DAY2}"]
    assert [r["seq"] for r in rows] == list(range(14))
    for row in rows:
        assert list(row) == [name for name, _ in COLUMNS]
        assert row["session_id"] == sid and row["transport"] == "rmp"
        assert row["local_member"] == 7
        assert isinstance(row["t_us"], int)
        day = DAY1 if row["t_us"] < us(5) else DAY2
        assert row in by_date[f"date={day}"]
    kinds = [r["kind"] for r in rows]
    assert kinds == [
        "header", "member", "join_progress", "state_received", "ready", "delivered",
        "delivered", "delivered", "local_op", "state_sent", "protocol", "failure", "counters",
        "end",
    ]  # fmt: skip
    (
        header,
        member,
        progress,
        state,
        _,
        stroke,
        presence,
        bad,
        undo,
        sent,
        nack,
        fail,
        counters,
        _,
    ) = rows
    assert json.loads(header["event_fields"])["params"] == {"profile": "lan"}
    assert (member["member"], member["state"]) == (9, "active")
    assert (progress["received"], progress["total"]) == (1, 2)
    assert (state["size_bytes"], state["duration_us"]) == (4, 300_000)
    assert stroke["order_key"] == [us(0.9), 9, 1] and stroke["sent_us"] == us(0.9)
    assert (stroke["payload_kind"], stroke["op_kind"], stroke["op_author"]) == ("op", "STROKE", 9)
    assert json.loads(stroke["op_fields"]) == {
        "points": 3, "colour": 0xFF000000, "width": 2.0, "tool": "PEN"
    }  # fmt: skip
    assert presence["payload_kind"] == "presence" and presence["late"] is True
    assert json.loads(presence["event_fields"])["name"] == "bob"
    assert bad["payload_kind"] == "invalid" and bad["reason"]
    assert bad["order_key"] is None  # beyond int64: not a key any engine can hold
    assert (undo["op_kind"], json.loads(undo["op_fields"])) == ("UNDO", {"target": "7:1"})
    # The op itself, as base64 text, and what analytics ask of it.
    assert base64.b64decode(stroke["payload"], validate=True) == encode_op(STROKE)
    assert stroke["ink_length"] == pytest.approx(2 * math.hypot(10, 5))
    assert stroke["bbox"] == [-1.0, -1.0, 21.0, 6.0]  # the points, and half the pen around
    assert stroke["target_authors"] is None
    assert base64.b64decode(undo["payload"], validate=True) == encode_op(UNDO)
    assert (undo["ink_length"], undo["bbox"], undo["target_authors"]) == (None, None, [7])
    for other in (presence, bad, header, member, counters):  # not ops: nothing of the kind
        assert all(other[c] is None for c in ("payload", "ink_length", "bbox", "target_authors"))
    assert (sent["request"], sent["duration_us"]) == (3, 1500)
    assert nack["name"] == "nack_sent"
    assert json.loads(nack["event_fields"]) == {"options": 2, "ratio": None, "source": 9}
    assert fail["reason"] == "member 9 is not heard from"
    assert json.loads(counters["event_fields"]) == {"delivered": 3, "sent": 1}


def test_parquet_holds_the_same_rows_with_the_documented_types(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    log = write(tmp_path / "logs", every_kind())
    export_logs([log], tmp_path / "jsonl", "jsonl")
    result = export_logs([log], tmp_path / "parquet", "parquet")
    assert result.rows == 14 and len(result.files) == 2
    expected = {
        date: [
            {k: base64.b64decode(v) if k in BINARY_COLUMNS and v else v for k, v in row.items()}
            for row in rows
        ]
        for date, rows in jsonl_rows(tmp_path / "jsonl").items()
    }
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "bool": pa.bool_(),
        "double": pa.float64(),
        "binary": pa.binary(),
    }
    items = {"list<int64>": pa.int64(), "list<double>": pa.float64()}

    def documented(kind: str, actual: object) -> bool:
        if kind in items:  # the item's field name is Parquet's business
            return pa.types.is_list(actual) and actual.value_type == items[kind]
        return actual == types[kind]

    for file in sorted((tmp_path / "parquet").glob("date=*/*.parquet")):
        table = pq.read_table(file, partitioning=None)
        assert [f.name for f in table.schema] == [name for name, _ in COLUMNS]
        for (_, kind), field in zip(COLUMNS, table.schema, strict=True):
            assert documented(kind, field.type), field
        assert table.to_pylist() == expected[file.parent.name]
    stroke = next(row for rows in expected.values() for row in rows if row["op_kind"] == "STROKE")
    assert decode_op(stroke["payload"]) == STROKE  # the op, byte for byte


def test_op_geometry_is_ink_for_strokes_boxes_for_drawings_and_authors_for_edits() -> None:
    assert stroke_length((0.0, 0.0, 3.0, 4.0, 3.0, 10.0)) == 11.0
    assert stroke_length((5.0, 5.0)) == 0.0  # a dot
    dot = Stroke(OpId(1, 1), (5.0, 5.0), 0, 4.0)
    assert op_bbox(dot) == [3.0, 3.0, 7.0, 7.0]
    rect = Shape(OpId(1, 2), OpKind.RECT, 50, 40, 10, 20, 0, 2.0)  # corners in any order
    assert op_bbox(rect) == [9.0, 19.0, 51.0, 41.0]
    text = Text(OpId(1, 3), 100, 200, "two\nlines!", 0, 10.0)
    assert op_bbox(text) == pytest.approx(
        [100.0, 200.0, 100 + 6 * TEXT_CHAR_WIDTH * 10, 200 + 2 * TEXT_LINE_HEIGHT * 10]
    )
    targets = (OpId(2, 5), OpId(1, 3), OpId(2, 6))
    assert target_authors(Erase(OpId(1, 4), targets)) == [2, 1, 2]
    assert target_authors(Move(OpId(1, 4), targets, 1.0, 2.0)) == [2, 1, 2]
    assert target_authors(Undo(OpId(1, 7), OpId(3, 4))) == [3]
    assert target_authors(Redo(OpId(1, 8), OpId(1, 4))) == [1]
    for op in (Erase(OpId(1, 4), targets), Undo(OpId(1, 7), OpId(3, 4)), Clear(OpId(1, 9))):
        assert op_bbox(op) is None
    assert target_authors(dot) is None and target_authors(Clear(OpId(1, 9))) is None


def test_boxes_of_strokes_and_shapes_are_what_the_app_paints() -> None:
    # The app's own bounds (Qt-free code, but in the app's package, which imports Qt).
    pytest.importorskip("PySide6")
    from whiteboard.app.scene_index import content_bounds

    ops = [
        Stroke(OpId(1, 1), (0.0, 0.0, 30.0, -5.0, 12.5, 40.0), 0, 3.0),
        *(
            Shape(OpId(1, 2), kind, 10, 60, -20, 5, 0, 4.0)
            for kind in (OpKind.LINE, OpKind.RECT, OpKind.ELLIPSE, OpKind.ARROW)
        ),
    ]

    def no_text(op: Text) -> tuple[float, float, float, float]:
        raise AssertionError("no text here")

    for op in ops:
        assert op_bbox(op) == pytest.approx(list(content_bounds(op, no_text))), op.kind


def test_without_pyarrow_parquet_is_refused_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_module, "parquet_available", lambda: False)
    log = write(tmp_path / "logs", [])
    with pytest.raises(ExportError) as caught:
        export_logs([log], tmp_path / "out", "parquet")
    assert str(caught.value) == PYARROW_HINT
    assert "pyarrow" in PYARROW_HINT and "--format jsonl" in PYARROW_HINT
    assert not (tmp_path / "out").exists()


def test_logs_that_cannot_be_read_are_reported_and_the_others_exported(tmp_path: Path) -> None:
    good = write(tmp_path / "logs", every_kind())
    foreign = tmp_path / "logs" / "notes.wblog"
    foreign.write_text("shopping list\n")
    torn = write(tmp_path / "logs", every_kind())
    torn.write_bytes(torn.read_bytes()[:-3])
    result = export_logs([tmp_path / "logs"], tmp_path / "out", "jsonl")  # a folder
    assert result.sessions == 2
    assert result.failed == ('"notes.wblog" is not a whiteboard session log',)
    assert any("torn record" in w for w in result.warnings)
    assert good.exists()


def test_exporting_again_replaces_the_files_and_leaves_no_temporaries(tmp_path: Path) -> None:
    log = write(tmp_path / "logs", every_kind())
    for _ in range(2):
        result = export_logs([log], tmp_path / "out")
    assert sum(len(rows) for rows in jsonl_rows(tmp_path / "out").values()) == result.rows
    assert not list((tmp_path / "out").rglob(".*"))


def test_a_session_id_never_names_a_path(tmp_path: Path) -> None:
    log = tmp_path / "evil.wblog"
    with SessionLogWriter(log, make_header("../../escaped")):
        pass
    result = export_logs([log], tmp_path / "out")
    (file,) = result.files
    assert file.parent.parent == tmp_path / "out"
    assert file.name.startswith("part-x") and ".." not in file.name


def test_the_same_session_twice_is_exported_once(tmp_path: Path) -> None:
    log = write(tmp_path / "logs", [])
    copy = tmp_path / "copy.wblog"
    copy.write_bytes(log.read_bytes())
    result = export_logs([log, copy], tmp_path / "out")
    assert result.sessions == 1
    assert "records the same session" in result.warnings[0]


# -- info and the command line -----------------------------------------------------------------


def test_info_summarises_the_session(tmp_path: Path) -> None:
    summary = summarize(write(tmp_path, every_kind()))
    assert summary["transport"] == "rmp" and summary["member_name"] == "ann"
    assert summary["started"] == "2024-03-09T23:59:55.000+00:00"
    assert summary["duration_s"] == 10.0
    assert summary["joined_after_ms"] == 400
    assert summary["delivered"] == {"total": 3, "presences": 1, "late": 1, "ops": 2, "origins": 1}
    assert summary["sent"] == {"total": 1, "presences": 0, "ops": 1}
    assert summary["states_received"] == [{"bytes": 4, "join_ms": 300}]
    assert summary["states_sent"] == 1
    assert summary["protocol_events"] == {"nack_sent": 1}
    assert summary["first_failures"] == ["member 9 is not heard from"]
    assert summary["last_counters"] == {"sent": 1, "delivered": 3}
    assert summary["ended_cleanly"] and summary["warnings"] == []


def parse(*argv: str) -> argparse.Namespace:
    # Wired as whiteboard/cli.py wires it.
    parser = argparse.ArgumentParser(prog="whiteboard")
    add_log_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_log_info_prints_a_summary_or_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write(tmp_path, every_kind())
    assert run_log(parse("log", "info", str(log))) == 0
    text = capsys.readouterr().out
    assert f"session {log.stem.rsplit('-', 1)[1]}" in text
    assert "transport    rmp (profile=lan) on 239.255.42.1:5000" in text
    assert "ended        cleanly" in text
    assert run_log(parse("log", "info", "--json", str(log))) == 0
    assert json.loads(capsys.readouterr().out)["records"] == 14


def test_log_info_of_a_foreign_file_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "picture.png"
    other.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    assert run_log(parse("log", "info", str(other))) == 2
    captured = capsys.readouterr()
    assert captured.err == 'whiteboard: "picture.png" is not a whiteboard session log\n'
    assert captured.out == ""


def test_log_export_reports_each_unusable_file_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write(tmp_path, every_kind())
    empty = tmp_path / "empty.wblog"
    empty.touch()
    code = run_log(parse("log", "export", str(log), str(empty), "--out", str(tmp_path / "o")))
    captured = capsys.readouterr()
    assert code == 2
    assert 'whiteboard: "empty.wblog" is empty, not a session log: not exported' in captured.err
    assert "exported 1 session (14 rows)" in captured.out


def test_recording_options_parse() -> None:
    parser = argparse.ArgumentParser()
    add_recording_options(parser)
    args = parser.parse_args(["--log-dir", "/tmp/x", "--no-log"])
    assert (args.log_dir, args.no_log) == (Path("/tmp/x"), True)
    assert parser.parse_args([]).log_dir is None


@settings(max_examples=150)
@given(headers, st.lists(body_records, max_size=10))
def test_any_records_make_rows_of_the_schema_that_json_can_hold(
    header: SessionHeader, records: list[Record]
) -> None:
    for row in rows_of(header, iter(records)):
        assert list(row) == [name for name, _ in COLUMNS]
        assert all(row[name] is None or isinstance(row[name], bytes) for name in BINARY_COLUMNS)
        # No NaN, no bytes but the binary columns (the JSON-lines sink writes those as base64),
        # str keys only.
        json.dumps({k: v for k, v in row.items() if k not in BINARY_COLUMNS}, allow_nan=False)
        if row["payload"] is not None and row["kind"] == "state_received":
            # The board the joiner was given, as recorded: bytes kept, never decoded here.
            records_states = [r.state for r in records if isinstance(r, StateReceivedRecord)]
            assert row["payload"] in records_states
        elif row["payload"] is not None and row["kind"] == "side":
            # A pointer, a laser point or a view as it came (issue 19): bytes kept as recorded.
            assert row["payload"] in [r.payload for r in records if isinstance(r, SideRecord)]
        elif row["payload"] is not None:
            assert decode_op(row["payload"]).kind.name == row["op_kind"]
        for field in ("op_fields", "event_fields"):
            if row[field] is not None:
                assert isinstance(json.loads(row[field]), dict)


def test_undelivered_ops_are_exported_as_ops_and_counted_by_info(tmp_path: Path) -> None:
    """Issue 17: an op the session ended without delivering back (UNDELIVERED, kind 12) is a
    row of its own kind, described like a local op, and `log info` counts it."""
    log = write(
        tmp_path,
        [
            LocalOpRecord(us(1), encode_op(STROKE)),
            UndeliveredRecord(us(2), encode_op(STROKE)),
            EndRecord(us(3)),
        ],
    )
    export_logs([log], tmp_path / "out", "jsonl")
    rows = [row for rows in jsonl_rows(tmp_path / "out").values() for row in rows]
    (row,) = [row for row in rows if row["kind"] == "undelivered"]
    (sent,) = [row for row in rows if row["kind"] == "local_op"]
    assert row["op_kind"] == "STROKE" and row["payload_kind"] == "op"
    assert {k: v for k, v in row.items() if k not in ("kind", "seq", "t_us")} == {
        k: v for k, v in sent.items() if k not in ("kind", "seq", "t_us")
    }
    summary = summarize(log)
    assert summary["undelivered"] == 1 and summary["sent"]["ops"] == 1
    assert "1 not delivered by the end" in format_summary(summary)


def test_a_pictures_ops_are_told_in_numbers_not_bytes() -> None:
    from whiteboard.board import Blob, Image
    from whiteboard.sessionlog.rows import op_bbox, op_fields

    blob = Blob((7, 1), b"\x89PNG\r\n\x1a\n" + bytes(1000))
    image = Image((7, 2), blob.digest, 10, 20, 300, 200, 128)
    assert op_fields(blob) == {"bytes": 1008, "digest": blob.digest.hex()}
    assert op_fields(image) == {
        "digest": blob.digest.hex(), "x": 10.0, "y": 20.0, "width": 300.0, "height": 200.0,
        "opacity": 128,
    }  # fmt: skip
    assert op_bbox(image) == [10.0, 20.0, 310.0, 220.0] and op_bbox(blob) is None
