"""Who is in the session, how their transport fares, and whether their board is ours.

Qt-free. The window feeds it the transport's member states and the presences members
multicast (whiteboard/presence.py); the members panel and the status bar read it.

Agreement. Two replicas that applied the same ops show the same board (the convergence
invariant), so a presence's board fingerprint is compared with ours whenever both say the same
ops were applied (same count, same greatest order key). While ops are in flight the two differ
legitimately and nothing is concluded. Even equal counts and keys can hide a transient
difference (RMP: each side still misses an op the other has), so a difference is believed
only when it is seen again on a later check with neither side having moved: a board that
stays different while nothing happens has diverged.
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
    # The (theirs, ours) fingerprints of a comparison that found a difference, awaiting a
    # second look (see the module docstring).
    suspect: tuple[BoardFingerprint, BoardFingerprint] | None = None


class SessionHealth:
    def __init__(self, me: int, board: Callable[[], BoardFingerprint]) -> None:
        """``board`` gives our own board's fingerprint; it is called only when a comparison
        is due (hashing a large board costs milliseconds)."""
        self.me = me
        self._board = board
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

    def presence(self, member: int, presence: Presence, counts: tuple[int, object]) -> None:
        """A presence from ``member``; ``counts`` is our board's (ops, last key) now."""
        entry = self._members.get(member)
        if entry is None:
            if len(self._members) >= MAX_MEMBERS:
                return
            # Heard before the transport reported it (RMP reports on first packet anyway).
            entry = self._members[member] = _Member(MemberState.ACTIVE)
        entry.presence = presence
        if member != self.me:
            self._compare(entry, counts)

    def check(self, counts: tuple[int, object]) -> None:
        """Compare again with every member's last presence (call it every few seconds: a
        board that caught up since may now be comparable)."""
        for member, entry in self._members.items():
            if member != self.me and entry.presence is not None:
                self._compare(entry, counts)

    def reset_agreement(self) -> None:
        """After a resync our board is new: what we concluded about it no longer holds."""
        for entry in self._members.values():
            entry.agreement = Agreement.UNKNOWN
            entry.suspect = None

    def _compare(self, entry: _Member, counts: tuple[int, object]) -> None:
        assert entry.presence is not None
        theirs = entry.presence.board
        if (theirs.ops, theirs.last_key) != counts:
            entry.suspect = None
            return  # ops in flight: nothing to conclude
        ours = self._board()
        if ours.board_hash == theirs.board_hash:
            entry.agreement = Agreement.AGREES
            entry.suspect = None
        elif entry.suspect == (theirs, ours):
            if entry.agreement is not Agreement.DIFFERS:
                self.disagreements += 1
            entry.agreement = Agreement.DIFFERS
        else:
            entry.suspect = (theirs, ours)

    # -- reading ----------------------------------------------------------------------------

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
