"""A Spark standalone cluster on this computer: one master and one worker, started from the
PySpark install, for trying the jobs on a real cluster and for the test that runs them there.

    python -m analytics cluster [--cores N] [--memory 2g] [--dir DIR]

prints the master URL and runs until Ctrl+C. In Python::

    with StandaloneCluster(folder, cores=2, memory="2g") as cluster:
        ... --master cluster.master_url ...

The PySpark wheel has no ``sbin/start-master.sh``, but its ``bin/spark-class`` runs the
master and worker classes in the foreground, so they are plain child processes here:

* bound to 127.0.0.1, on ports the system picks (port 0), so that clusters started side by
  side (parallel test runs) never clash; the URLs are read back from the master's log;
* each in a process group of its own, killed as a whole (the worker's executors with it)
  when the cluster stops, and told to stop (Linux) if this process dies without stopping it;
* started within a bounded wait: the master's URL in its log, then the worker ALIVE in the
  master's JSON status; a daemon that exits or a wait that runs out raises
  :class:`ClusterError` with the end of its log.

Logs and the worker's work folder (one folder per application, with each executor's stdout
and stderr) are in the cluster's folder.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, TypeVar

from analytics import AnalyticsError

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 300.0  # a JVM can take minutes to start on a busy small machine
POLL_S = 0.2
STOP_GRACE_S = 20.0  # for the worker to stop its executors before they are killed
LOG_TAIL_LINES = 30
DEFAULT_MEMORY = "2g"  # the executor's default heap is 1g: the worker must offer at least that

# What the master logs once it listens: its URL, then its web UI's (which serves /json).
_MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
_MASTER_UI_PORT = re.compile(r"Bound MasterWebUI to \S+ and started at https?://[^\s/]+:(\d+)")
_MEMORY = re.compile(r"\d+[kmgt]?", re.IGNORECASE)
_PR_SET_PDEATHSIG = 1  # linux/prctl.h

T = TypeVar("T")


class ClusterError(AnalyticsError):
    """The cluster did not start (or stopped): says which daemon and ends with its log."""


@dataclass(frozen=True)
class Daemon:
    name: str  # "master" or "worker"
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"\n(its log {self.log} cannot be read: {exc.strerror})"
        kept = text.rstrip("\n").splitlines()[-lines:]
        return f"\nthe end of its log, {self.log}:\n" + "\n".join("  " + line for line in kept)


class StandaloneCluster:
    """A master and one worker with ``cores`` and ``memory`` on 127.0.0.1, their logs and
    the worker's work folder in ``folder``. A context manager: started on entry, stopped
    (every process of both, whatever happened) on exit."""

    def __init__(
        self,
        folder: Path,
        cores: int = 2,
        memory: str = DEFAULT_MEMORY,
        python: str = sys.executable,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        if cores < 1:
            raise ClusterError(f"a worker needs at least one core, not {cores}")
        self.folder = folder
        self.cores = cores
        self.memory = memory
        self.python = python  # the executors' Python: the one whose packages the driver uses
        self.start_timeout_s = start_timeout_s
        self.master_url = ""
        self.web_url = ""  # the master's web UI: /json is its status
        self._daemons: list[Daemon] = []

    @property
    def work_dir(self) -> Path:
        """The worker's folder: ``app-*/<executor id>/stdout|stderr`` per application."""
        return self.folder / "work"

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        # Imported here: the command line builds its parser without importing PySpark.
        from analytics.session import _check_java  # the jobs' clear message without Java

        _check_java()
        spark_class = find_spark_class()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.work_dir.mkdir(exist_ok=True)
        try:
            master = self._launch("master", [str(spark_class), MASTER_CLASS, *self._where()])
            deadline = time.monotonic() + self.start_timeout_s
            self.master_url, ui_port = self._wait(
                "printed its URL", lambda: _master_address(master.log), master, deadline
            )
            self.web_url = f"http://{LOOPBACK}:{ui_port}"
            worker_args = [*self._where(), "--cores", str(self.cores), "--memory", self.memory]
            worker_args += ["--work-dir", str(self.work_dir)]
            worker = self._launch(
                "worker", [str(spark_class), WORKER_CLASS, self.master_url, *worker_args]
            )
            self._wait("registered with the master", self._worker_alive, worker, deadline)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the worker (and its executors), then the master: each process group is asked
        to stop, and killed if it has not within a grace period. Safe to call again."""
        while self._daemons:
            _stop(self._daemons.pop())

    def status(self) -> dict[str, Any]:
        """The master's status (its web UI's /json): workers, active and completed apps."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=10) as reply:
            status: dict[str, Any] = json.load(reply)
        return status

    def check(self) -> None:
        """Raise :class:`ClusterError` if the master or the worker has exited."""
        for daemon in self._daemons:
            code = daemon.process.poll()
            if code is not None:
                raise ClusterError(f"the Spark {daemon.name} stopped (exit status {code})")

    def _where(self) -> list[str]:
        return ["--host", LOOPBACK, "--port", "0", "--webui-port", "0"]

    def _launch(self, name: str, command: list[str]) -> Daemon:
        log = self.folder / f"{name}.log"
        with log.open("wb") as handle:  # the child keeps its own descriptor
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=self._environment(),
                cwd=self.folder,
                start_new_session=True,  # its own process group, killed as one
                preexec_fn=_dies_with_parent(),
            )
        daemon = Daemon(name, process, log)
        self._daemons.append(daemon)
        return daemon

    def _environment(self) -> dict[str, str]:
        project = str(Path(__file__).resolve().parents[1])
        path = os.pathsep.join(p for p in (project, os.environ.get("PYTHONPATH", "")) if p)
        return {
            **os.environ,
            "SPARK_HOME": str(find_spark_class().parents[1]),
            "SPARK_LOCAL_IP": LOOPBACK,
            # Executors run Python for Python functions (the replay's painting): this Python
            # and this checkout's packages, as the driver's.
            "PYSPARK_PYTHON": self.python,
            "PYTHONPATH": path,
            # The master's REST submission server listens on a fixed port (6066), which a
            # second cluster on this computer would find taken; jobs do not need it.
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        }

    def _wait(self, what: str, found: Callable[[], T | None], daemon: Daemon, deadline: float) -> T:
        """Poll ``found`` until it gives a value; fail if a daemon exits or time runs out."""
        while True:
            value = found()
            if value is not None:
                return value
            for running in self._daemons:
                code = running.process.poll()
                if code is not None:
                    raise ClusterError(
                        f"the Spark {running.name} exited (status {code}) before the "
                        f"{daemon.name} {what}" + running.tail()
                    )
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"the Spark {daemon.name} has not {what} after "
                    f"{self.start_timeout_s:.0f} s" + daemon.tail()
                )
            time.sleep(POLL_S)

    def _worker_alive(self) -> bool | None:
        try:
            workers = self.status().get("workers", [])
        except (OSError, ValueError):  # the UI not serving yet, or a reply cut short
            return None
        return True if any(w.get("state") == "ALIVE" for w in workers) else None


