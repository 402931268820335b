from __future__ import annotations

import pytest

from whiteboard.app.render import prepare_painting
from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress

# As the app does when it starts: whatever a test paints first, it paints as the app does.
prepare_painting()


@pytest.fixture
def net(group: GroupAddress) -> NetConfig:
    """The test's group on loopback only (ttl 0)."""
    return NetConfig(group=group, iface="127.0.0.1", ttl=0)
