"""The ``whiteboard`` command: no subcommand opens the app; ``sim``, ``peer`` and ``log`` are
headless; ``replay`` opens a recorded session."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from whiteboard import __version__
from whiteboard.board.files import FILE_EXTENSION
from whiteboard.desktop.cli import add_desktop_parser, run_desktop
from whiteboard.security.passphrase_source import add_passphrase_options
from whiteboard.sessionlog.cli import (
    add_log_parser,
    add_recording_options,
    run_log,
    unlock_from,
)
from whiteboard.sessionlog.paths import LOG_EXTENSION
from whiteboard.transport.registry import describe, transport_names

if TYPE_CHECKING:
    from whiteboard.security import SessionKey
    from whiteboard.sim.scenario import Crash


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a probability between 0 and 1")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 0")
    return int(text)


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"{text} must be 0 or more")
    return value


def _crash(text: str) -> Crash:
    from whiteboard.sim.scenario import Crash

    try:
        return Crash.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _param(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} must be NAME=VALUE")
    for kind in (int, float):
        try:
            return key, kind(value)
        except ValueError:
            pass
    return key, value


def _add_transport_options(parser: argparse.ArgumentParser, transports: list[str]) -> None:
    """The options ``sim`` and ``peer`` share: which transport, its settings, the output."""
    parser.add_argument("--transport", required=True, choices=transports)
    parser.add_argument(
        "--profile",
        choices=["lan", "seed"],
        default="lan",
        help="the transport's parameter set: lan (tuned) or seed (the paper's)",
    )
    parser.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a transport parameter (repeatable)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON line (the default prints it indented)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whiteboard",
        description="A shared whiteboard over reliable IP multicast. With no subcommand "
        "(or 'app'), opens the app: see 'whiteboard app --help' for its options.",
    )
    parser.add_argument("--version", action="version", version=f"whiteboard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub.add_parser("app", help="open the app (the default)", add_help=False)
    sub.add_parser(
        "analytics",
        help="the Spark jobs on session logs: metrics, replay, report "
        "(as python -m analytics; docs/analytics.md)",
        add_help=False,
    )
    transports = list(transport_names())

    sim = sub.add_parser("sim", help="run a scenario in the deterministic network simulator")
    _add_transport_options(sim, transports)
    sim.add_argument("--peers", type=_positive_int, default=3)
    add_passphrase_options(sim, session_name=True)
    sim.add_argument("--messages", type=_count, default=100, help="strokes in total")
    sim.add_argument(
        "--loss", type=_probability, default=0.0, help="share of datagrams lost per receiver"
    )
    sim.add_argument(
        "--source-loss",
        type=_probability,
        default=0.0,
        metavar="P",
        help="share of each sender's datagrams lost at the sender, before the network: every "
        "receiver misses them (seeded like --loss). The result then adds source_loss_events "
        "(datagrams so lost that carried a stroke), nack_packets (NACK/nak datagrams sent by "
        "all members) and nack_packets_per_loss_event, their ratio",
    )
    sim.add_argument("--dup", type=_probability, default=0.0)
    sim.add_argument("--reorder", type=_probability, default=0.0)
    sim.add_argument("--delay-ms", type=_non_negative, default=1.0)
    sim.add_argument("--jitter-ms", type=_non_negative, default=0.0)
    sim.add_argument("--rate", type=float, default=100.0, help="strokes/s over all peers")
    sim.add_argument(
        "--settle-s",
        type=_non_negative,
        default=120.0,
        help="virtual seconds allowed after the last stroke",
    )
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument(
        "--workload",
        choices=["uniform", "collab", "edit"],  # whiteboard/sim/scenario.py WORKLOADS
        default="uniform",
        help="uniform: synthetic strokes round robin at --rate; collab: people drawing in turns "
        "and bursts with idle gaps, each mostly in their own region, erasing, moving and "
        "undoing, and sending presences as the app does (--rate is not used); edit: the same "
        "ten times faster with every kind of edit (restyle, reorder, text edit) mixed in",
    )
    sim.add_argument(
        "--crash",
        type=_crash,
        action="append",
        default=[],
        metavar="STATION@SECONDS",
        help="crash station STATION (0 to --peers minus 1; on mtp, 0 is the master) SECONDS "
        "after drawing starts (once every member has joined); it stays down and its strokes "
        "from then on are skipped, not sent later. Repeatable. The result then adds what the "
        "survivors lack (survivor_ops_missing) and, if the host crashed, failover_ms",
    )
    sim.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="record every member's session log in DIR (one .wblog per member), "
        "as the app would: see docs/session-log.md",
    )
    sim.add_argument(
        "--start",
        default=None,
        metavar="TIME",
        help="the logs' wall-clock time at the simulation's start, ISO 8601 "
        "(default 2024-03-11T09:30:00Z; UTC unless a zone is given)",
    )

    peer = sub.add_parser("peer", help="a headless member drawing synthetic strokes")
    _add_transport_options(peer, transports)
    peer.add_argument("--group", required=True, metavar="ADDR:PORT")
    peer.add_argument(
        "--iface",
        default=None,
        metavar="IP",
        help="IPv4 address of the interface (default: the system's choice)",
    )
    peer.add_argument("--ttl", type=int, default=1)
    peer.add_argument("--name", required=True)
    peer.add_argument("--send", type=_count, default=0, help="strokes to draw")
    peer.add_argument("--rate", type=float, default=10.0, help="strokes per second")
    peer.add_argument("--duration", type=float, default=60.0, help="cap on the run, seconds")
    peer.add_argument("--until-delivered", type=_count, default=None, metavar="N")
    peer.add_argument(
        "--wait-members",
        type=_count,
        default=0,
        metavar="K",
        help="wait to see K other members before drawing",
    )
    peer.add_argument(
        "--linger",
        type=_non_negative,
        default=1.0,
        help="seconds to keep serving repairs after the goal",
    )
    peer.add_argument(
        "--cursor-rate",
        type=float,
        default=0.0,
        metavar="HZ",
        help="move a synthetic pointer this many times a second on the transport's side "
        "channel, as the app shares its pointer (0: none); the JSON adds cursors_received "
        "and cursor_latency_ms",
    )
    peer.add_argument(
        "--no-presence",
        action="store_true",
        help="send no presence (name and colour, as the app sends on joining and every few "
        "seconds): the protocol's traffic alone, for measurements",
    )
    peer.add_argument(
        "--board",
        type=Path,
        default=None,
        metavar="FILE",
        help="start with the board of this file (.wbd), as a member that has been in the "
        "session a long time: what a late joiner is given",
    )
    peer.add_argument("--tx-loss", type=_probability, default=0.0)
    peer.add_argument("--rx-loss", type=_probability, default=0.0)
    peer.add_argument("--seed", type=int, default=None)
    add_passphrase_options(peer, session_name=True)
    peer.add_argument(
        "--role",
        default=None,
        help="the member's role, for a transport that has roles "
        "(mtp: master, producer or consumer)",
    )
    add_recording_options(peer, encrypt_option=True)

    add_log_parser(sub)
    add_desktop_parser(sub)
    replay = sub.add_parser(
        "replay", help="play a recorded session (a session log) back in a window"
    )
    replay.add_argument("file", type=Path, metavar="FILE", help="a .wblog session log")
    add_passphrase_options(replay, session_name=True, reads_recordings=True)
    return parser


# The simulated group, for a private session's key (its salt): the simulator has no address.
SIM_GROUP = "simulator"


def _print(result: dict[str, object], one_line: bool) -> None:
    print(
        json.dumps(result, sort_keys=True)
        if one_line
        else json.dumps(result, indent=2, sort_keys=True)
    )


def _run_sim(args: argparse.Namespace) -> int:
    from whiteboard.sim.network import Impairment
    from whiteboard.sim.recording import DEFAULT_START, parse_start
    from whiteboard.sim.scenario import ScenarioConfig, run_scenario

    if args.start is not None and args.log_dir is None:
        raise ValueError("--start sets the time in session logs: it needs --log-dir")
    start = DEFAULT_START.timestamp() if args.start is None else parse_start(args.start)
    config = ScenarioConfig(
        transport=args.transport,
        peers=args.peers,
        messages=args.messages,
        impairment=Impairment(
            loss=args.loss,
            source_loss=args.source_loss,
            dup=args.dup,
            reorder=args.reorder,
            delay_ms=args.delay_ms,
            jitter_ms=args.jitter_ms,
        ),
        seed=args.seed,
        rate=args.rate,
        settle_s=args.settle_s,
        params={"profile": args.profile, **dict(args.param)},
        workload=args.workload,
        log_dir=args.log_dir,
        start=start,
        crashes=tuple(args.crash),
        key=_session_key(args, SIM_GROUP),
    )
    result = run_scenario(config)
    _print(result, args.json)
    logs = result.get("logs")
    if isinstance(logs, list):
        # stdout is the result (one JSON line with --json): say where the logs went aside.
        print(f"whiteboard sim: {len(logs)} session logs in {args.log_dir}", file=sys.stderr)
    return 0


def _run_peer(args: argparse.Namespace) -> int:
    from whiteboard.net.runtime import NetConfig
    from whiteboard.net.sockets import GroupAddress
    from whiteboard.peer import PeerConfig, run_peer

    description = describe(args.transport)
    params: dict[str, object] = {"profile": args.profile, **dict(args.param)}
    if args.role is not None:
        roles = [role.value for role in description.roles]
        if args.role not in roles:
            raise ValueError(
                f"--role {args.role} is not a role of the {args.transport} transport"
                + (f" (its roles: {', '.join(roles)})" if roles else " (it has none)")
            )
        params[description.role_param] = args.role
    config = PeerConfig(
        transport=args.transport,
        net=NetConfig(
            group=GroupAddress.parse(args.group),
            iface=args.iface,
            ttl=args.ttl,
            tx_loss=args.tx_loss,
            rx_loss=args.rx_loss,
            seed=args.seed,
        ),
        name=args.name,
        send=args.send,
        rate=args.rate,
        duration=args.duration,
        until_delivered=args.until_delivered,
        wait_members=args.wait_members,
        linger=args.linger,
        presence=not args.no_presence,
        cursor_rate=args.cursor_rate,
        params=params,
        log_dir=args.log_dir,
        record=not args.no_log,
        board=args.board,
        key=_session_key(args, str(GroupAddress.parse(args.group))),  # one spelling of it
        encrypt_log=args.encrypt_log,
    )
    if args.board is not None and config.key is not None and not config.key.can_draw:
        raise ValueError("--board needs the passphrase: a view code cannot vouch for a board")
    if args.encrypt_log and config.key is None:
        raise ValueError("--encrypt-log needs a private session: give --passphrase-file")
    _print(run_peer(config), args.json)
    return 0


def _session_key(args: argparse.Namespace, group: str) -> SessionKey | None:
    """The key of the private session the arguments name, or None (a session in clear)."""
    from whiteboard.security import open_session_key
    from whiteboard.security.passphrase_source import read_passphrase

    passphrase = read_passphrase(args.passphrase_file)
    if passphrase is None:
        if args.allow_viewers:
            raise ValueError("--allow-viewers needs a private session: give --passphrase-file")
        return None
    return open_session_key(passphrase, group, args.session_name, args.allow_viewers)


def _run_replay(args: argparse.Namespace) -> int:
    # The log is read before any window opens: a file that is not a log is a message on
    # stderr and status 2 (SessionLogError is a ValueError), not a dialog.
    from whiteboard.replay import load_timeline

    timeline = load_timeline(args.file, unlock_from(args))
    for warning in timeline.warnings:
        print(f"whiteboard: warning: {warning}", file=sys.stderr)
    from whiteboard.app.replay_window import run_replay_app

    return run_replay_app(timeline)


def _run_app(argv: Sequence[str]) -> int:
    from whiteboard.app.main import run_app

    return run_app(list(argv))


def _run_analytics(argv: Sequence[str]) -> int:
    # Its own parser and its own imports (PySpark): ``whiteboard analytics ...`` is
    # ``python -m analytics ...`` under the whiteboard command.
    try:
        from analytics import MISSING_EXTRA  # no PySpark in the package itself
    except ImportError:
        print(NO_ANALYTICS, file=sys.stderr)  # the bundle leaves them out
        return 2
    try:
        from analytics.__main__ import main as analytics_main
    except ImportError as exc:
        print(f"whiteboard: {MISSING_EXTRA.format(missing=exc)}", file=sys.stderr)
        return 2
    return analytics_main(list(argv), prog="whiteboard analytics")


def _wants_app(argv: list[str]) -> bool:
    """``whiteboard`` alone, ``whiteboard app ...`` or ``whiteboard --group ...`` (app options
    with no subcommand) open the app; ``-h`` and ``--version`` stay with the command."""
    if not argv:
        return True
    first = argv[0]
    if first == "app" or (first.startswith("-") and first not in _COMMAND_FLAGS):
        return True
    # ``whiteboard FILE``: what a desktop runs for a double-clicked board or recording.
    return first not in COMMANDS and (
        Path(first).suffix.lower() in (FILE_EXTENSION, LOG_EXTENSION) or Path(first).is_file()
    )


_COMMAND_FLAGS = ("-h", "--help", "--version")
NO_ANALYTICS = (
    "whiteboard: this build has no analytics (the self-contained bundle leaves them out: they "
    "need Java and PySpark): install the wheel and its analytics extra (docs/install.md)"
)
# Every subcommand of build_parser (tests/test_cli.py holds the two to each other): a file
# named like one is given as ./NAME.
COMMANDS = ("app", "analytics", "sim", "peer", "log", "desktop", "replay")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if _wants_app(argv):
        return _run_app(argv[1:] if argv and argv[0] == "app" else argv)
    if argv[0] == "analytics":
        return _run_analytics(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        if args.command == "sim":
            return _run_sim(args)
        if args.command == "log":
            return run_log(args)
        if args.command == "desktop":
            return run_desktop(args)
        if args.command == "replay":
            return _run_replay(args)
        return _run_peer(args)
    except (ValueError, OSError) as exc:  # TransportUnavailable is a ValueError
        print(f"whiteboard: {exc}", file=sys.stderr)
        return 2
