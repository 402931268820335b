"""Where a member's pointer is on the board (issue 19): what goes on a transport's side channel
(``Transport.send_ephemeral``, coreapi/ephemeral.py), never on the board, never in its hash.

A payload is the msgpack array ``["wb-pointer", 1, kind, x, y, visible, sent_us]``:

* ``kind`` 1 (POINTER), the member's pointer; 2 (LASER), a point of its laser pointer's
  trail, which everyone shows fading within a second; other kinds are refused, so that a
  later version's is dropped by this one rather than misread;
* ``x``, ``y``: board coordinates, floats within the board's bounds (``MAX_COORD``);
* ``visible``: false when the pointer left the board (the others hide it at once);
* ``sent_us``: the sender's wall clock, microseconds since the epoch, for the latency the
  headless member measures (on one host, or hosts whose clocks agree).

Kind 3 (VIEW) is a member's view instead, for following it:
``["wb-pointer", 1, 3, x0, y0, x1, y1, asks_follow, sent_us]``, the board rectangle its window
shows, and whether it asks everyone to follow it (:class:`SharedView`; :func:`decode_side`
reads either).

The bytes come from anyone on the group: :func:`decode_pointer` bounds the size, checks every
field and raises :class:`PointerDecodeError` and nothing else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import msgpack

from whiteboard.board.ops import MAX_COORD

MAGIC = "wb-pointer"
VERSION = 1
MAX_POINTER_BYTES = 64  # an encoding is 40 bytes at most
MAX_SENT_US = 2**63 - 1


class PointerKind(IntEnum):
    """On the wire: never renumber."""

    POINTER = 1
    LASER = 2  # a point of the laser pointer's trail: the pointer is there too
    VIEW = 3  # the board rectangle a member's window shows (SharedView)


_KINDS = {kind.value: kind for kind in PointerKind}


class PointerDecodeError(ValueError):
    """A payload that is not a pointer position; the message says why."""


@dataclass(frozen=True, slots=True)
class PointerPosition:
    x: float
    y: float
    visible: bool
    sent_us: int  # the sender's wall clock (µs since the epoch)
    kind: PointerKind = PointerKind.POINTER

    def __post_init__(self) -> None:
        if not isinstance(self.kind, PointerKind):
            raise ValueError(f"pointer kind must be a PointerKind, got {self.kind!r}")
        for name in ("x", "y"):
            value = getattr(self, name)
            if not (isinstance(value, float) and -MAX_COORD <= value <= MAX_COORD):
                raise ValueError(f"pointer {name} must be a float within +-1e7, got {value!r}")
        if not isinstance(self.visible, bool):
            raise ValueError(f"pointer visible must be a bool, got {self.visible!r}")
        if type(self.sent_us) is not int or not 0 <= self.sent_us <= MAX_SENT_US:
            raise ValueError(f"pointer sent_us must be an int in 0..2**63-1, got {self.sent_us!r}")


@dataclass(frozen=True, slots=True)
class SharedView:
    """The board rectangle a member's window shows, and whether it asks everyone to follow."""

    x0: float
    y0: float
    x1: float
    y1: float
    asks_follow: bool
    sent_us: int

    def __post_init__(self) -> None:
        for name in ("x0", "y0", "x1", "y1"):
            value = getattr(self, name)
            if not (isinstance(value, float) and -MAX_COORD <= value <= MAX_COORD):
                raise ValueError(f"view {name} must be a float within +-1e7, got {value!r}")
        if not (self.x0 < self.x1 and self.y0 < self.y1):
            raise ValueError("a view's rectangle must have x0 < x1 and y0 < y1")
        if not isinstance(self.asks_follow, bool):
            raise ValueError(f"view asks_follow must be a bool, got {self.asks_follow!r}")
        if type(self.sent_us) is not int or not 0 <= self.sent_us <= MAX_SENT_US:
            raise ValueError(f"view sent_us must be an int in 0..2**63-1, got {self.sent_us!r}")


def encode_view(view: SharedView) -> bytes:
    data: bytes = msgpack.packb(
        [MAGIC, VERSION, int(PointerKind.VIEW), view.x0, view.y0, view.x1, view.y1,
         view.asks_follow, view.sent_us]
    )  # fmt: skip
    return data


def decode_side(payload: bytes) -> PointerPosition | SharedView:
    """A pointer position or a view, as the payload's kind says; :class:`PointerDecodeError`
    and nothing else if it is neither."""
    item = _unpack(payload)
    if len(item) < 3 or item[2] != PointerKind.VIEW or type(item[2]) is not int:
        return _pointer_of(item)
    if len(item) != 9 or item[0] != MAGIC or item[1] != VERSION or type(item[1]) is not int:
        raise PointerDecodeError(
            f'a view is the array ["{MAGIC}", {VERSION}, 3, x0, y0, x1, y1, asks_follow, sent_us]'
        )
    x0, y0, x1, y1 = (float(v) if type(v) is int else v for v in item[3:7])
    try:
        return SharedView(x0, y0, x1, y1, item[7], item[8])
    except (ValueError, OverflowError) as error:
        raise PointerDecodeError(str(error)) from None


