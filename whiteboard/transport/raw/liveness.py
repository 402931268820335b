"""Who has been silent too long: the raw transport's members in the order they were last heard.

A member is ACTIVE until ``suspect_after`` seconds of silence, SUSPECTED until ``forget_after``,
then gone. Each state keeps its members in a dict ordered by when they were last heard (a member
heard again moves to the end), so the next deadline is the first entry's, O(1), and a timer
walks only the members whose deadline passed. Computing it over every member on every datagram
made the simulator's raw runs grow with the square of the group (issue 18: 100 members took
90 s, a quarter of it in that scan).

The order relies on ``now`` never going back, which holds for the runtime's monotonic clock and
the simulator's virtual one."""

from __future__ import annotations

from coreapi import MemberState


class Liveness:
    def __init__(self, suspect_after: float, forget_after: float) -> None:
        self._suspect_after = suspect_after
        self._forget_after = forget_after
        self._active: dict[int, float] = {}  # member -> last heard, oldest first
        self._suspected: dict[int, float] = {}

    def __contains__(self, member: object) -> bool:
        return member in self._active or member in self._suspected

    def __len__(self) -> int:
        return len(self._active) + len(self._suspected)

    def heard(self, member: int, now: float) -> bool:
        """``member`` was heard at ``now``; True if it was suspected until then."""
        was_suspected = self._suspected.pop(member, None) is not None
        self._active.pop(member, None)
        self._active[member] = now  # to the end: the most recently heard
        return was_suspected

    def forget(self, member: int) -> bool:
        """Drop ``member`` (it said goodbye); True if it was known."""
        known = self._active.pop(member, None) is not None
        return self._suspected.pop(member, None) is not None or known

    def next_deadline(self) -> float | None:
        deadlines = []
        for silent, limit in (
            (self._active, self._suspect_after),
            (self._suspected, self._forget_after),
        ):
            if silent:
                deadlines.append(silent[next(iter(silent))] + limit)
        return min(deadlines, default=None)

    def expire(self, now: float) -> list[tuple[int, MemberState]]:
        """The members whose silence passed a limit by ``now``, each with its new state
        (SUSPECTED, or LEFT: forgotten), in the order they were last heard."""
        changes: list[tuple[int, MemberState]] = []
        # Compared as next_deadline computes deadlines (last_heard + limit), not as
        # now - last_heard: the two can round apart, and a timer due "now" that finds nothing
        # due would be woken again at the same instant forever.
        while self._suspected:
            member, heard_at = next(iter(self._suspected.items()))
            if now < heard_at + self._forget_after:
                break
            del self._suspected[member]
            changes.append((member, MemberState.LEFT))
        while self._active:
            member, heard_at = next(iter(self._active.items()))
            if now < heard_at + self._suspect_after:
                break
            del self._active[member]
            if now >= heard_at + self._forget_after:
                changes.append((member, MemberState.LEFT))  # silent past both at once
            else:
                self._suspected[member] = heard_at  # after every older suspect: still ordered
                changes.append((member, MemberState.SUSPECTED))
        return changes
