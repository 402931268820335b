"""Running `whiteboard` as a person does: a real child process of this checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def whiteboard_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "whiteboard", *args]


def child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", **extra}


def run_whiteboard(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        whiteboard_command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(),
        cwd=ROOT,
    )


def start_whiteboard(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        whiteboard_command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=ROOT,
    )
