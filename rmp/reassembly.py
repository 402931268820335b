"""Each source's run of pieces put back together before delivery (our extension, issue 20;
rmp/fragment.py, docs/rmp.md "Large payloads").

The pieces of a run reach us in their source's sequence order (RR-2100 §2.3, rmp/sequencing.py),
but for a piece delivered at a WI expiry (§2.3) or given up: then a piece is missing, and the
run is refused whole. A payload is delivered once, complete, or not at all; never in part.

What a run may hold is bounded: MAX_MESSAGE bytes per source, MAX_REASSEMBLY bytes over all
sources together. A run that is malformed (a piece out of order, a count that changes, a piece
repeated or missing), too large, cut by a packet of its source that is not part of it, or whose
source left, is dropped and reported once (``Refused``); the rest of its pieces, if they come,
are dropped without a word. Nothing here raises on what a peer sends.

Sequence numbers are the wire's 16 bits: a run is at most MAX_PIECES (4,096) consecutive
numbers, so serial arithmetic (RFC 1982) tells its pieces apart from any other run's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from rmp.fragment import MAX_MESSAGE, MAX_PIECES

# Bytes held in runs not yet complete, over all sources: 8 whole messages of MAX_MESSAGE.
MAX_REASSEMBLY = 32 << 20
# Runs refused that we remember (one per source), so that their late pieces are dropped
# silently rather than reported again; the oldest is forgotten first.
MAX_DEAD_RUNS = 1024

# A message lost, told once: the reason, for a person to read.
Refused = Callable[[str], None]


def _serial_after(a: int, b: int) -> bool:
    """Whether 16-bit sequence number ``a`` comes after ``b`` (RFC 1982)."""
    return 0 < (a - b) & 0xFFFF < 0x8000


@dataclass
class Run:
    """The pieces of one source's message taken so far: piece 0 to ``len(parts) - 1``."""

    first_seq: int  # the wire sequence number of piece 0: the run's identity
    count: int
    parts: list[bytes] = field(default_factory=list)
    size: int = 0

    @property
    def last_seq(self) -> int:
        return (self.first_seq + len(self.parts) - 1) & 0xFFFF


class Reassembler:
    """Owns the runs in progress (``runs``, by source), the bytes they hold (``held``), and
    the counts of what it dropped: messages refused (each told once) and their pieces."""

    def __init__(
        self,
        refused: Refused,
        per_source: int = MAX_MESSAGE,
        total: int = MAX_REASSEMBLY,
    ) -> None:
        self._refused = refused
        self.per_source = per_source
        self.total = total
        self.runs: dict[int, Run] = {}
        self.held = 0
        self.messages_refused = 0
        self.pieces_dropped = 0
        # source -> (first sequence number, count) of its last run refused, until a packet
        # of that source after it shows that run is over
        self._dead: OrderedDict[int, tuple[int, int]] = OrderedDict()

    def add(self, source: int, seq: int, index: int, count: int, data: bytes) -> bytes | None:
        """Piece ``index`` of ``count`` (wire sequence number ``seq``) from ``source``, next in
        its delivery order: the whole payload if it completes its run, else None."""
        first = (seq - index) & 0xFFFF
        run = self.runs.get(source)
        if run is not None and run.first_seq != first:
            # Another run's piece: ours lost its next piece(s) and its end.
            if not _serial_after(seq, run.last_seq):
                self._dropped_quietly()  # a late piece of an older run, already refused
                return None
            self._refuse(source, run, "cut by a piece of another message")
            run = None
        if run is None:
            dead = self._dead.get(source)
            if dead is not None and dead[0] == first:
                self._dropped_quietly()  # a piece of a run refused already
                return None
            self._dead.pop(source, None)  # a packet after it: that run is over
            if index != 0:
                self._remember_dead(source, first, count)
                self._lost(
                    1,
                    f"a message of {count} pieces from member {source:08x} was dropped: its "
                    f"first {index} piece(s) never reached us in order (lost, or sent before "
                    "we joined)",
                )
                return None
            if not 2 <= count <= MAX_PIECES:  # the decoder refuses these: a caller's mistake
                self._lost(1, f"a run of {count} pieces from member {source:08x}")
                return None
            run = self.runs[source] = Run(first, count)
        problem = self._problem(run, index, count, len(data))
        if problem is not None:
            self._refuse(source, run, problem, extra=1)
            return None
        run.parts.append(data)
        run.size += len(data)
        self.held += len(data)
        if index < count - 1:
            return None
        del self.runs[source]
        self.held -= run.size
        return b"".join(run.parts)

    def _problem(self, run: Run, index: int, count: int, size: int) -> str | None:
        if count != run.count:
            return f"a piece says the run has {count} pieces, the run began with {run.count}"
        if index != len(run.parts):
            return f"piece {index} came where piece {len(run.parts)} was due"
        if run.size + size > self.per_source:
            return f"it exceeds {self.per_source} bytes"
        if self.held + size > self.total:
            return f"messages being put together hold {self.held} bytes, the most is {self.total}"
        return None

    def unfinished(self) -> dict[int, tuple[int, int]]:
        """Each open run: its first piece's wire number and how many pieces it holds."""
        return {source: (run.first_seq, len(run.parts)) for source, run in self.runs.items()}

    @property
    def watching(self) -> bool:
        """Whether a packet that is not a piece may matter here (``cut``)."""
        return bool(self.runs or self._dead)

    def cut(self, source: int, seq: int) -> None:
        """A packet of ``source`` that is not a piece, delivered (``seq`` on the wire): if it
        comes after an open run's pieces, that run will never be completed."""
        run = self.runs.get(source)
        if run is not None and _serial_after(seq, run.last_seq):
            self._refuse(source, run, "cut by a packet that is not one of its pieces")
        dead = self._dead.get(source)
        if dead is not None and _serial_after(seq, (dead[0] + dead[1] - 1) & 0xFFFF):
            del self._dead[source]  # after a refused run's last piece: it is over

    def skipped(self, source: int, seq: int) -> None:
        """``source``'s packet ``seq`` was given up (never to be delivered): an open run that
        it is one of the pieces still due of is lost."""
        run = self.runs.get(source)
        if run is None:
            return
        end = (run.first_seq + run.count - 1) & 0xFFFF
        if _serial_after(seq, run.last_seq) and not _serial_after(seq, end):
            self._refuse(source, run, f"its packet {seq} was given up (never recovered)")

    def forget(self, source: int, why: str = "its member left") -> None:
        """``source`` is gone: its open run (if any) is dropped, its memory freed."""
        run = self.runs.get(source)
        if run is not None:
            self._refuse(source, run, why)
        self._dead.pop(source, None)

    def _refuse(self, source: int, run: Run, why: str, extra: int = 0) -> None:
        del self.runs[source]
        self.held -= run.size
        self._remember_dead(source, run.first_seq, run.count)
        self._lost(
            len(run.parts) + extra,
            f"a message of {run.count} pieces from member {source:08x} was dropped after "
            f"{len(run.parts)} of them: {why}",
        )

    def _remember_dead(self, source: int, first: int, count: int) -> None:
        self._dead.pop(source, None)
        self._dead[source] = (first, count)
        while len(self._dead) > MAX_DEAD_RUNS:
            self._dead.popitem(last=False)

    def _lost(self, pieces: int, reason: str) -> None:
        self.messages_refused += 1
        self.pieces_dropped += pieces
        self._refused(reason)

    def _dropped_quietly(self) -> None:
        """A piece of a message already refused (and reported): dropped, counted only."""
        self.pieces_dropped += 1
