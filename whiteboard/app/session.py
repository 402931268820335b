"""What the window joins: a transport, its group and parameters, and who we are in it.

Kept apart from the settings dialog's record (whiteboard/app/settings.py) so that the window
can be opened from the command line, from tests and from the start dialog alike. What a
transport can do is asked of its description (``whiteboard.transport.registry.describe``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from coreapi.description import TransportDescription
from whiteboard.net.runtime import NetConfig
from whiteboard.security import SessionKey
from whiteboard.transport.registry import describe

VIEWER_REASON = "You joined as a viewer: you can look, not draw"
VIEW_CODE_REASON = (
    "You joined with a view code: you can watch, not draw (ask for the passphrase to draw)"
)


@dataclass(frozen=True)
class SessionSpec:
    transport: str
    net: NetConfig
    params: Mapping[str, object] = field(default_factory=dict)
    key: SessionKey | None = None  # a private session's (docs/security.md); None: in clear
    # A private session's recording encrypted at rest (whiteboard/sessionlog/sealing.py).
    encrypt_recording: bool = True

    @property
    def description(self) -> TransportDescription:
        return describe(self.transport)

    def is_viewer(self) -> bool:
        """A member whose role cannot send (an MTP consumer, RFC 1301 §3.1.1)."""
        return not self.description.can_send(self.params)

    def why_view_only(self) -> str | None:
        """Why nothing we draw would be shown, for the tools' tooltips; None if we can draw."""
        if self.is_viewer():
            return VIEWER_REASON
        if self.key is not None and not self.key.can_draw:
            return VIEW_CODE_REASON
        return None

    def can_resync(self) -> bool:
        """Whether the transport hands a joiner the board, so a replica can resync."""
        return self.description.resyncable

    def describe(self) -> str:
        description = self.description
        role = description.role_in(self.params)
        # The ordinary member's role goes without saying; a host or a viewer is named.
        private = ""
        if self.key is not None and not self.key.can_draw:
            private = " · private, view only"
        elif self.key is not None:
            private = " · private, with viewers" if self.key.viewers else " · private"
        if role is None or role is description.member_role:
            return f"{self.transport} · {self.net.group}{private}"
        return f"{self.transport} ({role.word}) · {self.net.group}{private}"

    def with_params(self, **changes: object) -> SessionSpec:
        return replace(self, params={**self.params, **changes})


__all__ = ["SessionSpec"]
