"""The records the MTP core keeps per message: the acceptance book (RFC 1301 §2.2.6), a
message being received and reassembled (§3.2.4), and a message of ours being sent (§3.2.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mtp.bounds import MAX_PACKETS_PER_MESSAGE as MAX_PACKETS_PER_MESSAGE  # re-exported
from mtp.wire import STATUS_COUNT, MessageStatus

MAX_NAK_ENTRIES_OUT = 300  # 28 + 4 x 300 bytes: a nak fits one Ethernet-sized datagram
MAX_TAIL_REQUEST = 64  # packets named past the highest seen when the end of a message is lost


class StatusBook:
    """The statuses of messages, by unbounded number. Only decided statuses are kept: a status
    once accepted or rejected never changes (§2.2.6), so learning is monotonic. Numbers below
    zero name no message (the master starts at zero, §2.2.6) and read as rejected."""

    def __init__(self) -> None:
        self._decided: dict[int, MessageStatus] = {}
        self.conflicts = 0

    def status(self, number: int) -> MessageStatus | None:
        if number < 0:
            return MessageStatus.REJECTED
        return self._decided.get(number)

    def decided(self, number: int) -> bool:
        return self.status(number) is not None

    def decide(self, number: int, status: MessageStatus) -> bool:
        """Record a decision; False (and counted) if it contradicts an earlier one."""
        if status is MessageStatus.PENDING:
            return True
        known = self.status(number)
        if known is None:
            self._decided[number] = status
            return True
        if known is not status:
            self.conflicts += 1
            return False
        return True

    def vector(self, number: int) -> tuple[MessageStatus, ...]:
        """The 12 statuses of ``number - 1`` ... ``number - 12``, pending where undecided."""
        # (not ``status or PENDING``: ACCEPTED is 0, and false)
        statuses = (self.status(number - i) for i in range(1, STATUS_COUNT + 1))
        return tuple(MessageStatus.PENDING if s is None else s for s in statuses)

    def learn(self, number: int, statuses: tuple[MessageStatus, ...]) -> list[int]:
        """Take the decided statuses of a record whose message number is ``number``; returns
        the numbers newly decided."""
        # Every member takes every packet's twelve (issue 18: a hot path), so ``status`` and
        # ``decide`` are inlined: the same reads, the same writes and counts.
        learned = []
        decided = self._decided
        pending, rejected = MessageStatus.PENDING, MessageStatus.REJECTED
        for status in statuses:
            number -= 1
            if status is pending:
                continue
            known = decided.get(number) if number >= 0 else rejected
            if known is None:
                decided[number] = status
                learned.append(number)
            elif known is not status:
                self.conflicts += 1  # contradicts an earlier decision
        return learned

    def forget_below(self, number: int) -> None:
        if len(self._decided) > 4 * STATUS_COUNT:
            for key in [k for k in self._decided if k < number - 2 * STATUS_COUNT]:
                del self._decided[key]

    def shift(self, delta: int) -> None:
        """Renumber every entry by ``delta`` (a joiner adopting the master's numbering)."""
        self._decided = {number + delta: status for number, status in self._decided.items()}

    def __len__(self) -> int:
        return len(self._decided)


@dataclass
class InMessage:
    """A message as a receiver sees it arrive: its packets, its producer, its end."""

    number: int
    heard_at: float
    source: int | None = None
    subchannel: int | None = None
    packets: dict[int, bytes] = field(default_factory=dict)
    last: int | None = None  # the data[eom] packet's number, once seen
    advertised: int = -1  # the highest packet number known to exist (data, or empty's (m, k))
    window_end: int = -1  # the highest packet number seen with data[eow]
    size: int = 0
    # recovery (§3.2.4, §3.2.5)
    nak_at: float | None = None
    nak_tries: int = 0
    master_tries: int = 0
    master_asked_at: float | None = None  # when our last nak went to the master
    denied: bool = False
    asked_high: int = -1  # the highest packet number a nak of ours has named (naks ascend)

    @property
    def complete(self) -> bool:
        return self.last is not None and len(self.packets) == self.last + 1

    def body(self) -> bytes:
        assert self.last is not None
        return b"".join(self.packets[i] for i in range(self.last + 1))

    def known_to_exist(self, packets: list[int]) -> bool:
        """Whether any of ``packets`` is at or below the highest packet known to exist (not
        a guess at a lost tail, ``missing(tail=True)``)."""
        top = self.advertised if self.last is None else self.last
        return min(packets, default=top + 1) <= top

    def missing(self, tail: bool) -> list[int]:
        """The packet numbers to ask for: holes below the highest packet known to exist and,
        with ``tail`` and no end seen, the next few after it."""
        top = self.advertised if self.last is None else self.last
        wanted = [i for i in range(top + 1) if i not in self.packets]
        if tail and self.last is None:
            start = top + 1
            stop = min(start + MAX_TAIL_REQUEST, MAX_PACKETS_PER_MESSAGE)
            wanted.extend(range(start, stop))
        return wanted


@dataclass
class OutMessage:
    """A message of ours: granted, being sent, then kept to answer naks (§3.2.2: "for at least
    retention heartbeat intervals after their first transmission")."""

    number: int
    subchannel: int
    packets: list[bytes]
    records: list[tuple[float, bytes]]  # the payloads it carries, re-sent if it is rejected
    next_packet: int = 0  # the next packet to send for the first time
    dallies: int = 0  # empty[dally] packets appended after a short message (§3.2.3)
    finished_at: float | None = None  # when data[eom] went out
    decided_at: float | None = None

    @property
    def last(self) -> int:
        return len(self.packets) - 1

    @property
    def all_sent(self) -> bool:
        return self.next_packet > self.last
