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

# Qt needs system libraries that a bare machine may lack: EGL, xkbcommon and fontconfig to
# start at all, and the xcb family to open a window on an X display (Qt 6.5+ also dlopens
# libxcb-cursor). Check, and on Debian as root install what is missing rather than fail later.
qt_packages="libegl1 libgl1 libopengl0 libxkbcommon0 libfontconfig1 libglib2.0-0 libdbus-1-3
    libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1
    libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0"
qt_check='from PySide6.QtGui import QGuiApplication; QGuiApplication(["x", "-platform", "offscreen"])'
xcb_plugin=$("$venv/bin/python" -c 'import PySide6, pathlib; print(next(pathlib.Path(PySide6.__file__).parent.glob("Qt/plugins/platforms/libqxcb.so"), ""))')

qt_incomplete() {
    QT_QPA_PLATFORM=offscreen "$venv/bin/python" -c "$qt_check" >/dev/null 2>&1 || return 0
    if [ -n "$xcb_plugin" ] && command -v ldd >/dev/null; then
        ldd "$xcb_plugin" | grep -q "not found" && return 0
        command -v ldconfig >/dev/null && ! ldconfig -p | grep -q "libxcb-cursor.so.0" && return 0
    fi
    return 1
}

if qt_incomplete; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "Installing the system libraries Qt needs (Debian packages)..."
        apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $qt_packages >/dev/null
    fi
    if ! QT_QPA_PLATFORM=offscreen "$venv/bin/python" -c "$qt_check"; then
        echo "Qt (PySide6) cannot start: install your system's EGL, xkbcommon and fontconfig" >&2
        echo "libraries (Debian: $qt_packages)." >&2
        exit 1
    fi
    if qt_incomplete; then
        echo "warning: Qt's X11 libraries are incomplete; the app may not open a window." >&2
        echo "Install (Debian names): $qt_packages" >&2
    fi
fi

# The analytics run on Spark, which needs Java 17 or newer (the tests start it). Install a
# headless JRE on Debian as root when none is found; elsewhere say what to install.
java_major() {
    java -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1
}
java_found=$(command -v java >/dev/null && java_major || true)
if [ -z "$java_found" ] || [ "$java_found" -lt 17 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "Installing Java for Spark (openjdk-17-jre-headless)..."
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null \
            || echo "warning: could not install Java 17; the analytics and their tests need it." >&2
    else
        echo "warning: the analytics (Spark) need Java 17 or newer: install it (Debian:" >&2
        echo "openjdk-17-jre-headless) before running them or the test suite." >&2
    fi
fi

# The desktop integration (`whiteboard desktop install`, docs/install.md) indexes file types
# with shared-mime-info's and desktop-file-utils' tools, and its tests validate the launcher
# and metainfo with Debian's validators, open a file as a desktop does (GLib's gio), and
# start the bundle on a virtual screen (Xvfb).
# Install them on Debian as root when missing.
desktop_tools="desktop-file-validate:desktop-file-utils update-desktop-database:desktop-file-utils
    appstreamcli:appstream update-mime-database:shared-mime-info Xvfb:xvfb gio:libglib2.0-bin"
missing=""
for pair in $desktop_tools; do
    command -v "${pair%%:*}" >/dev/null || missing="$missing ${pair##*:}"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "Installing the desktop tools (Debian:$missing)..."
        apt-get update -qq
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null \
            || echo "warning: could not install$missing; the desktop tests need them." >&2
    else
        echo "warning: 'whiteboard desktop install' works best with, and its tests need:" >&2
        echo "  $missing (Debian package names)" >&2
    fi
fi
