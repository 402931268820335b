"""The session state a person sees: joining, connected, reconnecting (and what is being tried),
leaving, ended (why, and what now).

Qt-free. Derived from the transport's events alone: ``Ready``, ``JoinProgress``, ``Failure``,
the core's ``phase`` protocol event (the ``to`` phase, read through the transport's
description, :class:`coreapi.description.PhaseMeaning`) and the end of the session. The app
never names a transport: what a phase means, and whether a member may send in it, is the
description's to say.

* **joining**: not yet a member. The canvas stays read-only until ``Ready``: a board state may
  still be on its way, and what is drawn on a board not yet received would be out of place.
* **connected**: what is drawn reaches the others.
* **reconnecting**: a member that was connected is on its way in again (a phase meaning
  *joining* after ``Ready``: an MTP member that lost its master, RFC 1301 §3.2.5). What is
  drawn meanwhile is kept by the transport and sent once back if its phase accepts sends
  (``PhaseMeaning.sends``); otherwise the canvas is read-only and says so.
* **leaving**: we chose to leave; nothing more is drawn.
* **ended**: the session is over for this member, by its choice or not; the board stays on
  screen, to be saved, hosted anew or taken to a new join.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from coreapi.description import Link, PhaseMeaning
from whiteboard.app.undelivered import waiting_notice
from whiteboard.transport.events import Event, Failure, JoinProgress, ProtocolEvent, Ready


class SessionLink(StrEnum):
    JOINING = "joining"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    LEAVING = "leaving"
    ENDED = "ended"


HEADLINES = {
    SessionLink.JOINING: "Joining…",
    SessionLink.CONNECTED: "Connected",
    SessionLink.RECONNECTING: "Reconnecting…",
    SessionLink.LEAVING: "Leaving…",
    SessionLink.ENDED: "Session ended",
}


@dataclass(frozen=True, slots=True)
class SessionState:
    link: SessionLink
    detail: str = ""  # what is being tried, or why it ended: a sentence for a person
    can_draw: bool = False  # whether the canvas takes drawing now

    @property
    def headline(self) -> str:
        return HEADLINES[self.link]

    def text(self) -> str:
        """Headline and detail, for a place with room for both (a tooltip, a banner)."""
        if not self.detail:
            return self.headline
        joint = " " if self.headline.endswith("…") else ": "
        return f"{self.headline}{joint}{self.detail}"


class SessionTracker:
    """Follows one session's events and says what state it is in (:attr:`state`)."""

    def __init__(self, phases: Mapping[str, PhaseMeaning], can_send: bool) -> None:
        """``phases``: the transport description's phase meanings; ``can_send``: whether this
        member's role may draw at all (a viewer may not)."""
        self._phases = phases
        self._can_send = can_send
        self._was_connected = False
        self._last_failure = ""
        self._doing = ""  # what the current phase is trying, in words
        self.state = SessionState(SessionLink.JOINING, "Asking to join the session.")

    def on_event(self, event: Event) -> bool:
        """Take ``event``; True if the state changed."""
        before = self.state
        if isinstance(event, Ready):
            self._was_connected = True
            self._last_failure = ""
            self.state = SessionState(SessionLink.CONNECTED, "", self._can_send)
        elif isinstance(event, JoinProgress) and self.state.link is not SessionLink.CONNECTED:
            received = f"Receiving the board: {event.received} of {event.total} parts."
            self.state = SessionState(self.state.link, received, self.state.can_draw)
        elif isinstance(event, Failure):
            self._last_failure = event.reason
            if self.state.link is SessionLink.RECONNECTING:
                self.state = self._reconnecting(self._doing)
        elif isinstance(event, ProtocolEvent) and event.name == "phase":
            meaning = self._phases.get(str(event.fields.get("to", "")))
            if meaning is not None:
                self._enter(meaning)
        return self.state != before

    def leaving(self) -> None:
        """We asked to leave (closing the window, switching sessions)."""
        if self.state.link is not SessionLink.ENDED:
            self.state = SessionState(SessionLink.LEAVING, "Leaving the session.")

    def finished(self, reason: str = "", undelivered: int = 0) -> None:
        """The transport finished: by our leave, or by itself (then the last failure says
        why, if there was one), or could not start (``reason``); ``undelivered``: drawings
        of ours it never delivered, kept to be sent in the next session (said too)."""
        if reason:
            why = _sentence(reason)
        elif self.state.link is SessionLink.LEAVING:
            why = "You left the session."
        elif self._last_failure:
            why = _sentence(self._last_failure)
        else:
            why = "The session ended."
        if undelivered:
            why = f"{why} {_sentence(waiting_notice(undelivered))}"
        self.state = SessionState(SessionLink.ENDED, why)

    # -- internals --------------------------------------------------------------------------

    def _enter(self, meaning: PhaseMeaning) -> None:
        self._doing = meaning.doing
        if meaning.link is Link.JOINING:
            if self._was_connected:
                self.state = self._reconnecting(meaning.doing, meaning.sends)
            else:
                self.state = SessionState(SessionLink.JOINING, _sentence(meaning.doing))
        elif meaning.link is Link.CONNECTED:
            if self._was_connected:  # back after reconnecting (Ready says it too)
                self.state = SessionState(SessionLink.CONNECTED, "", self._can_send)
        elif meaning.link is Link.LEAVING and self.state.link is not SessionLink.LEAVING:
            self.state = SessionState(SessionLink.LEAVING, _sentence(meaning.doing))
        # Link.ENDED: finished() follows, with the reason.

    def _reconnecting(self, doing: str, sends: bool | None = None) -> SessionState:
        if sends is None:
            sends = self.state.can_draw
        can_draw = sends and self._can_send
        parts = [_sentence(doing)] if doing else []
        if self._last_failure:
            parts.append(_sentence(self._last_failure))
        parts.append(
            "What you draw meanwhile is kept and sent once back."
            if can_draw
            else "You can draw again once back."
        )
        return SessionState(SessionLink.RECONNECTING, " ".join(parts), can_draw)


def _sentence(text: str) -> str:
    """``text`` as a sentence: capitalised, ending with a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else f"{text}."


__all__ = ["HEADLINES", "SessionLink", "SessionState", "SessionTracker"]
