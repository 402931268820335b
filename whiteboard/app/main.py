"""``whiteboard`` with no subcommand: parse the app's options, open the window, run Qt."""

from __future__ import annotations

import argparse
import getpass
import signal
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.transport.registry import TRANSPORT_MODULES

DEFAULT_GROUP = "239.255.42.99:47999"
EXIT_CANNOT_OPEN = 2


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        # No USER variable and no passwd entry (some containers): any name will do.
        return "anonymous"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whiteboard app", description="Open the shared whiteboard."
    )
    parser.add_argument("--transport", choices=list(TRANSPORT_MODULES), default="raw")
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
    parser.add_argument("--name", default=_login_name(), help="your name on the board")
    parser.add_argument(
        "--profile", choices=["lan", "seed"], default="lan", help="transport timer profile"
    )
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
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setApplicationName("Whiteboard")

    from whiteboard.app.window import MainWindow  # after QApplication: it builds widgets

    try:
        net = NetConfig(group=GroupAddress.parse(args.group), iface=args.iface, ttl=args.ttl)
        window = MainWindow(args.transport, net, {"profile": args.profile}, args.name)
    except (OSError, ValueError) as exc:  # TransportUnavailable is a ValueError
        show_error(f"Cannot open the whiteboard session.\n\n{exc}")
        return EXIT_CANNOT_OPEN
    window.show()
    # Ctrl+C in the terminal closes the window, which leaves the session properly. The
    # handler may run between any two bytecodes (inside the transport's core, say), so it only
    # raises a flag; a ticker, which also gives Python control a few times a second so that
    # the handler runs at all, closes the window from the event loop.
    interrupted: list[bool] = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    ticker = QTimer()
    ticker.timeout.connect(lambda: window.close() if interrupted else None)
    ticker.start(250)
    try:
        return app.exec()
    finally:
        ticker.stop()
        signal.signal(signal.SIGINT, previous)
