"""``whiteboard replay FILE`` run as a person runs it: a file that is not a log is a sentence
and status 2, before any window opens (a window would keep the command running)."""

from __future__ import annotations

from pathlib import Path

from tests.processes import run_whiteboard
from tests.replay.recorded import RecordedSession


def test_a_foreign_file_is_refused_with_status_2_and_no_traceback(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a log\n")
    result = run_whiteboard("replay", str(notes), timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == 'whiteboard: "notes.txt" is not a whiteboard session log'
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_missing_file_is_refused_too(tmp_path: Path) -> None:
    result = run_whiteboard("replay", str(tmp_path / "gone.wblog"), timeout=60)
    assert result.returncode == 2
    assert '"gone.wblog" could not be opened' in result.stderr
    assert "Traceback" not in result.stderr


def test_replay_without_a_file_says_what_it_needs() -> None:
    result = run_whiteboard("replay", timeout=60)
    assert result.returncode == 2
    assert "FILE" in result.stderr and "Traceback" not in result.stderr


def test_a_log_with_a_damaged_header_is_refused(recorded: RecordedSession, tmp_path: Path) -> None:
    data = bytearray(recorded.logs[0].read_bytes())
    data[20] ^= 0xFF  # inside the header record: its checksum no longer matches
    damaged = tmp_path / "damaged.wblog"
    damaged.write_bytes(bytes(data))
    result = run_whiteboard("replay", str(damaged), timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith('whiteboard: "damaged.wblog" is damaged (')
    assert "Traceback" not in result.stderr
