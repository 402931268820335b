"""The list of active stations (RR-2100 §2.1) and the depth virtual queue (§2.5)."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from coreapi import MemberState
from coreapi.seqnum import MODULUS
from rmp.wire import RmpPacket

MAX_STATIONS = 1024  # bounds per-station state whatever the network sends
MAX_WAITING = 4096  # out-of-sequence packets held per station
MAX_GAP = 4096  # packets one station may be missing from another before it gives up on them
# A station first heard while we are joined, with no join answer to say where its sequence
# starts (RR-2100 §5's merged partition, or a phantom): this much of its history is asked for,
# the rest given up at once and reported (§2.3 would NACK it all; a stranger's claim is cheap).
NEW_STATION_HISTORY = 64
# Packets a stranger (a station none of whose packets we have taken in sequence yet) may have
# us track as missing at a time: the gap tracking one forged packet can create. Once one of its
# packets comes in sequence, the rest of a gap is tracked as its next packets reveal it.
STRANGER_GAP = 64
# While more than STRANGER_CROWD strangers are listed, a stranger's deadlines (its NACKs, its
# waiting packets, its silence) fall on a grid of STRANGER_TICK times nack_retry: a crowd of
# phantom stations, each heard at its own moment, costs one timer call per tick, not one per
# station (issue 17: 2,700 timer calls, one per phantom, were the largest part of what 10,000
# forged packets cost a member). Below the crowd (a session starting, a few joining) every
# deadline is exact: on the grid, a lossy start's first NACKs came up to a tick late and the
# recovery p99 of a 6-station session at 30% loss went from 0.8 to 1.1 s.
STRANGER_CROWD = 16
STRANGER_TICK = 0.25


@dataclass(slots=True)
class Missing:
    """A packet we lack and are asking for (§2.6)."""

    detected_at: float
    next_nack_at: float
    nack_number: int = 0  # times our NACK for it has been sent (§4.2.2)


@dataclass(slots=True)
class Waiting:
    """An out-of-sequence packet (§2.3), delivered after WI if the gap is not filled."""

    packet: RmpPacket
    deliver_at: float


# What the send window (rmp/sender.py) reads of each station (confirmed_mine, state,
# accepted_any) are properties: setting one bumps its list's WindowVersion, so that the window
# is recomputed only then, not on every call (issue 17: reading every station's confirmations
# per datagram was a member's largest cost under a flood of phantom stations). Properties, not
# a __setattr__ hook: that made every store a call, 12 million of them in a simulated minute
# at 100 members, mostly depths (issue 18).


@dataclass(slots=True)
class WindowVersion:
    """Counts the changes to what the send window reads of one core's stations, and keeps
    those that can hold it: the stations one of whose packets came in sequence (not
    strangers), so that the window is recomputed over them, not over every phantom heard."""

    value: int = 0
    proven: dict[int, Station] = field(default_factory=dict)
    # Not the window's, but shared alike by the list's stations: each station whose sequence
    # start is settled (history_known) with its last_valid modulo 2**16, kept as they change.
    # A packet piggybacks a Confirm per station (§2.3); comparing them with this, in C, finds
    # the few that tell us something (rmp/digest.py; issue 18).
    wire_last_valid: dict[int, int] = field(default_factory=dict)
    # Every depth (§2.5) is a stored value plus this base: an emission that moves most of the
    # queue back by one raises the base and lowers the few it does not move (issue 18).
    depth_base: int = 0


@dataclass(slots=True)
class Station:
    """One entry of the active station list (§2.1), plus what the protocol keeps per peer."""

    # Its list's: set first, so that the fields below can count their changes in it.
    window_version: WindowVersion = field(repr=False, compare=False)
    ident: int
    _last_valid: int  # §2.1: the last in-sequence number received (unbounded, coreapi.seqnum)
    _depth: int  # §2.5: our estimate of its place in the virtual queue, less the depth_base
    last_heard: float
    address: tuple[str, int] | None = None
    confirmed: bool = True  # §2.1 A flag: its last_valid went out in a multicast data packet
    # (True at first: nothing received yet, nothing to confirm; False whenever it advances)
    _confirmed_mine: int = 0  # the highest of our sequence numbers it confirmed (§2.4)
    _state: MemberState = MemberState.ACTIVE
    waiting: dict[int, Waiting] = field(default_factory=dict)
    missing: dict[int, Missing] = field(default_factory=dict)
    delivered_ahead: set[int] = field(default_factory=set)  # delivered at WI expiry (§2.3)
    # Where its sequence starts for us is settled: by a join answer's list (§2.8) or by the
    # first packet heard from it (our reading of §2.3 and §5 for a station with a history).
    _history_known: bool = False
    _accepted_any: bool = False  # one of its packets was taken in sequence: not a stranger
    # Its S_n as its own live packets last said (§4.1: every header carries it). A packet we
    # miss above this number is one it has not sent yet, as far as it says: not given up.
    source_seq: int = 0
    source_seq_at: float = -math.inf  # when (the packet's arrival)
    seen_top: int = 0  # the highest of its numbers we hold or miss: what a NACK can concern
    # Every number in (last_valid, scanned_top] is missing, waiting or delivered ahead, so a
    # gap's scan (Sequencer.mark_missing) starts above it; 0 when that may not hold (a join
    # answer, a restart, a packet dropped for room): the next scan starts at last_valid + 1.
    scanned_top: int = 0
    # The earliest of its deadlines (NACKs, WI, giving up, liveness) as far as we know; never
    # later than the true one (StationList.note_due), so a timer may come early, never late.
    due_hint: float = math.inf
    nacks_held_until: float = -math.inf  # a stranger's NACKs deferred until (repair.py)
    nack_deferrals: int = 0  # ... how often in a row: the hold doubles
    repairs_served: int = 0  # repairs scheduled for it as a requester since ...
    served_since: float = -math.inf  # ... this moment (bounded per interval, extension)
    # Where its current run resumed, as it said (§2.8: a restart under the same id); None if
    # it never said so. What we held above it from its previous run was given up then.
    resumed_after: int | None = None
    # It asked to join while we held packets of its: a restart, so its resumption marker is
    # believed (a marker alone, forged, could make us drop its packets).
    joined_again: bool = False
    previous_run_reported: bool = False  # a packet of its previous run came after that
    introduction: bytes = b""  # what its join requests carried (an Intro option), if any
    order: int = 0  # its place in the list: due stations are worked in list order
    first_heard: float = 0.0  # when it entered the list

    @property
    def stranger(self) -> bool:
        return not self._accepted_any

    @property
    def depth(self) -> int:
        return self._depth + self.window_version.depth_base

    @depth.setter
    def depth(self, value: int) -> None:
        self._depth = value - self.window_version.depth_base

    @property
    def last_valid(self) -> int:
        return self._last_valid

    @last_valid.setter
    def last_valid(self, value: int) -> None:
        self._last_valid = value
        if self._history_known:
            self.window_version.wire_last_valid[self.ident] = value % MODULUS

    @property
    def history_known(self) -> bool:
        return self._history_known

    @history_known.setter
    def history_known(self, value: bool) -> None:
        self._history_known = value
        if value:
            self.window_version.wire_last_valid[self.ident] = self._last_valid % MODULUS
        else:
            self.window_version.wire_last_valid.pop(self.ident, None)

    @property
    def confirmed_mine(self) -> int:
        return self._confirmed_mine

    @confirmed_mine.setter
    def confirmed_mine(self, value: int) -> None:
        self._confirmed_mine = value
        self.window_version.value += 1

    @property
    def state(self) -> MemberState:
        return self._state

    @state.setter
    def state(self, value: MemberState) -> None:
        self._state = value
        self.window_version.value += 1

    @property
    def accepted_any(self) -> bool:
        return self._accepted_any

    @accepted_any.setter
    def accepted_any(self, value: bool) -> None:
        self._accepted_any = value
        self.window_version.value += 1
        if value:
            self.window_version.proven[self.ident] = self


class StationList:
    """The stations we know, and our own depth (§2.5)."""

    def __init__(self, own: int, stranger_tick: float = 0.0) -> None:
        self.own = own
        self.stranger_tick = stranger_tick  # seconds; 0: strangers' deadlines are exact
        self._own_depth = 0  # stored as the stations' are: less the depth_base
        self._stations: dict[int, Station] = {}
        # Every station and we, in the order of the virtual queue (§2.5): depths never
        # decrease along it. An emission changes only those in front of the emitter, so it
        # costs the emitter's place, not the number of stations heard (issue 17: phantom
        # stations sit at the back; walking them on every data packet was a member's cost).
        self._queue: list[int] = [own]
        # (due, order, ident) for every station whose due_hint was lowered: the timer work
        # is per due station, O(log n) per change, not a scan of every station per packet.
        self._due: list[tuple[float, int, int]] = []
        self._order = itertools.count()
        self.window_version = WindowVersion()
        # (A dict: rmp/digest.py puts our own number in for the length of one comparison.)
        self.wire_last_valid: dict[int, int] = self.window_version.wire_last_valid

    def __len__(self) -> int:
        return len(self._stations)

    def __contains__(self, ident: object) -> bool:
        return ident in self._stations

    def __iter__(self) -> Iterator[Station]:
        return iter(list(self._stations.values()))

    def proven(self) -> Iterator[Station]:
        """The stations that are not strangers (one of their packets came in sequence)."""
        return iter(self.window_version.proven.values())

    def get(self, ident: int) -> Station | None:
        return self._stations.get(ident)

    def add(self, ident: int, last_valid: int, now: float) -> Station | None:
        """A new station goes to the back of the queue; None if the list is full."""
        if len(self._stations) >= MAX_STATIONS:
            return None
        depth = self._depth_at(len(self._queue) - 1) + 1  # the back: the deepest plus one
        base = self.window_version.depth_base
        station = Station(self.window_version, ident, last_valid, depth - base, now)
        station.order = next(self._order)
        station.first_heard = now
        self._stations[ident] = station
        self._queue.append(ident)
        self.window_version.value += 1
        return station

    # -- when each station needs the timer ---------------------------------------------------

    def note_due(self, station: Station, when: float) -> None:
        """Something of ``station``'s falls due at ``when``: make sure the timer comes then
        (for a stranger: at the next tick of the grid)."""
        tick = self.stranger_tick
        if tick > 0 and station.stranger and math.isfinite(when) and self._crowded():
            when = math.ceil(when / tick) * tick
        if when < station.due_hint:
            station.due_hint = when
            heapq.heappush(self._due, (when, station.order, station.ident))
            if len(self._due) > 4 * len(self._stations) + 64:
                self._compact()

    def _crowded(self) -> bool:
        return len(self._stations) - len(self.window_version.proven) > STRANGER_CROWD

    def next_due(self) -> float | None:
        due = self._due
        while due and not self._live(due[0]):
            heapq.heappop(due)
        return due[0][0] if due else None

    def take_due(self, now: float) -> list[Station]:
        """The stations due by ``now``, in list order; each is owed a fresh ``note_due``."""
        taken: list[Station] = []
        due = self._due
        while due and due[0][0] <= now:
            entry = heapq.heappop(due)
            if self._live(entry):
                station = self._stations[entry[2]]
                station.due_hint = math.inf
                taken.append(station)
        taken.sort(key=lambda s: s.order)
        return taken

    def _live(self, entry: tuple[float, int, int]) -> bool:
        station = self._stations.get(entry[2])
        return station is not None and station.order == entry[1] and station.due_hint == entry[0]

    def _compact(self) -> None:
        self._due = [e for e in self._due if self._live(e)]
        heapq.heapify(self._due)

    def remove(self, ident: int) -> None:
        if self._stations.pop(ident, None) is not None:
            self.window_version.proven.pop(ident, None)
            self.window_version.wire_last_valid.pop(ident, None)
            self._queue.remove(ident)  # the others keep their depths (§2.5 renumbers nothing)
        self.window_version.value += 1

    @property
    def depth(self) -> int:
        """Our own depth (§2.5)."""
        return self._own_depth + self.window_version.depth_base

    @depth.setter
    def depth(self, value: int) -> None:
        self._queue.remove(self.own)
        self._own_depth = value - self.window_version.depth_base
        place = 0  # behind those no deeper, as the rule "depth < sender's" treats ties
        while place < len(self._queue) and self._depth_at(place) <= value:
            place += 1
        self._queue.insert(place, self.own)

    def at_front(self) -> bool:
        """Whether no station is in front of us in the virtual queue (§2.5): none shallower."""
        return self._depth_at(0) >= self.depth

    def joined(self) -> None:
        """§2.5: on joining, our depth is the number of active stations plus one."""
        self.depth = len(self._stations) + 1

    def emitted(self, ident: int) -> None:
        """Station ``ident`` (or we) multicast a data packet: it goes to the front with depth 0,
        and everyone who was in front of it moves back by one (§2.5). "Our depth is
        incremented ... from an other station which had a higher depth" is the same rule."""
        if ident != self.own and ident not in self._stations:
            return
        queue, stored = self._queue, self._stored
        place = queue.index(ident)  # in C
        sender = stored(ident)
        # Depths never decrease along the queue: those in front of the emitter are shallower
        # than it, but for any tied with it (a join's depth may tie), found walking back.
        front = place
        while front > 0 and stored(queue[front - 1]) >= sender:
            front -= 1
        # Everyone in front moves back by one. With members drawing in turn the emitter is at
        # the back, so rather than walk the whole queue on every data packet (issue 18) the
        # base is raised and the few behind are moved forward again: the shorter walk.
        behind = len(queue) - front - 1
        if front <= behind:
            for member in queue[:front]:
                self._add_stored(member, 1)
        else:
            self.window_version.depth_base += 1
            for member in queue[front:]:
                if member != ident:
                    self._add_stored(member, -1)
        del queue[place]
        queue.insert(0, ident)
        self._set_depth_at(0, 0)

    def _stored(self, ident: int) -> int:
        """A depth as stored (less the base): comparisons between depths need no base."""
        return self._own_depth if ident == self.own else self._stations[ident]._depth

    def _add_stored(self, ident: int, delta: int) -> None:
        if ident == self.own:
            self._own_depth += delta
        else:
            self._stations[ident]._depth += delta

    def _depth_at(self, place: int) -> int:
        ident = self._queue[place]
        return self.depth if ident == self.own else self._stations[ident].depth

    def _set_depth_at(self, place: int, depth: int) -> None:
        ident = self._queue[place]
        if ident == self.own:
            self._own_depth = depth - self.window_version.depth_base
        else:
            self._stations[ident].depth = depth
