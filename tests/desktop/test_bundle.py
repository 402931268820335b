"""The self-contained bundle (issue 22 point 4): ``packaging/bundle.sh`` (``make bundle``)
builds it from the wheel with PyInstaller, and it runs where no Python is on the PATH: its
version, the simulator, a headless member, and the app on a virtual X screen (Xvfb), joining
a session and leaving it on Ctrl+C. Prints its size and start time."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.desktop.test_wheel import wait_for_join
from tests.processes import ROOT
from whiteboard import __version__
from whiteboard.cli import NO_ANALYTICS
from whiteboard.sessionlog import read_log

BUILD_TIMEOUT_S = 900.0


def no_python_env(tmp: Path, **extra: str) -> dict[str, str]:
    """What a person without Python has: no PATH to any interpreter, no PYTHON* variables."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "PATH": str(tmp / "empty-bin"), "LANG": "C.UTF-8", **extra}


def folder_size(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if not p.is_symlink() and p.is_file())


@pytest.mark.network
def test_the_bundle_runs_without_python(tmp_path: Path) -> None:
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is missing: run `make test` (packaging/bootstrap.sh installs it)"
    out = tmp_path / "out"
    started = time.monotonic()
    built = subprocess.run(
        ["bash", str(ROOT / "packaging" / "bundle.sh"), "python3", str(out)],
        capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    build_s = time.monotonic() - started
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    assert folder.name.startswith(f"whiteboard-{__version__}-linux-")
    archive = folder.with_name(folder.name + ".tar.gz")
    program = str(folder / "whiteboard")
    env = no_python_env(tmp_path)

    def run(*args: str) -> str:
        done = subprocess.run([program, *args], capture_output=True, text=True, timeout=120,
                              env=env, cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    assert run("--version").strip() == f"whiteboard {__version__}"
    result = run("sim", "--transport", "mtp", "--peers", "3", "--messages", "50", "--json")
    assert '"complete": true' in result
    result = run("peer", "--transport", "rmp", "--group", "239.255.78.81:27881", "--iface",
                 "127.0.0.1", "--ttl", "0", "--name", "p", "--send", "5", "--rate", "50",
                 "--duration", "3", "--no-log", "--json")  # fmt: skip
    assert '"delivered_total": 5' in result
    # The analytics are not in the bundle: said so, not a traceback.
    missing = subprocess.run([program, "analytics", "metrics", str(tmp_path), "--out",
                              str(tmp_path / "m")], capture_output=True, text=True,
                             timeout=120, env=env, cwd=tmp_path)  # fmt: skip
    assert missing.returncode == 2 and missing.stderr.strip() == NO_ANALYTICS

    screen = subprocess.Popen([xvfb, "-displayfd", "1", "-screen", "0", "1280x800x24"],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert screen.stdout is not None
        display = screen.stdout.readline().strip()
        logs = tmp_path / "logs"
        launched = time.monotonic()
        app = subprocess.Popen(
            [program, "--group", "239.255.78.82:27882", "--iface", "127.0.0.1", "--ttl", "0",
             "--name", "bundle", "--log-dir", str(logs)],
            env={**env, "DISPLAY": f":{display}"}, cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            wait_for_join(logs, app)
            joined_s = time.monotonic() - launched
            app.send_signal(signal.SIGINT)
            _out, err = app.communicate(timeout=60)
        finally:
            if app.poll() is None:
                app.kill()
    finally:
        screen.terminate()
        screen.wait(timeout=30)
    assert app.returncode == 0 and "Traceback" not in err, err
    [log] = logs.glob("*.wblog")
    assert read_log(log).report.clean_end
    print(
        f"\nbundle {folder.name}: {folder_size(folder) / 2**20:.0f} MiB, "
        f"{archive.stat().st_size / 2**20:.0f} MiB as .tar.gz; built in {build_s:.0f} s; "
        f"the app joined a session {joined_s:.1f} s after it was started"
    )
