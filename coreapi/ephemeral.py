"""The side channel every core offers beside its reliable delivery (issue 19): for what is
worth sending only while it is fresh, such as where a member's pointer is.

Best effort, unordered, latest wins, never repaired, never part of the board or its hash, one
datagram at most. Each core frames a payload in its own wire format (raw: an EPHEMERAL packet;
RMP: a packet of RTP format 62; MTP: a datagram of version 0x81; docs/rmp-wire.md and
docs/mtp-wire.md), chosen so that another implementation of the protocol drops it as some
other traffic; none of them gives it a sequence number of the reliable stream, asks for it
again or holds a token for it. The two parts here keep the channel's rules alike for all:

* :class:`EphemeralSender` paces a member's payloads (a token bucket): one offered when the
  bucket is empty waits in place of any earlier one still waiting, and leaves when a token
  comes. The last position of a pointer is never lost to the limit, only the ones between.
* :class:`EphemeralReceiver` takes, per origin, only what is newer than what it last took
  (numbers modulo 2**16), at a bounded rate per origin and for all origins together: what a
  stranger or a runaway member can make us hand up is bounded, as is the memory it costs.

Neither touches a clock: ``now`` comes in, as everywhere in the cores.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_EPHEMERAL = 512  # bytes of one payload: a pointer, a laser point or a view, with room
SEND_RATE = 60.0  # payloads a second a member sends: a pointer at 30 a second, and as much again
SEND_BURST = 8.0
# What a receiver takes from one origin: twice what a member of ours sends, so that nothing
# a member of ours sends is refused, and no more than that from one that sends more.
RECEIVE_RATE = 2 * SEND_RATE
RECEIVE_BURST = 2 * SEND_BURST
# And from every origin together (however many a forger makes up): 30 pointers a second from
# each of 60 members, and some.
TOTAL_RECEIVE_RATE = 2_000.0
TOTAL_RECEIVE_BURST = 200.0
# After this long without a payload from an origin, its next one is taken whatever its
# number: the origin restarted (its numbers began again) or fell silent a while.
FRESH_START_S = 2.0
MAX_ORIGINS = 1024  # origins remembered; the least recently heard is forgotten first
SEQ_MODULUS = 1 << 16
_HALF = SEQ_MODULUS // 2
_ROUNDING = 1e-9  # of a token

EPHEMERAL_COUNTERS = (
    "ephemeral_sent",  # datagrams of the side channel this member sent
    "ephemeral_superseded",  # payloads replaced by a newer one before they could leave
    "ephemeral_received",  # payloads handed up
    "ephemeral_dropped",  # refused: stale, beyond the rate, from no member, or malformed
)


class _Bucket:
    """``rate`` tokens a second, at most ``burst`` held; starts full."""

    __slots__ = ("burst", "rate", "tokens", "updated")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.updated = burst, now

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now

    def take(self, now: float) -> bool:
        self.refill(now)
        # Within rounding of a whole token counts as one: at the time when_one() gave, the
        # refill may come a hair short, and a timer set for that time must find it due.
        if self.tokens >= 1.0 - _ROUNDING:
            self.tokens = max(0.0, self.tokens - 1.0)
            return True
        return False

    def when_one(self) -> float:
        """When the bucket holds a whole token again (now, if it does)."""
        return self.updated + max(0.0, 1.0 - self.tokens) / self.rate


@dataclass(frozen=True, slots=True)
class EphemeralOut:
    """A payload to put on the wire now, with its number (modulo 2**16)."""

    seq: int
    payload: bytes


class EphemeralSender:
    """One member's side of the channel: numbers its payloads and keeps to its rate."""

    def __init__(self, rate: float = SEND_RATE, burst: float = SEND_BURST) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("an ephemeral sender needs a positive rate and a burst of 1 or more")
        self._rate, self._burst = rate, burst
        self._bucket: _Bucket | None = None
        self._held: bytes | None = None
        self._seq = 0
        self.sent = 0
        self.superseded = 0

    @staticmethod
    def check(payload: bytes) -> None:
        """``ValueError`` unless ``payload`` fits the channel: the caller's mistake."""
        if len(payload) > MAX_EPHEMERAL:
            raise ValueError(
                f"an ephemeral payload of {len(payload)} bytes exceeds the maximum of "
                f"{MAX_EPHEMERAL}"
            )

    def offer(self, payload: bytes, now: float) -> EphemeralOut | None:
        """``payload`` to send now, or None: it waits for a token, in place of any payload
        that was waiting (which is counted as superseded and never sent)."""
        self.check(payload)
        if self._held is not None:
            self.superseded += 1
        self._held = bytes(payload)
        return self.due(now)

    def due(self, now: float) -> EphemeralOut | None:
        """The waiting payload, if a token has come for it."""
        if self._held is None:
            return None
        if self._bucket is None:
            self._bucket = _Bucket(self._rate, self._burst, now)
        if not self._bucket.take(now):
            return None
        payload, self._held = self._held, None
        self._seq = (self._seq + 1) % SEQ_MODULUS
        self.sent += 1
        return EphemeralOut(self._seq, payload)

    def deadline(self) -> float | None:
        """When the waiting payload may leave; None if none waits."""
        if self._held is None or self._bucket is None:
            return None
        return self._bucket.when_one()

    def drop_held(self) -> None:
        """Leaving: what waits is not worth sending any more."""
        if self._held is not None:
            self.superseded += 1
            self._held = None


