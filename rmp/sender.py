"""Sending our data (RR-2100 §2.2), paced and windowed (§5), image parts included (§2.8)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from coreapi import MemberState
from coreapi.boardstate import StateFormat, pack_state
from coreapi.seqnum import to_wire
from rmp.batch import MAX_BATCH_BYTES, MAX_BATCH_COUNT, framed_size, pack_batch
from rmp.context import MAX_PAYLOAD, Phase, Shared
from rmp.fragment import piece_size, split_message
from rmp.image import split_image
from rmp.ordering import Delivery
from rmp.remind import Reminder
from rmp.wire import HEADER_SIZE, SOURCE_SIZE, Batch, Data, Image, Piece, Remind, RmpPacket

MAX_PENDING_SENDS = 100_000
# Bytes of payloads queued, at most: 16 messages of 4 MiB (issue 20), or a long backlog of
# strokes. Beyond it send raises, as beyond MAX_PENDING_SENDS.
MAX_PENDING_BYTES = 64 << 20
# Seconds of the rate made up at once after a late wake-up (a selector rounds its timeout up
# to a millisecond, a busy host wakes later still): 16 packets at the lan profile's rate.
PACE_CATCH_UP = 0.004
IMAGE_FIRST_WINDOW = 64  # image parts sent before the joiner's first confirmation, at most


@dataclass
class ImageJob:
    """An image we are sending (§2.8), paced and windowed on the joiner's confirmations."""

    joiner: int
    parts: deque[bytes]
    total: int
    started_at: float
    progress_at: float
    first_seq: int | None = None  # our S_n of its first part, once sent


