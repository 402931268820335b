"""The SparkSession the analytics run in.

By default Spark's own default master, ``local[*]`` (every core of this machine, in one JVM);
``--master spark://host:7077`` (or any master URL) is passed through unchanged, and a job
started by ``spark-submit`` keeps the master and settings spark-submit gave it.

The defaults suit a small machine (2 cores here): a handful of shuffle partitions instead of
Spark's 200 (each is a task, and on 2 cores 200 tasks of a few rows cost seconds per stage),
and no web UI (a port and a thread nobody looks at in a batch job).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

from pyspark.sql import SparkSession

from analytics import AnalyticsError

APP_NAME = "whiteboard-analytics"

# Settings that only count when the JVM starts: applied when this process launches Spark,
# left to spark-submit (and its --conf) when it launched us.
LAUNCH_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # progress bars would garble the summary
}
# SQL settings, changeable at any time: applied unless whoever started Spark chose otherwise.
SQL_DEFAULTS: dict[str, str] = {"spark.sql.shuffle.partitions": "4"}
# Always: board sessions are named by their start in UTC, whatever the machine's zone.
SQL_REQUIRED: dict[str, str] = {"spark.sql.session.timeZone": "UTC"}
JAVA_HINT = (
    "Spark needs Java 17 or newer, and no 'java' was found on PATH or in JAVA_HOME: install "
    "it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
)


def under_spark_submit() -> bool:
    """Whether a JVM already runs for us: spark-submit (or the pyspark shell) started this
    Python process and told it where its gateway listens."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def is_local(master: str | None) -> bool:
    return master is None or master.startswith("local")


def build_session(master: str | None = None, conf: Mapping[str, str] | None = None) -> SparkSession:
    """The active SparkSession, or a new one on ``master`` (``None``: Spark's default,
    ``local[*]``, or spark-submit's ``--master``). ``conf`` entries win over the defaults.
    Raises :class:`AnalyticsError` if Java is missing.
    """
    builder = SparkSession.builder.appName(APP_NAME)
    if master is not None:
        builder = builder.master(master)
    if not under_spark_submit() and SparkSession.getActiveSession() is None:
        _check_java()
        if is_local(master):
            # The driver and executors share this machine: bind to loopback, so that Spark
            # neither guesses a LAN address nor warns about the hostname resolving to one.
            # Never for a cluster, whose executors must reach the driver over the network.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            # Python functions (the replay's painting) run in this very interpreter: PySpark
            # would start ``python3`` from PATH, which need not have this project, msgpack or
            # PySide6. On a cluster PYSPARK_PYTHON is whoever runs the cluster's to choose.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        for key, value in LAUNCH_DEFAULTS.items():
            builder = builder.config(key, value)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    chosen = spark.sparkContext.getConf()
    for key, value in SQL_DEFAULTS.items():
        if not chosen.contains(key):
            spark.conf.set(key, value)
    for key, value in SQL_REQUIRED.items():
        spark.conf.set(key, value)
    return spark


def _check_java() -> None:
    # Without Java, PySpark fails with "Java gateway process exited before sending its port
    # number", which names neither Java nor a fix.
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(os.path.join(java_home, "bin", "java"), os.X_OK):
        return
    if shutil.which("java") is None:
        raise AnalyticsError(JAVA_HINT)


__all__ = [
    "APP_NAME",
    "LAUNCH_DEFAULTS",
    "SQL_DEFAULTS",
    "SQL_REQUIRED",
    "build_session",
    "is_local",
]