class _Origin:
    __slots__ = ("bucket", "heard_at", "seq")

    def __init__(self, seq: int, now: float) -> None:
        self.seq = seq
        self.heard_at = now
        self.bucket = _Bucket(RECEIVE_RATE, RECEIVE_BURST, now)


class EphemeralReceiver:
    """The receiving side: latest wins per origin, at a bounded rate, in bounded memory."""

    def __init__(self, max_origins: int = MAX_ORIGINS) -> None:
        self._origins: dict[int, _Origin] = {}  # least recently heard first
        self._max_origins = max_origins
        self._total: _Bucket | None = None
        self.received = 0
        self.dropped = 0

    def accept(self, origin: int, seq: int, now: float) -> bool:
        """Whether to hand up payload ``seq`` (modulo 2**16) from ``origin``: newer than the
        last one taken from it (or the first after FRESH_START_S of silence), within its
        rate and all origins' together. Counted either way."""
        seq %= SEQ_MODULUS
        if self._total is None:
            self._total = _Bucket(TOTAL_RECEIVE_RATE, TOTAL_RECEIVE_BURST, now)
        if not self._total.take(now):
            self.dropped += 1
            return False
        known = self._origins.pop(origin, None)
        if known is None:
            if len(self._origins) >= self._max_origins:
                del self._origins[next(iter(self._origins))]
            known = _Origin((seq - 1) % SEQ_MODULUS, now)
        self._origins[origin] = known  # the most recently heard, last
        fresh = now - known.heard_at >= FRESH_START_S
        newer = 0 < (seq - known.seq) % SEQ_MODULUS < _HALF
        if not (newer or fresh) or not known.bucket.take(now):
            self.dropped += 1
            return False
        known.seq, known.heard_at = seq, now
        self.received += 1
        return True

    def refuse(self) -> None:
        """A payload refused before :meth:`accept` (malformed, from no member): counted."""
        self.dropped += 1

    def forget(self, origin: int) -> None:
        """``origin`` left: its next payload, if it comes back, starts afresh."""
        self._origins.pop(origin, None)


def ephemeral_counters(sender: EphemeralSender, receiver: EphemeralReceiver) -> dict[str, int]:
    """The side channel's counters, named as :data:`EPHEMERAL_COUNTERS` says."""
    values = (sender.sent, sender.superseded, receiver.received, receiver.dropped)
    return dict(zip(EPHEMERAL_COUNTERS, values, strict=True))
