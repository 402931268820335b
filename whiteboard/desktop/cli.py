"""``whiteboard desktop install`` / ``uninstall`` (docs/install.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from whiteboard.desktop.install import copy_samples, data_home, install, uninstall


def add_desktop_parser(sub: Any) -> None:
    """The ``desktop`` command, under ``sub`` (the subparsers of ``whiteboard``)."""
    desktop = sub.add_parser(
        "desktop",
        help="put the launcher, icons and file types on your desktop, or take them off",
        description="Put whiteboard in your desktop's menu, with its icon, and make "
        "double-clicking a board (.wbd) open it and a recording (.wblog) its replay; or undo "
        "that. Only your own folders change (XDG_DATA_HOME, else ~/.local/share).",
    )
    actions = desktop.add_subparsers(dest="action", metavar="ACTION", required=True)
    samples = actions.add_parser(
        "samples",
        help="copy a sample recorded session into a folder, to try replay and the analytics",
    )
    samples.add_argument(
        "folder",
        type=Path,
        nargs="?",
        default=Path("whiteboard-samples"),
        metavar="FOLDER",
        help="where to copy it (default: ./whiteboard-samples)",
    )
    for action, text in (
        ("install", "install the launcher, icons, file types and metainfo"),
        ("uninstall", "remove what 'desktop install' put there, and nothing else"),
    ):
        parser = actions.add_parser(action, help=text, description=text)
        parser.add_argument(
            "--data-home",
            type=Path,
            default=None,
            metavar="DIR",
            help="the XDG data folder to use (default: $XDG_DATA_HOME, else ~/.local/share)",
        )


def run_desktop(args: argparse.Namespace) -> int:
    if args.action == "samples":
        copied = copy_samples(args.folder)
        print(f"a sample session, {len(copied)} members' recordings, in {args.folder}:")
        print(f"  whiteboard replay {copied[0]}")
        print(f"  whiteboard analytics metrics {args.folder} --out {args.folder / 'metrics'}")
        return 0
    home = args.data_home if args.data_home is not None else data_home()
    if args.action == "install":
        report = install(home.absolute())
        lines = report.lines("installed")
        lines.append("whiteboard is in your desktop's menu; boards and recordings open in it")
    else:
        report = uninstall(home.absolute())
        lines = report.lines("removed")
    print("\n".join(lines), file=sys.stdout)
    return 0
