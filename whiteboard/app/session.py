"""What the window joins: a transport, its group and parameters, and who we are in it.

Kept apart from the settings dialog's record (whiteboard/app/settings.py) so that the window
can be opened from the command line, from tests and from the start dialog alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from whiteboard.net.runtime import NetConfig

# Transports that hand a joiner the board (RMP's image, MTP's board message): only on these
# can a replica resync from the others.
STATEFUL_TRANSPORTS = ("rmp", "mtp")


@dataclass(frozen=True)
class SessionSpec:
    transport: str
    net: NetConfig
    params: Mapping[str, object] = field(default_factory=dict)

    def is_viewer(self) -> bool:
        """An MTP consumer: it receives and never sends (RFC 1301 §3.1.1)."""
        return self.transport == "mtp" and self.params.get("role") == "consumer"

    def can_resync(self) -> bool:
        return self.transport in STATEFUL_TRANSPORTS

    def describe(self) -> str:
        role = self.params.get("role") if self.transport == "mtp" else None
        role_text = {"master": " (host)", "consumer": " (viewer)"}.get(str(role), "")
        return f"{self.transport}{role_text} · {self.net.group}"

    def with_params(self, **changes: object) -> SessionSpec:
        return replace(self, params={**self.params, **changes})


__all__ = ["STATEFUL_TRANSPORTS", "SessionSpec"]
