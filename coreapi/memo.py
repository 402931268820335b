"""A decoder that decodes the same datagram object once, however many members are handed it.

A wire decoder is a pure function of its bytes and returns a frozen record, so a second decode
of the very same ``bytes`` object may return the first result. In a process that runs one
member (the app, ``whiteboard peer``) that never happens and the memo costs a dictionary
lookup a datagram. In the simulator, where one multicast datagram object reaches every member
of the group, it turns N decodes into one: decoding the acceptance vector an MTP packet carries
for every member, or the confirmations an RMP packet piggybacks, made the simulator's cost grow
with the square of the group (issue 18: 100 members x 1,000 strokes took 90-200 s).

Entries are keyed by identity, not by value, so a lookup hashes nothing; each entry keeps its
``bytes`` alive, so an identity cannot be reused while it is remembered. A decode that raises
is not remembered: each member counts the malformed datagram itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

_Source = TypeVar("_Source")
_Record = TypeVar("_Record")


class DecodeMemo(Generic[_Source, _Record]):
    """``decode`` with the results of the last ``size`` objects it decoded, if they are of
    one of ``kinds``: immutable types (``bytes``, or a frozen record digested further)."""

    def __init__(
        self,
        decode: Callable[[_Source], _Record],
        size: int = 256,
        kinds: tuple[type, ...] = (bytes,),
    ) -> None:
        if size < 1:
            raise ValueError(f"a memo needs room for at least one entry, not {size}")
        self._decode = decode
        self._size = size
        self._kinds = kinds
        self._entries: dict[int, tuple[_Source, _Record]] = {}
        self.hits = 0

    def __call__(self, data: _Source) -> _Record:
        if type(data) not in self._kinds:
            return self._decode(data)  # a mutable buffer may change between two calls
        key = id(data)
        entry = self._entries.get(key)
        if entry is not None and entry[0] is data:
            self.hits += 1
            return entry[1]
        record = self._decode(data)
        entries = self._entries
        if len(entries) >= self._size:
            del entries[next(iter(entries))]  # the oldest: dicts keep insertion order
        entries[key] = (data, record)
        return record


class ValueMemo(Generic[_Record]):
    """``decode`` with the results for the last ``size`` distinct byte strings it decoded,
    keyed by value: for payloads that reach several decoders as equal but distinct objects.

    The simulator runs every member's replica in one process, and each member's transport
    hands its replica its own copy of a stroke's bytes (cut out of a packet of several): one
    memo shared by the replicas decodes a stroke once for the group, not once per member
    (issue 18). Only for a pure ``decode`` returning a frozen record; a decode that raises is
    not remembered, so each replica counts a malformed payload itself."""

    def __init__(self, decode: Callable[[bytes], _Record], size: int = 4096) -> None:
        if size < 1:
            raise ValueError(f"a memo needs room for at least one entry, not {size}")
        self._decode = decode
        self._size = size
        self._entries: dict[bytes, _Record] = {}
        self.hits = 0

    def __call__(self, data: bytes) -> _Record:
        if type(data) is not bytes:
            return self._decode(data)  # a mutable buffer may change between two calls
        entries = self._entries
        record = entries.get(data)
        if record is not None:
            self.hits += 1
            return record
        record = self._decode(data)
        if len(entries) >= self._size:
            del entries[next(iter(entries))]  # the oldest: dicts keep insertion order
        entries[data] = record
        return record
