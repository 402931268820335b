"""mtp/web.py alone: one membership's view of the web, replaced whole by a rejoin."""

from __future__ import annotations

from mtp.master import Member
from mtp.web import Web
from mtp.wire import MemberClass, MessageStatus, PacketId


def test_a_new_web_is_unknown_and_empty() -> None:
    web = Web()
    assert not web.known and web.id == 0 and web.master_addr is None
    assert (web.next, web.next_deliver, web.join_number) == (0, 0, 0)
    assert len(web.book) == 0 and not web.members and not web.held_naks and not web.asked
    assert Web(0x7E57, 0x0A).known


def test_two_webs_share_nothing() -> None:
    """A rejoin builds a new Web: nothing the old one held may leak into it."""
    old = Web(0x7E57, 0x0A)
    old.members[1] = Member(1, ("10.0.0.1", 7000), MemberClass.PRODUCER, 0.0, 0, 0.0)
    old.held_naks[2] = [PacketId(0, 0)]
    old.asked[2] = (1, 0.0)
    old.book.decide(0, MessageStatus.ACCEPTED)
    new = Web()
    assert not new.members and not new.held_naks and not new.asked
    assert new.book is not old.book and new.book.status(0) is None


def test_wire_numbers_unwrap_near_the_next_message() -> None:
    """§2.2.6: 16-bit message numbers, read as the unbounded number nearest ``next``."""
    web = Web(next=70_000)
    assert web.number(70_000 % 65_536) == 70_000
    assert web.number((70_000 - 5) % 65_536) == 69_995
    assert web.number((70_000 + 12) % 65_536) == 70_012
    assert Web(next=3).number(65_535) == -1  # just below zero, not 65,535 ahead


def test_rebase_moves_the_numbering_and_the_statuses_together() -> None:
    """TR §3.4: a joiner adopts the master's unbounded numbering from the board message."""
    web = Web(next=10, next_deliver=8, join_number=7)
    web.book.decide(6, MessageStatus.ACCEPTED)
    web.book.decide(7, MessageStatus.REJECTED)
    web.rebase(100)
    assert (web.next, web.next_deliver, web.join_number) == (110, 108, 107)
    assert web.book.status(106) is MessageStatus.ACCEPTED
    assert web.book.status(107) is MessageStatus.REJECTED
    assert web.book.status(6) is None
