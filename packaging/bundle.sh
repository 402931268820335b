#!/usr/bin/env bash
# `make bundle`: a self-contained build of the app for machines without Python (issue 22,
# docs/install.md). It is made from the wheel, installed into a build venv of its own with
# PyInstaller, so the bundle holds exactly what the wheel ships (the editable install of a
# clone is invisible to PyInstaller). Output: OUT/whiteboard-VERSION-linux-ARCH/ (run its
# `whiteboard`) and the same as a .tar.gz; OUT is dist/ unless given.
#   usage: packaging/bundle.sh [PYTHON] [OUT]
set -euo pipefail
python=${1:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${2:-$root/dist}" && cd "${2:-$root/dist}" && pwd)
work="$out/.bundle-work"
rm -rf "$work"
mkdir -p "$work"

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip build
# The sdist first, the wheel from it (in a temporary folder): nothing is built in the clone,
# and nothing stale from an earlier build (setuptools' build/lib) gets into the wheel.
"$work/venv/bin/python" -m build --outdir "$work/wheel" "$root" >"$work/build.log"
wheel=$(ls "$work"/wheel/whiteboard-*.whl)
"$work/venv/bin/python" -m pip install --quiet "$wheel" "pyinstaller>=6.10"
version=$("$work/venv/bin/python" -c 'import whiteboard; print(whiteboard.__version__)')
name="whiteboard-$version-linux-$(uname -m)"

# The transports are imported by name (whiteboard/transport/registry.py) and the app's files
# are package data: both are named here, as PyInstaller cannot see them in the code. The
# analytics (PySpark) are not in the bundle: they need Java and a Python anyway.
(cd "$work" && "$work/venv/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --name whiteboard --distpath "$work/dist" --workpath "$work/pyinstaller" \
    --specpath "$work" \
    --collect-submodules whiteboard --collect-submodules rmp --collect-submodules mtp \
    --collect-submodules coreapi --collect-data whiteboard_assets \
    --exclude-module analytics --exclude-module pyspark --exclude-module pyarrow \
    --exclude-module tkinter \
    "$root/packaging/bundle_main.py")

rm -rf "${out:?}/$name" "$out/$name.tar.gz"
mv "$work/dist/whiteboard" "$out/$name"
rm -rf "$work"
tar -C "$out" -czf "$out/$name.tar.gz" "$name"
echo "bundle: $out/$name ($(du -sh "$out/$name" | cut -f1)), \
$out/$name.tar.gz ($(du -sh "$out/$name.tar.gz" | cut -f1))"