def find_spark_class() -> Path:
    """``bin/spark-class`` of ``$SPARK_HOME`` if set, else of the PySpark install."""
    homes: list[Path] = []
    if os.environ.get("SPARK_HOME"):
        homes.append(Path(os.environ["SPARK_HOME"]))
    spec = importlib.util.find_spec("pyspark")
    if spec is not None and spec.origin is not None:
        homes.append(Path(spec.origin).parent)
    for home in homes:
        script = home / "bin" / "spark-class"
        if os.access(script, os.X_OK):
            return script
    raise ClusterError(
        "no Spark to start a cluster with: neither $SPARK_HOME nor the PySpark install has "
        "bin/spark-class (install the 'analytics' extra)"
    )


def _master_address(log: Path) -> tuple[str, int] | None:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    url, ui = _MASTER_URL.search(text), _MASTER_UI_PORT.search(text.replace(",", ""))
    return (url.group(1), int(ui.group(1))) if url and ui else None


def _stop(daemon: Daemon) -> None:
    group = daemon.process.pid  # the leader of its own session: the group's id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        daemon.process.wait(STOP_GRACE_S)
    # Whatever is left of the group (a stuck JVM, executors that outlived the worker).
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    daemon.process.wait()


def _dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to send the child SIGTERM when this process dies, so that
    a test run killed by a timeout leaves no JVMs behind. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)  # loaded here: the child only calls it
    parent = os.getpid()

    def arm() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the request was made
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


# -- the command -------------------------------------------------------------------------------


def add_parser(jobs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = jobs.add_parser(
        "cluster",
        help="start a Spark standalone cluster on this computer (a master and one worker) "
        "and run until Ctrl+C",
        description="Start a Spark standalone cluster on 127.0.0.1, from the PySpark install: "
        "a master and one worker. Prints the master URL to give to --master; Ctrl+C stops it.",
    )
    parser.add_argument(
        "--cores",
        type=_cores,
        default=os.cpu_count() or 1,
        metavar="N",
        help="the worker's cores (default: all of this computer's)",
    )
    parser.add_argument(
        "--memory",
        type=_memory,
        default=DEFAULT_MEMORY,
        metavar="SIZE",
        help=f"the worker's memory for executors, as 512m or 4g (default {DEFAULT_MEMORY}; an "
        "executor takes 1g unless --conf spark.executor.memory says otherwise)",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the logs and the worker's work folder go (default: a temporary folder, "
        "removed when the cluster stops)",
    )


def run(args: argparse.Namespace) -> int:
    """``cluster``: start, print how to use it, wait for Ctrl+C (or SIGTERM), stop."""
    with contextlib.ExitStack() as stack:
        folder: Path = args.dir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="whiteboard-cluster-"))
        )
        stack.enter_context(_interrupted_by_sigterm())
        print(f"starting a Spark master and worker, logs in {folder} ...", flush=True)
        try:
            cluster = stack.enter_context(StandaloneCluster(folder, args.cores, args.memory))
            print(
                f"Spark master {cluster.master_url}: one worker, {cluster.cores} cores, "
                f"{cluster.memory} (status: {cluster.web_url})\n"
                f"run a job on it:\n"
                f"  python -m analytics metrics INPUT --out DIR --master {cluster.master_url}\n"
                "Ctrl+C stops the cluster",
                flush=True,
            )
            while True:
                cluster.check()
                time.sleep(1.0)
        except KeyboardInterrupt:
            print("stopping the cluster", flush=True)
    return 0


@contextlib.contextmanager
def _interrupted_by_sigterm() -> Iterator[None]:
    # ``kill`` stops the cluster as Ctrl+C does, instead of leaving it to the kernel.
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _cores(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of cores") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a worker needs at least one core, not {value}")
    return value


def _memory(text: str) -> str:
    if not _MEMORY.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 512m or 4g")
    return text


__all__ = ["ClusterError", "Daemon", "StandaloneCluster", "add_parser", "find_spark_class", "run"]
