"""Presence from real windows and a real ``whiteboard peer`` on loopback multicast: a member's
name and colour arrive with its first payload, and default colours are told apart."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.app.test_window import PATH, WAIT_MS, drag, open_window
from tests.net.test_peer_processes import finish, start_peer
from whiteboard.app import own_presence
from whiteboard.app.settings import SessionSettings
from whiteboard.app.window import MainWindow
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress
from whiteboard.presence import MEMBER_COLOURS, decode_presence, is_presence
from whiteboard.sessionlog.format import LocalOpRecord
from whiteboard.sessionlog.reader import read_log
from whiteboard.transport.interface import MemberState


def names_heard(window: MainWindow) -> dict[str, int | None]:
    """Name -> colour of the other members present."""
    rows = window.health.rows()
    return {r.name: r.colour for r in rows if not r.me and r.state is not MemberState.LEFT}


def first_sent(log: Path) -> bytes:
    [path] = log.glob("*")
    sent = [r for r in read_log(path).records if isinstance(r, LocalOpRecord)]
    assert sent
    return sent[0].payload


@pytest.mark.network
def test_a_window_sends_its_presence_before_anything_else(
    qtbot: QtBot, net: NetConfig, tmp_path: Path
) -> None:
    alice = MainWindow("raw", net, {}, "alice", log_dir=tmp_path)
    qtbot.addWidget(alice)
    alice.show()
    qtbot.waitUntil(lambda: not alice.canvas.is_read_only(), timeout=WAIT_MS)
    drag(alice, PATH)  # at once on becoming ready
    qtbot.waitUntil(lambda: len(alice.replica.board) == 1, timeout=WAIT_MS)
    alice.close()
    qtbot.waitUntil(lambda: alice.session_log is None, timeout=WAIT_MS)
    payload = first_sent(tmp_path)
    assert is_presence(payload) and decode_presence(payload).name == "alice"


@pytest.mark.network
def test_default_colours_differ_and_the_greater_id_moves_off_a_taken_one(
    qtbot: QtBot, net: NetConfig
) -> None:
    ann, bea = open_window(qtbot, net, "ann"), open_window(qtbot, net, "bea")
    qtbot.waitUntil(
        lambda: "bea" in names_heard(ann) and "ann" in names_heard(bea), timeout=WAIT_MS
    )
    # Neither chose a colour: each has a default, and not the same one.
    assert not ann.presence.own_colour and not bea.presence.own_colour
    assert {ann.presence.colour, bea.presence.colour} <= set(MEMBER_COLOURS)
    qtbot.waitUntil(lambda: ann.presence.colour != bea.presence.colour, timeout=WAIT_MS)
    # Make them collide: the member with the smaller id takes the other's colour.
    low, high = sorted((ann, bea), key=lambda w: w.transport.member_id)
    taken = high.presence.colour
    low.presence.take_colour(taken)  # as if its default had been that one
    low._presence_tick()
    qtbot.waitUntil(lambda: high.presence.colour != taken, timeout=WAIT_MS)
    assert low.presence.colour == taken and high.presence.colour in MEMBER_COLOURS
    # The new colour is what the others see, and what the tool bar draws with.
    qtbot.waitUntil(
        lambda: names_heard(low)[high.display_name] == high.presence.colour, timeout=WAIT_MS
    )
    assert high.canvas.colour == high.presence.colour


@pytest.mark.network
def test_a_chosen_colour_is_kept_and_a_default_one_moves_off_it(
    qtbot: QtBot, net: NetConfig
) -> None:
    ann = open_window(qtbot, net, "ann")
    taken = ann.presence.colour
    cy = MainWindow("raw", net, {}, "cy", colour=taken)  # chosen in the settings
    qtbot.addWidget(cy)
    cy.show()
    # Whichever member id is greater, the default colour is the one that moves.
    qtbot.waitUntil(lambda: ann.presence.colour != taken, timeout=WAIT_MS)
    assert cy.presence.own_colour and cy.presence.colour == taken
    qtbot.waitUntil(lambda: names_heard(ann).get("cy") == taken, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: names_heard(cy).get("ann") == ann.presence.colour, timeout=WAIT_MS)


@pytest.mark.network
def test_whiteboard_peer_tells_its_name_as_the_app_does(
    qtbot: QtBot, net: NetConfig, group: GroupAddress, tmp_path: Path
) -> None:
    alice = open_window(qtbot, net, "alice")
    peer = start_peer(
        group,
        "pia",
        "--transport",
        "raw",
        "--send",
        "3",
        "--duration",
        "4",
        "--log-dir",
        str(tmp_path),
    )
    try:
        qtbot.waitUntil(lambda: "pia" in names_heard(alice), timeout=WAIT_MS)
        assert names_heard(alice)["pia"] in MEMBER_COLOURS
    finally:
        result = finish(peer)
    assert result["presences_sent"] >= 1
    # Its presence went first, before its strokes.
    assert is_presence(first_sent(tmp_path))


@pytest.mark.network
def test_going_back_to_a_free_colour_in_the_settings_takes_one_nobody_uses(
    qtbot: QtBot, net: NetConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The new session's default colour is drawn from a new member id: it must avoid the
    # colours shown in the session left (it did not, and for one run in ten took ann's).
    avoided: list[set[int]] = []
    real_default = own_presence.default_colour

    def default_colour(member: int, taken: Collection[int] = ()) -> int:
        avoided.append(set(taken))
        return real_default(member, taken)

    monkeypatch.setattr(own_presence, "default_colour", default_colour)
    ann = open_window(qtbot, net, "ann")
    cy = MainWindow("raw", net, {}, "cy", colour=0xFF123456)
    qtbot.addWidget(cy)
    cy.show()
    qtbot.waitUntil(lambda: "cy" in names_heard(ann) and "ann" in names_heard(cy), timeout=WAIT_MS)
    settings = SessionSettings(
        transport="raw", group=str(net.group), iface="127.0.0.1", ttl=0, display_name="cy"
    )
    cy.settings = replace(settings, colour=0xFF123456, own_colour=True)
    first_id = cy.transport.member_id
    cy.apply_settings(replace(settings, own_colour=False))
    assert not cy.presence.own_colour
    qtbot.waitUntil(lambda: cy.transport.member_id != first_id, timeout=WAIT_MS)
    assert ann.presence.colour in avoided[-1]  # the new session's colour, drawn last
    qtbot.waitUntil(lambda: names_heard(ann).get("cy") in MEMBER_COLOURS, timeout=WAIT_MS)
    assert cy.presence.colour in MEMBER_COLOURS and cy.presence.colour != ann.presence.colour
