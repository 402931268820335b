"""Where a passphrase comes from on the command line: a file (``--passphrase-file``) or the
environment (``WHITEBOARD_PASSPHRASE``), never an argument, which every user of the machine
can read in the process list (issue 21)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path

ENV_VAR = "WHITEBOARD_PASSPHRASE"
MAX_FILE_BYTES = 4096


def add_passphrase_options(
    parser: argparse.ArgumentParser, session_name: bool, reads_recordings: bool = False
) -> None:
    """``--passphrase-file`` (and ``--session-name`` if asked), for a command that joins, or
    one that reads recordings (``reads_recordings``: encrypted ones need it)."""
    purpose = (
        "open encrypted recordings of a private session: its passphrase or view code"
        if reads_recordings
        else "join a private session: its passphrase, or a view code to watch without drawing,"
    )
    parser.add_argument(
        "--passphrase-file",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"{purpose} is this file's first line (else the {ENV_VAR} environment "
        "variable; never on the command line)",
    )
    if session_name:
        parser.add_argument(
            "--session-name",
            default="",
            metavar="NAME",
            help="a private session's name: with the group, it salts the key (default: none)",
        )
    if not reads_recordings:
        parser.add_argument(
            "--allow-viewers",
            action="store_true",
            help="a private session that lets people watch with a view code (its ops then "
            "carry proofs); everyone in it must choose the same",
        )


def read_passphrase(file: Path | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The passphrase of ``file``'s first line, else of the environment; None if neither.
    ``ValueError`` with a message a person can act on if the file cannot be used."""
    if file is not None:
        try:
            with file.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise ValueError(f"cannot read the passphrase file {file}: {exc.strerror}") from None
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(f"the passphrase file {file} is over {MAX_FILE_BYTES} bytes")
        try:
            text = data.decode("utf-8-sig")  # an editor's byte order mark is no character
        except UnicodeDecodeError:
            raise ValueError(f"the passphrase file {file} is not UTF-8 text") from None
        first = text.splitlines()[0] if text else ""
        if not first:
            raise ValueError(f"the passphrase file {file} is empty")
        return first
    value = (os.environ if environ is None else environ).get(ENV_VAR)
    return value or None
