"""``whiteboard peer``: a headless member that draws synthetic strokes on real multicast and
reports what it saw as one JSON object."""

from __future__ import annotations

import random
import signal
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from whiteboard.board import Change
from whiteboard.board.files import BoardFileError, describe_os_error, open_board
from whiteboard.board.synthetic import synthetic_stroke
from whiteboard.net.reactor import SelectorReactor
from whiteboard.net.runtime import NetConfig, open_transport
from whiteboard.pointer import PointerStats, encode_pointer, synthetic_position
from whiteboard.presence import (
    MAX_NAME,
    PRESENCE_S,
    BoardFingerprint,
    Presence,
    PresenceSchedule,
    default_colour,
    encode_name_card,
    encode_presence,
    is_checkpoint,
    name_card_of,
)
from whiteboard.replica import Replica
from whiteboard.security import OpAuthority, SessionKey
from whiteboard.sessionlog import (
    RecordingHandler,
    SessionHeader,
    SessionLogWriter,
    default_log_dir,
    header_on,
    keep_flushing,
)
from whiteboard.sessionlog.sealing import LogSealer
from whiteboard.transport.events import (
    BoardStateReceived,
    Delivered,
    EphemeralReceived,
    Event,
    Failure,
    MemberChanged,
    Ready,
)
from whiteboard.transport.interface import MemberState
from whiteboard.transport.registry import describe


@dataclass(frozen=True)
class PeerConfig:
    transport: str
    net: NetConfig
    name: str
    send: int = 0
    rate: float = 10.0  # strokes per second
    duration: float = 60.0  # hard cap on the whole run, seconds
    until_delivered: int | None = None
    wait_members: int = 0  # other members to see before drawing
    linger: float = 1.0  # after the goal: keep serving repairs this long before leaving
    presence: bool = True  # multicast a presence (whiteboard/presence.py), as the app does
    params: Mapping[str, object] = field(default_factory=dict)
    record: bool = True  # write a session log (docs/session-log.md)
    log_dir: Path | None = None  # None: WHITEBOARD_LOG_DIR, else the app's data folder
    # A board file (.wbd) this member holds before it joins, as one that has been in the
    # session a long time: what a late joiner is given (benchmarks/bench_join.py).
    board: Path | None = None
    key: SessionKey | None = None  # a private session's (whiteboard/security); None: in clear
    encrypt_log: bool = False  # a private session's log encrypted at rest (sessionlog/sealing)
    cursor_rate: float = 0.0  # pointer moves a second on the side channel (issue 19); 0: none

    def __post_init__(self) -> None:
        if self.send < 0:
            raise ValueError("--send must not be negative")
        if self.rate <= 0:
            raise ValueError("--rate must be positive")
        if not 0.0 <= self.cursor_rate <= 1000.0:
            raise ValueError("--cursor-rate must be 0 to 1000 moves a second")
        if self.duration <= 0:
            raise ValueError("--duration must be positive")
        if self.until_delivered is not None and self.until_delivered < 0:
            raise ValueError("--until-delivered must not be negative")


