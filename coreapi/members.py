"""The life of a session member as a transport sees it."""

from __future__ import annotations

from enum import StrEnum


class MemberState(StrEnum):
    """What ``UpperLayer.member_changed`` reports. A ``StrEnum``: its values are the words the
    session logs and the CLI's JSON carry, so a typo is a type error, never a new state."""

    JOINING = "joining"
    ACTIVE = "active"
    SUSPECTED = "suspected"
    LEFT = "left"
