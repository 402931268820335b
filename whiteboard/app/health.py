"""Who is in the session, how their transport fares, and whether their board is ours.

Qt-free. The window feeds it the transport's member states and the presences members
multicast (whiteboard/presence.py); the members panel and the status bar read it.

Agreement. Two replicas that applied the same ops show the same board (the convergence
invariant), so a presence's board fingerprint is compared with ours, like with like:

* **At a common point.** A presence describes the sender's board now and at its last
  checkpoint (a count of ops every replica passes, ``presence.is_checkpoint``). We keep our own
  board's fingerprint at our recent checkpoints and presence ticks (``passed``), so a presence
  that describes a point our board was at (same count, same greatest order key) is compared
  with our board *then*, not with the board we have now: ops in flight since never look like a
  disagreement. Equal hashes there: the boards agree (up to that point). Under a total order
  (MTP) every replica passes every count with the same ops; where late ops are inserted in
  their place (RMP, RR-2100 §3), two replicas may reach a count with different sets of ops,
  whose (count, greatest key) then seldom coincide and, if they do, whose hashes differ: a
  checkpoint therefore only ever proves agreement, never a difference.
* **At rest, confirmed by the member.** A difference with the board we have now (counts, or
  hashes at equal counts) is believed only when the member says it again: the same pair of
  fingerprints (theirs, ours), unequal, in a later presence of theirs received ``settle``
  seconds or more after the first look, neither board having moved in between, and neither
  side still repairing (the NACKs each has sent unchanged: a member waiting for a lost packet
  asks again and again, RR-2100 §2.3, until it is repaired or given up). A session at rest
  converges, so such a difference is a replica that lost or gained something for good (an op
  never repaired, say); it is reported and the window offers a resync. A member that died
  sends no later presence: its last words, about a board that was still receiving, are never
  taken for a disagreement.
* **Only members heard from.** A member whose transport state is *suspected* or *left*, or
  whose last presence is older than ``stale_after`` seconds, is not compared (NOT_COMPARED).

Any later change of either fingerprint withdraws a DIFFERS verdict until the next comparison.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from whiteboard.board import OrderKey
from whiteboard.presence import BoardFingerprint, NameCard, Presence
from whiteboard.transport.interface import MemberState

MAX_MEMBERS = 4096  # rows kept; past it, new members are counted but not listed
# Our own board's fingerprints kept for comparisons at a common point: at our presence ticks
# (every couple of seconds while it changes), and at checkpoints (sparser: kept apart, so that
# ticks never push out the checkpoint a presence still names).
PASSED_POINTS = 64
PASSED_CHECKPOINTS = 16

_Point = tuple[int, OrderKey | None]  # (ops applied, greatest order key): a board's position
_Ours = tuple[int, object, str]  # our (ops, last key, hash or "" if not hashed)
# A difference awaiting confirmation: their board and NACKs sent, ours and ours.
_Suspect = tuple[BoardFingerprint, int, _Ours, int]


class Agreement(StrEnum):
    UNKNOWN = "unknown"  # not compared yet (ops in flight, or no presence)
    AGREES = "agrees"
    DIFFERS = "differs"
    NOT_COMPARED = "not compared"  # not heard from lately, or gone: its word is stale


@dataclass(frozen=True, slots=True)
class MemberRow:
    member: int
    name: str
    colour: int | None
    state: MemberState
    nacks_sent: int
    retransmissions: int
    late_delivered: int
    agreement: Agreement
    me: bool = False


@dataclass
class _Member:
    state: MemberState
    presence: Presence | None = None
    heard_at: float = 0.0  # when its last presence came
    presences: int = 0  # presences received from it
    agreement: Agreement = Agreement.UNKNOWN
    agreed_now: bool = False  # the agreement is about our board as it is now
    # The (theirs, ours) fingerprints of a comparison that found a difference, when it was
    # first seen and how many presences we had then: awaiting the member's confirmation.
    suspect: _Suspect | None = None
    suspect_since: float = 0.0
    suspect_presences: int = 0


class SessionHealth:
    def __init__(
        self,
        me: int,
        board: Callable[[], BoardFingerprint],
        settle: float = 5.0,
        stale_after: float = 30.0,
        repairs: Callable[[], int] = lambda: 0,
    ) -> None:
        """``board`` gives our own board's fingerprint; it is called only when the counts
        match (hashing a large board costs milliseconds). ``settle``: seconds a difference
        must last, both boards unchanged, to be believed. ``stale_after``: seconds after which
        a member's last presence no longer speaks for it (a few presence intervals).
        ``repairs``: the NACKs our transport has sent so far (still rising: still repairing)."""
        self.me = me
        self._board = board
        self._repairs = repairs
        self.settle = settle
        self.stale_after = stale_after
        self._members: dict[int, _Member] = {}
        self._passed: OrderedDict[_Point, str] = OrderedDict()
        self._checkpoints: OrderedDict[_Point, str] = OrderedDict()
        self.disagreements = 0  # differences confirmed, ever
        # Name cards from joins (the newest MAX_MEMBERS): a member's name and colour until its
        # first presence, and for good if it never sends one (a viewer).
        self._cards: OrderedDict[int, NameCard] = OrderedDict()

    # -- feeding ----------------------------------------------------------------------------

    def member_changed(self, member: int, state: MemberState) -> None:
        entry = self._members.get(member)
        if entry is None:
            if len(self._members) >= MAX_MEMBERS:
                return
            self._members[member] = _Member(state)
        else:
            entry.state = state
            if not self._heard_from(entry, entry.heard_at):
                self._stop_comparing(entry)

    def introduced(self, member: int, card: NameCard) -> None:
        """``member``'s join carried ``card``: kept, whether or not it is listed yet."""
        self._cards[member] = card
        self._cards.move_to_end(member)
        while len(self._cards) > MAX_MEMBERS:
            self._cards.popitem(last=False)

    def passed(self, fingerprint: BoardFingerprint, checkpoint: bool = False) -> None:
        """Our board was at ``fingerprint`` (when we told the others, or at a ``checkpoint``):
        kept, the most recent ``PASSED_POINTS`` (``PASSED_CHECKPOINTS``), to compare a
        presence about that point with."""
        kept, bound = (
            (self._checkpoints, PASSED_CHECKPOINTS) if checkpoint else (self._passed, PASSED_POINTS)
        )
        point = (fingerprint.ops, fingerprint.last_key)
        kept[point] = fingerprint.board_hash
        kept.move_to_end(point)
        while len(kept) > bound:
            kept.popitem(last=False)

    def forget_passed(self) -> None:
        """Our board was replaced (a board state, a resync): its past points are not ours."""
        self._passed.clear()
        self._checkpoints.clear()

    def presence(
        self, member: int, presence: Presence, counts: tuple[int, object], now: float
    ) -> None:
        """A presence from ``member``; ``counts`` is our board's (ops, last key) now."""
        entry = self._members.get(member)
        if entry is None:
            if len(self._members) >= MAX_MEMBERS:
                return
            # Heard before the transport reported it (RMP reports on first packet anyway).
            entry = self._members[member] = _Member(MemberState.ACTIVE)
        entry.presence = presence
        entry.heard_at = now
        entry.presences += 1
        if member != self.me:
            self._compare(entry, counts, now)

    def check(self, counts: tuple[int, object], now: float) -> None:
        """Compare again with every member's last presence (call it every few seconds: a
        board that caught up since may now be comparable, a member may have gone quiet)."""
        for member, entry in self._members.items():
            if member != self.me and entry.presence is not None:
                self._compare(entry, counts, now)

    def board_moved(self) -> None:
        """Our board changed: an agreement found with it as it was no longer holds (one found
        at a common point still does: that point stays in both boards' past)."""
        for entry in self._members.values():
            if entry.agreement is Agreement.AGREES and entry.agreed_now:
                entry.agreement = Agreement.UNKNOWN

    def reset_agreement(self) -> None:
        """After a resync our board is new: what we concluded about it no longer holds."""
        self.forget_passed()
        for entry in self._members.values():
            entry.agreement = Agreement.UNKNOWN
            entry.suspect = None

    def out_of_reach(self, ended: bool) -> None:
        """We are out of the session: reconnecting (nobody heard as a member: each other one
        not heard from) or ``ended`` (everyone, us too, left)."""
        others = MemberState.LEFT if ended else MemberState.SUSPECTED
        for member, entry in self._members.items():
            if member == self.me:
                if ended:
                    entry.state = MemberState.LEFT
            elif entry.state is not MemberState.LEFT:
                self.member_changed(member, others)

    def _heard_from(self, entry: _Member, now: float) -> bool:
        if entry.state in (MemberState.SUSPECTED, MemberState.LEFT):
            return False
        return entry.presence is None or now - entry.heard_at <= self.stale_after

    def _stop_comparing(self, entry: _Member) -> None:
        entry.agreement = Agreement.NOT_COMPARED
        entry.agreed_now = False
        entry.suspect = None

    def _compare(self, entry: _Member, counts: tuple[int, object], now: float) -> None:
        assert entry.presence is not None
        if not self._heard_from(entry, now):
            self._stop_comparing(entry)
            return
        theirs = entry.presence.board
        ours: _Ours = (counts[0], counts[1], "")
        if (theirs.ops, theirs.last_key) == counts:
            fingerprint = self._board()
            if fingerprint.board_hash == theirs.board_hash:
                entry.agreement, entry.agreed_now = Agreement.AGREES, True
                entry.suspect = None
                return
            ours = (counts[0], counts[1], fingerprint.board_hash)
        suspect = (theirs, entry.presence.nacks_sent, ours, self._repairs())
        if self._difference_confirmed(entry, suspect, now):
            return
        entry.agreed_now = False
        at_common_point = self._agrees_at_a_common_point(entry.presence)
        entry.agreement = Agreement.AGREES if at_common_point else Agreement.UNKNOWN

    def _difference_confirmed(self, entry: _Member, suspect: _Suspect, now: float) -> bool:
        """Whether the difference ``suspect`` is now believed (see the module docstring)."""
        if entry.suspect != suspect:
            # A new difference (or the first look): remember it, conclude nothing yet.
            entry.suspect, entry.suspect_since = suspect, now
            entry.suspect_presences = entry.presences
            return False
        if entry.agreement is Agreement.DIFFERS:
            return True
        said_again = entry.presences > entry.suspect_presences
        if not said_again or now - entry.suspect_since < self.settle:
            return False
        self.disagreements += 1
        entry.agreement, entry.agreed_now = Agreement.DIFFERS, False
        return True

    def _agrees_at_a_common_point(self, presence: Presence) -> bool:
        for fingerprint in (presence.board, presence.checkpoint):
            if fingerprint is None:
                continue
            point = (fingerprint.ops, fingerprint.last_key)
            ours = self._checkpoints.get(point) or self._passed.get(point)
            if ours is not None and ours == fingerprint.board_hash:
                return True
        return False

    # -- reading ----------------------------------------------------------------------------

    def __contains__(self, member: object) -> bool:
        return member in self._members

    def rows(self, own: Presence | None = None) -> list[MemberRow]:
        """Members present first, by name, then those who left; ours first of all."""
        rows = []
        for member, entry in self._members.items():
            presence = own if member == self.me and own is not None else entry.presence
            card = presence or self._cards.get(member)  # a presence, or else its join's card
            rows.append(
                MemberRow(
                    member,
                    card.name if card else f"member {member:08x}",
                    card.colour if card else None,
                    entry.state,
                    presence.nacks_sent if presence else 0,
                    presence.retransmissions if presence else 0,
                    presence.late_delivered if presence else 0,
                    entry.agreement,
                    member == self.me,
                )
            )
        rows.sort(key=lambda r: (not r.me, r.state is MemberState.LEFT, r.name.lower(), r.member))
        return rows

    def present(self) -> int:
        return sum(1 for e in self._members.values() if e.state is not MemberState.LEFT)

    def suspected(self) -> int:
        return sum(1 for e in self._members.values() if e.state is MemberState.SUSPECTED)

    def differing(self) -> list[int]:
        return [m for m, e in self._members.items() if e.agreement is Agreement.DIFFERS]

    def agreement_text(self) -> tuple[str, str]:
        """What the status bar says of agreement, and its tooltip."""
        differing = self.differing()
        if differing:
            names = ", ".join(self.name_of(m) for m in differing[:3])
            text = f"⚠ board differs from {names}"
            return text, f"{text}\nSession ▸ Resync board takes the others' board"
        if self.agreeing():
            tip = "Compared with each member's board at the last point both boards passed"
            return "✓ boards agree", tip
        return "", ""

    def agreeing(self) -> list[int]:
        return [m for m, e in self._members.items() if e.agreement is Agreement.AGREES]

    def colour_of(self, member: int) -> int | None:
        """The colour ``member`` draws in, as its presence or its join's card says; None
        if neither came yet."""
        entry = self._members.get(member)
        if entry is not None and entry.presence is not None:
            return entry.presence.colour
        card = self._cards.get(member)
        return card.colour if card is not None else None

    def name_of(self, member: int) -> str:
        entry = self._members.get(member)
        if entry is not None and entry.presence is not None:
            return entry.presence.name
        card = self._cards.get(member)
        return card.name if card is not None else f"member {member:08x}"


__all__ = ["Agreement", "MemberRow", "SessionHealth"]
