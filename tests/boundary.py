"""Checks that a protocol package stays independent of the whiteboard (the transport interface
is structural precisely so that ``rmp`` and ``mtp`` need not import it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


def whiteboard_modules_loaded_by(package: str, cwd: Path) -> list[str]:
    """The ``whiteboard`` modules a fresh interpreter has loaded after importing ``package``."""
    code = (
        f"import json, sys, {package}, {package}.wire; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'whiteboard')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd
    )
    return eval(run.stdout)


def whiteboard_imports_in(source: Path) -> list[str]:
    """The ``whiteboard`` modules that ``source`` imports."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        found += [n for n in names if n.split(".")[0] == "whiteboard"]
    return found
