"""Leaving a web, and being asked to (RFC 1301 §3.2.8, §3.3): a member's voluntary quit once
what it sent is decided and served, its quit[request]s to the master, and the quit[request]s
and quit[confirm]s it receives: the master ending the web, a banishment, a missed confirm.

What a master does of quits is its own part's (``MasterRole``); what the member does when its
master ends the web (finish, or with failover go on) is the core's (``DepartureHost``), as is
every change of phase.
"""

from __future__ import annotations

from typing import Protocol

from coreapi import Address
from mtp.link import Link, Phase
from mtp.master_role import MasterRole
from mtp.sender import Sender
from mtp.wire import MtpHeader, MtpPacket, PacketType, QuitModifier, Tsap


class DepartureHost(Protocol):
    """What leaving needs of the member it is part of (the core)."""

    @property
    def phase(self) -> Phase: ...

    def start_quitting(self, now: float) -> None:
        """Everything of ours is decided (and served): quit (§3.3.1, §3.3.2)."""
        ...

    def finish(self) -> None: ...

    def rejoin(self, reason: str, now: float) -> float | None: ...

    def master_ends_web(
        self, header: MtpHeader, confirm: MtpPacket, addr: Address, now: float
    ) -> None:
        """§3.3.2: the master's quit[request] naming the web."""
        ...


class Departure:
    def __init__(self, link: Link, host: DepartureHost, sender: Sender) -> None:
        self._link = link
        self._host = host
        self._sender = sender
        self.quit_tries = 0  # a member's quit[request]s (§3.3.1)
        self.ready_at: float | None = None  # naks served until then (§3.3)

    def check(self, now: float, master: MasterRole | None) -> None:
        """Leaving: quit once every message of ours is decided; a member first serves naks for
        retention heartbeats (§3.3: "No process should intentionally quit the web while it
        has retransmittable data buffered"), then asks the master to let it go (§3.3.1)."""
        phase = self._host.phase
        if phase is Phase.LEAVING:
            sender = self._sender
            busy, undecided = sender.busy(), sender.flight.undecided()
            if master is not None:
                if not (busy or master.grants or undecided):
                    self._host.start_quitting(now)
                return
            if busy or undecided:
                return
            if self.ready_at is None:
                link = self._link
                serving = link.retention * link.heartbeat if sender.flight.own else 0.0
                self.ready_at = now + serving
            if now < self.ready_at:
                return
            self.quit_tries = 0
            self._host.start_quitting(now)
            phase = self._host.phase
        if phase is Phase.QUITTING and master is None:
            self._ask_to_quit()

    def _ask_to_quit(self) -> None:
        """§3.3.1: quit[request] to the master, as many times as the web's retention (3 at
        least), then go whether or not it confirmed."""
        link, web = self._link, self._link.web
        if self.quit_tries >= max(3, link.retention) or web.master_addr is None:
            self._host.finish()
            return
        self.quit_tries += 1
        request = link.control(
            PacketType.QUIT, QuitModifier.REQUEST, web.master_id, link.own_tsap()
        )
        link.send(request, web.master_addr)

    def on_quit(
        self, packet: MtpPacket, addr: Address, now: float, master: MasterRole | None
    ) -> None:
        header, target = packet.header, packet.body
        assert isinstance(target, Tsap)
        source, link = header.source, self._link
        if header.modifier is QuitModifier.CONFIRM:
            if master is not None:
                master.on_quit_confirm(source, now)
            elif self._host.phase is Phase.QUITTING and source == link.web.master_id:
                self._host.finish()
            return
        if master is not None:
            master.on_quit_request(source, target, addr, now)
            return
        confirm = link.control(PacketType.QUIT, QuitModifier.CONFIRM, source, link.own_tsap())
        if target.connection_id == link.web.id and source == link.web.master_id:
            self._host.master_ends_web(header, confirm, addr, now)
            return
        if target.connection_id == link.member_id:
            link.send(confirm, addr)
            if self._host.phase is Phase.QUITTING:
                self._host.finish()  # §3.3.3: it missed our quit[confirm]
                return
            # §3.2.8: banished. We withdraw, and (being a correct process) ask to join again.
            self._host.rejoin(
                f"the mtp member {source:#x} asked this member to leave the web (RFC 1301 "
                "§3.2.8: it did not recognise it): rejoining",
                now,
            )
