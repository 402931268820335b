"""Mutations of valid encodings, shared by the wire decoders' fuzz suites: a decoder must meet
near-valid input (one corrupted byte, a cut, a splice) as calmly as random noise."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[bytes]) -> bytes:
    """A valid datagram from ``valid`` with one to three bytes flipped, set, cut, added,
    inserted or deleted."""
    wire = bytearray(draw(valid))
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["flip", "set", "truncate", "extend", "insert", "delete"]))
        at = draw(st.integers(0, max(len(wire) - 1, 0)))
        if how == "flip" and wire:
            wire[at] ^= draw(st.integers(1, 255))  # any non-zero mask: single bits and more
        elif how == "set" and wire:
            wire[at] = draw(st.integers(0, 255))
        elif how == "truncate":
            del wire[at:]
        elif how == "extend":
            wire += draw(st.binary(min_size=1, max_size=16))
        elif how == "insert":
            wire[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif how == "delete":
            del wire[at : at + draw(st.integers(1, 8))]
    return bytes(wire)
