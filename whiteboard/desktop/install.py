"""``whiteboard desktop install`` / ``uninstall``: the launcher, icons, file types and
metainfo in the user's XDG data folder (``$XDG_DATA_HOME``, else ``~/.local/share``), so that
the app is in the desktop's menu and double-clicking a ``.wbd`` opens it and a ``.wblog`` its
replay (freedesktop Desktop Entry, Icon Theme and Shared MIME-info specifications).

Install writes a manifest of every file it put there and every folder it made; uninstall
takes out exactly those, and folders only if they are left empty, so that what was there
before (other apps' files, a person's own) stays, and nothing of ours does. The indexes the
desktop reads (the MIME database, the launchers' MIME cache) are rebuilt by the system's own
tools when present, and removed with our last file if we made them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path

from whiteboard.board.files import write_atomically
from whiteboard.desktop import assets

MANIFEST = Path("whiteboard") / "desktop-install.json"
MANIFEST_VERSION = 1
TOOL_TIMEOUT_S = 60.0
# What update-mime-database writes beside mime/packages: ours to remove only if the database
# holds nothing but what we installed.
_MIME_INDEX = "mime"
_DESKTOP_INDEX = "mimeinfo.cache"


@dataclass
class DesktopReport:
    """What install or uninstall did, for the person who ran it."""

    data_home: Path
    files: list[Path] = field(default_factory=list)  # written, or removed
    notes: list[str] = field(default_factory=list)  # tools missing or failing, in plain words

    def lines(self, verb: str) -> list[str]:
        shown = [f"{verb} {len(self.files)} files under {self.data_home}"]
        shown += [f"  {path.relative_to(self.data_home)}" for path in self.files]
        return shown + [f"note: {note}" for note in self.notes]


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    """The user's XDG data folder: ``$XDG_DATA_HOME`` if set to an absolute path (the
    specification ignores a relative one), else ``~/.local/share``."""
    env = os.environ if environ is None else environ
    value = env.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "share"


def launcher_command() -> list[str]:
    """How the launcher starts this installation: its ``whiteboard`` script beside the
    interpreter (a venv's, pipx's), else the interpreter running the package."""
    script = Path(sys.executable).parent / "whiteboard"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "whiteboard"]


def desktop_entry_text(command: list[str]) -> str:
    """The shipped launcher with ``Exec`` and ``TryExec`` naming ``command`` (quoted as the
    Desktop Entry specification asks), so that it starts this installation, not whichever
    ``whiteboard`` comes first on the PATH."""
    exec_line = " ".join(_exec_quote(arg) for arg in command) + " %f"
    lines = []
    for line in assets.desktop_entry().read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={_string_escape(exec_line)}"
        elif line.startswith("TryExec="):
            line = f"TryExec={_string_escape(command[0])}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _exec_quote(arg: str) -> str:
    # Desktop Entry spec, "The Exec key": an argument with a reserved character is quoted,
    # and within the quotes '"', '`', '$' and '\' are escaped by a backslash; '%' is doubled.
    arg = arg.replace("%", "%%")
    if not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return f'"{escaped}"'


def _string_escape(value: str) -> str:
    # The value of a key of type string is read with the escapes \s \n \t \r \\ applied
    # first ("Possible value types"), so every backslash the Exec rules wrote is doubled.
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def _planned(command: list[str]) -> dict[Path, bytes | Traversable]:
    """Every file install writes, relative to the data folder, with its content."""
    app = assets.APP_ID
    icons = Path("icons") / "hicolor"
    plan: dict[Path, bytes | Traversable] = {
        Path("applications") / f"{app}.desktop": desktop_entry_text(command).encode("utf-8"),
        Path("metainfo") / f"{app}.metainfo.xml": assets.metainfo(),
        Path("mime") / "packages" / f"{app}.xml": assets.mime_types(),
        icons / "scalable" / "apps" / f"{app}.svg": assets.app_icon_svg(),
    }
    for size in assets.ICON_SIZES:
        plan[icons / f"{size}x{size}" / "apps" / f"{app}.png"] = assets.icon_png(size)
    for mime, icon in assets.MIME_ICONS.items():
        name = mime.replace("/", "-") + ".svg"
        plan[icons / "scalable" / "mimetypes" / name] = assets.asset("icons", icon)
    return plan


def install(home: Path, command: list[str] | None = None) -> DesktopReport:
    """Put the app's desktop files under ``home`` (an XDG data folder); again over an earlier
    install, it replaces ours and keeps the folders recorded as made by the first."""
    report = DesktopReport(home)
    previous = _read_manifest(home)
    made_dirs = list(previous.get("dirs", []))
    # What the indexes' folders held before our first install: theirs to keep (uninstall).
    before = previous["before"] if previous else _index_entries(home)
    plan = _planned(command or launcher_command())
    for name in previous.get("files", []):
        if Path(name) not in plan:  # an earlier version's file this one no longer ships
            (home / name).unlink(missing_ok=True)
    if not home.exists():
        home.mkdir(parents=True)
        made_dirs.append(".")  # the data folder itself: it goes too if we leave it empty
    for relative, content in plan.items():
        target = home / relative
        for folder in reversed([*target.parents]):
            if folder == home or home not in folder.parents:
                continue
            if not folder.exists():
                folder.mkdir()
                made_dirs.append(str(folder.relative_to(home)))
        write_atomically(target, content if isinstance(content, bytes) else content.read_bytes())
        report.files.append(target)
    manifest = home / MANIFEST
    if not manifest.parent.exists():
        manifest.parent.mkdir(parents=True)
        made_dirs.append(str(MANIFEST.parent))
    record = {
        "version": MANIFEST_VERSION,
        "files": [str(path) for path in plan],
        "dirs": made_dirs,
        "before": before,
    }
    manifest.write_text(json.dumps(record, indent=1))
    _refresh_indexes(home, report)
    return report


def uninstall(home: Path) -> DesktopReport:
    """Take out what :func:`install` put under ``home``, by its manifest; nothing else."""
    report = DesktopReport(home)
    manifest = _read_manifest(home)
    if not manifest:
        report.notes.append(f"nothing to remove: no install of whiteboard under {home}")
        return report
    for name in manifest.get("files", []):
        target = home / name
        if target.is_file() or target.is_symlink():
            target.unlink()
            report.files.append(target)
    (home / MANIFEST).unlink()
    _refresh_indexes(home, report, everywhere=True)
    _drop_own_indexes(home, set(manifest.get("before", [])))
    # Deepest first, and only if empty: a folder someone else put files in stays.
    made = {home / name for name in manifest.get("dirs", [])}
    for folder in sorted(made, key=lambda path: len(path.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return report


def _read_manifest(home: Path) -> dict[str, list[str]]:
    path = home / MANIFEST
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"the install record {path} cannot be read ({exc}): remove it") from None
    if not isinstance(data, dict) or data.get("version") != MANIFEST_VERSION:
        raise ValueError(f"the install record {path} is not one this version wrote: remove it")
    safe = {}
    for key in ("files", "dirs", "before"):
        names = data.get(key, [])
        # Only paths inside the data folder: a doctored record cannot make uninstall delete
        # anything else.
        if not isinstance(names, list) or not all(_inside(name) for name in names):
            raise ValueError(f"the install record {path} is damaged: remove it")
        safe[key] = names
    return safe


def _inside(name: object) -> bool:
    if not isinstance(name, str) or not name:
        return False
    path = Path(name)
    return not path.is_absolute() and ".." not in path.parts


def _index_entries(home: Path) -> list[str]:
    """Everything in the folders the desktop's tools index into (the MIME database, the
    launchers' MIME cache), relative to ``home``: what was there before us is not ours."""
    found = [p for p in (home / _MIME_INDEX).rglob("*")] if (home / _MIME_INDEX).is_dir() else []
    cache = home / "applications" / _DESKTOP_INDEX
    if cache.exists():
        found.append(cache)
    return sorted(str(path.relative_to(home)) for path in found)


