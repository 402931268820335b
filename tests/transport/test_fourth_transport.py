"""A transport the whiteboard has never heard of, registered from the tests, runs through the
simulator, the CLI and the settings dialog with no change outside its own module and the
registry: everything asks its description (issue 16, item 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_settings_dialog import choose, click_ok, open_dialog, param, retype
from whiteboard.app.session import SessionSpec
from whiteboard.app.settings import SessionSettings, params_spec
from whiteboard.cli import main as whiteboard_main
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.replay.network import MarkKind, network_marks
from whiteboard.sessionlog import read_log
from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import ScenarioConfig, run_scenario
from whiteboard.transport.registry import REGISTRY, TransportUnavailable, describe


@pytest.fixture
def carbon() -> Iterator[None]:
    with REGISTRY.registered("carbon", "tests.transport.carbon"):
        yield
    with pytest.raises(TransportUnavailable):
        describe("carbon")  # gone again after the test


def test_the_simulator_runs_it(carbon: None) -> None:
    result = run_scenario(
        ScenarioConfig(transport="carbon", peers=4, messages=60, params={"copies": 3})
    )
    assert result["complete"] and result["converged"]
    assert result["duplicates_delivered"] == 0
    # Three copies of each of the 60 strokes, to the group.
    assert result["datagrams_sent"] == 3 * 60
    assert result["left_cleanly"]


def test_its_copies_mask_loss_that_one_copy_does_not(carbon: None) -> None:
    def delivered_min(copies: int) -> object:
        config = ScenarioConfig(
            transport="carbon",
            peers=3,
            messages=200,
            impairment=Impairment(loss=0.2),
            params={"copies": copies},
            settle_s=1.0,
        )
        return run_scenario(config)["delivered_min"]

    one, four = delivered_min(1), delivered_min(4)
    assert isinstance(one, int) and isinstance(four, int)
    assert one < 190 <= four  # 20% loss against 0.2**4 = 0.16%


def test_the_cli_offers_it(carbon: None, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sim", "--transport", "carbon", "--peers", "2", "--messages", "5", "--json"]
    assert whiteboard_main([*argv, "--param", "copies=2"]) == 0
    assert json.loads(capsys.readouterr().out)["complete"] is True
    assert whiteboard_main([*argv, "--param", "copies=9"]) == 2
    assert "copies must be from 1 to 4" in capsys.readouterr().err


def test_the_settings_dialog_offers_it(carbon: None, qtbot: QtBot) -> None:
    dialog = open_dialog(qtbot)
    index = dialog.transport_box.findData("carbon")
    assert dialog.transport_box.itemText(index).startswith("Carbon: every stroke")
    choose(qtbot, dialog.transport_box, "carbon")
    assert dialog.role_box.isEnabled()
    assert [dialog.role_box.itemData(i) for i in range(dialog.role_box.count())] == [
        "writer",
        "reader",
    ]
    assert dialog.advanced_toggle.text() == "Advanced: CARBON parameters"
    copies = param(dialog, "carbon", "copies", type(dialog.group_edit))
    assert "Times each payload is sent" in copies.toolTip()
    assert copies.placeholderText() == "2"
    choose(qtbot, dialog.role_box, "reader")
    dialog.advanced_toggle.setChecked(True)
    retype(qtbot, copies, "9")
    click_ok(qtbot, dialog)
    assert dialog.isVisible()  # refused by the transport's own factory, with its words
    assert "copies must be from 1 to 4" in dialog.advanced_error.text()
    retype(qtbot, copies, "3")
    click_ok(qtbot, dialog)
    chosen = dialog.session_settings()
    assert chosen is not None
    assert (chosen.transport, chosen.mtp_role, chosen.advanced) == (
        "carbon",
        "reader",
        {"carbon": {"copies": 3}},
    )
    params = chosen.to_transport_params()
    assert params == {"profile": "lan", "copies": 3, "role": "reader"}
    spec = SessionSpec("carbon", NetConfig(group=GroupAddress("239.255.1.1", 20000)), params)
    assert spec.is_viewer() and not spec.can_resync()
    assert spec.describe() == "carbon (reader) · 239.255.1.1:20000"


def test_settings_check_its_roles(carbon: None) -> None:
    assert SessionSettings(transport="carbon", mtp_role="writer").validate([]) == []
    problems = SessionSettings(transport="carbon", mtp_role="host").validate([])
    assert [p.field for p in problems] == ["mtp_role"]
    assert "writer, reader" in problems[0].message
    assert [f.name for f in params_spec("carbon").fields] == ["copies"]


def test_its_protocol_events_are_marks_in_the_replay(carbon: None, tmp_path: Path) -> None:
    config = ScenarioConfig(
        transport="carbon", peers=2, messages=4, params={"copies": 3}, log_dir=tmp_path
    )
    logs = run_scenario(config)["logs"]
    assert isinstance(logs, list) and len(logs) == 2
    log = read_log(logs[0])
    marks = network_marks(log.header, log.records)
    # Two extra copies of each stroke this member drew (2 of the 4), each one a mark.
    assert [m.kind for m in marks].count(MarkKind.RETRANSMISSION) == 2 * 2


def test_its_side_channel_comes_from_coreapis_parts(carbon: None) -> None:
    """A fourth transport frames the side channel in its own datagram and leaves pacing and
    latest-wins to coreapi/ephemeral.py: a flood arrives paced, its last payload included."""
    from whiteboard.sim.session import SimSession

    session = SimSession("carbon", 2, seed=1)
    for index in range(2):
        session.start(index)
    network = session.network
    for step in range(1, 201):
        session.send_ephemeral(0, f"at {step}".encode())
    network.run(network.now + 2.0)
    reader = session.peers[1]
    assert reader.latest_ephemeral == {session.peers[0].member_id: b"at 200"}
    assert 8 < reader.ephemeral_received < 200
