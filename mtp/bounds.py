"""Large messages (our extension, issue 20): how big one MTP message may be, and the bounds
that keep what a member holds for others finite however large their messages are.

RFC 1301 §3.2.2 lets a message span any number of data packets (the last one data[eom]); its
packet sequence number is 16 bits (§2.2.6), so a message is at most 65,536 packets. A payload
of up to ``MAX_MESSAGE`` bytes travels as one message; the bounds below say what a receiver
holds for it (per message, per producer, in total), what a sender queues, and what the master
keeps to repair others. docs/mtp.md, "Large messages", sums them up.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

# The largest payload ``send`` accepts (coreapi's ``max_message``): an image of a few MiB.
MAX_MESSAGE = 4 << 20
# A payload message's client bytes (mtp/framing.py): its payload records (12 bytes of framing
# each) and, on the named subchannel, 4 bytes of identity. One payload of MAX_MESSAGE bytes
# is at most this; a batch of small ones is cut to it too (Sender.begin_message).
MESSAGE_FRAMING = 12 + 4
MAX_MESSAGE_BYTES = MAX_MESSAGE + MESSAGE_FRAMING
# §2.2.6: the packet sequence number is 16 bits: packets 0 .. 65,535 of a message.
MAX_PACKETS_PER_MESSAGE = 1 << 16
# The smallest data unit (§3.1.1, ``max_data_unit``) a member runs or joins a web at: one
# MAX_MESSAGE payload must fit in MAX_PACKETS_PER_MESSAGE packets (32,769 at 128 bytes; at the
# RFC's allowed 64 it would take 65,537, one more than the 16-bit number can name).
MIN_DATA_UNIT = 128
# The board given to a joiner (TR 90-1141 §3.4) is one message on subchannel 1, packed: at most
# this many bytes (and MAX_PACKETS_PER_MESSAGE packets: 64 MiB needs a unit of 1,024 bytes or
# more; 8 MiB fit at 128). Only the joiner it is for keeps it, apart from the bounds below.
MAX_BOARD_MESSAGE = 64 << 20
# A receiver keeps the packets of messages not yet delivered: at most this many bytes of one
# producer's messages (two whole large ones), and of all producers together. The message that
# delivery waits for is always kept (within its own bound), so that the bounds never stall
# delivery: what they refuse is dropped, counted (``oversize_dropped``) and asked for again
# once delivery has moved on (§3.2.4).
MAX_SOURCE_BYTES = 2 * MAX_MESSAGE_BYTES
MAX_INCOMING_BYTES = 64 << 20
# A sender's queue of payloads not yet in a message: at most this many bytes (and
# MAX_PENDING_SENDS payloads, mtp/core.py).
MAX_QUEUED_BYTES = 64 << 20
# The master's repair cache (an extension, mtp/master_role.py): at most this many bytes of
# accepted messages, besides ``repair_cache`` messages.
MAX_REPAIR_BYTES = 64 << 20


def message_limit(unit: int) -> int:
    """The largest payload ``send`` takes at data unit ``unit``: MAX_MESSAGE, unless a web of
    another implementation runs a unit below MIN_DATA_UNIT (then what 65,536 packets hold)."""
    return min(MAX_MESSAGE, MAX_PACKETS_PER_MESSAGE * unit - MESSAGE_FRAMING)


def batch_limit(window: int, unit: int) -> int:
    """How many bytes of payload records one message of ours packs (Sender.begin_message): four
    windows' worth of packets (ours: a batch goes out within a few heartbeats, §3.2.2), never
    beyond a large message's bound. A single payload larger than that goes alone."""
    return min(MAX_MESSAGE_BYTES - 4, max(unit, window * unit * 4))


class PayloadQueue:
    """The payloads queued to send, (timestamp, payload) in order, and their bytes."""

    def __init__(self) -> None:
        self._items: deque[tuple[float, bytes]] = deque()
        self.bytes = 0

    def append(self, item: tuple[float, bytes]) -> None:
        self._items.append(item)
        self.bytes += len(item[1])

    def extendleft(self, items: Iterable[tuple[float, bytes]]) -> None:
        for item in items:
            self._items.appendleft(item)
            self.bytes += len(item[1])

    def popleft(self) -> tuple[float, bytes]:
        item = self._items.popleft()
        self.bytes -= len(item[1])
        return item

    def __getitem__(self, index: int) -> tuple[float, bytes]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[tuple[float, bytes]]:
        return iter(self._items)


def check_send(size: int, unit: int, queued: int, queued_bytes: int, max_pending: int) -> None:
    """Raise what ``send`` raises for a payload of ``size`` bytes: ValueError if it is larger
    than one message carries, RuntimeError if the queue is full (in payloads or bytes)."""
    limit = message_limit(unit)
    if size > limit:
        raise ValueError(
            f"payload of {size} bytes exceeds the mtp transport's max_message of {limit} bytes "
            f"(one message of at most {MAX_PACKETS_PER_MESSAGE} packets)"
        )
    if queued >= max_pending:
        raise RuntimeError(
            f"the mtp transport's send queue is full ({queued} payloads waiting for a token)"
        )
    if queued_bytes + size > MAX_QUEUED_BYTES:
        raise RuntimeError(
            f"the mtp transport's send queue is full: {queued_bytes} bytes wait for a token "
            f"and {size} more would pass its bound of {MAX_QUEUED_BYTES} bytes"
        )


class Holdings:
    """The bytes a receiver holds of messages not yet delivered, per producer and in total."""

    def __init__(self) -> None:
        self.total = 0
        self._by_source: dict[int, int] = {}

    def of(self, source: int | None) -> int:
        return self._by_source.get(source, 0) if source is not None else 0

    def admits(self, source: int | None, size: int) -> bool:
        """Whether ``size`` more bytes of ``source``'s may be kept."""
        return (
            self.total + size <= MAX_INCOMING_BYTES and self.of(source) + size <= MAX_SOURCE_BYTES
        )

    def add(self, source: int | None, size: int) -> None:
        self.total += size
        if source is not None:
            self._by_source[source] = self._by_source.get(source, 0) + size

    def remove(self, source: int | None, size: int) -> None:
        self.total -= size
        if source is None:
            return
        left = self._by_source.get(source, 0) - size
        if left > 0:
            self._by_source[source] = left
        else:
            self._by_source.pop(source, None)
