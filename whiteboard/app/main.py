"""``whiteboard`` with no subcommand: parse the app's options, open the window, run Qt."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from whiteboard.app.event_loop import run_until_closed
from whiteboard.app.given_file import GivenFile, kind_of
from whiteboard.app.identity import application
from whiteboard.app.settings import (
    DEFAULT_GROUP,
    SessionSettings,
    login_name,
    role_words,
)
from whiteboard.board.files import OpenedBoard, open_board
from whiteboard.security.passphrase_source import add_passphrase_options, read_passphrase
from whiteboard.sessionlog.cli import add_recording_options
from whiteboard.sessionlog.sealing import Unlock
from whiteboard.transport.registry import transport_names

EXIT_CANNOT_OPEN = 2


# Options that say which session to join: given any of them, the app joins it directly;
# given none, it asks with the start dialog.
SESSION_OPTIONS = ("--transport", "--group", "--iface", "--ttl", "--name", "--profile", "--role")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whiteboard app",
        description="Open the shared whiteboard. Without options it asks which session to "
        "join (and remembers the answer); with any, it joins that session directly.",
    )
    parser.add_argument("--transport", choices=transport_names(), default=transport_names()[0])
    parser.add_argument(
        "--group",
        default=DEFAULT_GROUP,
        metavar="ADDR:PORT",
        help=f"multicast group of the session (default {DEFAULT_GROUP})",
    )
    parser.add_argument(
        "--iface",
        default=None,
        metavar="IP",
        help="IPv4 address of the interface (default: the system's choice)",
    )
    parser.add_argument(
        "--ttl",
        type=int,
        default=1,
        help="multicast hops (1: this network only, 0: this host only)",
    )
    parser.add_argument("--name", default=login_name(), help="your name on the board")
    parser.add_argument(
        "--profile", choices=["lan", "seed"], default="lan", help="transport timer profile"
    )
    parser.add_argument(
        "--role",
        choices=role_words() or None,  # a build whose transports have no roles takes any
        default="producer",
        help="on a transport with roles (mtp): host (the session's master: start it first), "
        "producer (draws), or viewer (sees the board, cannot draw)",
    )
    parser.add_argument(
        "file",
        nargs="?",
        type=Path,
        default=None,
        metavar="FILE",
        help="a board (.wbd) to open into the session, or a recording (.wblog) to replay "
        "(what the desktop passes when one is double-clicked)",
    )
    add_passphrase_options(parser, session_name=False)  # else typed in the start dialog
    add_recording_options(parser)
    return parser


def show_error(text: str) -> None:
    """Tell the person why the app cannot start: on stderr, and in a dialog for those who
    started it from a desktop launcher (no terminal to read). Tests replace this."""
    print(f"whiteboard: {text}", file=sys.stderr)
    QMessageBox.critical(None, "Whiteboard", text)


def run_app(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        # argparse has printed the usage or the error; the caller wants a code, not an exit.
        return exc.code if isinstance(exc.code, int) else EXIT_CANNOT_OPEN
    from whiteboard.app.render import prepare_painting

    # Process-wide painting settings, before the start dialog or anything else paints.
    prepare_painting()
    app = application()

    from whiteboard.app.replay_window import run_recording_app
    from whiteboard.app.start_dialog import choose_session  # after QApplication: widgets
    from whiteboard.app.window import MainWindow

    try:
        passphrase = read_passphrase(args.passphrase_file) or ""
    except ValueError as exc:
        show_error(str(exc))
        return EXIT_CANNOT_OPEN

    opened: OpenedBoard | None = None
    if args.file is not None:
        try:
            kind = kind_of(args.file)
            if kind is GivenFile.RECORDING:
                return run_recording_app(args.file, Unlock(passphrase or None))
            opened = open_board(args.file)  # read before any session: a bad file is said now
        except ValueError as exc:  # BoardFileError is one
            show_error(str(exc))
            return EXIT_CANNOT_OPEN

    settings: SessionSettings | None
    given_session = any(arg.split("=")[0] in SESSION_OPTIONS for arg in argv)
    if given_session and args.allow_viewers and not passphrase:
        # As `peer` and `sim` say it; the start dialog would show the box ticked instead.
        show_error("--allow-viewers needs a private session: give --passphrase-file")
        return EXIT_CANNOT_OPEN
    if given_session:
        settings = SessionSettings(
            transport=args.transport,
            group=args.group,
            iface=args.iface or "",
            ttl=args.ttl,
            display_name=args.name,
            mtp_role=args.role,
            profile=args.profile,
            passphrase=passphrase,
            allow_viewers=args.allow_viewers,
        )
    else:
        settings = choose_session(passphrase=passphrase, allow_viewers=args.allow_viewers)
        if settings is None:
            return 0  # the person cancelled: nothing to open
    try:
        window = MainWindow(
            settings.transport,
            settings.net_config(),
            settings.to_transport_params(),
            settings.display_name,
            # A colour chosen in the settings is kept; otherwise a free one, per session.
            colour=settings.colour if settings.own_colour else None,
            log_dir=args.log_dir,
            record=not args.no_log,
            key=settings.session_key(),
            encrypt_recording=settings.encrypt_recordings,
            share_pointer=settings.share_pointer,
        )
    except (OSError, ValueError) as exc:  # TransportUnavailable is a ValueError
        show_error(f"Cannot open the whiteboard session.\n\n{exc}")
        return EXIT_CANNOT_OPEN
    window.settings = settings
    window.show()
    if opened is not None:
        # A viewer (a view code, an MTP consumer) never gets to draw: said, not waited for.
        reason = window.spec.why_view_only()
        if reason is None:
            window.files.open_when_joined(opened, args.file.name)
        else:
            window.statusBar().showMessage(f"{args.file.name} was not opened: {reason}")
    return run_until_closed(app, window)
