"""Private sessions (issue 21): a key derived from the session's passphrase, and the sealed
envelope every datagram travels in, below the protocol cores (docs/security.md)."""

from whiteboard.security.envelope import (
    ENVELOPE_OVERHEAD,
    Opener,
    Sealer,
    SealError,
    SealFailure,
    is_sealed,
)
from whiteboard.security.keys import (
    PassphraseError,
    SessionKey,
    SessionKeys,
    derive_session_key,
    derive_session_keys,
    is_view_code,
    open_session_key,
)
from whiteboard.security.replay import ReplayWindow
from whiteboard.security.signing import OpAuthority

__all__ = [
    "ENVELOPE_OVERHEAD",
    "OpAuthority",
    "Opener",
    "PassphraseError",
    "ReplayWindow",
    "SealError",
    "SealFailure",
    "Sealer",
    "SessionKey",
    "SessionKeys",
    "derive_session_key",
    "derive_session_keys",
    "is_sealed",
    "is_view_code",
    "open_session_key",
]