class Sender:
    """Owns what we have yet to send: the drawing queue (``sends``), the images being sent
    (``image_jobs``), whose turn it is, and when the pace allows the next packet."""

    def __init__(self, shared: Shared, reminder: Reminder, delivery: Delivery) -> None:
        self._s = shared
        self._reminder = reminder
        self._delivery = delivery
        self.sends: deque[bytes] = deque()
        self.pending_bytes = 0  # of the payloads in ``sends``
        # The pieces still to send of the payload at the head of ``sends``, longer than a
        # packet (rmp/fragment.py), and how many it was cut into: a run in progress.
        self._run: deque[bytes] = deque()
        self._run_count = 0
        self.image_jobs: dict[int, ImageJob] = {}
        self._image_turn = False
        self.next_send_at = 0.0
        # The lowest confirmation of ours among the stations that hold the window (None: no
        # such station), as of the station list's window_version (rmp/stations.py).
        self._floor: int | None = None
        self._floor_version = -1
        # The same, over every active station, for a run of pieces (``_run_window_open``).
        self._run_floor: int | None = None
        self._run_floor_version: tuple[int, tuple[int, ...]] = (-1, ())

    def queue(self, payload: bytes, now: float) -> None:
        if len(self.sends) >= MAX_PENDING_SENDS:
            raise RuntimeError("the rmp transport's send queue is full")
        if self.pending_bytes + len(payload) > MAX_PENDING_BYTES:
            raise RuntimeError(
                f"the rmp transport's send queue is full ({self.pending_bytes} bytes queued, "
                f"at most {MAX_PENDING_BYTES})"
            )
        # Queued: sent when joined (§4.2.1: no data before the join is complete), at the pace.
        self.sends.append(bytes(payload))
        self.pending_bytes += len(payload)
        self._s.counters["sent"] += 1
        self.pace(now)

    def start_image(self, joiner: int, state: bytes, now: float) -> None:
        # The image is tagged with its joiner's identifier: two joiners answered by one
        # station each take their own (parts of both share our sequence).
        # Packed (ours, issue 18; coreapi/boardstate.py): ~2.5 times fewer parts for a board
        # of strokes, each one a packet at the pace (§5).
        packed = pack_state(state)
        parts = split_image(joiner, packed, self._s.params.image_part, StateFormat.ZLIB)
        self.image_jobs[joiner] = ImageJob(joiner, deque(parts), len(parts), now, now)
        counters = self._s.counters
        counters["images_sent"] += 1
        counters["image_state_bytes"] += len(state)
        counters["image_bytes_sent"] += len(packed)
        self._s.upper.protocol_event(
            "image_started",
            {"joiner": joiner, "bytes": len(state), "packed": len(packed), "parts": len(parts)},
        )
        self.pace(now)

    def deadlines(self) -> Iterator[float]:
        if self.sendable():
            yield self.next_send_at
        if self.image_jobs:
            stall = self._s.params.image_stall
            yield min(job.progress_at for job in self.image_jobs.values()) + stall

    def watch_image_jobs(self, now: float) -> None:
        for joiner, job in list(self.image_jobs.items()):
            station = self._s.stations.get(joiner)
            if station is None or now >= job.progress_at + self._s.params.image_stall:
                del self.image_jobs[joiner]  # it left, or stopped confirming: it will ask again
                self._s.upper.protocol_event("image_abandoned", {"joiner": joiner})

    def sendable(self) -> bool:
        phase = self._s.phase
        if phase is not Phase.READY and not (phase is Phase.LEAVING and self.sends):
            return False
        if not self.sends and not (
            self.image_jobs and any(self._window_open(j) for j in self.image_jobs.values())
        ):
            return False  # nothing to send: no need to look at every station's window
        return self.send_window_open()

    def send_window_open(self) -> bool:
        """§5's flow control, our way: at most ``window`` of our packets not yet confirmed by
        every active station, so none of them can leave the store before it is repaired."""
        s = self._s
        version = s.stations.window_version.value
        if self._floor_version != version:
            # Only stations whose own data we have taken in sequence hold it: a stranger may be
            # a phantom, and forged confirmations of ours (or none) would hold the window shut
            # until it is suspected (issue 17). The store (retention_count, well above the
            # window) still keeps our packets for a station that only listens.
            self._floor = min(
                (
                    t.confirmed_mine
                    for t in s.stations.proven()
                    if t.state is MemberState.ACTIVE
                ),
                default=None,
            )
            self._floor_version = version
        floor = s.seq if self._floor is None else self._floor
        if s.seq - floor >= s.params.window:
            return False
        return self._run_window_open() if self._in_run() else True

    def _in_run(self) -> bool:
        """A run of pieces is in progress, or is the next thing to send."""
        return bool(self._run) or bool(self.sends and len(self.sends[0]) > MAX_PAYLOAD)

    def _run_window_open(self) -> bool:
        """Issue 20: a run is hundreds of packets at once, and a station that only listens
        (a stranger to the window above: it never sent data) would see them leave the
        retention store (§2.7) before it could ask for a lost one: they would reach it only at
        WI expiry (§2.3), out of order, and the whole message would be refused. So a run
        keeps at most ``window`` packets unconfirmed by every active station, strangers too;
        the reminders that a closed window hurries (§2.4) bring their confirmations. But for
        a joiner we owe an image: its image waits for the run's end (the run's numbers are
        consecutive), so it cannot confirm the run first. A phantom station can hold a run
        (not strokes) until it is suspected (docs/rmp.md, "Large payloads")."""
        s = self._s
        version = (s.stations.window_version.value, tuple(self.image_jobs))
        if self._run_floor_version != version:
            self._run_floor = min(
                (
                    t.confirmed_mine
                    for t in s.stations
                    if t.state is MemberState.ACTIVE and t.ident not in self.image_jobs
                ),
                default=None,
            )
            self._run_floor_version = version
        floor = s.seq if self._run_floor is None else self._run_floor
        return s.seq - floor < s.params.window

    def _window_open(self, job: ImageJob) -> bool:
        station = self._s.stations.get(job.joiner)
        if station is None or not job.parts:
            return False
        if job.first_seq is None:
            return True
        # Our packets since the image began that the joiner has not confirmed: they must stay
        # in the retention store until it has them, so there may be no more than `window`.
        unconfirmed = self._s.seq - max(station.confirmed_mine, job.first_seq - 1)
        if station.confirmed_mine < job.first_seq:
            # Nothing of the image confirmed yet (a joiner confirms every 16 parts): a first,
            # small window, so that a join request from a phantom station, which confirms
            # nothing, costs a bounded number of parts (issue 17).
            return unconfirmed < min(IMAGE_FIRST_WINDOW, self._s.params.window)
        return unconfirmed < self._s.params.window

    def pace(self, now: float) -> None:
        """Emit queued data at ``rate`` packets a second: drawing first, then image parts
        while the joiner's window is open."""
        if not self._s.serving():
            return
        while now >= self.next_send_at:
            if not self.sends and not any(self._window_open(j) for j in self.image_jobs.values()):
                return  # nothing we may send: the window over every station need not be read
            if not self.send_window_open():
                self._reminder.hurry(now)
                return
            job = next((j for j in self.image_jobs.values() if self._window_open(j)), None)
            # Strokes and image parts take turns: a backlog of strokes must not starve an
            # image until its joiner gives up (and asks, and is sent, another). A run of
            # pieces is not interleaved with anything: its numbers are consecutive (issue 20).
            if self._run or (self.sends and (job is None or not self._image_turn)):
                self._image_turn = True
                if self._run or len(self.sends[0]) > MAX_PAYLOAD:
                    self._emit_piece(now)
                    self._next_slot(now)
                    continue
                payloads = self._take_batch()
                if len(payloads) == 1:
                    self._emit(payloads[0], None, now)
                else:
                    self._emit(pack_batch(payloads), None, now, batch=len(payloads))
            else:
                if job is None:
                    return
                self._image_turn = False
                part = job.parts.popleft()
                job.progress_at = now
                if job.first_seq is None:
                    job.first_seq = self._s.seq + 1
                self._emit(part, job, now)
                if not job.parts:
                    del self.image_jobs[job.joiner]
            self._next_slot(now)

    def _next_slot(self, now: float) -> None:
        # A token bucket (§5 leaves flow control to us): what fell due in the last
        # PACE_CATCH_UP seconds goes now. Restarting the interval from `now` sent one
        # packet per wake-up, and a reactor that wakes a millisecond late held the lan
        # profile's 4,000 packets a second to ~1,000 (issue 18).
        earliest = max(self.next_send_at, now - PACE_CATCH_UP)
        self.next_send_at = earliest + 1.0 / self._s.params.rate

    def unfinished(self) -> tuple[int, int] | None:
        """Our run in progress: its first piece's wire number and the pieces sent so far."""
        sent = self._run_count - len(self._run)
        if not self._run or not sent:
            return None
        return to_wire(self._s.seq - sent + 1), sent

    def _emit_piece(self, now: float) -> None:
        """The next piece of the payload at the head of the queue, cut when its run begins:
        a data packet each, at the pace and in the window like any (§2.2, §5; issue 20)."""
        if not self._run:
            self._run = deque(split_message(self.sends[0], piece_size(self._s.max_packet)))
            self._run_count = len(self._run)
        data = self._run.popleft()
        piece = Piece(self._run_count - len(self._run) - 1, self._run_count)
        whole = None
        if not self._run:  # the last piece: the payload leaves the queue
            whole = self.sends.popleft()
            self.pending_bytes -= len(whole)
        self._emit(data, None, now, piece=piece, whole=whole)

    def _take_batch(self) -> list[bytes]:
        """The next queued payload, and those queued behind it that fit one packet with it
        (rmp/batch.py): under a backlog, several strokes a packet; else one, as Data."""
        sends = self.sends
        payloads = [sends.popleft()]
        size = framed_size(payloads[0])
        while self._s.params.batch and sends and len(payloads) < MAX_BATCH_COUNT:
            size += framed_size(sends[0])
            if size > MAX_BATCH_BYTES:
                break  # (a payload longer than a packet never fits: it goes in pieces)
            payloads.append(sends.popleft())
        self.pending_bytes -= sum(map(len, payloads))
        return payloads

    def _emit(
        self,
        data: bytes,
        job: ImageJob | None,
        now: float,
        batch: int = 0,
        piece: Piece | None = None,
        whole: bytes | None = None,
    ) -> None:
        """A new data packet (§2.2): the next S_n, our confirmations, multicast and stored;
        ``batch``: the data part holds that many payloads (rmp/batch.py); ``piece``: it is a
        piece of a longer payload, ``whole`` that payload once its last piece goes."""
        s = self._s
        s.seq += 1
        last = job is not None and not job.parts
        final: Data | Batch | Image | Piece = Batch(batch) if batch else Data()
        if job is not None:
            final = Image(last=last)
        elif piece is not None:
            final = piece
            last = piece.index == piece.count - 1  # the S bit marks a run's last piece
        # What is left for confirmations, with room for a reminder's Remind (§2.4).
        room = s.max_packet - HEADER_SIZE - SOURCE_SIZE - Remind.SIZE - final.wire_size
        confirms, confirmed = self._reminder.confirm_options(room - len(data))
        packet = RmpPacket(
            seq=to_wire(s.seq),
            timestamp=s.timestamp(now),
            options=(*confirms, final),
            data=data,
            s_bit=last,
            source=s.member_id,
        )
        s.transmit(packet, None, now)
        for station in confirmed:
            station.confirmed = True  # §2.3: confirmed in a multicast data packet
        s.own_store.put(s.member_id, s.seq, packet, now)
        s.stations.emitted(s.member_id)  # §2.5: depth 0
        self._reminder.sent(packet, now)
        if job is not None:
            s.counters["image_parts_sent"] += 1
        elif piece is None:
            self._delivery.deliver(s.member_id, packet, now)
        elif whole is not None:
            self._delivery.deliver(s.member_id, packet, now, whole)  # under the last piece's key

    def keepalive(self, now: float) -> None:
        s = self._s
        if not s.serving() or now < s.last_sent_at + s.params.keepalive:
            return
        # Extension: RMP is silent when idle, so a periodic control packet (our confirmations,
        # and our S_n in its header) keeps us known alive and lets others see a lost last packet.
        s.send_control(self._reminder.control_confirms(), None, now)
