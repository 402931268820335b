"""The ``metrics`` job: one DataFrame per metric family, each defined in docs/analytics.md.

DataFrame API only, and nothing is collected to the driver: the same code runs on one
machine or a cluster. Every table is keyed by ``board_session`` (see :mod:`analytics.boards`)
and, for per-member tables, ``member`` (a member id, as in the logs). Times are int64
microseconds since the Unix epoch (``*_us``) or seconds (``*_s``); Parquet's timestamp types
are avoided on purpose (nanosecond timestamps break Spark's Parquet reader).

Where an op is comes from its ``bbox`` (the export's: what a drawing paints, before any move),
so the spatial metrics (``interactions``, ``territory``) count drawings only (strokes, shapes,
texts and images): an erase, move or undo has no place of its own there. A picture's bytes
(BLOB) are not an op here at all (:data:`analytics.boards.NOT_ACTIONS`): its IMAGE is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from analytics import TABLES
from analytics.attention import attention
from analytics.boards import UNBOUNDED, Boards, boards_of

US = 1_000_000
MINUTE_US = 60 * US
EDIT_KINDS = ("ERASE", "MOVE", "RESTYLE", "REORDER", "EDIT_TEXT", "TRANSFORM")
# A drawing whose box covers more grid cells than this is left out of territory (and counted
# as ``oversized``): exploding a rectangle across the whole board (+-1e7 units) into 64-unit
# cells would make billions of rows. 4096 cells of 64 units is a 4096-unit square, twice a
# full-screen drawing at any zoom people draw at.
MAX_OP_CELLS = 4096


@dataclass(frozen=True)
class MetricsConfig:
    idle_s: float = 60.0  # a gap between ops longer than this is idle, not active, time
    # A member counts as active for this long after each of their ops; two members' drawings
    # this close in time may be co-editing.
    window_s: float = 10.0
    near_px: float = 150.0  # drawings whose boxes are this close (board units) are near
    cell_px: float = 64.0  # the side of a territory grid cell, board units

    @classmethod
    def of(cls, args: Any) -> MetricsConfig:
        """From the command line's options (``metrics`` and ``report`` take the same)."""
        return cls(args.idle_s, args.window_s, args.near_px, args.cell_px)

    def __post_init__(self) -> None:
        for name, unit in (("idle_s", "seconds"), ("window_s", "seconds"), ("cell_px", "px")):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a number of {unit} > 0")
        if not (self.near_px >= 0 and math.isfinite(self.near_px)):
            raise ValueError("near_px must be a number of px >= 0")

    @property
    def idle_us(self) -> int:
        return round(self.idle_s * US)

    @property
    def window_us(self) -> int:
        return round(self.window_s * US)


def compute(rows: DataFrame, config: MetricsConfig) -> dict[str, DataFrame]:
    """Every table of :data:`TABLES`, from the rows of :func:`analytics.load.load_rows`."""
    boards = boards_of(rows)
    gaps = idle_gaps(boards.ops, config)
    contributions = contribution(boards, config)
    turn_table, turn_members = turn_taking(boards)
    per_member_network = network(rows, boards.logs).cache()
    boxes = drawing_boxes(boards.ops, config).cache()
    cells = member_cells(boxes).cache()
    pairs = interactions(boards, boxes, cells, config).cache()
    return {
        "sessions": sessions(boards, gaps, pairs, cells),
        "contribution": contributions,
        "participation": participation(contributions),
        "turns": turn_table,
        "turns_by_member": turn_members,
        "simultaneity": simultaneity(boards, config),
        "idle_gaps": gaps,
        "edits": edits(boards),
        "network": per_member_network,
        "network_by_transport": network_by_transport(per_member_network),
        "interactions": pairs,
        "territory": territory(boards, boxes, cells),
        "timeline": timeline(boards, config),
        "attention": attention(rows, boards.logs),
    }


def write_tables(tables: dict[str, DataFrame], out: str) -> None:
    """Each table as Parquet in ``out/<name>/``, replacing an earlier run's. ``out`` is a
    folder or a URI (``hdfs://...``), so it is joined as text, not as a local path."""
    for name, frame in tables.items():
        frame.orderBy(*TABLES[name]).write.mode("overwrite").parquet(_table_path(out, name))


def read_tables(spark: SparkSession, out: str) -> dict[str, DataFrame]:
    """The tables :func:`write_tables` wrote. Reading them back is far cheaper than reusing
    the DataFrames that computed them: their plans are dozens of joins and windows deep, and
    Spark analyses a whole plan again for every step taken from it (seconds each)."""
    return {name: spark.read.parquet(_table_path(out, name)) for name in TABLES}


