"""What the layers above and the tests may read of an MTP member, apart from the core's
routing (mtp/core.py): read-only views of its link, its web and its master role."""

from __future__ import annotations

from mtp.link import Link, Phase
from mtp.master import Grant, Member
from mtp.master_role import MasterRole
from mtp.wire import MessageStatus


class MemberViews:
    """Mixed into :class:`mtp.core.MtpCore`, which sets these three."""

    _link: Link
    _master: MasterRole | None
    _phase: Phase

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def is_master(self) -> bool:
        return self._master is not None

    @property
    def connection_id(self) -> int:  # §2.2.4: ``member_id`` until a rejoin (§3.1.1)
        return self._link.member_id

    @property
    def web_id(self) -> int:
        return self._link.web.id

    @property
    def master_id(self) -> int:
        return self._link.web.master_id

    @property
    def parameters(self) -> tuple[float, int, int]:
        """The web's heartbeat (seconds), window and retention, as this member runs them."""
        return self._link.heartbeat, self._link.window, self._link.retention

    @property
    def next_grant(self) -> int:
        return self._link.web.next

    @property
    def next_deliver(self) -> int:
        return self._link.web.next_deliver

    @property
    def members(self) -> dict[int, Member]:
        return self._link.web.members

    @property
    def grants(self) -> dict[int, Grant]:
        return self._master.grants if self._master is not None else {}

    @property
    def hibernating(self) -> bool:
        return self._master is not None and self._master.hibernating

    def status(self, number: int) -> MessageStatus | None:
        """The decided status of message ``number`` as this member knows it."""
        return self._link.web.book.status(number)
