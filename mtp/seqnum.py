"""16-bit message sequence numbers (RFC 1301 §2.2.6) and the unbounded numbers behind them.

Inside the core every message number is an unbounded int; on the wire it is that int modulo
2**16. A received number is unwrapped to the unbounded value nearest a reference (serial
arithmetic), unambiguous while the two are less than 2**15 apart: the acceptance vector keeps
every live message within a few dozen of the master's current number."""

from __future__ import annotations

MODULUS = 1 << 16
HALF = 1 << 15


def to_wire(number: int) -> int:
    return number % MODULUS


def unwrap(wire: int, reference: int) -> int:
    """The unbounded number congruent to ``wire`` nearest ``reference``."""
    delta = (wire - reference) % MODULUS
    if delta >= HALF:
        delta -= MODULUS
    return reference + delta
