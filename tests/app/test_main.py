"""``run_app``: options, the event loop, and a clear message when the network cannot be used."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from whiteboard.app import main
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig


@pytest.fixture
def errors(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    # The real one opens a modal dialog, which would wait for a click forever.
    monkeypatch.setattr(main, "show_error", shown.append)
    return shown


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (["--group", "10.0.0.1:5000"], "not a multicast address"),
        (["--group", "239.1.2.3"], "must be ADDR:PORT"),
        (["--ttl", "300", "--iface", "127.0.0.1"], "TTL must be 0-255"),
        (["--iface", "eth0"], "must be the IPv4 address"),
        # An address no interface here has: the kernel refuses it.
        (["--iface", "192.0.2.77", "--group", "239.255.200.201:47123"], "cannot"),
    ],
)
def test_network_problems_are_a_message_and_exit_code_2(
    qtbot: QtBot, errors: list[str], argv: list[str], reason: str
) -> None:
    assert main.run_app(argv) == 2
    [message] = errors
    assert reason in message
    assert "Traceback" not in message
    assert not [
        w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
    ]


def test_bad_options_are_argparse_errors(
    qtbot: QtBot, errors: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main.run_app(["--transport", "pigeon"]) == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main.run_app(["--help"]) == 0


@pytest.mark.network
def test_runs_the_window_until_it_is_closed(
    qtbot: QtBot, errors: list[str], net: NetConfig
) -> None:
    opened: list[MainWindow] = []

    def close_window() -> None:
        windows = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()
        ]
        opened.extend(windows)
        for window in windows:
            window.close()

    QTimer.singleShot(0, close_window)
    argv = ["--group", str(net.group), "--iface", "127.0.0.1", "--ttl", "0", "--name", "carol"]
    assert main.run_app(argv) == 0
    assert errors == []
    [window] = opened
    assert window.display_name == "carol"
    assert window.transport.finished
    window.deleteLater()
