#!/usr/bin/env bash
# Creates the virtual environment and installs the project into it (editable, with the test
# and analytics extras). Run by `make run` / `make test` on first use; safe to run again.
set -euo pipefail
python=${1:-python3}
venv=${2:-.venv}

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "whiteboard needs Python 3.11 or newer; '$python' is $("$python" --version 2>&1)." >&2
    exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -e ".[test,analytics]"

# Qt needs a few system libraries (EGL, xkbcommon, fontconfig). Check that Qt really loads,
# and on Debian, as root, install what is missing instead of failing later in a test.
qt_check='from PySide6.QtGui import QGuiApplication; QGuiApplication(["x", "-platform", "offscreen"])'
if ! QT_QPA_PLATFORM=offscreen "$venv/bin/python" -c "$qt_check" >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        apt-get install -y -qq libegl1 libgl1 libxkbcommon0 libfontconfig1 libglib2.0-0 \
            libdbus-1-3 libopengl0 >/dev/null
    fi
    if ! QT_QPA_PLATFORM=offscreen "$venv/bin/python" -c "$qt_check"; then
        echo "Qt (PySide6) cannot start: install your system's EGL, xkbcommon and fontconfig" >&2
        echo "libraries (Debian: libegl1 libxkbcommon0 libfontconfig1)." >&2
        exit 1
    fi
fi
