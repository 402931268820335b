"""The ``attention`` table of the ``metrics`` job (issue 19; docs/analytics.md "attention"):
where members pointed and whom they followed, from the side channel's records in their logs
(SIDE, sampled, and FOLLOW: docs/session-log.md). DataFrame API only, as metrics.py."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

US = 1_000_000
_COUNTS = (
    "pointer_samples",
    "pointer_active_s",
    "laser_samples",
    "laser_uses",
    "follow_requests",
    "follows",
)
LASER_GAP_US = US  # laser points further apart than this are two uses of the laser


def attention(rows: DataFrame, logs: DataFrame) -> DataFrame:
    """Per member of a board session: where they pointed and whom they followed (issue 19),
    from the SIDE and FOLLOW records of the logs they recorded (docs/analytics.md): their own
    pointer's samples and the seconds it moved in, their uses of the laser, the times they
    followed someone and for how long, and for how long others followed them."""
    by_log = logs.select("session_id", "board_session", "end_us")
    own = (
        rows.filter((F.col("kind") == "side") & (F.col("origin") == F.col("local_member")))
        .join(by_log, "session_id")
    )
    previous_laser = F.lag("t_us").over(
        Window.partitionBy("session_id", "name").orderBy("t_us", "seq")
    )
    pointing = (
        own.withColumn("gap", F.col("t_us") - previous_laser)
        .groupBy("board_session", F.col("local_member").alias("member"))
        .agg(
            F.count(F.when(F.col("name") == "pointer", True)).alias("pointer_samples"),
            F.countDistinct(
                F.when(F.col("name") == "pointer", F.floor(F.col("t_us") / US))
            ).alias("pointer_active_s"),
            F.count(F.when(F.col("name") == "laser", True)).alias("laser_samples"),
            F.count(
                F.when(
                    (F.col("name") == "laser")
                    & (F.col("gap").isNull() | (F.col("gap") > LASER_GAP_US)),
                    True,
                )
            ).alias("laser_uses"),
            F.count(F.when(F.col("name") == "view_asking", True)).alias("follow_requests"),
        )
    )
    # Each FOLLOW record opens a span that the next one of its log (or the log's end) closes.
    next_follow = F.lead("t_us").over(Window.partitionBy("session_id").orderBy("t_us", "seq"))
    spans = (
        rows.filter(F.col("kind") == "follow")
        .join(by_log, "session_id")
        .withColumn("until_us", F.coalesce(next_follow, F.col("end_us")))
        .filter(F.col("member") != 0)
        .withColumn("seconds", (F.col("until_us") - F.col("t_us")) / US)
    )
    following = spans.groupBy("board_session", F.col("local_member").alias("member")).agg(
        F.count("*").alias("follows"), F.sum("seconds").alias("following_s")
    )
    followed = spans.groupBy("board_session", "member").agg(
        F.sum("seconds").alias("followed_by_s")
    )
    keys = ["board_session", "member"]
    return (
        pointing.join(following, keys, "full")
        .join(followed, keys, "full")
        .select(
            *keys,
            *(F.coalesce(F.col(name), F.lit(0)).alias(name) for name in _COUNTS),
            F.coalesce(F.col("following_s"), F.lit(0.0)).alias("following_s"),
            F.coalesce(F.col("followed_by_s"), F.lit(0.0)).alias("followed_by_s"),
        )
    )
