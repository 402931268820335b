"""Passphrases remembered in the system keyring, only when the person asks (issue 21).

Through ``keyring`` (Secret Service, KWallet, macOS Keychain, Windows Credential Locker): the
passphrase never goes into the settings file. One entry per multicast group, the session's
address. A machine without a keyring (a headless one, or no backend installed) offers no
remembering: ``available()`` is False and the start dialog says why."""

from __future__ import annotations

import contextlib
import logging

import keyring
from keyring.backends import fail
from keyring.errors import KeyringError

log = logging.getLogger(__name__)

SERVICE = "Whiteboard session passphrase"


class PassphraseStore:
    def available(self) -> bool:
        try:
            backend = keyring.get_keyring()
        except KeyringError:
            return False
        return not isinstance(backend, fail.Keyring) and backend.priority > 0

    def load(self, group: str) -> str:
        """The passphrase remembered for ``group``, or ""."""
        if not group or not self.available():
            return ""
        try:
            return keyring.get_password(SERVICE, group) or ""
        except KeyringError as exc:
            log.warning("the system keyring could not be read: %s", exc)
            return ""

    def save(self, group: str, passphrase: str) -> str | None:
        """Remember it; a message for the person if the keyring refused, else None."""
        try:
            keyring.set_password(SERVICE, group, passphrase)
        except KeyringError as exc:
            return f"The passphrase could not be remembered in the system keyring: {exc}"
        return None

    def forget(self, group: str) -> None:
        if not group or not self.available():
            return
        # Nothing remembered for it (PasswordDeleteError), or the keyring refused: nothing to do.
        with contextlib.suppress(KeyringError):
            keyring.delete_password(SERVICE, group)
