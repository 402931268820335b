"""Who is in the group: stations heard, named, suspected and forgotten (RR-2100 §2.1, §2.3),
as the application sees them (member_changed). The depth queue is ``StationList``'s (§2.5)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from coreapi import Address, MemberState
from rmp.context import Shared
from rmp.stations import Station

Forgotten = Callable[[int], None]  # a station forgotten: drop what we were doing for it


class Members:
    """Adds stations to the shared list as they are heard or named, and watches their silence
    (an extension: RMP has no liveness of its own). Keeps no state besides the list."""

    def __init__(self, shared: Shared, forgotten: Forgotten) -> None:
        self._s = shared
        self._forgotten = forgotten

    def heard(
        self, ident: int, now: float, addr: Address | None, joining: bool = False
    ) -> Station | None:
        """A packet from ``ident`` (§2.3: any station heard is in the list); None if the list
        is full."""
        s = self._s
        station = s.stations.get(ident)
        if station is None:
            station = s.stations.add(ident, 0, now)
            if station is None:
                s.counters["members_refused"] += 1
                return None
            station.state = MemberState.JOINING if joining else MemberState.ACTIVE
            s.upper.member_changed(ident, station.state)
        else:
            station.last_heard = now
            if station.state is not MemberState.ACTIVE and not joining:
                station.state = MemberState.ACTIVE
                s.upper.member_changed(ident, MemberState.ACTIVE)
        if addr is not None:
            station.address = addr
        s.stations.note_due(station, self.due(station))
        return station

    def known(self, ident: int, now: float) -> Station | None:
        """The station named in someone else's packet: known, or added, but not heard."""
        station = self._s.stations.get(ident)
        return station if station is not None else self.heard(ident, now, None)

    def deadlines(self) -> Iterator[float]:
        for station in self._s.stations:
            yield self.due(station)

    def due(self, station: Station) -> float:
        """When its silence makes it suspected, or (already suspected) forgotten."""
        p = self._s.params
        active = station.state is MemberState.ACTIVE
        return station.last_heard + (p.suspect_after if active else p.forget_after)

    def watch(self, now: float, stations: Iterable[Station] | None = None) -> None:
        """Suspect or forget the silent among ``stations`` (all of them by default)."""
        s = self._s
        for station in s.stations if stations is None else stations:
            if s.stations.get(station.ident) is not station:
                continue
            if now >= station.last_heard + s.params.forget_after:
                self._forget(station)
            elif (
                now >= station.last_heard + s.params.suspect_after
                and station.state is MemberState.ACTIVE
            ):
                station.state = MemberState.SUSPECTED
                s.upper.member_changed(station.ident, MemberState.SUSPECTED)

    def farewell(self, station: Station) -> None:
        """``station`` said it leaves (its farewell, rmp/remind.py) and holds nothing we
        lack: forgotten at once, as silence would have it after ``forget_after``."""
        if self._s.stations.get(station.ident) is station:
            self._forget(station)

    def _forget(self, station: Station) -> None:
        s = self._s
        s.stations.remove(station.ident)
        self._forgotten(station.ident)
        self._report_unrecovered(station)  # nothing after a farewell: we lacked none of it
        s.upper.member_changed(station.ident, MemberState.LEFT)

    def _report_unrecovered(self, station: Station) -> None:
        """A station forgotten while we still missed some of its packets: they are lost to us
        now (nobody will answer for a station we no longer track), so say so, as giving up
        does (§2.3's wait cannot go on), rather than let them vanish with the entry."""
        if not station.missing:
            return
        s = self._s
        s.counters["packets_given_up"] += len(station.missing)
        if station.stranger and not station.delivered_ahead:
            # Nothing of it ever came in sequence nor was delivered (a phantom?): counted, not
            # announced. One whose packets we delivered at WI expiry (§2.3) is no phantom: its
            # first packet was lost and never repaired, and our board lacks it (said, issue 18).
            return
        s.upper.failure(
            f"{len(station.missing)} drawing packet(s) from member {station.ident:08x} could "
            "not be recovered before it was forgotten"
        )