def _drop_own_indexes(home: Path, before: set[str]) -> None:
    """The index files the tools wrote for our files alone: when no other file types, or no
    other launchers, are left, what the tools made that was not there before goes."""
    mime = home / _MIME_INDEX
    packages = mime / "packages"
    if mime.is_dir() and not (packages.is_dir() and any(packages.iterdir())):
        made = [p for p in mime.rglob("*") if str(p.relative_to(home)) not in before]
        for path in sorted(made, key=lambda p: len(p.parts), reverse=True):
            if path.is_dir() and not path.is_symlink():
                if not any(path.iterdir()):
                    path.rmdir()
            else:
                path.unlink()
    cache = home / "applications" / _DESKTOP_INDEX
    if cache.exists() and not _has_launchers(home) and str(cache.relative_to(home)) not in before:
        cache.unlink()


def _has_launchers(home: Path) -> bool:
    """Whether any launcher (ours or another app's) is in the data folder's applications."""
    applications = home / "applications"
    return applications.is_dir() and any(p.suffix == ".desktop" for p in applications.iterdir())


def _refresh_indexes(home: Path, report: DesktopReport, everywhere: bool = False) -> None:
    """Rebuild what desktops read instead of our files: the MIME database (file types) and
    the launchers' MIME cache (which app opens them); after an uninstall (``everywhere``),
    wherever they may still name ours. Missing tools are said, not fatal: most desktops also
    watch the folders."""
    mime = home / _MIME_INDEX
    if (mime / "packages").is_dir() or (everywhere and mime.is_dir()):
        _run(["update-mime-database", str(mime)], "file types", report)
    applications = home / "applications"
    if _has_launchers(home) or (everywhere and (applications / _DESKTOP_INDEX).exists()):
        _run(["update-desktop-database", str(applications)], "file associations", report)


def _run(command: list[str], what: str, report: DesktopReport) -> None:
    tool = shutil.which(command[0])
    if tool is None:
        report.notes.append(
            f"{command[0]} is not installed: the desktop may notice the {what} only after the "
            "next login (Debian: shared-mime-info, desktop-file-utils)"
        )
        return
    try:
        done = subprocess.run(
            [tool, *command[1:]], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        report.notes.append(f"{shlex.join(command)} failed: {exc}")
        return
    if done.returncode != 0:
        report.notes.append(f"{shlex.join(command)} failed: {done.stderr.strip()[:300]}")


def copy_samples(folder: Path) -> list[Path]:
    """Copy the sample recorded session (each member's log) into ``folder``, made if needed,
    for trying replay and the analytics on; an existing file of the same name is kept."""
    folder.mkdir(parents=True, exist_ok=True)
    copied = []
    for sample in assets.samples():
        target = folder / sample.name
        if not target.exists():
            target.write_bytes(sample.read_bytes())
        copied.append(target)
    return copied
