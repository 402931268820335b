"""From logs to board sessions: which logs recorded the same board, whose log is the
reference, the board's ops and its members (docs/analytics.md, "Board sessions").

Every member records its own log, with its own session id, so a board drawn on by four
people is four logs. Logs on the same transport and multicast group whose time spans overlap
(directly or through other logs) recorded one **board session**. Its ops are those its
**reference log** delivered, in that log's delivery order: the log that delivered the most
ops, so that a member who joined late (and got the board as a snapshot, not as ops) is not
the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Column, Window
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

UNBOUNDED = Window.unboundedPreceding
ISO_SECOND = "yyyy-MM-dd'T'HH:mm:ss'Z'"
# Op kinds that are no one's action, left out of a board session's ops (and so of every
# metric built on them: ops, turns, activity, idle gaps, edits). A BLOB carries the bytes of
# a picture for the IMAGE that shows it, sent by the same member in the same instant (once
# per picture, only if the board lacks them): pasting a picture is one action, its IMAGE.
# Counted as an op, it would give whoever pastes a new picture two ops for one action (and a
# turn, activity, a share of the ops) for bytes nobody sees as such. BLOBs still count where
# the transport is measured (`network`: they are deliveries like any other) and in choosing
# the reference log, and the replay folds them (they are the pictures' pixels).
NOT_ACTIONS = ("BLOB",)


@dataclass(frozen=True)
class Boards:
    # One row per log: session_id, board_session, reference (bool), transport, group,
    # local_member, member_name, start_us, end_us, delivered_ops.
    logs: DataFrame
    # One row per op of a board session, from its reference log, BLOBs left out (see
    # NOT_ACTIONS): board_session, seq, t_us, author, counter, op_kind, ink_length, bbox,
    # target_authors, undo_target_author.
    ops: DataFrame
    # One row per member of a board session: board_session, member, name.
    members: DataFrame


def boards_of(rows: DataFrame) -> Boards:
    """The board sessions in ``rows`` (load.LoadedRows.rows), cached: every metric reads
    them."""
    logs = board_logs(rows).cache()
    ops = reference_ops(rows, logs).cache()
    members = board_members(rows, logs, ops).cache()
    return Boards(logs, ops, members)


def board_logs(rows: DataFrame) -> DataFrame:
    headers = rows.filter(F.col("kind") == "header").select(
        "session_id",
        "transport",
        "local_member",
        F.get_json_object("event_fields", "$.group").alias("group"),
        F.get_json_object("event_fields", "$.member_name").alias("member_name"),
        F.col("t_us").alias("start_us"),
    )
    spans = rows.groupBy("session_id").agg(
        F.max("t_us").alias("end_us"),
        F.count(F.when(is_delivered_op(), True)).alias("delivered_ops"),
    )
    logs = headers.join(spans, "session_id")

    # Interval merging: sorted by start, a log opens a new board session when it starts after
    # every earlier log of its group has ended.
    by_group = Window.partitionBy("transport", "group").orderBy("start_us", "session_id")
    earlier_end = F.max("end_us").over(by_group.rowsBetween(UNBOUNDED, -1))
    logs = logs.withColumn(
        "opens", (earlier_end.isNull() | (F.col("start_us") > earlier_end)).cast("int")
    ).withColumn("board_no", F.sum("opens").over(by_group.rowsBetween(UNBOUNDED, 0)))
    board = Window.partitionBy("transport", "group", "board_no")
    # Named by its first start, transport and group: unique (two boards of one group cannot
    # start in the same second without overlapping) and sorts by time.
    logs = logs.withColumn(
        "board_session",
        F.concat_ws(
            " ",
            F.date_format(F.timestamp_micros(F.min("start_us").over(board)), ISO_SECOND),
            "transport",
            "group",
        ),
    )
    ranking = Window.partitionBy("board_session").orderBy(
        F.desc("delivered_ops"), "start_us", "session_id"
    )
    return logs.select(
        "session_id",
        "board_session",
        (F.row_number().over(ranking) == 1).alias("reference"),
        "transport",
        "group",
        "local_member",
        "member_name",
        "start_us",
        "end_us",
        "delivered_ops",
    )


def reference_ops(rows: DataFrame, logs: DataFrame) -> DataFrame:
    reference = logs.filter("reference").select("session_id", "board_session")
    delivered = rows.filter(
        is_delivered_op()
        & F.col("op_author").isNotNull()
        & F.col("op_counter").isNotNull()
        & ~F.col("op_kind").isin(*NOT_ACTIONS)
    )
    ops = delivered.join(reference, "session_id").select(
        "board_session",
        "seq",
        "t_us",
        F.col("op_author").alias("author"),
        F.col("op_counter").alias("counter"),
        "op_kind",
        "ink_length",
        "bbox",
        "target_authors",
        # An UNDO's or REDO's one target, by itself: "did they try to undo someone else's".
        F.when(F.col("op_kind").isin("UNDO", "REDO"), F.element_at("target_authors", 1)).alias(
            "undo_target_author"
        ),
    )
    # A transport delivers an op once; should one ever repeat, its first delivery counts.
    first = Window.partitionBy("board_session", "author", "counter").orderBy("seq")
    return ops.withColumn("nth", F.row_number().over(first)).filter("nth = 1").drop("nth")


def board_members(rows: DataFrame, logs: DataFrame, ops: DataFrame) -> DataFrame:
    """Everyone seen in a board session: who recorded a log, who made an op, and who any log
    saw become active. Named by the latest name they gave (log headers, presences)."""
    board_of = logs.select("session_id", "board_session")
    seen = (
        rows.filter((F.col("kind") == "member") & (F.col("state") == "active"))
        .join(board_of, "session_id")
        .select("board_session", "member")
    )
    ids = (
        logs.select("board_session", F.col("local_member").alias("member"))
        .unionByName(ops.select("board_session", F.col("author").alias("member")))
        .unionByName(seen)
        .filter(F.col("member").isNotNull())
        .distinct()
    )
    presences = (
        rows.filter((F.col("kind") == "delivered") & (F.col("payload_kind") == "presence"))
        .join(board_of, "session_id")
        .select(
            "board_session",
            F.col("origin").alias("member"),
            F.get_json_object("event_fields", "$.name").alias("name"),
            "t_us",
        )
    )
    names = (
        logs.select(
            "board_session",
            F.col("local_member").alias("member"),
            F.col("member_name").alias("name"),
            F.col("start_us").alias("t_us"),
        )
        .unionByName(presences)
        .filter(F.col("name").isNotNull())
        .groupBy("board_session", "member")
        .agg(F.max_by("name", "t_us").alias("name"))
    )
    return ids.join(names, ["board_session", "member"], "left")


def is_delivered_op() -> Column:
    return (F.col("kind") == "delivered") & (F.col("payload_kind") == "op")


__all__ = ["NOT_ACTIONS", "Boards", "board_logs", "board_members", "boards_of", "is_delivered_op"]
