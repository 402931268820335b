"""``whiteboard desktop install`` / ``uninstall`` into a temporary XDG home, as a person runs
them: the launcher and metainfo pass Debian's validators, the desktop's MIME database (read by
Qt, as a file manager reads it) knows boards and recordings by name and by content, and
uninstall leaves nothing of ours and everything of anyone else's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import ROOT, child_env, whiteboard_command
from whiteboard.desktop import assets
from whiteboard.desktop.install import MANIFEST, desktop_entry_text, install, uninstall


def tool(name: str) -> str:
    found = shutil.which(name)
    # packaging/bootstrap.sh installs them (Debian: desktop-file-utils, appstream,
    # shared-mime-info): a machine without them has not run the README's set-up.
    assert found, f"{name} is missing: run `make test` (packaging/bootstrap.sh installs it)"
    return found


def desktop(home: Path, action: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        whiteboard_command("desktop", action),
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(XDG_DATA_HOME=str(home)),
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return done


def mime_of(home: Path, *files: Path) -> list[str]:
    """What the desktop's MIME database says each file is (Qt reads it as GLib does)."""
    script = (
        "import sys\n"
        "from PySide6.QtCore import QCoreApplication, QMimeDatabase\n"
        "app = QCoreApplication([])\n"
        "print('\\n'.join(QMimeDatabase().mimeTypeForFile(f).name() for f in sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(XDG_DATA_HOME=str(home)),
        check=True,
    )
    return done.stdout.split()


