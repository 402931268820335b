"""Where the command line takes a passphrase from: a file or the environment, never argv."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize(
    ("extra", "secret_text", "message"),
    [
        (("--board", "any.wbd"), "view", "a view code cannot vouch for a board"),
        (("--encrypt-log",), None, "--encrypt-log needs a private session"),
        (("--allow-viewers",), None, "--allow-viewers needs a private session"),
    ],
)
def test_the_peer_refuses_what_its_key_cannot_do(
    tmp_path: Path, extra: tuple[str, ...], secret_text: str | None, message: str
) -> None:
    from whiteboard.security import derive_session_key

    args = ["peer", "--transport", "rmp", "--group", "239.255.3.3:23003", "--name", "p"]
    if secret_text is not None:
        code = derive_session_key(
            "a long and private passphrase", "239.255.3.3:23003", viewers=True
        )
        secret = tmp_path / "secret"
        secret.write_text(code.view_code() + "\n")
        args += ["--passphrase-file", str(secret)]
    done = run_whiteboard(*args, *extra)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_the_simulator_runs_a_private_session_deterministically(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("a long and private passphrase\n")
    args = ("sim", "--transport", "rmp", "--peers", "4", "--messages", "60", "--loss", "0.05")
    runs = [run_whiteboard(*args, "--passphrase-file", str(secret), "--json") for _ in range(2)]
    results = [json.loads(run.stdout) for run in runs]
    for result in results:
        assert result["private"] is True and result["auth_failures"] == 0
        assert result["complete"] and result["converged"]
        result.pop("wall_s")
    assert results[0] == results[1]  # the envelopes differ, nothing the members do
    clear = json.loads(run_whiteboard(*args, "--json").stdout)
    assert "private" not in clear and clear["board_hash"] == results[0]["board_hash"]


def test_a_byte_order_mark_is_not_part_of_the_passphrase(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes("\ufeffa long and private passphrase\r\n".encode())
    assert read_passphrase(secret, {}) == "a long and private passphrase"
