"""Crash safety for real: a writing process killed with SIGKILL leaves a log that reads back
to its last whole record, with a warning if the tail is torn, and nothing before it lost."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import ROOT, child_env
from tests.sessionlog.writer_child import HEADER, TORN_WHOLE, frame_of, record
from whiteboard.sessionlog import read_log
from whiteboard.sessionlog.format import encode_record, frame, preamble

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

WAIT_S = 60.0  # a bound on waiting for the child, not a synchronisation


def start_child(path: Path, mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.sessionlog.writer_child", str(path), mode],
        env=child_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for_size(path: Path, child: subprocess.Popen[bytes], at_least: int) -> int:
    """Poll the file until it holds ``at_least`` bytes; the size seen."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        size = path.stat().st_size if path.exists() else 0
        if size >= at_least:
            return size
        if child.poll() is not None:
            raise AssertionError(f"the writer died first: {child.stderr.read().decode()}")
        time.sleep(0.005)  # a polling interval: the condition above is what we wait for
    raise AssertionError(f"the log did not reach {at_least} bytes in {WAIT_S} s")


def kill(child: subprocess.Popen[bytes]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=WAIT_S)
    assert child.returncode == -signal.SIGKILL


def frame_ends(count: int) -> list[int]:
    """Where the header's frame, then each record's, ends in the child's log."""
    ends = [len(preamble() + frame(encode_record(HEADER)))]
    for i in range(count):
        ends.append(ends[-1] + len(frame_of(i)))
    return ends


def test_a_writer_killed_mid_record_leaves_every_whole_record_and_a_warning(
    tmp_path: Path,
) -> None:
    path = tmp_path / "killed.wblog"
    ends = frame_ends(TORN_WHOLE)
    half = len(frame_of(TORN_WHOLE)) // 2
    child = start_child(path, "torn")
    try:
        wait_for_size(path, child, ends[-1] + half)
    finally:
        kill(child)
    log = read_log(path)
    assert log.header == HEADER
    assert list(log.records) == [record(i) for i in range(TORN_WHOLE)]
    assert log.report.valid_bytes == ends[-1]
    assert log.report.torn_bytes == half
    assert log.report.corrupt_offset is None
    assert not log.report.clean_end
    (warning,) = log.report.warnings
    assert "torn record" in warning and "killed.wblog" in warning


@pytest.mark.parametrize("run", range(3))
def test_a_writer_killed_while_writing_loses_nothing_it_had_written(
    tmp_path: Path, run: int
) -> None:
    path = tmp_path / "killed.wblog"
    child = start_child(path, "loop")
    try:
        # Several flushes' worth, so the kill lands among large writes.
        seen = wait_for_size(path, child, (1 + run) * 2_000_000)
    finally:
        kill(child)
    log = read_log(path)
    size = path.stat().st_size
    count = len(log.records)
    assert log.header == HEADER
    assert list(log.records) == [record(i) for i in range(count)]  # a prefix, no gap
    ends = frame_ends(count + 1)
    assert count >= sum(1 for end in ends[1:] if end <= seen)  # all that was there before
    assert log.report.valid_bytes == ends[count]
    assert log.report.torn_bytes == size - ends[count]
    assert log.report.corrupt_offset is None
    assert bool(log.report.warnings) == (log.report.torn_bytes > 0)
