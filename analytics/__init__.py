"""Collaboration analytics over recorded whiteboard sessions, on Apache Spark.

``python -m analytics metrics INPUT --out DIR`` reads session logs (``*.wblog``) or their
export (``whiteboard log export``), groups the logs of one board into a *board session*, and
writes one Parquet table per metric family. Every metric is defined in docs/analytics.md.

* :mod:`~analytics.session`: the SparkSession (``local[*]`` by default, any ``--master``).
* :mod:`~analytics.load`: session logs or exported rows into one DataFrame of rows.
* :mod:`~analytics.metrics`: the metrics, DataFrame API only (they run unchanged on a cluster).
* :mod:`~analytics.summary`: the few lines printed after a run.
* :mod:`~analytics.__main__`: the command line.

The package needs the ``analytics`` extra (PySpark, pyarrow) and Java 17; nothing else in the
project imports it.
"""

# What a person is told when the extra is missing (docs/install.md), after what was missing.
MISSING_EXTRA = (
    "the analytics need PySpark and pyarrow ({missing}), the 'analytics' extra: add them with "
    "pipx inject whiteboard pyspark pyarrow (installed with pipx), pip install pyspark pyarrow "
    "in whiteboard's environment, or make test in a clone (docs/install.md)"
)

# The tables of the ``metrics`` job, in the order they are written and described in
# docs/analytics.md, with the columns each is sorted by.
TABLES: dict[str, tuple[str, ...]] = {
    "sessions": ("board_session",),
    "contribution": ("board_session", "member"),
    "participation": ("board_session",),
    "turns": ("board_session",),
    "turns_by_member": ("board_session", "member"),
    "simultaneity": ("board_session",),
    "idle_gaps": ("board_session", "start_us"),
    "edits": ("board_session", "member"),
    "network": ("board_session", "member"),
    "network_by_transport": ("transport",),
    "interactions": ("board_session", "member_a", "member_b"),
    "territory": ("board_session", "member"),
    "timeline": ("board_session", "member", "minute"),
    "attention": ("board_session", "member"),
}


class AnalyticsError(Exception):
    """A problem a person can act on (no Java, no logs in the input, a bad option): the
    command prints the message alone, without a traceback."""


__all__ = ["TABLES", "AnalyticsError"]
