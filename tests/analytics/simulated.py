"""Session logs from the simulator, as a person makes sample data: ``whiteboard sim ...
--log-dir DIR`` in a child process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def simulate(
    folder: Path, transport: str, seed: int, start: str, messages: int, loss: float
) -> dict[str, Any]:
    """One simulated board session of three members drawing together (the ``collab``
    workload), each member's log written into ``folder``; the simulator's result (``--json``:
    its logs, whether it converged, the final board hash)."""
    options = ["--transport", transport, "--seed", str(seed), "--start", start]
    options += ["--workload", "collab", "--peers", "3", "--messages", str(messages)]
    options += ["--loss", str(loss), "--jitter-ms", "2", "--log-dir", str(folder), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "whiteboard", "sim", *options],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result
