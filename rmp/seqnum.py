"""16-bit sequence numbers (RR-2100 §4.1) and the unbounded counters they are taken from.

Inside the core every sequence number is an unbounded int; on the wire it is that int modulo
2**16. A received number is unwrapped to the unbounded value nearest a reference (RFC 1982
serial arithmetic), which is unambiguous while the two are less than 2**15 apart."""

from __future__ import annotations

MODULUS = 1 << 16
HALF = 1 << 15


def to_wire(seq: int) -> int:
    return seq % MODULUS


def unwrap(wire: int, reference: int) -> int:
    """The unbounded sequence number congruent to ``wire`` nearest ``reference``."""
    delta = (wire - reference) % MODULUS
    if delta >= HALF:
        delta -= MODULUS
    return reference + delta
