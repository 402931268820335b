"""``whiteboard log``: read session logs (``info``) and export them as tables (``export``).

Wired into ``whiteboard/cli.py`` by :func:`add_log_parser` and :func:`run_log`; the options
that turn recording on and off for ``peer`` and the app are :func:`add_recording_options`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from whiteboard.security.passphrase_source import add_passphrase_options, read_passphrase
from whiteboard.sessionlog.export import FORMATS, ExportError, export_logs
from whiteboard.sessionlog.paths import ENV_LOG_DIR
from whiteboard.sessionlog.sealing import Unlock
from whiteboard.sessionlog.summary import format_summary, summarize

EXIT_OK = 0
EXIT_PROBLEM = 2  # as the rest of the command: a message a person can act on, no traceback


def add_log_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``log`` and its actions to the ``whiteboard`` command's subparsers."""
    log = sub.add_parser(
        "log",
        help="read recorded session logs: a summary, or export as tables",
        description="Every session the app or 'whiteboard peer' runs is recorded in a log "
        f"(see docs/session-log.md; the folder is ${ENV_LOG_DIR} if set).",
    )
    actions = log.add_subparsers(dest="log_action", metavar="ACTION", required=True)
    info = actions.add_parser("info", help="summarise one log")
    info.add_argument("file", metavar="FILE", type=Path)
    info.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    add_passphrase_options(info, session_name=True, reads_recordings=True)
    export = actions.add_parser(
        "export",
        help="export logs as one row per event, partitioned by date",
        description="Write OUT/date=YYYY-MM-DD/part-<session>.<format>: one row per record, "
        "the schema in docs/session-log.md. Logs that cannot be read are reported and left "
        "out; the others are exported.",
    )
    export.add_argument(
        "--format", choices=FORMATS, default="jsonl", help="jsonl (default) or parquet"
    )
    export.add_argument(
        "logs", nargs="+", metavar="LOG", type=Path, help="a log file, or a folder of them"
    )
    export.add_argument("--out", required=True, metavar="DIR", type=Path)
    add_passphrase_options(export, session_name=True, reads_recordings=True)


def add_recording_options(parser: argparse.ArgumentParser, encrypt_option: bool = False) -> None:
    """``--log-dir`` and ``--no-log``, for the commands that run a session, and
    ``--encrypt-log`` if asked (the app takes that from its settings)."""
    parser.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"folder for this session's log (default: ${ENV_LOG_DIR}, else the app's data "
        "folder; see 'whiteboard log --help')",
    )
    parser.add_argument("--no-log", action="store_true", help="do not record this session")
    if not encrypt_option:
        return
    parser.add_argument(
        "--encrypt-log",
        action="store_true",
        help="encrypt a private session's log: only its passphrase or view code opens it "
        "(docs/session-log.md)",
    )


def run_log(args: argparse.Namespace) -> int:
    if args.log_action == "info":
        return _info(args)
    return _export(args)


def unlock_from(args: argparse.Namespace) -> Unlock:
    """What opens encrypted recordings, from ``--passphrase-file`` or the environment (and
    ``--session-name``). ``ValueError`` with a message if the file cannot be used."""
    return Unlock(read_passphrase(args.passphrase_file), args.session_name)


def _info(args: argparse.Namespace) -> int:
    try:
        summary = summarize(args.file, unlock_from(args))
    except ValueError as exc:  # SessionLogError, or an unusable passphrase file
        _say(str(exc))
        return EXIT_PROBLEM
    print(json.dumps(summary, sort_keys=True) if args.json else format_summary(summary))
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    try:
        result = export_logs(args.logs, args.out, args.format, unlock_from(args))
    except (ExportError, ValueError) as exc:
        _say(str(exc))
        return EXIT_PROBLEM
    for warning in result.warnings:
        _say(f"warning: {warning}")
    for problem in result.failed:
        _say(f"{problem}: not exported")
    print(
        f"exported {result.sessions} session{'s' if result.sessions != 1 else ''} "
        f"({result.rows:,} rows) to {args.out} in {len(result.files)} files"
    )
    return EXIT_PROBLEM if result.failed else EXIT_OK


def _say(text: str) -> None:
    print(f"whiteboard: {text}", file=sys.stderr)


__all__ = ["add_log_parser", "add_recording_options", "run_log", "unlock_from"]
