"""render.py changes process-wide state only when asked (prepare_painting), never on import."""

from __future__ import annotations

import os
import subprocess
import sys

CHECK = """
import os, sys
import whiteboard.app.canvas, whiteboard.app.render as render, whiteboard.app.tiles
before = sys.getrefcount(None)
assert "QT_NO_GUI_THREADPOOL" not in os.environ, "set on import"
render.prepare_painting()
assert os.environ["QT_NO_GUI_THREADPOOL"] == "1"
render.prepare_painting()  # once only: the None guard must not add its count twice
assert sys.getrefcount(None) - before < 1 << 59
"""


def test_importing_render_changes_nothing_process_wide() -> None:
    env = {k: v for k, v in os.environ.items() if k != "QT_NO_GUI_THREADPOOL"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    result = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_a_setting_in_the_environment_is_kept() -> None:
    env = dict(os.environ, QT_NO_GUI_THREADPOOL="0", QT_QPA_PLATFORM="offscreen")
    code = (
        "import os, whiteboard.app.render as r; r.prepare_painting(); "
        "assert os.environ['QT_NO_GUI_THREADPOOL'] == '0'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
