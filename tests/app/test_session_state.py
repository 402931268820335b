"""The session state a person sees (whiteboard/app/session_state.py), derived from the events
the transports send, read through their real descriptions."""

from __future__ import annotations

from whiteboard.app.session_state import SessionLink, SessionTracker
from whiteboard.transport.events import Failure, JoinProgress, ProtocolEvent, Ready
from whiteboard.transport.registry import describe


def phase(old: str, new: str) -> ProtocolEvent:
    return ProtocolEvent("phase", {"from": old, "to": new}, 0.0)


def tracker(transport: str, can_send: bool = True) -> SessionTracker:
    return SessionTracker(describe(transport).phases, can_send)


def test_joining_then_connected_and_the_canvas_waits_for_ready() -> None:
    session = tracker("rmp")
    assert session.state.link is SessionLink.JOINING and not session.state.can_draw
    assert session.on_event(phase("new", "joining"))
    assert session.state.detail == "Asking the others to let us in."
    assert not session.state.can_draw  # a joining member's sends queue, but no board yet
    session.on_event(JoinProgress(3, 10))
    assert "3 of 10 parts" in session.state.detail
    session.on_event(phase("joining", "image"))
    session.on_event(phase("image", "ready"))
    session.on_event(Ready())
    assert session.state.link is SessionLink.CONNECTED and session.state.can_draw
    assert session.state.text() == "Connected"


def test_rfc1301_3_2_5_a_member_that_lost_its_master_is_reconnecting_and_says_why() -> None:
    """An MTP member that hears nothing from its master for retention heartbeats rejoins
    (RFC 1301 §3.2.5): a Failure with the reason, then the phase goes back to joining. The
    person sees *reconnecting*, what is tried and why; sends queue meanwhile, so drawing goes
    on."""
    session = tracker("mtp")
    for event in (phase("new", "joining"), phase("joining", "ready"), Ready()):
        session.on_event(event)
    session.on_event(Failure("no word from the mtp master for 10.0 s: rejoining the web"))
    assert session.state.link is SessionLink.CONNECTED  # a failure alone is a notice
    assert session.on_event(phase("ready", "joining"))
    state = session.state
    assert state.link is SessionLink.RECONNECTING and state.can_draw
    assert state.headline == "Reconnecting…"
    assert "Asking the host to let us in." in state.detail
    assert "No word from the mtp master for 10.0 s" in state.detail
    assert "kept and sent once back" in state.detail
    session.on_event(phase("joining", "ready"))
    session.on_event(Ready())
    assert session.state.link is SessionLink.CONNECTED and session.state.detail == ""


def test_a_viewer_reconnecting_still_cannot_draw() -> None:
    session = tracker("mtp", can_send=False)
    for event in (phase("new", "joining"), phase("joining", "ready"), Ready()):
        session.on_event(event)
    assert not session.state.can_draw
    session.on_event(phase("ready", "joining"))
    assert session.state.link is SessionLink.RECONNECTING and not session.state.can_draw
    assert "You can draw again once back." in session.state.detail


def test_a_session_that_ends_by_itself_says_why_and_one_we_leave_says_so() -> None:
    session = tracker("mtp")
    for event in (phase("new", "joining"), phase("joining", "ready"), Ready()):
        session.on_event(event)
    session.on_event(Failure("the host ended the session"))
    session.on_event(phase("ready", "finished"))
    session.finished()
    assert session.state.link is SessionLink.ENDED and not session.state.can_draw
    assert session.state.detail == "The host ended the session."
    left = tracker("rmp")
    left.on_event(Ready())
    left.leaving()
    assert left.state.link is SessionLink.LEAVING and not left.state.can_draw
    left.on_event(phase("ready", "leaving"))
    left.finished()
    assert left.state.detail == "You left the session."


def test_a_transport_without_phases_goes_by_ready_and_its_end() -> None:
    session = tracker("raw")
    session.on_event(Ready())
    assert session.state.link is SessionLink.CONNECTED
    session.finished()
    assert session.state == session.state.__class__(SessionLink.ENDED, "The session ended.")


def test_a_session_that_could_not_start_says_why() -> None:
    session = tracker("rmp")
    session.leaving()
    session.finished("could not join the session: no such interface 10.9.9.9")
    assert session.state.link is SessionLink.ENDED
    assert session.state.detail == "Could not join the session: no such interface 10.9.9.9."