class HeadlessPeer:
    def __init__(self, config: PeerConfig) -> None:
        self.config = config
        self.reactor = SelectorReactor()
        self.replica = Replica()
        if config.board is not None:
            try:
                self.replica.board = open_board(config.board).board
            except BoardFileError as exc:
                raise ValueError(str(exc)) from None
        # A private session's ops are proven and checked (whiteboard/security/signing.py);
        # a seeded board's ops are vouched for by this member if it holds the passphrase.
        self.replica.use_authority(OpAuthority.for_session(config.key))
        for _, op in self.replica.board.log():
            self.replica.proof_of(op)  # now, not when a joiner is waiting for the board
        self.failures: list[str] = []
        self.members: dict[int, MemberState] = {}
        self.sent = 0
        self.started = self.reactor.time()
        self._cpu_started = time.process_time()
        self.join_ms: float | None = None
        self._drawing = False
        self._draw_due = 0.0  # when the next stroke falls due at --rate
        self._drawings: deque[bytes] = deque()  # made in advance (_prepare_drawings)
        self._leaving = False  # drawing is over: the goal is met, or we are leaving
        self._closing = False  # the transport was told to leave
        self._finished = False
        self._stop_requested = False
        self._rng = random.Random(f"{config.name}:{config.net.seed}")
        self.presences_sent = 0
        self.pointers = PointerStats()  # the others' pointers (whiteboard/pointer.py)
        self._pointer_moves = 0
        self._pointer_moving = False  # the move loop runs (one, however often we are ready)
        self._presence_schedule = PresenceSchedule()
        self._presence_ticking = False  # the presence loop runs (one, as the pointer's)
        self._fingerprint: BoardFingerprint | None = None
        # The board at its last checkpoint, told in presences as the app's are (so that a
        # member comparing boards finds a common point while we are still receiving).
        self._checkpoint: BoardFingerprint | None = None
        # The log's header needs the member id the transport draws, the transport needs its
        # handler first: the handler records once it is given the writer, before open().
        self._recorder = RecordingHandler(self._on_event, None, self.reactor.time)
        self.transport, self.carrier = open_transport(
            config.transport,
            config.net,
            self.reactor,
            self._recorder,
            config.params,
            on_finished=self._done,
            key=config.key,
        )
        self.log: SessionLogWriter | None = None
        if config.record:
            try:
                self.log = SessionLogWriter.create(
                    self._log_header(),
                    config.log_dir,
                    LogSealer.for_session(config.key, str(config.net.group), config.encrypt_log),
                )
            except OSError as exc:
                self.carrier.release()
                self.reactor.close()
                raise ValueError(
                    f"cannot record the session in {config.log_dir or default_log_dir()}: "
                    f"{describe_os_error(exc)} (choose another --log-dir, or --no-log)"
                ) from None
            self._recorder.writer = self.log
            keep_flushing(self.reactor, self.log, counters=self.transport.counters)

    def _log_header(self) -> SessionHeader:
        cfg = self.config
        return header_on(
            cfg.net,
            transport=cfg.transport,
            params=cfg.params,
            member_id=self.transport.member_id,
            member_name=cfg.name,
            now=self.reactor.time(),
            key=cfg.key,
        )

    def run(self) -> dict[str, object]:
        cfg = self.config
        self.reactor.call_at(self.started + cfg.duration, self._leave)
        # A signal handler runs between any two bytecodes, possibly inside the core: it only
        # raises a flag and wakes the loop, which then leaves from a safe place.
        previous = {s: signal.signal(s, self._on_signal) for s in _STOP_SIGNALS}
        wakeup = self.reactor.install_signal_wakeup()
        try:
            # Before joining: made once drawing starts they held the loop ~1.5 s for 10,000
            # strokes, unanswering, and a member joining then gave its board up and rejoined.
            self._prepare_drawings()
            # As the app: our name card travels with the join (whiteboard/presence.py).
            self.transport.open(encode_name_card(name_card_of(self.presence())))
            # The cap plus time to leave properly; the protocol's own leaving is bounded too.
            self.reactor.run(stop=self._should_stop, timeout=cfg.duration + 15.0)
        finally:
            signal.set_wakeup_fd(wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if not self._finished:
                self.carrier.release()
            if self.log is not None:
                now = self.reactor.time()
                self.log.record_counters(self.transport.counters(), now)
                self.log.close(now)
            self.reactor.close()
        return self.report()

    def report(self) -> dict[str, object]:
        counters = self.transport.counters()
        goal = self.config.until_delivered
        return {
            "name": self.config.name,
            "transport": self.config.transport,
            "member_id": self.transport.member_id,
            "sent": self.sent,
            "presences_sent": self.presences_sent,
            "delivered_total": len(self.replica.board),
            "delivered_by_origin": {
                f"{origin:08x}": count
                for origin, count in sorted(self.replica.stats.delivered_by_origin.items())
            },
            "reached_goal": goal is None or len(self.replica.board) >= goal,
            "board_hash": self.replica.board.hash(),
            "join_ms": self.join_ms,
            "members_seen": len([m for m in self.members if m != self.transport.member_id]),
            "nacks_sent": counters.get("nacks_sent", 0),
            "retransmissions": counters.get("retransmissions", 0),
            "malformed_dropped": counters.get("malformed_dropped", 0),
            # Private sessions: datagrams that failed the session's authentication.
            "auth_failures": counters.get("auth_failures", 0),
            "private": self.config.key is not None,
            # Whether the private session lets people watch with a view code (--allow-viewers).
            "viewers": self.config.key is not None and self.config.key.viewers,
            "can_draw": self.replica.can_draw,
            "duplicates_delivered": self.replica.stats.duplicates_delivered,
            "rejected_ops": self.replica.stats.rejected,
            # A private session's ops without a drawer's proof (a viewer's): not applied.
            "unproven_ops": self.replica.stats.unproven,
            "tx_loss_injected": self.carrier.stats.tx_loss_injected,
            "rx_loss_injected": self.carrier.stats.rx_loss_injected,
            "receive_buffer": self.carrier.stats.receive_buffer,
            "rejected_states": self.replica.stats.rejected_states,
            "counters": counters,
            "failures": self.failures,
            "elapsed_s": round(self.reactor.time() - self.started, 3),
            # This process's CPU time (user and system) since it began: for benchmarks.
            "cpu_s": round(time.process_time() - self._cpu_started, 3),
            "log": None if self.log is None else str(self.log.path),
            "cursors_sent": self._pointer_moves,
            **self.pointers.report(),
        }

    # -- events ------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, EphemeralReceived):
            self.pointers.take(event.origin, event.payload, round(time.time() * 1_000_000))
            return
        change = self.replica.handle(event, self.transport)
        if isinstance(event, Delivered):
            if isinstance(change, Change) and not change.duplicate:
                self._passed_op()
            self._check_goal()
        elif isinstance(event, Ready):
            self.join_ms = round((self.reactor.time() - self.started) * 1000.0, 3)
            can_send = describe(self.config.transport).can_send(self.config.params)
            if self.config.presence and can_send:
                # As the app: who we are first, before any drawing (whiteboard/presence.py).
                if self._presence_ticking:  # ready again: said soon, by the loop that runs
                    self._presence_schedule.due = True
                else:
                    self._presence_ticking = True
                    self._presence_tick()
            self._maybe_start_drawing()
            if self.config.cursor_rate and not self._pointer_moving:
                # Ready again after a rejoin or an MTP takeover: the loop already runs.
                self._pointer_moving = True
                self._move_pointer()
            self._check_goal()
        elif isinstance(event, MemberChanged):
            if event.member not in self.members and event.state is not MemberState.LEFT:
                self._presence_schedule.due = True  # a newcomer: tell it who we are soon
            self.members[event.member] = event.state
            self._maybe_start_drawing()
        elif isinstance(event, BoardStateReceived):
            self._checkpoint = None  # a board state: the points passed before are not its past
            if self.replica.stats.rejected_states:
                self.failures.append(self.replica.last_rejection)
        elif isinstance(event, Failure):
            self.failures.append(event.reason)

    def _move_pointer(self) -> None:
        """Our synthetic pointer's next move, on the side channel, at ``--cursor-rate``."""
        if self._leaving or self._closing:
            self._pointer_moving = False
            return
        self._pointer_moves += 1
        sent_us = round(time.time() * 1_000_000)
        position = synthetic_position(self._pointer_moves, self.config.cursor_rate, sent_us)
        payload = encode_pointer(position)
        try:
            self.transport.send_ephemeral(payload)
        except RuntimeError:
            self._pointer_moving = False  # the session ended under us: moved again if ready
            return
        if self.log is not None:
            self.log.record_side(self.transport.member_id, payload, self.reactor.time())
        self.reactor.call_later(1.0 / self.config.cursor_rate, self._move_pointer)

    def _others_active(self) -> int:
        return sum(
            1
            for member, state in self.members.items()
            if member != self.transport.member_id and state is MemberState.ACTIVE
        )

    def _maybe_start_drawing(self) -> None:
        if self._drawing or self.join_ms is None or self._leaving:
            return
        if self._others_active() < self.config.wait_members:
            return
        self._drawing = True
        self._draw_next()

    def _draw_next(self) -> None:
        """Draw the strokes that fell due at ``--rate`` since the last call (at most
        DRAW_BATCH, and nothing of a stall longer than DRAW_CATCH_UP is made up): one stroke
        per reactor turn held a fast sender to the turns' rate, not ``--rate`` (issue 18)."""
        if self._leaving or self.sent >= self.config.send:
            return
        now = self.reactor.time()
        self._draw_due = max(self._draw_due, now - DRAW_CATCH_UP)
        for _ in range(DRAW_BATCH):
            if self._draw_due > now or self.sent >= self.config.send or self._leaving:
                break
            self._draw_one(now)
            self._draw_due += 1.0 / self.config.rate
        self.reactor.call_later(max(0.0, self._draw_due - now), self._draw_next)

    def _draw_one(self, now: float) -> None:
        self.sent += 1
        payload = self._drawings.popleft() if self._drawings else self._stroke(self.sent)
        self.transport.send(payload)
        if self.log is not None:
            self.log.record_local_op(payload, now)

    def _stroke(self, counter: int) -> bytes:
        """Our ``counter``-th stroke, encoded (the seed's strokes are drawn in counter order)."""
        return self.replica.payload_of(
            synthetic_stroke(self.transport.member_id, counter, self._rng)
        )

    def _prepare_drawings(self) -> None:
        """Make the strokes to draw before joining: what the UI would hand us is not
        the transport's cost, and a benchmark of it must not count it (the same strokes, in
        the same order, as drawn one at a time)."""
        for counter in range(1, min(self.config.send, PREPARED_DRAWINGS) + 1):
            self._drawings.append(self._stroke(counter))

    def _board_fingerprint(self) -> BoardFingerprint:
        board = self.replica.board
        cached = self._fingerprint
        if cached is None or (cached.ops, cached.last_key) != (len(board), board.last_key):
            cached = self._fingerprint = BoardFingerprint.of(board)
        return cached

    def _passed_op(self) -> None:
        if is_checkpoint(len(self.replica.board)):
            self._checkpoint = self._board_fingerprint()

    def presence(self) -> Presence:
        """What the app's presence says, with this peer's ``--name`` and a default colour."""
        counters = self.transport.counters()
        return Presence(
            self.config.name[:MAX_NAME] or "peer",
            default_colour(self.transport.member_id),
            self._board_fingerprint(),
            counters.get("nacks_sent", 0),
            counters.get("retransmissions", 0),
            counters.get("late_delivered", 0),
            self._checkpoint,
        )

    def _presence_tick(self) -> None:
        if self._leaving or self.transport.finished:
            self._presence_ticking = False
            return
        now = self.reactor.time()
        presence = self.presence()
        if self._presence_schedule.is_due(presence, now):
            payload = encode_presence(presence)
            try:
                self.transport.send(payload)
            except (ValueError, RuntimeError):
                self._presence_ticking = False  # leaving, or not in the session now
                return
            if self.log is not None:
                self.log.record_local_op(payload, now)
            self.presences_sent += 1
            self._presence_schedule.sent(presence, now)
        self.reactor.call_later(PRESENCE_S, self._presence_tick)

    def _check_goal(self) -> None:
        goal = self.config.until_delivered
        if goal is None or self._leaving or self.sent < self.config.send:
            return
        if len(self.replica.board) >= goal:
            # Others may still need repairs from us: keep serving a while, then leave.
            self._leaving = True
            self.reactor.call_later(self.config.linger, self._leave)

    def _leave(self) -> None:
        self._leaving = True
        if self._closing:
            return
        self._closing = True
        if not self._finished and not self.transport.finished:
            self.transport.close()

    def _done(self) -> None:
        self._finished = True

    def _on_signal(self, signum: int, frame: object) -> None:
        self._stop_requested = True

    def _should_stop(self) -> bool:
        # A stop signal ends a linger after the goal too (it used to wait it out: the
        # benchmark's SIGTERM then met --linger 30 and had to kill the member).
        if self._stop_requested and not self._closing:
            self._leave()
        return self._finished


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
DRAW_BATCH = 64  # strokes drawn in one reactor turn at most
DRAW_CATCH_UP = 0.01  # seconds of --rate made up after a late turn
PREPARED_DRAWINGS = 100_000  # strokes made in advance (~400 bytes each), the rest as drawn


def run_peer(config: PeerConfig) -> dict[str, object]:
    peer = HeadlessPeer(config)
    started = time.perf_counter()
    result = peer.run()
    result["wall_s"] = round(time.perf_counter() - started, 3)
    return result