def _unpack(payload: bytes) -> tuple[Any, ...]:
    if len(payload) > MAX_POINTER_BYTES:
        raise PointerDecodeError(f"pointer of {len(payload)} bytes exceeds {MAX_POINTER_BYTES}")
    try:
        item = msgpack.unpackb(payload, raw=False, use_list=False, strict_map_key=True)
    except Exception as error:  # msgpack's zoo of error types: not a pointer, whatever it is
        raise PointerDecodeError(f"pointer is not valid msgpack: {error}") from None
    if not isinstance(item, tuple):
        raise PointerDecodeError("a pointer or a view is a msgpack array")
    return item


def encode_pointer(position: PointerPosition) -> bytes:
    data: bytes = msgpack.packb(
        [
            MAGIC,
            VERSION,
            int(position.kind),
            position.x,
            position.y,
            position.visible,
            position.sent_us,
        ]
    )
    return data


def is_pointer(payload: bytes) -> bool:
    """A cheap look at the first bytes (the magic string), nothing checked."""
    tag = bytes([0xA0 | len(MAGIC)]) + MAGIC.encode()
    return payload[:1] == b"\x97" and payload[1 : 1 + len(tag)] == tag


def decode_pointer(payload: bytes) -> PointerPosition:
    """The position in ``payload``; :class:`PointerDecodeError` and nothing else otherwise."""
    return _pointer_of(_unpack(payload))


def _pointer_of(item: tuple[Any, ...]) -> PointerPosition:
    """The position in an unpacked payload (:func:`_unpack`)."""
    if len(item) != 7 or item[0] != MAGIC:
        raise PointerDecodeError(
            f'a pointer is the array ["{MAGIC}", version, kind, x, y, visible, sent_us]'
        )
    _, version, kind, x, y, visible, sent_us = item
    if version != VERSION or type(version) is not int:
        raise PointerDecodeError(f"pointer version {version!r}; this is version {VERSION}")
    if type(kind) is not int or kind not in _KINDS or kind == PointerKind.VIEW:
        raise PointerDecodeError(f"pointer kind {kind!r} is not one this version knows")
    if type(x) is int and not isinstance(x, bool):
        x = float(x)
    if type(y) is int and not isinstance(y, bool):
        y = float(y)
    try:
        return PointerPosition(x, y, visible, sent_us, _KINDS[kind])
    except (ValueError, OverflowError) as error:
        raise PointerDecodeError(str(error)) from None


# -- the headless member's pointer (whiteboard peer --cursor-rate) --------------------------


def synthetic_position(step: int, rate: float, sent_us: int) -> PointerPosition:
    """Where a headless member's pointer is at its ``step``-th move, at ``rate`` moves a
    second: round a circle of 200 board units once every 4 seconds."""
    turn = 2.0 * math.pi * step / max(1.0, 4.0 * rate)
    return PointerPosition(400.0 + 200.0 * math.cos(turn), 300.0 + 200.0 * math.sin(turn), True,
                           sent_us)  # fmt: skip


MAX_LATENCIES = 100_000  # kept for the percentiles: a run's first ones, enough for p90


class PointerStats:
    """What a headless member heard of the others' pointers: how many from each, and how long
    each took from its sender's clock to ours (one host, or hosts whose clocks agree)."""

    def __init__(self) -> None:
        self.received: dict[int, int] = {}
        self.latencies_ms: list[float] = []
        self.rejected = 0

    def take(self, origin: int, payload: bytes, wall_us: int) -> None:
        try:
            position = decode_side(payload)
        except PointerDecodeError:
            self.rejected += 1
            return
        if isinstance(position, SharedView):
            return  # an app's view, for following it: no pointer, and nothing wrong with it
        self.received[origin] = self.received.get(origin, 0) + 1
        if len(self.latencies_ms) < MAX_LATENCIES:
            self.latencies_ms.append(max(0.0, (wall_us - position.sent_us) / 1000.0))

    def report(self) -> dict[str, object]:
        ordered = sorted(self.latencies_ms)

        def percentile(share: float) -> float | None:
            if not ordered:
                return None
            return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)

        return {
            "cursors_received": {f"{o:08x}": n for o, n in sorted(self.received.items())},
            "cursor_latency_ms": {"p50": percentile(0.5), "p90": percentile(0.9)},
            "cursors_rejected": self.rejected,
        }
