"""Who is in the session, how their transport fares, and whether their board is ours.

Qt-free. The window feeds it the transport's member states and the presences members
multicast (whiteboard/presence.py); the members panel and the status bar read it.

Agreement. Two replicas that applied the same ops show the same board (the convergence
invariant), so a presence's board fingerprint is compared with ours. When both say the same
ops were applied (same count, same greatest order key) the hashes must match: equal, the
boards agree. Anything else may be ops still in flight, so a difference is believed only
when it lasts: the same pair of fingerprints (theirs, ours), unequal, seen again ``settle``
seconds later, with neither board having moved in between. A session at rest converges, so
a difference that outlasts the rest is a replica that lost or gained something for good (an
op never repaired, say); it is reported, and the window offers a resync. Any later change of
either fingerprint withdraws the verdict until the next comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from whiteboard.presence import BoardFingerprint, Presence
from whiteboard.transport.interface import MemberState

MAX_MEMBERS = 4096  # rows kept; past it, new members are counted but not listed


class Agreement(StrEnum):
    UNKNOWN = "unknown"  # not compared yet (ops in flight, or no presence)
    AGREES = "agrees"
    DIFFERS = "differs"


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
    agreement: Agreement = Agreement.UNKNOWN
    # The (theirs, ours) fingerprints of a comparison that found a difference, and when it
    # was first seen: awaiting a second look (see the module docstring).
    suspect: tuple[BoardFingerprint, tuple[int, object, str]] | None = None
    suspect_since: float = 0.0


class SessionHealth:
    def __init__(self, me: int, board: Callable[[], BoardFingerprint], settle: float = 5.0) -> None:
        """``board`` gives our own board's fingerprint; it is called only when the counts
        match (hashing a large board costs milliseconds). ``settle``: seconds a difference
        must last, both boards unchanged, to be believed."""
        self.me = me
        self._board = board
        self.settle = settle
        self._members: dict[int, _Member] = {}
        self.disagreements = 0  # differences confirmed, ever

    # -- feeding ----------------------------------------------------------------------------

    def member_changed(self, member: int, state: MemberState) -> None:
        entry = self._members.get(member)
        if entry is None:
            if len(self._members) >= MAX_MEMBERS:
                return
            self._members[member] = _Member(state)
        else:
            entry.state = state

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
        if member != self.me:
            self._compare(entry, counts, now)

    def check(self, counts: tuple[int, object], now: float) -> None:
        """Compare again with every member's last presence (call it every few seconds: a
        board that caught up since may now be comparable)."""
        for member, entry in self._members.items():
            if member != self.me and entry.presence is not None:
                self._compare(entry, counts, now)

    def board_moved(self) -> None:
        """Our board changed: an agreement found before was about the board we had then."""
        for entry in self._members.values():
            if entry.agreement is Agreement.AGREES:
                entry.agreement = Agreement.UNKNOWN

    def reset_agreement(self) -> None:
        """After a resync our board is new: what we concluded about it no longer holds."""
        for entry in self._members.values():
            entry.agreement = Agreement.UNKNOWN
            entry.suspect = None

    def _compare(self, entry: _Member, counts: tuple[int, object], now: float) -> None:
        assert entry.presence is not None
        theirs = entry.presence.board
        ours: tuple[int, object, str] = (counts[0], counts[1], "")
        if (theirs.ops, theirs.last_key) == counts:
            fingerprint = self._board()
            if fingerprint.board_hash == theirs.board_hash:
                entry.agreement = Agreement.AGREES
                entry.suspect = None
                return
            ours = (counts[0], counts[1], fingerprint.board_hash)
        if entry.suspect != (theirs, ours):
            # A new difference (or the first look): remember it, conclude nothing yet.
            entry.suspect, entry.suspect_since = (theirs, ours), now
            if entry.agreement is not Agreement.UNKNOWN:
                entry.agreement = Agreement.UNKNOWN
            return
        if now - entry.suspect_since >= self.settle and entry.agreement is not Agreement.DIFFERS:
            self.disagreements += 1
            entry.agreement = Agreement.DIFFERS

    # -- reading ----------------------------------------------------------------------------

    def __contains__(self, member: object) -> bool:
        return member in self._members

    def rows(self, own: Presence | None = None) -> list[MemberRow]:
        """Members present first, by name, then those who left; ours first of all."""
        rows = []
        for member, entry in self._members.items():
            presence = own if member == self.me and own is not None else entry.presence
            rows.append(
                MemberRow(
                    member,
                    presence.name if presence else f"member {member:08x}",
                    presence.colour if presence else None,
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
        return [
            m
            for m, e in self._members.items()
            if e.agreement is Agreement.DIFFERS and e.state is not MemberState.LEFT
        ]

    def agreeing(self) -> list[int]:
        return [m for m, e in self._members.items() if e.agreement is Agreement.AGREES]

    def name_of(self, member: int) -> str:
        entry = self._members.get(member)
        if entry is not None and entry.presence is not None:
            return entry.presence.name
        return f"member {member:08x}"


__all__ = ["Agreement", "MemberRow", "SessionHealth"]
