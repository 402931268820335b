"""The ``metrics`` job on a real Spark standalone cluster (a master and one worker started
here from the PySpark install, :mod:`analytics.cluster`) writes the same tables, row for row,
as on ``local[*]``.

The cluster's driver is a child process (``python -m analytics metrics ... --master
spark://...``), as a person runs it; the ``local[*]`` run is in this process, in the test
run's one SparkSession. Both run at the same time: most of either is waiting on Spark's
scheduler, so together they take little longer than the slower one.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from analytics import TABLES
from analytics.__main__ import EXIT_OK, EXIT_PROBLEM, main
from analytics.cluster import StandaloneCluster
from analytics.session import APP_NAME
from tests.analytics.simulated import simulate
from tests.processes import ROOT, child_env

SIMULATIONS = (  # (transport, seed, start): two board sessions, one per transport
    ("rmp", 3, "2024-05-06T14:00:00Z"),
    ("mtp", 4, "2024-05-07T14:00:00Z"),
)
DRIVER_TIMEOUT_S = 900.0  # a bound for a stuck job, not a performance check
REL_TOL = ABS_TOL = 1e-9  # sums of doubles may be added up in another order on the cluster


@pytest.fixture(scope="module")
def sim_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cluster-logs")
    for transport, seed, start in SIMULATIONS:
        simulate(folder, transport, seed, start, messages=80, loss=0.03)
    return folder


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    folder = tmp_path_factory.mktemp("cluster")
    with StandaloneCluster(folder, cores=2, memory="2g") as running:
        yield running
    assert processes_in(folder) == [], "the cluster's processes outlived it"


def test_metrics_on_a_standalone_cluster_equal_local(
    spark: SparkSession, cluster: StandaloneCluster, sim_logs: Path, tmp_path: Path
) -> None:
    on_cluster, on_local = tmp_path / "cluster", tmp_path / "local"
    command = [sys.executable, "-m", "analytics", "metrics", str(sim_logs)]
    command += ["--out", str(on_cluster), "--master", cluster.master_url]
    # The executors run this Python if they need one; the driver listens on loopback, where
    # the executors of a cluster on this computer reach it.
    env = child_env(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    with subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as driver:
        try:
            assert main(["metrics", str(sim_logs), "--out", str(on_local)]) == EXIT_OK
            out, err = driver.communicate(timeout=DRIVER_TIMEOUT_S)
        finally:
            if driver.poll() is None:
                driver.kill()
    assert driver.returncode == EXIT_OK, f"the job on the cluster failed:\n{err[-4000:]}"
    assert "wrote" in out

    # It really ran there: the master ran the application, on an executor of the worker.
    apps = cluster.status()["completedapps"]
    assert [app["name"] for app in apps] == [APP_NAME]
    executor_logs = list(cluster.work_dir.glob(f"{apps[0]['id']}/*/stderr"))
    assert executor_logs, "no executor ran on the worker"
    assert "Finished task" in "".join(log.read_text() for log in executor_logs)

    # Not a comparison of two empty results: a board session per simulation.
    assert pq.read_table(on_local / "sessions").num_rows == len(SIMULATIONS)
    assert table_names(on_cluster) == table_names(on_local)
    assert set(TABLES) <= set(table_names(on_local))
    differences = [
        difference
        for name in table_names(on_local)
        for difference in compare_tables(name, on_cluster / name, on_local / name)
    ]
    assert not differences, "the cluster's tables differ from local[*]'s:\n" + "\n".join(
        differences[:40]
    )


def test_a_cluster_that_cannot_start_is_reported_with_its_log_and_leaves_nothing_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A worker with no memory stops at once, after the master has started.
    assert main(["cluster", "--cores", "1", "--memory", "0", "--dir", str(tmp_path)]) == (
        EXIT_PROBLEM
    )
    err = capsys.readouterr().err
    assert "the Spark worker exited (status 1) before the worker registered" in err
    assert f"the end of its log, {tmp_path / 'worker.log'}:" in err
    assert "Memory is below 1MB" in err  # the worker's own words
    assert "Traceback" not in err.split("the end of its log")[0]
    assert processes_in(tmp_path) == []


def test_the_cluster_command_checks_its_options_before_starting_anything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for options, message in (
        (["--cores", "0"], "a worker needs at least one core, not 0"),
        (["--memory", "lots"], "'lots' is not a size such as 512m or 4g"),
    ):
        with pytest.raises(SystemExit) as exited:
            main(["cluster", *options])
        assert exited.value.code == EXIT_PROBLEM
        assert message in capsys.readouterr().err


# -- helpers -------------------------------------------------------------------------------------


def table_names(out: Path) -> list[str]:
    return sorted(entry.name for entry in out.iterdir() if not entry.name.startswith((".", "_")))


def compare_tables(name: str, got_dir: Path, want_dir: Path) -> list[str]:
    """Every difference between two runs' table ``name``: columns and their types, then the
    rows, sorted, doubles within a tolerance."""
    got, want = pq.read_table(got_dir), pq.read_table(want_dir)
    got_columns = [(field.name, str(field.type)) for field in got.schema]
    want_columns = [(field.name, str(field.type)) for field in want.schema]
    if got_columns != want_columns:
        return [f"{name}: columns {got_columns} on the cluster, {want_columns} on local[*]"]
    if got.num_rows != want.num_rows:
        return [f"{name}: {got.num_rows} rows on the cluster, {want.num_rows} on local[*]"]
    keys = [column for column in TABLES.get(name, ()) if column in got.column_names]
    differences: list[str] = []
    pairs = zip(
        sorted_rows(got.to_pylist(), keys), sorted_rows(want.to_pylist(), keys), strict=True
    )
    for got_row, want_row in pairs:
        for column, want_value in want_row.items():
            if not same(got_row[column], want_value):
                where = {key: want_row[key] for key in keys} or want_row
                differences.append(
                    f"{name} {where}: {column} = {got_row[column]!r} on the cluster, "
                    f"{want_value!r} on local[*]"
                )
    return differences


def sorted_rows(rows: list[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """By the table's key columns, then by every column: one order for both runs, whatever
    order the partitions were written in."""
    return sorted(rows, key=lambda row: (order([row[k] for k in keys]), order(list(row.values()))))


def order(value: object) -> tuple[Any, ...]:
    """A sort key for any Parquet value (null, numbers, text, lists, structs), doubles
    rounded so that two runs' last-bit differences do not reorder rows."""
    if value is None:
        return (0,)
    if isinstance(value, bool | int):
        return (1, value)
    if isinstance(value, float):
        return (1, float(f"{value:.9g}")) if math.isfinite(value) else (2, str(value))
    if isinstance(value, str | bytes):
        return (3, value) if isinstance(value, str) else (4, value)
    if isinstance(value, dict):
        return (5, tuple((key, order(item)) for key, item in sorted(value.items())))
    if isinstance(value, list | tuple):
        return (6, tuple(order(item) for item in value))
    return (7, repr(value))


def same(got: object, want: object) -> bool:
    if isinstance(got, float) and isinstance(want, float):
        if math.isnan(got) or math.isnan(want):
            return math.isnan(got) and math.isnan(want)
        return math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if type(got) is not type(want):
        return False
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    if isinstance(got, list | tuple) and isinstance(want, list | tuple):
        return len(got) == len(want) and all(map(same, got, want))
    return got == want


def processes_in(folder: Path) -> list[int]:
    """The processes working in ``folder`` or below: a cluster's daemons and executors."""
    folder = folder.resolve()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = Path(os.readlink(entry / "cwd"))
            except OSError:  # gone meanwhile, or not ours to look at
                continue
            if cwd == folder or folder in cwd.parents:
                found.append(int(entry.name))
    return found
