from __future__ import annotations

import pytest

from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress


@pytest.fixture
def net(group: GroupAddress) -> NetConfig:
    """The test's group on loopback only (ttl 0)."""
    return NetConfig(group=group, iface="127.0.0.1", ttl=0)
