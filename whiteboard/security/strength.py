"""A hint of a passphrase's strength for the person typing it: a rough estimate of the guesses
an attacker who captured the session's traffic needs (each costs one scrypt, keys.py), from
its length and the kinds of characters in it. Not a policy: any passphrase of the minimum
length is accepted."""

from __future__ import annotations

import enum
import math
import string

from whiteboard.security.keys import (
    MIN_PASSPHRASE,
    PassphraseError,
    is_view_code,
    session_key_from_view_code,
)


class Strength(enum.Enum):
    NONE = "none"
    TOO_SHORT = "too short"
    WEAK = "weak"
    FAIR = "fair"
    STRONG = "strong"


def estimate_bits(passphrase: str) -> float:
    """log2 of the guesses a brute force over the passphrase's character kinds needs."""
    kinds = (
        (string.ascii_lowercase, 26),
        (string.ascii_uppercase, 26),
        (string.digits, 10),
        (string.punctuation + " ", 33),
    )
    alphabet = sum(size for chars, size in kinds if any(c in chars for c in passphrase))
    if any(not c.isascii() for c in passphrase):
        alphabet += 100
    distinct = len(set(passphrase))  # "aaaaaaaaaa" is not ten characters' worth
    return min(len(passphrase), 2 * distinct) * math.log2(max(alphabet, 2))


def strength(passphrase: str) -> Strength:
    if not passphrase:
        return Strength.NONE
    if len(passphrase) < MIN_PASSPHRASE:
        return Strength.TOO_SHORT
    bits = estimate_bits(passphrase)
    return Strength.WEAK if bits < 50 else Strength.FAIR if bits < 80 else Strength.STRONG


HINTS = {
    Strength.NONE: "No passphrase: anyone on this network can see and change the board.",
    Strength.TOO_SHORT: f"Too short: a passphrase has at least {MIN_PASSPHRASE} characters.",
    Strength.WEAK: "Weak: someone who recorded the session could guess it. Add words.",
    Strength.FAIR: "Fair: private against a casual listener. More words make it strong.",
    Strength.STRONG: "Strong: only members who know it can see or change the board.",
}


VIEW_CODE_HINT = "A view code: you will watch this board, not draw on it."


def hint(passphrase: str) -> str:
    if is_view_code(passphrase):
        try:
            session_key_from_view_code(passphrase)
        except PassphraseError as exc:
            return f"{str(exc).capitalize()}."
        return VIEW_CODE_HINT
    return HINTS[strength(passphrase)]
