"""The ``metrics`` job: one DataFrame per metric family, each defined in docs/analytics.md.

DataFrame API only, and nothing is collected to the driver: the same code runs on one
machine or a cluster. Every table is keyed by ``board_session`` (see :mod:`analytics.boards`)
and, for per-member tables, ``member`` (a member id, as in the logs). Times are int64
microseconds since the Unix epoch (``*_us``) or seconds (``*_s``); Parquet's timestamp types
are avoided on purpose (nanosecond timestamps break Spark's Parquet reader).

Spatial co-editing proximity, territoriality and the interaction graph are not computed yet
(docs/analytics.md, "Not yet computed").
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from analytics import TABLES
from analytics.boards import UNBOUNDED, Boards, boards_of

US = 1_000_000
EDIT_KINDS = ("ERASE", "MOVE")


@dataclass(frozen=True)
class MetricsConfig:
    idle_s: float = 60.0  # a gap between ops longer than this is idle, not active, time
    window_s: float = 10.0  # a member counts as active for this long after each of their ops

    def __post_init__(self) -> None:
        for name in ("idle_s", "window_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a number of seconds > 0")

    @property
    def idle_us(self) -> int:
        return round(self.idle_s * US)

    @property
    def window_us(self) -> int:
        return round(self.window_s * US)


def compute(rows: DataFrame, config: MetricsConfig, geometry: bool) -> dict[str, DataFrame]:
    """Every table of :data:`TABLES`, from the rows of :func:`analytics.load.load_rows`.
    ``geometry``: whether the rows carry ink lengths and edit targets (else those columns
    are null)."""
    boards = boards_of(rows)
    gaps = idle_gaps(boards.ops, config)
    contributions = contribution(boards, config, geometry)
    turn_table, turn_members = turn_taking(boards)
    per_member_network = network(rows, boards.logs).cache()
    return {
        "sessions": sessions(boards, gaps),
        "contribution": contributions,
        "participation": participation(contributions),
        "turns": turn_table,
        "turns_by_member": turn_members,
        "simultaneity": simultaneity(boards, config),
        "idle_gaps": gaps,
        "edits": edits(boards, geometry),
        "network": per_member_network,
        "network_by_transport": network_by_transport(per_member_network),
    }


def write_tables(tables: dict[str, DataFrame], out: str) -> None:
    """Each table as Parquet in ``out/<name>/``, replacing an earlier run's. ``out`` is a
    folder or a URI (``hdfs://...``), so it is joined as text, not as a local path."""
    for name, frame in tables.items():
        frame.orderBy(*TABLES[name]).write.mode("overwrite").parquet(f"{out.rstrip('/')}/{name}")


# -- the board sessions ------------------------------------------------------------------------


def sessions(boards: Boards, gaps: DataFrame) -> DataFrame:
    identity = boards.logs.groupBy("board_session").agg(
        F.first("transport").alias("transport"),
        F.first("group").alias("group"),
        F.min("start_us").alias("start_us"),
        F.max("end_us").alias("end_us"),
        F.count("*").alias("logs"),
        F.max_by("session_id", F.col("reference").cast("int")).alias("reference_session_id"),
    )
    ops = boards.ops.groupBy("board_session").agg(
        F.count("*").alias("ops"),
        F.min("t_us").alias("first_op_us"),
        F.max("t_us").alias("last_op_us"),
    )
    members = boards.members.groupBy("board_session").agg(F.count("*").alias("members"))
    idle = gaps.groupBy("board_session").agg(
        F.count("*").alias("idle_gaps"), F.sum("gap_s").alias("idle_s")
    )
    return (
        identity.join(members, "board_session", "left")
        .join(ops, "board_session", "left")
        .join(idle, "board_session", "left")
        .select(
            "board_session",
            "transport",
            "group",
            "start_us",
            "end_us",
            "logs",
            "reference_session_id",
            _zero("members"),
            _zero("ops"),
            "first_op_us",
            "last_op_us",
            ((F.col("last_op_us") - F.col("first_op_us")) / US).alias("op_span_s"),
            _zero("idle_gaps"),
            F.coalesce("idle_s", F.lit(0.0)).alias("idle_s"),
        )
    )


# -- contribution and participation ------------------------------------------------------------


def contribution(boards: Boards, config: MetricsConfig, geometry: bool) -> DataFrame:
    own = Window.partitionBy("board_session", "author").orderBy("t_us", "seq")
    gap = F.col("t_us") - F.lag("t_us").over(own)
    per_member = (
        boards.ops.withColumn("gap_us", gap)
        .groupBy("board_session", F.col("author").alias("member"))
        .agg(
            F.count("*").alias("ops"),
            F.count(F.when(F.col("op_kind") == "STROKE", True)).alias("strokes"),
            F.sum("ink_length").alias("ink_length"),
            F.sum(F.when(F.col("gap_us") <= config.idle_us, F.col("gap_us"))).alias("active_us"),
        )
    )
    table = boards.members.join(per_member, ["board_session", "member"], "left").select(
        "board_session",
        "member",
        "name",
        _zero("ops"),
        _zero("strokes"),
        _known(F.coalesce("ink_length", F.lit(0.0)), geometry, "double").alias("ink_length"),
        (F.coalesce("active_us", F.lit(0)) / US).alias("active_s"),
    )
    board = Window.partitionBy("board_session")
    return table.select(
        "*",
        *(
            F.try_divide(F.col(name), F.sum(name).over(board)).alias(f"{share}_share")
            for name, share in (("ops", "op"), ("ink_length", "ink"), ("active_s", "active"))
        ),
    )


def participation(contributions: DataFrame) -> DataFrame:
    """The Gini coefficient of the members' op counts, from the sorted counts x(1..n):
    G = 2 * sum(i * x(i)) / (n * sum(x)) - (n + 1) / n."""
    ascending = Window.partitionBy("board_session").orderBy("ops", "member")
    ranked = contributions.withColumn("rank", F.row_number().over(ascending))
    totals = ranked.groupBy("board_session").agg(
        F.count("*").alias("members"),
        F.count(F.when(F.col("ops") > 0, True)).alias("contributors"),
        F.sum("ops").alias("ops"),
        F.sum(F.col("rank") * F.col("ops")).alias("weighted"),
        F.max("op_share").alias("top_op_share"),
    )
    n = F.col("members")
    gini = F.try_divide(2 * F.col("weighted"), n * F.col("ops")) - (n + 1) / n
    return totals.select(
        "board_session", "members", "contributors", "ops", gini.alias("gini"), "top_op_share"
    )


# -- turn-taking -------------------------------------------------------------------------------


def turn_taking(boards: Boards) -> tuple[DataFrame, DataFrame]:
    """``(turns, turns_by_member)``. A turn is a maximal run of consecutive ops by one member
    in the reference log's delivery order."""
    order = Window.partitionBy("board_session").orderBy("seq")
    previous = F.lag("author").over(order)
    marked = boards.ops.withColumn(
        "turn_start", (previous.isNull() | (previous != F.col("author"))).cast("int")
    )
    counted = marked.groupBy("board_session", F.col("author").alias("member")).agg(
        F.sum("turn_start").alias("turns"), F.count("*").alias("ops")
    )
    board = Window.partitionBy("board_session")
    by_member = (
        boards.members.join(counted, ["board_session", "member"], "left")
        .select("board_session", "member", "name", _zero("turns"), _zero("ops"))
        .select(
            "*",
            F.try_divide(F.col("turns"), F.sum("turns").over(board)).alias("turn_share"),
            F.try_divide(F.col("ops"), F.col("turns")).alias("ops_per_turn"),
        )
    )
    entropy = by_member.groupBy("board_session").agg(
        (
            F.lit(0.0)
            - F.sum(F.when(F.col("turn_share") > 0, F.col("turn_share") * F.log2("turn_share")))
        ).alias("turn_entropy_bits")
    )
    per_board = marked.groupBy("board_session").agg(
        F.sum("turn_start").alias("turns"),
        F.count("*").alias("ops"),
        ((F.max("t_us") - F.min("t_us")) / (60 * US)).alias("op_span_min"),
    )
    turns = (
        _all_boards(boards)
        .join(per_board, "board_session", "left")
        .join(entropy, "board_session", "left")
        .select(
            "board_session",
            _zero("turns"),
            F.greatest(F.col("turns") - 1, F.lit(0)).alias("handoffs"),
            F.try_divide(F.col("ops"), F.col("turns")).alias("ops_per_turn"),
            "op_span_min",
            F.try_divide(F.col("turns") - 1, F.col("op_span_min")).alias("handoffs_per_min"),
            "turn_entropy_bits",
        )
    )
    return turns, by_member


# -- time ---------------------------------------------------------------------------------------


def simultaneity(boards: Boards, config: MetricsConfig) -> DataFrame:
    """Each op makes its author active for ``window_s`` from its time; the share of the time
    anyone is active during which two or more members are, by a sweep over the members'
    merged activity intervals."""
    width = config.window_us
    own = Window.partitionBy("board_session", "author").orderBy("t_us", "seq")
    previous = F.lag("t_us").over(own)
    intervals = (
        boards.ops.withColumn(
            "opens", (previous.isNull() | (F.col("t_us") - previous >= width)).cast("int")
        )
        .withColumn("interval", F.sum("opens").over(own.rowsBetween(UNBOUNDED, 0)))
        .groupBy("board_session", "author", "interval")
        .agg(F.min("t_us").alias("start_us"), (F.max("t_us") + width).alias("end_us"))
    )
    events = intervals.select(
        "board_session", F.col("start_us").alias("at"), F.lit(1).alias("delta")
    ).unionByName(
        intervals.select("board_session", F.col("end_us").alias("at"), F.lit(-1).alias("delta"))
    )
    # Events at one instant bound empty stretches between them, so their order among
    # themselves does not change any length.
    sweep = Window.partitionBy("board_session").orderBy("at", "delta")
    stretches = events.withColumn(
        "active", F.sum("delta").over(sweep.rowsBetween(UNBOUNDED, 0))
    ).withColumn("length_us", F.lead("at").over(sweep) - F.col("at"))
    per_board = stretches.groupBy("board_session").agg(
        F.sum(F.when(F.col("active") >= 1, F.col("length_us"))).alias("any_us"),
        F.sum(F.when(F.col("active") >= 2, F.col("length_us"))).alias("multi_us"),
        F.max("active").alias("peak_members"),
    )
    return (
        _all_boards(boards)
        .join(per_board, "board_session", "left")
        .select("board_session", _zero("any_us"), _zero("multi_us"), _zero("peak_members"))
        .select(
            "board_session",
            (F.col("any_us") / US).alias("active_s"),
            (F.col("multi_us") / US).alias("simultaneous_s"),
            F.try_divide(F.col("multi_us"), F.col("any_us")).alias("simultaneity"),
            "peak_members",
        )
    )


def idle_gaps(ops: DataFrame, config: MetricsConfig) -> DataFrame:
    """One row per gap between consecutive ops of a board session (anyone's) longer than
    ``idle_s``."""
    order = Window.partitionBy("board_session").orderBy("t_us", "seq")
    return (
        ops.select(
            "board_session",
            F.lag("t_us").over(order).alias("start_us"),
            F.col("t_us").alias("end_us"),
            F.lag("author").over(order).alias("member_before"),
            F.col("author").alias("member_after"),
        )
        .filter(F.col("end_us") - F.col("start_us") > config.idle_us)
        .select("*", ((F.col("end_us") - F.col("start_us")) / US).alias("gap_s"))
    )


# -- edits to others' work ---------------------------------------------------------------------


def edits(boards: Boards, geometry: bool) -> DataFrame:
    """ERASE and MOVE ops aimed at others' ops, per member, both ways; and UNDO/REDO aimed at
    others' ops (which the board ignores: a member may only undo their own)."""
    ops = boards.ops
    kind = F.col("op_kind")
    targets = F.col("target_authors")
    others = F.when(
        targets.isNotNull(), F.size(F.filter(targets, lambda author: author != F.col("author")))
    )
    per_member = ops.groupBy("board_session", F.col("author").alias("member")).agg(
        F.count(F.when(kind == "ERASE", True)).alias("erases"),
        F.count(F.when(kind == "MOVE", True)).alias("moves"),
        F.count(F.when((kind == "ERASE") & (others > 0), True)).alias("erases_of_others"),
        F.count(F.when((kind == "MOVE") & (others > 0), True)).alias("moves_of_others"),
        F.sum(F.when(kind.isin(*EDIT_KINDS), others)).alias("targets_of_others"),
        F.count(
            F.when(
                kind.isin("UNDO", "REDO") & (F.col("undo_target_author") != F.col("author")),
                True,
            )
        ).alias("undos_of_others"),
    )
    received = (
        ops.filter(kind.isin(*EDIT_KINDS))
        .select("board_session", "author", F.explode("target_authors").alias("member"))
        .filter(F.col("member") != F.col("author"))
        .groupBy("board_session", "member")
        .agg(F.count("*").alias("edited_by_others"))
    )
    return (
        boards.members.join(per_member, ["board_session", "member"], "left")
        .join(received, ["board_session", "member"], "left")
        .select(
            "board_session",
            "member",
            "name",
            _zero("erases"),
            _zero("moves"),
            *(
                _known(F.coalesce(name, F.lit(0)), geometry, "bigint").alias(name)
                for name in (
                    "erases_of_others",
                    "moves_of_others",
                    "targets_of_others",
                    "edited_by_others",
                )
            ),
            _zero("undos_of_others"),
        )
    )


# -- network health ----------------------------------------------------------------------------


def network(rows: DataFrame, logs: DataFrame) -> DataFrame:
    """Per member of a board session, from the logs they recorded: the transport's NACK and
    retransmission counters (the last COUNTERS record of each log: they are cumulative),
    deliveries and late deliveries (DELIVERED records, ops and presences), and the join time
    (the first READY after the log's start)."""
    last = Window.partitionBy("session_id").orderBy(F.desc("seq"))
    counters = (
        rows.filter(F.col("kind") == "counters")
        .withColumn("nth", F.row_number().over(last))
        .filter("nth = 1")
        .select(
            "session_id",
            *(
                F.get_json_object("event_fields", f"$.{name}").cast("bigint").alias(name)
                for name in ("nacks_sent", "nacks_received", "retransmissions")
            ),
        )
    )
    deliveries = (
        rows.filter(F.col("kind") == "delivered")
        .groupBy("session_id")
        .agg(
            F.count("*").alias("delivered"),
            F.count(F.when(F.col("late"), True)).alias("late_deliveries"),
        )
    )
    ready = (
        rows.filter(F.col("kind") == "ready")
        .groupBy("session_id")
        .agg(F.min("t_us").alias("ready_us"))
    )
    per_log = (
        logs.join(counters, "session_id", "left")
        .join(deliveries, "session_id", "left")
        .join(ready, "session_id", "left")
        .withColumn("join_ms", (F.col("ready_us") - F.col("start_us")) / 1000)
    )
    return (
        per_log.groupBy("board_session", F.col("local_member").alias("member"), "transport")
        .agg(
            F.max_by("member_name", "start_us").alias("name"),
            F.count("*").alias("logs"),
            # A member who restarted has one log per run: their first join is the one
            # that kept them from the board.
            F.min_by("join_ms", "start_us").alias("join_ms"),
            F.sum("nacks_sent").alias("nacks_sent"),
            F.sum("nacks_received").alias("nacks_received"),
            F.sum("retransmissions").alias("retransmissions"),
            F.sum(F.coalesce("delivered", F.lit(0))).alias("delivered"),
            F.sum(F.coalesce("late_deliveries", F.lit(0))).alias("late_deliveries"),
        )
        .select("*", F.try_divide(F.col("late_deliveries"), F.col("delivered")).alias("late_share"))
    )


def network_by_transport(per_member: DataFrame) -> DataFrame:
    return per_member.groupBy("transport").agg(
        F.countDistinct("board_session").alias("board_sessions"),
        F.count("*").alias("members"),
        F.sum("logs").alias("logs"),
        F.sum("nacks_sent").alias("nacks_sent"),
        F.sum("nacks_received").alias("nacks_received"),
        F.sum("retransmissions").alias("retransmissions"),
        F.sum("delivered").alias("delivered"),
        F.sum("late_deliveries").alias("late_deliveries"),
        F.try_divide(F.sum("late_deliveries"), F.sum("delivered")).alias("late_share"),
        F.avg("join_ms").alias("join_ms_mean"),
        F.max("join_ms").alias("join_ms_max"),
        F.count(F.when(F.col("join_ms").isNull(), True)).alias("never_ready"),
    )


# -- helpers -----------------------------------------------------------------------------------


def _zero(name: str) -> Column:
    """A count that is 0 for a member or board with nothing to count (no row to join)."""
    return F.coalesce(F.col(name), F.lit(0)).alias(name)


def _known(value: Column, known: bool, spark_type: str) -> Column:
    """``value``, or null when the input cannot tell (an export without op geometry)."""
    return value if known else F.lit(None).cast(spark_type)


def _all_boards(boards: Boards) -> DataFrame:
    return boards.logs.select("board_session").distinct()


__all__ = [
    "MetricsConfig",
    "compute",
    "contribution",
    "edits",
    "idle_gaps",
    "network",
    "network_by_transport",
    "participation",
    "sessions",
    "simultaneity",
    "turn_taking",
    "write_tables",
]