def everything_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_install_validates_is_known_to_the_desktop_and_uninstall_leaves_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "share"  # not there yet: install makes it, uninstall takes it away
    done = desktop(home, "install")
    assert "installed 14 files" in done.stdout
    launcher = home / "applications" / f"{assets.APP_ID}.desktop"
    metainfo = home / "metainfo" / f"{assets.APP_ID}.metainfo.xml"
    checked = subprocess.run(
        [tool("desktop-file-validate"), str(launcher)], capture_output=True, text=True
    )
    assert checked.returncode == 0 and "error" not in checked.stdout, checked.stdout
    checked = subprocess.run(
        [tool("appstreamcli"), "validate", "--no-net", str(metainfo)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for size in assets.ICON_SIZES:
        assert (home / f"icons/hicolor/{size}x{size}/apps/{assets.APP_ID}.png").is_file()
    # The launcher starts this installation, whatever comes first on the PATH.
    assert f"Exec={Path(sys.executable).parent / 'whiteboard'} %f" in launcher.read_text()
    tool("update-mime-database")
    board = tmp_path / "meeting.wbd"
    board.write_bytes(b"")
    recording = tmp_path / "renamed"  # no extension: known by its first bytes
    shutil.copyfile(str(assets.samples()[0]), recording)
    assert mime_of(home, board, tmp_path / "x.wblog", recording) == [
        assets.BOARD_MIME,
        assets.RECORDING_MIME,
        assets.RECORDING_MIME,
    ]

    opened = double_click(home, tmp_path, recording)
    assert opened[:1] == [str(Path(sys.executable).parent / "whiteboard")]
    assert opened[1:] == [str(recording)]

    done = desktop(home, "uninstall")
    assert "removed 14 files" in done.stdout
    assert not home.exists(), everything_under(home)


def double_click(home: Path, tmp: Path, file: Path) -> list[str]:
    """What the desktop runs when ``file`` is opened as a person does (GLib's ``gio open``,
    as GNOME's Files and most launchers do): the command line of the process it started."""
    config = tmp / "config"  # no one's own default applications
    config.mkdir(exist_ok=True)
    env = child_env(XDG_DATA_HOME=str(home), XDG_CONFIG_HOME=str(config))
    subprocess.run([tool("gio"), "open", str(file)], env=env, check=True, timeout=60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for process in Path("/proc").iterdir():
            try:
                argv = (process / "cmdline").read_bytes().decode().split("\0")[:-1]
            except (OSError, ValueError):
                continue
            if str(file) in argv and process.name != str(os.getpid()):
                # The app it started; what the app does with the file is test_given_files'.
                os.kill(int(process.name), signal.SIGKILL)
                # A script's process is its interpreter running it: the script is the command.
                return argv[1:] if argv[0].endswith(("python", "python3")) else argv
        time.sleep(0.1)
    raise AssertionError(f"opening {file.name} started nothing within 30 s")


def test_uninstall_keeps_what_others_put_there(tmp_path: Path) -> None:
    home = tmp_path / "share"
    other_app = home / "applications" / "org.example.Other.desktop"
    other_types = home / "mime" / "packages" / "other.xml"
    mine = home / "icons" / "hicolor" / "48x48" / "apps" / "mine.png"
    for path, text in (
        (other_app, "[Desktop Entry]\nType=Application\nName=Other\nExec=other\n"),
        (other_types, '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info"/>'),
        (mine, "a person's own icon"),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    before = everything_under(home)
    install(home, ["/opt/white board/bin/whiteboard"])
    install(home, ["/opt/white board/bin/whiteboard"])  # again: replaces, no second record
    uninstall(home)
    after = set(everything_under(home))
    assert set(before) <= after
    # What is left beyond that is the indexes rebuilt for the others' files, none of ours.
    assert not [name for name in after - set(before) if "whiteboard" in name.lower()]
    assert not [name for name in after if assets.APP_ID in name]


@pytest.mark.parametrize(
    ("path", "exec_line", "try_exec"),
    [
        ("/opt/white board/bin/whiteboard", '"/opt/white board/bin/whiteboard" %f', None),
        # Inside quotes '$' and '\' are escaped, then every backslash is doubled, as the
        # value is read with the string escapes first (Desktop Entry spec).
        ("/opt/a\\b $x/whiteboard", '"/opt/a\\\\\\\\b \\\\$x/whiteboard" %f',
         "/opt/a\\\\b $x/whiteboard"),
        ("/opt/100%/whiteboard", "/opt/100%%/whiteboard %f", "/opt/100%/whiteboard"),
    ],
)
def test_a_launcher_path_is_quoted_as_the_launcher_spec_asks(
    tmp_path: Path, path: str, exec_line: str, try_exec: str | None
) -> None:
    text = desktop_entry_text([path])
    assert f"\nExec={exec_line}\n" in text
    assert f"\nTryExec={try_exec or path}\n" in text
    launcher = tmp_path / f"{assets.APP_ID}.desktop"
    launcher.write_text(text)
    checked = subprocess.run(
        [tool("desktop-file-validate"), str(launcher)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout


def test_folders_that_were_there_empty_are_left_as_they_were(tmp_path: Path) -> None:
    """A desktop often makes applications/ and mime/ before any app fills them: after install
    and uninstall they are there, empty, with no index naming us."""
    home = tmp_path / "share"
    for folder in ("applications", "mime", "icons"):
        (home / folder).mkdir(parents=True)
    before = everything_under(home)
    install(home, ["whiteboard"])
    cache = home / "applications" / "mimeinfo.cache"
    assert assets.APP_ID in cache.read_text()
    uninstall(home)
    assert everything_under(home) == before
    # A cache that was there before stays, rebuilt without us.
    cache.write_text("[MIME Cache]\n")
    install(home, ["whiteboard"])
    uninstall(home)
    assert cache.exists() and assets.APP_ID not in cache.read_text()


def test_a_reinstall_takes_out_what_the_new_version_no_longer_ships(tmp_path: Path) -> None:
    home = tmp_path / "share"
    install(home, ["whiteboard"])
    old = home / "icons" / "hicolor" / "1024x1024" / "apps" / f"{assets.APP_ID}.png"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"an older version's icon")
    record = home / MANIFEST
    data = json.loads(record.read_text())
    data["files"].append(str(old.relative_to(home)))
    data["dirs"] += [str(old.parent.parent.relative_to(home)), str(old.parent.relative_to(home))]
    record.write_text(json.dumps(data))  # as the older version would have recorded it
    install(home, ["whiteboard"])
    assert not old.exists()
    uninstall(home)
    assert not home.exists(), everything_under(home)


def test_a_doctored_install_record_deletes_nothing_outside(tmp_path: Path) -> None:
    home = tmp_path / "share"
    install(home, ["whiteboard"])
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    record = home / MANIFEST
    data = json.loads(record.read_text())
    data["files"].append("../precious.txt")
    record.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="damaged: remove it"):
        uninstall(home)
    assert precious.read_text() == "keep me"


def test_uninstall_with_nothing_installed_says_so(tmp_path: Path) -> None:
    report = uninstall(tmp_path)
    assert report.files == [] and "nothing to remove" in report.notes[0]
    assert list(tmp_path.iterdir()) == []


def test_the_sample_session_is_copied_where_asked(tmp_path: Path) -> None:
    folder = tmp_path / "try"
    done = subprocess.run(
        whiteboard_command("desktop", "samples", str(folder)),
        capture_output=True, text=True, timeout=120, env=child_env(), cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    copied = sorted(p.name for p in folder.iterdir())
    assert copied == [sample.name for sample in assets.samples()]
    assert f"whiteboard replay {folder / copied[0]}" in done.stdout