def _table_path(out: str, name: str) -> str:
    return f"{out.rstrip('/')}/{name}"


# -- the board sessions ------------------------------------------------------------------------


def sessions(boards: Boards, gaps: DataFrame, pairs: DataFrame, cells: DataFrame) -> DataFrame:
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
    co_edits = pairs.groupBy("board_session").agg(F.sum("co_edits").alias("co_edits"))
    owners = cells.groupBy("board_session", "cx", "cy").agg(F.count("*").alias("owners"))
    area = owners.groupBy("board_session").agg(
        F.count("*").alias("cells"), F.count(F.when(F.col("owners") >= 2, True)).alias("shared")
    )
    return (
        identity.join(members, "board_session", "left")
        .join(ops, "board_session", "left")
        .join(idle, "board_session", "left")
        .join(co_edits, "board_session", "left")
        .join(area, "board_session", "left")
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
            _zero("co_edits"),
            _zero("cells"),
            F.coalesce("shared", F.lit(0)).alias("shared_cells"),
            F.try_divide(F.col("shared"), F.col("cells")).alias("overlap_index"),
        )
    )


# -- contribution and participation ------------------------------------------------------------


def contribution(boards: Boards, config: MetricsConfig) -> DataFrame:
    own = Window.partitionBy("board_session", "author").orderBy("t_us", "seq")
    gap = F.col("t_us") - F.lag("t_us").over(own)
    per_member = (
        boards.ops.withColumn("gap_us", gap)
        .groupBy("board_session", F.col("author").alias("member"))
        .agg(
            F.count("*").alias("ops"),
            F.count(F.when(F.col("op_kind") == "STROKE", True)).alias("strokes"),
            # Pictures pasted (IMAGE ops: the BLOB of their bytes is no op of the board's).
            F.count(F.when(F.col("op_kind") == "IMAGE", True)).alias("images"),
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
        _zero("images"),
        F.coalesce("ink_length", F.lit(0.0)).alias("ink_length"),
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


def edits(boards: Boards) -> DataFrame:
    """The edits (ERASE, MOVE, RESTYLE, REORDER, EDIT_TEXT, TRANSFORM) aimed at others' ops,
    per member, both ways; and UNDO/REDO aimed at others' ops (which the board ignores: a
    member may only undo their own)."""
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
            _zero("erases_of_others"),
            _zero("moves_of_others"),
            _zero("targets_of_others"),
            _zero("edited_by_others"),
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


# -- where people drew: boxes and cells ----------------------------------------------------------


def drawing_boxes(ops: DataFrame, config: MetricsConfig) -> DataFrame:
    """One row per drawing (an op with a ``bbox``): board_session, seq, t_us, author, its box
    x0, y0, x1, y1, the range of grid cells it touches (cx0..cx1, cy0..cy1) and their count."""
    size = config.cell_px
    box = F.col("bbox")
    return (
        ops.filter(box.isNotNull())
        .select(
            "board_session",
            "seq",
            "t_us",
            "author",
            *(box.getItem(i).alias(name) for i, name in enumerate(("x0", "y0", "x1", "y1"))),
        )
        .select(
            "*",
            *(F.floor(F.col(c) / size).alias(f"c{c}") for c in ("x0", "y0", "x1", "y1")),
        )
        .select(
            "*",
            ((F.col("cx1") - F.col("cx0") + 1) * (F.col("cy1") - F.col("cy0") + 1)).alias(
                "n_cells"
            ),
        )
    )


def member_cells(boxes: DataFrame) -> DataFrame:
    """board_session, member, cx, cy: each grid cell a member's drawings touch, once."""
    return (
        boxes.filter(F.col("n_cells") <= MAX_OP_CELLS)
        .select(
            "board_session",
            F.col("author").alias("member"),
            F.explode(F.sequence("cx0", "cx1")).alias("cx"),
            "cy0",
            "cy1",
        )
        .select("board_session", "member", "cx", F.explode(F.sequence("cy0", "cy1")).alias("cy"))
        .distinct()
    )


# -- the interaction graph ---------------------------------------------------------------------


def interactions(
    boards: Boards, boxes: DataFrame, cells: DataFrame, config: MetricsConfig
) -> DataFrame:
    """Per board session and pair of members (member_a < member_b): drawings of theirs near
    each other in time and space (co-edits), edits of each other's work both ways, and grid
    cells both drew in."""
    members = boards.members
    pairs = (
        members.select(
            "board_session", F.col("member").alias("member_a"), F.col("name").alias("name_a")
        )
        .join(
            members.select(
                "board_session", F.col("member").alias("member_b"), F.col("name").alias("name_b")
            ),
            "board_session",
        )
        .filter(F.col("member_a") < F.col("member_b"))
    )
    keys = ["board_session", "member_a", "member_b"]
    edited = _edits_between(boards.ops)
    a_to_b = edited.select(
        "board_session",
        F.col("editor").alias("member_a"),
        F.col("edited").alias("member_b"),
        F.col("edits").alias("edits_a_to_b"),
    )
    b_to_a = edited.select(
        "board_session",
        F.col("edited").alias("member_a"),
        F.col("editor").alias("member_b"),
        F.col("edits").alias("edits_b_to_a"),
    )
    return (
        pairs.join(co_edits(boxes, config), keys, "left")
        .join(a_to_b, keys, "left")
        .join(b_to_a, keys, "left")
        .join(_shared_cells(cells), keys, "left")
        .select(
            *keys,
            "name_a",
            "name_b",
            _zero("co_edits"),
            _zero("edits_a_to_b"),
            _zero("edits_b_to_a"),
            _zero("shared_cells"),
        )
        .withColumn("weight", F.col("co_edits") + F.col("edits_a_to_b") + F.col("edits_b_to_a"))
    )


def co_edits(boxes: DataFrame, config: MetricsConfig) -> DataFrame:
    """board_session, member_a, member_b, co_edits: pairs of drawings by the two, at most
    ``window_s`` apart in time and ``near_px`` apart in space.

    Drawings are put in time buckets ``window_s`` wide, so a drawing's partners are in its
    own bucket or the next one: an equi-join on (board, bucket), never all pairs of a
    board's drawings. Each pair is met once: within a bucket as (earlier seq, later seq),
    across buckets as (earlier bucket, later bucket)."""
    width = config.window_us
    fields = ("board_session", "seq", "t_us", "author", "x0", "y0", "x1", "y1")
    bucketed = boxes.select(*fields, F.floor(F.col("t_us") / width).alias("bucket"))
    first = bucketed.select(*(F.col(c).alias(f"a_{c}") for c in (*fields, "bucket")))
    second = bucketed.select(
        *(F.col(c).alias(f"b_{c}") for c in fields),
        F.col("bucket").alias("b_bucket"),
        F.explode(F.array(F.col("bucket"), F.col("bucket") - 1)).alias("b_key"),
    )
    joined = first.join(
        second,
        (F.col("a_board_session") == F.col("b_board_session"))
        & (F.col("a_bucket") == F.col("b_key")),
    ).filter(
        ((F.col("b_key") != F.col("b_bucket")) | (F.col("a_seq") < F.col("b_seq")))
        & (F.col("a_author") != F.col("b_author"))
        & (F.abs(F.col("a_t_us") - F.col("b_t_us")) <= width)
    )
    # The gap between two boxes: 0 along an axis where they overlap.
    dx = F.greatest(F.lit(0.0), F.greatest("a_x0", "b_x0") - F.least("a_x1", "b_x1"))
    dy = F.greatest(F.lit(0.0), F.greatest("a_y0", "b_y0") - F.least("a_y1", "b_y1"))
    near = joined.filter(dx * dx + dy * dy <= config.near_px**2)
    return near.groupBy(
        F.col("a_board_session").alias("board_session"),
        F.least("a_author", "b_author").alias("member_a"),
        F.greatest("a_author", "b_author").alias("member_b"),
    ).agg(F.count("*").alias("co_edits"))


def _edits_between(ops: DataFrame) -> DataFrame:
    """board_session, editor, edited, edits: targets of one member's ERASE, MOVE, UNDO and
    REDO ops made by another (an UNDO or REDO has one target)."""
    return (
        ops.filter(F.col("target_authors").isNotNull())
        .select(
            "board_session",
            F.col("author").alias("editor"),
            F.explode("target_authors").alias("edited"),
        )
        .filter(F.col("editor") != F.col("edited"))
        .groupBy("board_session", "editor", "edited")
        .agg(F.count("*").alias("edits"))
    )


def _shared_cells(cells: DataFrame) -> DataFrame:
    first = cells.select("board_session", F.col("member").alias("member_a"), "cx", "cy")
    second = cells.select("board_session", F.col("member").alias("member_b"), "cx", "cy")
    return (
        first.join(second, ["board_session", "cx", "cy"])
        .filter(F.col("member_a") < F.col("member_b"))
        .groupBy("board_session", "member_a", "member_b")
        .agg(F.count("*").alias("shared_cells"))
    )


# -- territory ---------------------------------------------------------------------------------


def territory(boards: Boards, boxes: DataFrame, cells: DataFrame) -> DataFrame:
    """Per member: the grid cells their drawings touched, those nobody else's did, and the
    share of each."""
    owners = cells.groupBy("board_session", "cx", "cy").agg(F.count("*").alias("owners"))
    area = (
        cells.join(owners, ["board_session", "cx", "cy"])
        .groupBy("board_session", "member")
        .agg(
            F.count("*").alias("cells"),
            F.count(F.when(F.col("owners") == 1, True)).alias("own_cells"),
        )
    )
    drawings = boxes.groupBy("board_session", F.col("author").alias("member")).agg(
        F.count("*").alias("drawings"),
        F.count(F.when(F.col("n_cells") > MAX_OP_CELLS, True)).alias("oversized"),
    )
    keys = ["board_session", "member"]
    return (
        boards.members.join(drawings, keys, "left")
        .join(area, keys, "left")
        .select(
            *keys,
            "name",
            _zero("drawings"),
            _zero("oversized"),
            _zero("cells"),
            _zero("own_cells"),
        )
        .select(
            "*",
            F.try_divide(F.col("own_cells"), F.col("cells")).alias("territoriality"),
            F.try_divide(F.col("cells") - F.col("own_cells"), F.col("cells")).alias("overlap"),
        )
    )


# -- the activity timeline ---------------------------------------------------------------------


def timeline(boards: Boards, config: MetricsConfig) -> DataFrame:
    """Per board session, member and minute (UTC minutes, from the board's first op's to its
    last op's, every member in every one): ops, ink, and active time as ``contribution``
    counts it (gaps of at most ``idle_s`` between a member's own ops)."""
    ops = boards.ops
    minute_of = F.floor(F.col("t_us") / MINUTE_US)
    keys = ["board_session", "member", "m"]
    span = ops.groupBy("board_session").agg(
        F.min(minute_of).alias("first_m"), F.max(minute_of).alias("last_m")
    )
    grid = boards.members.join(span, "board_session").select(
        "board_session",
        "member",
        "name",
        "first_m",
        F.explode(F.sequence("first_m", "last_m")).alias("m"),
    )
    counts = ops.groupBy(
        "board_session", F.col("author").alias("member"), minute_of.alias("m")
    ).agg(F.count("*").alias("ops"), F.sum("ink_length").alias("ink"))
    own = Window.partitionBy("board_session", "author").orderBy("t_us", "seq")
    stretches = ops.select(
        "board_session",
        F.col("author").alias("member"),
        F.lag("t_us").over(own).alias("start"),
        F.col("t_us").alias("end"),
    ).filter(F.col("end") - F.col("start") <= config.idle_us)
    # A stretch of active time split at minute boundaries: the part in each minute it spans.
    pieces = stretches.select(
        "board_session",
        "member",
        "start",
        "end",
        F.explode(
            F.sequence(F.floor(F.col("start") / MINUTE_US), F.floor(F.col("end") / MINUTE_US))
        ).alias("m"),
    ).select(
        "board_session",
        "member",
        "m",
        (
            F.least("end", (F.col("m") + 1) * MINUTE_US)
            - F.greatest("start", F.col("m") * MINUTE_US)
        ).alias("active_us"),
    )
    active = pieces.groupBy(*keys).agg(F.sum("active_us").alias("active_us"))
    return (
        grid.join(counts, keys, "left")
        .join(active, keys, "left")
        .select(
            "board_session",
            "member",
            "name",
            (F.col("m") - F.col("first_m")).alias("minute"),
            (F.col("m") * MINUTE_US).alias("minute_us"),
            _zero("ops"),
            F.coalesce("ink", F.lit(0.0)).alias("ink_length"),
            (F.coalesce("active_us", F.lit(0)) / US).alias("active_s"),
            ((F.coalesce("ops", F.lit(0)) > 0) | (F.coalesce("active_us", F.lit(0)) > 0)).alias(
                "active"
            ),
        )
    )


# -- helpers -----------------------------------------------------------------------------------


def _zero(name: str) -> Column:
    """A count that is 0 for a member or board with nothing to count (no row to join)."""
    return F.coalesce(F.col(name), F.lit(0)).alias(name)


def _all_boards(boards: Boards) -> DataFrame:
    return boards.logs.select("board_session").distinct()


__all__ = [
    "MAX_OP_CELLS",
    "MetricsConfig",
    "co_edits",
    "compute",
    "contribution",
    "drawing_boxes",
    "edits",
    "idle_gaps",
    "interactions",
    "member_cells",
    "network",
    "network_by_transport",
    "participation",
    "read_tables",
    "sessions",
    "simultaneity",
    "territory",
    "timeline",
    "turn_taking",
    "write_tables",
]
