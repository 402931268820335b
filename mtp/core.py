"""The MTP protocol engine (RFC 1301; Freier & Marzullo, Cornell TR 90-1141), sans-I/O.

``MtpCore`` is a thin core: it routes each packet to the part whose job it is (``Receiver``,
``Sender``, ``MasterRole`` on the master only, ``Joining``, ``Vouching``), takes the earliest
of their deadlines, and alone changes the phase (``_enter``). It never touches a socket or a
clock: the driver feeds it datagrams and ``now`` and takes its datagrams and its next
deadline (the shape of ``whiteboard/transport/interface.py``, met structurally).

Section references are to RFC 1301 unless they say TR. Where the RFC is silent or ambiguous
the choice is said where it is made and summed up in docs/mtp.md.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from coreapi import Address, MemberState, Outgoing, UpperLayer
from mtp.bounds import MAX_MESSAGE, check_send
from mtp.departure import Departure
from mtp.failover import Failover
from mtp.fastpath import past_padding
from mtp.framing import STATE_SUBCHANNEL, FramingError, decode_state
from mtp.joining import Joining
from mtp.link import Link, Phase
from mtp.master_role import MasterRole
from mtp.messages import InMessage, OutMessage
from mtp.params import MtpParams, params_from_mapping
from mtp.receiver import Receiver
from mtp.sender import Sender
from mtp.side import SideChannel, is_side_channel
from mtp.views import MemberViews
from mtp.vouching import Vouching
from mtp.web import Web
from mtp.wire import (
    STATUS_COUNT,
    DataModifier,
    EmptyModifier,
    JoinData,
    JoinModifier,
    MemberClass,
    MessageStatus,
    MtpDecodeError,
    MtpHeader,
    MtpPacket,
    NakList,
    NakModifier,
    PacketType,
    TokenModifier,
    decode_once,
)

MAX_PAYLOAD = 60_000  # what the app cuts strokes to; a message spreads it over ~43 packets
MAX_PENDING_SENDS = 100_000  # payloads queued; and MAX_QUEUED_BYTES bytes (mtp/bounds.py)
_IN_WEB = (Phase.READY, Phase.LEAVING)  # with the board: the side channel is open
_PADDED = (Phase.SYNCING, Phase.READY, Phase.LEAVING, Phase.QUITTING)  # in a web: see fastpath
# A data packet's message number may run ahead of the master's number as we last heard it:
# tokens granted since, by unicast, to others (at most 12 pending, §2.2.6), with slack.
AHEAD = 2 * STATUS_COUNT


class MtpCore(MemberViews):
    max_payload = MAX_PAYLOAD
    max_message = MAX_MESSAGE  # issue 20: one message of many packets (mtp/bounds.py)

    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: MtpParams
    ) -> None:
        if not 0 < member_id < 2**32:
            raise ValueError(f"member id must be a non-zero 32-bit number, got {member_id}")
        self.member_id = member_id
        self._upper = upper
        self._rng = rng
        self._p = params
        self._phase = Phase.NEW
        self._link = Link(member_id, upper, rng, params)
        self._master_beat = params.heartbeat  # the master's last heartbeat, hibernation's too
        self._tick_at: float | None = None  # the next heartbeat's work
        # The master's part (§3.1, §3.2.1, §3.3): only the master's core has one.
        self._master = MasterRole(self._link, self) if params.role == "master" else None
        self._sender = Sender(self._link, self, self._master)  # §3.2.1-§3.2.3
        self._receiver = Receiver(self._link, self)  # §3.2.4-§3.2.6: one per membership
        self._joining = Joining(self._link, self)  # §3.1
        self._vouching = Vouching(self._link, self._sender.serve_nak)  # §3.2.8, §3.4.3
        self._failover = Failover(self._link, self)  # extension: a successor re-forms the web
        self._departure = Departure(self._link, self, self._sender)  # §3.2.8, §3.3
        # Extension: the side channel (mtp/side.py), open while we are in the web with the board.
        self._side = SideChannel(self._link, upper, lambda: self._phase in _IN_WEB)

    # -- the TransportCore interface ---------------------------------------------------------

    @property
    def web(self) -> Web:
        """The web this member is in now (a new one after every join)."""
        return self._link.web

    @web.setter
    def web(self, web: Web) -> None:
        self._link.web = web

    @property
    def finished(self) -> bool:
        return self._phase is Phase.FINISHED

    def counters(self) -> dict[str, int]:
        counters = dict(self._link.counters)
        counters["status_conflicts"] = self.web.book.conflicts
        counters["queued"] = len(self._sender.queue)
        cached = len(self._master.repair_cache) if self._master is not None else 0
        counters["retained"] = len(self._sender.flight.own) + cached
        counters.update(self._side.counters())
        return counters

    def introduce(self, introduction: bytes) -> None:
        self._joining.introduction = bytes(introduction)  # in our join[request]s

    def start(self, now: float) -> None:
        if self._phase is not Phase.NEW:
            return
        self._upper.member_changed(self.member_id, MemberState.JOINING)
        self._tick_at = now
        # §3.1: a master first probes for a web already there; others ask to join (§3.1.1).
        self._enter(Phase.PROBING if self._master is not None else Phase.JOINING)
        self.handle_timer(now)

    def send(self, payload: bytes, now: float) -> None:
        if self._phase in (Phase.NEW, Phase.LEAVING, Phase.QUITTING, Phase.FINISHED):
            raise RuntimeError("the mtp transport is not in a session")
        if self._link.member_class is MemberClass.CONSUMER:
            raise RuntimeError("this member joined the mtp web as a consumer: it does not send")
        queue = self._sender.queue
        check_send(len(payload), self._link.unit, len(queue), queue.bytes, MAX_PENDING_SENDS)
        self._sender.add(now, bytes(payload))
        self._link.counters["sent"] += 1
        self._sender.want_token(now)
        self._flush(now)

    def send_ephemeral(self, payload: bytes, now: float) -> None:
        if self._phase in (Phase.NEW, Phase.FINISHED):
            raise RuntimeError("the mtp transport is not in a session")
        self._side.send(payload, now)

    def leave(self, now: float) -> None:
        self._side.stop()
        if self._phase in (Phase.LEAVING, Phase.QUITTING, Phase.FINISHED):
            return
        if self._phase in (Phase.NEW, Phase.PROBING, Phase.JOINING, Phase.SYNCING):
            self.finish()
            return
        self._enter(Phase.LEAVING)
        if self._master is not None:
            self._master.leave()
        self.check_leave(now)
        self._flush(now)

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        if self._master is not None:
            self._master.provide_board_state(request, state, now)

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        out, self._link.outbox = self._link.outbox, []
        return out

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        phase = self._phase
        if phase is Phase.NEW or phase is Phase.FINISHED:
            return
        link = self._link
        link.counters["datagrams_received"] += 1
        if is_side_channel(data):
            self._side.receive(data, now)  # not MTP: apart from all below
            return
        try:
            packet = decode_once(data)
        except MtpDecodeError:
            link.counters["malformed_dropped"] += 1
            return
        header = packet.header
        if header.source == link.member_id:
            return  # our own multicast, looped back
        if header.packet_type is PacketType.DATA and len(data) > 28 + 1400:
            link.counters["malformed_dropped"] += 1  # no member of ours makes one this large
            return
        if (
            self._master is None
            and phase in _PADDED
            and past_padding(link, self._sender.flight.own, header, addr)
        ):
            return  # §3.2.3 padding of a message we are past (mtp/fastpath.py)
        self._on_packet(packet, addr, now)
        self._flush(now)

    def handle_timer(self, now: float) -> None:
        if self._phase is Phase.FINISHED:
            return
        if self._tick_at is not None and now >= self._tick_at:
            due = self._tick_at
            self._tick(now)
            if self._tick_at == due:  # not moved (or cleared) by what the tick did
                beat = self._master.tick_period() if self._master else self._link.heartbeat
                self._tick_at = max(due + beat, now + beat / 4)
        self._receiver.nak_rounds(now)
        self._sender.pump(now)
        self._side.timer(now)
        self._flush(now)

    def get_timer(self) -> float | None:
        if self._phase is Phase.FINISHED:
            return None
        # The earliest of the parts' deadlines; the driver asks after every event.
        soonest = self._tick_at
        for at in (
            self._sender.next_deadline(),
            self._receiver.next_deadline(),
            self._side.next_deadline(),
        ):
            if at is not None and (soonest is None or at < soonest):
                soonest = at
        return soonest

    # -- extensions of the interface (§3.4.1) ------------------------------------------------

    def adjust_parameters(
        self,
        now: float,
        heartbeat: float | None = None,
        window: int | None = None,
        retention: int | None = None,
    ) -> None:
        """The master changes the web's quality of service within the bounds agreed at join;
        a member suggests a change, carried in its next token[request] (§3.4.1)."""
        new = self._link.checked_parameters(heartbeat, window, retention)
        if self._master is not None:
            self._link.set_parameters(*new)
            self._master.send_empty(EmptyModifier.DALLY, now)
            self._flush(now)
        else:
            self._sender.suggestion = new

    # -- what the parts ask of the member (MasterHost, SenderHost, ReceiverHost, JoiningHost) --

    def busy(self) -> bool:
        return bool(
            self._sender.queue
            or self._sender.flight.sending
            or self._sender.flight.retx
            or self._receiver.incomplete()
        )

    def own(self, number: int) -> OutMessage | None:
        return self._sender.flight.own.get(number)

    def incoming(self, number: int) -> InMessage | None:
        return self._receiver.incoming.get(number)

    def on_decided(self, number: int, status: MessageStatus, now: float) -> None:
        self._sender.on_decided(number, status, now)

    def take_own_token(self, number: int, now: float) -> None:
        self._sender.take_token(number, now)

    def restart_tick(self, at: float) -> None:
        self._tick_at = at

    def send_own_state(self, message: OutMessage, now: float) -> None:
        self._sender.send_state(message, now)
        self._flush(now)

    # -- the periodic work (one heartbeat) ---------------------------------------------------

    def _tick(self, now: float) -> None:
        phase = self._phase
        if phase is Phase.PROBING:
            if self._joining.probe():
                self._found_web(now)
            return
        if phase is Phase.JOINING:
            if self._failover.due(now):
                self._failover.take_over(now)  # no earlier successor's web answered us
                return
            self._joining.send_request()
            return
        if self._master is not None:
            self._master.tick(now)
        else:
            self._member_tick(now)
            self._joining.check_board(now)  # TR §3.4: the board, within a bound
        self._sender.expire_own(now)
        self._vouching.ask_again(now)
        if phase in (Phase.LEAVING, Phase.QUITTING):
            self.check_leave(now)

    def _member_tick(self, now: float) -> None:
        limit = max(
            self._p.silence_limit,
            self._link.retention * max(self._link.heartbeat, self._master_beat),
        )
        if now - self.web.heard_master_at > limit:
            seconds = now - self.web.heard_master_at
            if self._phase in (Phase.LEAVING, Phase.QUITTING):
                unsent = self._sender.unsent()
                if unsent:
                    self._upper.failure(
                        f"the mtp master went silent while this member was leaving; "
                        f"{unsent} payload{'' if unsent == 1 else 's'} not sent in this web"
                    )
                self.finish()
                return
            silence = f"no word from the mtp master for {seconds:.1f} s (RFC 1301 §3.2.5)"
            if self._failover.enabled:
                self._failover.master_lost(f"{silence}: the board goes on under a new master", now)
            else:
                self.rejoin(f"{silence}: rejoining the web", now)
            return
        if self._sender.flight.token_wanted_at is not None:
            self._sender.send_token_request(now)  # §3.2.1: retried every heartbeat
        self._check_behind(now)

    # -- receiving ---------------------------------------------------------------------------

    def _on_packet(self, packet: MtpPacket, addr: Address, now: float) -> None:
        header = packet.header
        kind = header.packet_type
        if kind is PacketType.JOIN:
            self._on_join(packet, addr, now)
            return
        if self._phase in (Phase.PROBING, Phase.JOINING):
            return  # not in a web yet: nothing else is for us
        if self._master is not None and self._failover.is_other_master(header):
            self._failover.meet_master(header, now)
            return
        multicast = kind in (PacketType.DATA, PacketType.EMPTY) or (
            kind is PacketType.QUIT and header.destination == self.web.id
        )
        if header.destination != (self.web.id if multicast else self._link.member_id):
            self._link.counters["foreign_dropped"] += 1
            return
        source = header.source
        if addr != self.web.master_addr or source == self.web.master_id:
            # Not learned from the master's relays of others' packets (extension, docs/mtp.md).
            self._link.remember(source, addr)
        if source == self.web.master_id and self._master is None:
            self.web.heard_master_at = now
            if header.modifier is not EmptyModifier.HIBERNATE or kind is not PacketType.EMPTY:
                self._link.adopt_parameters(header)
        if self._master is not None and not self._master.heard_from(
            source, kind, header.modifier, now
        ):
            self._vouching.banish(source, addr, now)  # §3.3.3
            return
        match kind:
            case PacketType.DATA:
                self._on_data(packet, now)
            case PacketType.EMPTY:
                self._on_empty(packet, now)
            case PacketType.NAK:
                self._on_nak(packet, addr, now)
            case PacketType.TOKEN:
                self._on_token(packet, addr, now)
            case PacketType.QUIT:
                self._on_quit(packet, addr, now)
            case PacketType.IS_MEMBER:
                self._vouching.on_is_member(packet, addr, now, self._master)

    def _learn(self, header: MtpHeader, number: int, now: float) -> bool:
        """Take the decided statuses a packet carries (§2.2.6). Only the master sets them;
        every other packet copies them from the master, so any decided one is believed."""
        if self._master is not None:
            return True
        web = self.web
        learned = web.book.learn(number, header.acceptance.statuses)
        if learned:
            for decided in learned:
                self._sender.on_decided(decided, web.book.status(decided), now)  # type: ignore[arg-type]
            self.deliver(now)
        return self.web is web  # False: what it taught made us abandon the web (§3.2.5)

    def _on_data(self, packet: MtpPacket, now: float) -> None:
        header = packet.header
        record = header.acceptance
        number = self.web.number(record.message_seq)
        if number < self.web.next_deliver or number in self._sender.flight.own:
            self._link.counters["duplicates_dropped"] += 1
            return
        if number >= self._horizon():
            self._link.counters["out_of_range_dropped"] += 1
            return
        message = self._open_message(header, number, now)
        if message is None:
            return
        source = header.source
        if not Receiver.claim(message, source, self._owner(number)) or not Receiver.take_subchannel(
            message, header.subchannel
        ):
            self._link.counters["malformed_dropped"] += 1  # two producers, or subchannels
            return
        self._heard_holder(number, source, now)
        assert isinstance(packet.body, bytes) and isinstance(header.modifier, DataModifier)
        if not self._receiver.store(message, header.modifier, record.packet_seq, packet.body, now):
            return
        if self._phase is Phase.SYNCING and number == self.web.join_number:
            self._receiver.report_state_progress(message)
        if self._master is not None and number in self._master.grants and message.complete:
            self._master.decide(number, MessageStatus.ACCEPTED, now)  # §2.2.6, TR §3.2
        self.deliver(now)

    def _open_message(self, header: MtpHeader, number: int, now: float) -> InMessage | None:
        """The message a producer's data or empty[dally] is part of, once the statuses the
        packet carries are learned (§2.2.6); None if there is none to keep."""
        web = self.web
        if not self._learn(header, number, now):
            return None  # we abandoned the web (§3.2.5): nothing to keep
        if self._master is None:
            web.next = max(web.next, number + 1)
        return self._receiver.message(number, now)

    def _heard_holder(self, number: int, source: int, now: float) -> None:
        if self._master is not None:
            self._master.heard_holder(number, source, now)

    def _owner(self, number: int) -> int | None:
        """The holder of the token for ``number``, as the master granted it (§3.2.1)."""
        grant = self._master.grants.get(number) if self._master is not None else None
        return grant.owner if grant is not None else None

    def deliver(self, now: float) -> None:
        self._receiver.deliver(now)

    def _horizon(self) -> int:
        if self._master is not None:
            return self.web.next  # nothing beyond what we granted exists
        return self.web.next + AHEAD

    def _on_empty(self, packet: MtpPacket, now: float) -> None:
        header = packet.header
        record = header.acceptance
        number = self.web.number(record.message_seq)
        source = header.source
        if source == self.web.master_id and self._master is None:
            if self._failover.from_master(packet, now):
                return  # it dissolved the web: we left it
            # The master's heartbeat: the next message number it will grant, its statuses.
            if not self._in_range(number, source, now):
                return
            self.web.next = max(self.web.next, number)
            self._master_beat = header.heartbeat / 1000.0
            self._learn(header, number, now)
            self._check_behind(now)
            return
        if header.modifier is EmptyModifier.CANCEL:
            # §3.2.3: an unneeded token comes back; the master rejects its message.
            if self._master is not None and self._owner(number) == source:
                self._master.decide(number, MessageStatus.REJECTED, now)
            return
        # empty[dally] from a producer: (m, k), k one past its last packet of m (§2.2.6).
        if number < self.web.next_deliver or number in self._sender.flight.own:
            return
        if number >= self._horizon() or (
            self._master is None and number > self.web.next + STATUS_COUNT + 1
        ):
            self._link.counters["out_of_range_dropped"] += 1  # §2.2.6's range check
            return
        message = self._open_message(header, number, now)
        if message is None or not Receiver.claim(message, source, self._owner(number)):
            return
        self._heard_holder(number, source, now)
        self._receiver.on_dally(message, record.packet_seq, now)

    def _in_range(self, number: int, source: int, now: float) -> bool:
        """§2.2.6: a control packet's message number must lie within m - 11 .. m + 13 of ours
        (the RFC's "m-11 to m-13" read as m + 13). Out of range it is dropped, except the
        master's from further ahead: its word stands, and it tells us we are behind."""
        if self.web.next - (STATUS_COUNT - 1) <= number <= self.web.next + STATUS_COUNT + 1:
            return True
        self._link.counters["out_of_range_dropped"] += 1
        return source == self.web.master_id and number > self.web.next

    # -- delivery (§2.2.6, TR §3.2) ----------------------------------------------------------

    def finish_sync(self, subchannel: int | None, body: bytes | None, now: float) -> bool:
        """Message s, the first after our join: the board if it is one (TR §3.4)."""
        number = self.web.join_number
        if subchannel != STATE_SUBCHANNEL or body is None:
            # The master sent no board: we start empty, at s.
            self._become_ready(now)
            return True
        try:
            master_number, state = decode_state(body)
        except FramingError as exc:  # corrupt, cut short, a bomb: counted, said, rejoined
            self._link.counters["states_refused"] += 1
            self.rejoin(f"the board sent by the mtp master is unusable ({exc}): rejoining", now)
            return False
        self._receiver.drop(number)
        self._rebase(master_number - number)
        self.web.next_deliver = master_number + 1
        self._sender.board_verdicts(master_number, body)
        self._upper.board_state_received(state)
        self._become_ready(now)
        return True

    def _rebase(self, delta: int) -> None:
        """Adopt the master's unbounded numbering (carried in the board message), so that our
        order keys are everyone's."""
        if not delta:
            return
        self.web.rebase(delta)
        self._receiver.rebase(delta)
        self._sender.flight.rebase(delta)

    def _become_ready(self, now: float) -> None:
        self._enter(Phase.READY)
        self._upper.member_changed(self.member_id, MemberState.ACTIVE)
        self._upper.ready()
        self._sender.settle_doubt()
        self._sender.want_token(now)

    def _check_behind(self, now: float) -> None:
        """§2.2.6: a member that falls more than 12 messages behind cannot learn the status
        of the oldest one any more; it rejoins. So does a joiner whose board it is."""
        if self._phase not in (Phase.SYNCING, Phase.READY, Phase.LEAVING):
            return
        oldest = self.web.next - STATUS_COUNT
        if self.web.next_deliver < oldest and self.web.book.status(self.web.next_deliver) is None:
            self.rejoin(
                f"this member fell more than 12 messages behind the mtp web (message "
                f"{self.web.next_deliver}, the master is at {self.web.next}): rejoining",
                now,
            )

    # -- naks and retransmission (§3.2.4-§3.2.7) ---------------------------------------------

    def _on_nak(self, packet: MtpPacket, addr: Address, now: float) -> None:
        header = packet.header
        body = packet.body
        assert isinstance(body, NakList)
        if header.modifier is NakModifier.DENY:
            self._on_nak_deny(header.source, body, now)
            return
        self._link.counters["nacks_received"] += 1
        requester = header.source
        if not self._vouching.vouched(requester, now):
            self._vouching.hold(requester, body.packets, now)
            return
        self._sender.serve_nak(requester, body.packets, now)

    def _on_nak_deny(self, source: int, body: NakList, now: float) -> None:
        self._link.counters["nak_denies_received"] += 1
        denied: dict[int, list[int]] = {}
        for entry in body.packets:
            denied.setdefault(self.web.number(entry.message), []).append(entry.packet)
        for number, packets in denied.items():
            message = self._receiver.incoming.get(number)
            if message is None or message.complete:
                continue
            if self._master is not None and number in self._master.grants:
                # The producer cannot give us a packet we lack: the message cannot be accepted
                # (not for a deny of our guesses at its tail only, which may not exist).
                if message.known_to_exist(packets):
                    self._master.decide(number, MessageStatus.REJECTED, now)
                continue
            if source == self.web.master_id:
                if self.web.book.status(number) is MessageStatus.ACCEPTED:
                    self.rejoin(
                        f"mtp message {number} was accepted but is lost to this member "
                        "(nak[deny] from the master, RFC 1301 §3.2.6): rejoining the web",
                        now,
                    )
                    return
                continue
            self._receiver.denied(message, source, now)

    # -- sending (§3.2.2, §3.2.3) ------------------------------------------------------------

    def _on_token(self, packet: MtpPacket, addr: Address, now: float) -> None:
        header = packet.header
        if header.modifier is TokenModifier.REQUEST:
            if self._master is not None:
                self._master.on_token_request(header, now)
            return
        if header.source != self.web.master_id:
            return
        number = self.web.number(header.acceptance.message_seq)
        # Not §2.2.6's control-packet range: a token[confirm] carries the message it grants,
        # and up to 12 later ones may be out already (we may have seen their data).
        if not self.web.next_deliver <= number < self.web.next + AHEAD:
            self._link.counters["out_of_range_dropped"] += 1
            return
        web = self.web
        if not self._learn(header, number, now):
            return  # we abandoned the web (§3.2.5): the confirm is void
        web.next = max(web.next, number + 1)
        self._sender.on_token_confirm(number, now)

    # -- the master (§3.1, §3.2.1, §3.3) -----------------------------------------------------

    def _found_web(self, now: float) -> None:
        web_id = self._rng.randrange(1, 2**32)
        while web_id == self._link.member_id:
            web_id = self._rng.randrange(1, 2**32)
        first = self._failover.resume_from if self._failover.taking_over else 0
        self.web = Web(web_id, self._link.member_id, next=first, next_deliver=first)
        for number in range(first - STATUS_COUNT, first):
            # A successor's web goes on past the old one's numbers: none of those is its own.
            self.web.book.decide(number, MessageStatus.REJECTED)
        self._failover.settled()
        self._enter(Phase.READY)
        self._upper.protocol_event("web_founded", {"web": self.web.id, "first": first})
        self._upper.member_changed(self.member_id, MemberState.ACTIVE)
        self._upper.ready()
        self._sender.settle_doubt()  # a successor's message in doubt: its web is gone
        self._sender.want_token(now)
        if first:
            self._upper.protocol_event("took_over", {"web": self.web.id, "first": first})

    def _on_join(self, packet: MtpPacket, addr: Address, now: float) -> None:
        header, body = packet.header, packet.body
        assert isinstance(body, JoinData)
        if header.modifier is JoinModifier.REQUEST:
            if self._phase in (Phase.READY, Phase.LEAVING):  # who asks (mtp/link.py)
                self._link.introduced(header.source, body.introduction)
            if self._phase is Phase.PROBING and body.member_class is MemberClass.MASTER:
                if header.source < self._link.member_id:
                    self.web_answers(
                        f"another mtp master ({header.source:#x}) is starting a web on "
                        f"{self._p.group} at the same time; this one stands down",
                        now,
                    )
                return
            if self._master is not None and self._phase in (
                Phase.READY,
                Phase.LEAVING,
                Phase.QUITTING,
            ):
                self._master.on_join_request(header.source, body, addr, now)
            return
        if header.destination != self._link.member_id:
            self._link.counters["foreign_dropped"] += 1
            return
        if header.source == self._failover.gone:
            return  # the master we gave up (a late answer, or it is closing its web)
        self._joining.on_answer(header, body, addr, now)

    # -- quit, banishment, isMember (§3.2.8, §3.3, §3.4.3) -----------------------------------

    def _on_quit(self, packet: MtpPacket, addr: Address, now: float) -> None:
        self._departure.on_quit(packet, addr, now, self._master)

    def master_ends_web(
        self, header: MtpHeader, confirm: MtpPacket, addr: Address, now: float
    ) -> None:
        """§3.3.2: the master ends the web. Its last statuses ride on the quit, like every
        packet's (§2.2.6): deliver what they decide before we go (or, with failover, before
        the board goes on under the master's successor)."""
        master = self.web.master_id  # (_learn may abandon this web: it still left us)
        self._learn(header, self.web.number(header.acceptance.message_seq), now)
        self._link.send(confirm, addr)
        if self._failover.enabled and self._phase in (Phase.READY, Phase.SYNCING):
            self._failover.master_lost("the mtp master left the web: the board goes on", now)
            return
        if self._failover.enabled and self._phase is Phase.JOINING:
            return  # what the quit told us made us rejoin already: that plan stands
        self._link.report_left(self._link.identity_of(master))
        unsent = self._sender.unsent()
        plural = "" if unsent == 1 else "s"
        note = f"; {unsent} payload{plural} not sent in this web" if unsent else ""
        self._upper.failure(f"the mtp master closed the web{note}")
        self.finish()

    # -- leaving and rejoining ---------------------------------------------------------------

    def check_leave(self, now: float) -> None:
        self._departure.check(now, self._master)

    def start_quitting(self, now: float) -> None:
        self._enter(Phase.QUITTING)
        if self._master is not None:
            self._master.start_quitting(now)

    def rejoin(
        self, reason: str, now: float, web_ends: bool = False, master_gone: bool = False
    ) -> float | None:
        """Abandon the web (§3.2.5) and join it again, board and all (TR §3.4). Payloads not
        yet accepted are kept and sent once we are back. Returns when we take over as master
        if no web answers (failover, mtp/failover.py), or None.

        ``web_ends``: the web itself is over (its master died, left, or merged it into another
        web): our numbered messages not yet delivered are delivered here, at their numbers
        (``Sender.abandon``). ``master_gone``: successors take their turns at once."""
        self._upper.failure(reason)
        self._link.counters["rejoins"] += 1
        self._upper.protocol_event("rejoin", {"reason": reason[:120]})
        takeover = self._failover.plan(now, master_gone)
        # With failover the master we leave may be dead however we came to leave it (its
        # last repairs failed, say): no board of its will bring our accepted messages.
        for message in self._sender.abandon(web_ends, keep_accepted=self._failover.enabled):
            self._failover.deliver_own(message)
        self._receiver = Receiver(self._link, self)
        old, self.web = self.web, Web()  # the old membership is gone whole (§3.2.5)
        self._joining.restart(old)  # as a new instantiation (§3.1.1)
        self._enter(Phase.JOINING)
        self._upper.member_changed(self.member_id, MemberState.JOINING)
        self._tick_at = now
        self._joining.send_request()
        return takeover

    # -- master failover's turns (mtp/failover.py): the role and phase changes are the core's ----

    def become_master(self, now: float) -> None:
        """Our turn as successor: probe as a new master does (§3.1), then found the web."""
        self._set_master(MasterRole(self._link, self))
        self._joining.restart_probes()
        self._enter(Phase.PROBING)
        self._tick_at = now

    def stand_down(self, now: float) -> None:
        """Probing as a successor, a web answered: join it."""
        self._set_master(None)
        self._joining.restart(self.web)
        self._enter(Phase.JOINING)
        self._tick_at = now

    def stop_being_master(self) -> None:
        self._set_master(None)

    def web_answers(self, reason: str, now: float) -> None:
        """While probing, a web (or another would-be master) answered: a successor joins it;
        a master started as one stands down and stops (§3.1)."""
        if not self._failover.web_answered(reason, now):
            self.abort(reason)

    def _set_master(self, role: MasterRole | None) -> None:
        self._master = role
        self._sender.master = role
        self._link.set_master(role is not None)

    def joined(self, now: float) -> None:
        # The tick (token[request] retries, §3.2.1) runs on the web's heartbeat from now, not
        # on the one this member ran while it asked to join (issue 17).
        self._tick_at = now + self._link.heartbeat
        self._failover.settled()
        if self._p.join_with_state:
            self._enter(Phase.SYNCING)  # TR §3.4: the board comes first, as message s
            self.deliver(now)
        else:
            self._become_ready(now)

    def report_active(self, member: int) -> None:
        self._link.report_active(member)

    def abort(self, reason: str) -> None:
        self._upper.failure(reason)
        self.finish()

    def finish(self) -> None:
        self._enter(Phase.FINISHED)
        self._tick_at = None
        self._sender.stop()
        self._upper.member_changed(self.member_id, MemberState.LEFT)

    def _enter(self, phase: Phase) -> None:
        """The one place the phase changes; the session log shows every change."""
        old, self._phase = self._phase, phase
        if old is not phase:
            self._upper.protocol_event("phase", {"from": old.value, "to": phase.value})

    # -- packets out -------------------------------------------------------------------------

    def _flush(self, now: float) -> None:
        """Status changes go out at once in one empty (the master's), not at the next beat."""
        if self._master is not None:
            self._master.flush(now)


def make_core(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> MtpCore:
    """The factory the whiteboard's transport registry calls."""
    return MtpCore(member_id, upper, rng, params_from_mapping(params))
