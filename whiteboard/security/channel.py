"""A private session's side of a transport driver: every datagram out sealed, every datagram
in opened or refused (whiteboard/transport/driver.py holds one per run of a member)."""

from __future__ import annotations

import time
from collections.abc import Callable

from whiteboard.security.envelope import ENVELOPE_OVERHEAD, Opener, Sealer, SealError, SealFailure
from whiteboard.security.keys import SessionKey

ETHERNET_DATAGRAM = 1472  # bytes of UDP payload in one Ethernet frame (1500 - 20 - 8)

# What a person is told, once each, when datagrams of a kind are refused.
REFUSAL_MESSAGES = {
    SealFailure.FOREIGN_KEY: (
        "someone on this group uses another passphrase (or another session name, or the "
        "other choice of letting people watch): nothing they send is shown here, and they "
        "cannot see this board"
    ),
    SealFailure.NOT_SEALED: (
        "someone on this group has no passphrase: nothing they send is shown here, and they "
        "cannot see this board"
    ),
    SealFailure.FORGED: (
        "datagrams that fail the session's authentication are arriving (forged or damaged): "
        "they are dropped"
    ),
}
SEALED_IN_PUBLIC = (
    "a private session shares this group: its members use a passphrase, and what they send is "
    "not shown here"
)


class PrivateChannel:
    """Seals with a sender id of this run's own; opens what the session's members send."""

    overhead = ENVELOPE_OVERHEAD

    def __init__(self, key: SessionKey, wall: Callable[[], float] = time.time) -> None:
        self.key = key
        self._sealer = Sealer(key, wall=wall)
        self._opener = Opener(key, wall=wall)
        self._told: set[SealFailure] = set()

    def seal(self, datagram: bytes) -> bytes:
        return self._sealer.seal(datagram)

    def open(self, datagram: bytes) -> tuple[bytes | None, str | None]:
        """(the datagram inside, None) or (None, a message for the person the first time
        datagrams of this kind are refused, else None)."""
        try:
            return self._opener.open(datagram)[1], None
        except SealError as exc:
            failure = exc.failure
            if failure in REFUSAL_MESSAGES and failure not in self._told:
                self._told.add(failure)
                return None, REFUSAL_MESSAGES[failure]
            return None, None

    def counters(self) -> dict[str, int]:
        return {failure.value: self._opener.refused[failure] for failure in SealFailure}
