"""The wheel works anywhere (issue 22 point 2): ``python -m build`` makes it (from the sdist,
so the sdist is whole too), it installs into a fresh venv outside the repository, and from
there ``whiteboard --version``, the simulator and the app's offscreen start work, with the
app's assets, and the analytics, an extra, say how to get them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.processes import ROOT
from whiteboard import __version__
from whiteboard.sessionlog import ReadyRecord, read_log
from whiteboard.sessionlog.format import SessionLogError

BUILD_TIMEOUT_S = 300.0
APP_JOIN_S = 60.0


def clean_env(tmp: Path) -> dict[str, str]:
    """No trace of this checkout: no PYTHONPATH, another working folder, its own HOME."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "HOME": str(tmp / "home"), "QT_QPA_PLATFORM": "offscreen"}


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 120.0) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


def wait_for_join(logs: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + APP_JOIN_S
    while time.monotonic() < deadline and process.poll() is None:
        for log in logs.glob("*.wblog"):
            try:
                if any(isinstance(r, ReadyRecord) for r in read_log(log).records):
                    return
            except SessionLogError:
                pass  # its first bytes are being written
        time.sleep(0.25)
    raise AssertionError(f"the app did not join within {APP_JOIN_S} s")


@pytest.mark.network
def test_the_wheel_installs_into_a_fresh_venv_and_runs_there(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    (tmp_path / "home").mkdir()
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], tmp_path, env,
        BUILD_TIMEOUT_S)  # fmt: skip
    [wheel] = dist.glob("whiteboard-*.whl")
    assert wheel.name == f"whiteboard-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "whiteboard_assets/icons/whiteboard-512.png" in names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "docs/"))]

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
        tmp_path, env, BUILD_TIMEOUT_S)  # fmt: skip
    whiteboard = str(venv / "bin" / "whiteboard")
    assert run([whiteboard, "--version"], tmp_path, env).strip() == f"whiteboard {__version__}"
    python = str(venv / "bin" / "python")
    where = run([python, "-c", "import whiteboard; print(whiteboard.__file__)"], tmp_path, env)
    assert Path(where.strip()).is_relative_to(venv)  # not this checkout
    result = run([whiteboard, "sim", "--transport", "rmp", "--peers", "3", "--messages", "50",
                  "--json"], tmp_path, env)  # fmt: skip
    assert '"complete": true' in result and '"converged": true' in result

    # The analytics are an extra: without it, a person is told how to get it.
    missing = subprocess.run(
        [whiteboard, "analytics", "metrics", str(tmp_path), "--out", str(tmp_path / "out")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert missing.returncode == 2 and "pipx inject whiteboard pyspark pyarrow" in missing.stderr
    assert "Traceback" not in missing.stderr

    # The app starts offscreen, joins a session (its log says so) and leaves on Ctrl+C.
    logs = tmp_path / "logs"
    app = subprocess.Popen(
        [whiteboard, "--group", "239.255.77.71:27771", "--iface", "127.0.0.1", "--ttl", "0",
         "--name", "fresh", "--log-dir", str(logs)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for_join(logs, app)
        app.send_signal(signal.SIGINT)
        _out, err = app.communicate(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0 and "Traceback" not in err, err
    [log] = logs.glob("*.wblog")
    assert read_log(log).report.clean_end
