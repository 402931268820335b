"""Where the command line takes a passphrase from: a file or the environment, never argv."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.processes import run_whiteboard
from whiteboard.security.passphrase_source import ENV_VAR, read_passphrase


def test_the_file_first_then_the_environment_then_none(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from the file\nignored second line\n")
    assert read_passphrase(secret, {ENV_VAR: "from the environment"}) == "from the file"
    assert read_passphrase(None, {ENV_VAR: "from the environment"}) == "from the environment"
    assert read_passphrase(None, {}) is None
    assert read_passphrase(None, {ENV_VAR: ""}) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "is empty"), (b"\xff\xfe", "not UTF-8"), (b"x" * 5000, "over 4096 bytes")],
)
def test_an_unusable_file_is_explained(tmp_path: Path, content: bytes, message: str) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        read_passphrase(secret, {})
    with pytest.raises(ValueError, match="cannot read the passphrase file"):
        read_passphrase(tmp_path / "missing", {})


def test_the_peer_command_says_what_is_wrong_with_a_passphrase(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("tiny\n")
    done = run_whiteboard(
        "peer",
        "--transport",
        "rmp",
        "--group",
        "239.255.3.3:23003",
        "--name",
        "p",
        "--passphrase-file",
        str(short),
    )
    assert done.returncode != 0
    assert "at least 8 characters" in done.stderr and "Traceback" not in done.stderr
