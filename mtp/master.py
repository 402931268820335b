"""The master's books (RFC 1301 §3.1, §3.2.1): the members of the web, the transmit tokens it
has granted and not yet seen decided, and the FIFO queue of token requests."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from mtp.wire import MemberClass

MAX_MEMBERS = 1024  # beyond this the master denies joins: its tables stay bounded


@dataclass
class Member:
    ident: int
    address: tuple[str, int]
    member_class: MemberClass
    joined_at: float  # when we confirmed its join
    join_number: int  # the message number its join[confirm] carried
    last_heard: float
    last_grant: int = -1  # the last message we granted it a token for


@dataclass
class Grant:
    """A transmit token out of the master's hands: message ``number``, owned by ``owner``.
    Pending until the master accepts or rejects the message (§3.2.1: idle / pending / busy;
    ``busy`` once data from the owner for it has been seen)."""

    number: int
    owner: int
    granted_at: float
    heard_at: float  # the last packet of this message from its owner (or the grant)
    busy: bool = False
    confirms: int = 1  # token[confirm]s sent
    checks: int = 0  # isMember[request]s sent since the owner was last heard (§3.2.1)
    revivals: int = 0  # times the owner answered a check but then stayed silent again


class TokenQueue:
    """Token requests in arrival order, each member at most once (§3.2.1: duplicate requests,
    retried every heartbeat, are suppressed)."""

    def __init__(self) -> None:
        self._queue: deque[int] = deque()

    def add(self, member: int) -> bool:
        if member in self._queue:
            return False
        self._queue.append(member)
        return True

    def pop(self) -> int:
        return self._queue.popleft()

    def discard(self, member: int) -> None:
        if member in self._queue:
            self._queue.remove(member)

    def clear(self) -> None:
        self._queue.clear()

    def __iter__(self) -> Iterator[int]:
        return iter(self._queue)

    def __contains__(self, member: object) -> bool:
        return member in self._queue

    def __len__(self) -> int:
        return len(self._queue)

    def __bool__(self) -> bool:
        return bool(self._queue)
