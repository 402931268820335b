"""16-bit sequence numbers on the wire and the unbounded numbers behind them.

RMP numbers packets with 16 bits (RR-2100 §4.1), MTP numbers messages with 16 bits
(RFC 1301 §2.2.6). Inside a core every number is an unbounded int; on the wire it is that int
modulo 2**16. A received number is unwrapped to the unbounded value nearest a reference
(RFC 1982 serial arithmetic), which is unambiguous while the two are less than 2**15 apart."""

from __future__ import annotations

MODULUS = 1 << 16
HALF = 1 << 15


def to_wire(number: int) -> int:
    """The 16-bit wire form of an unbounded number."""
    return number % MODULUS


def unwrap(wire: int, reference: int) -> int:
    """The unbounded number congruent to ``wire`` nearest ``reference``."""
    delta = (wire - reference) % MODULUS
    if delta >= HALF:
        delta -= MODULUS
    return reference + delta
