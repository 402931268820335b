from __future__ import annotations

import os
import random

import pytest

from whiteboard.net.runtime import NetConfig
from whiteboard.net.sockets import GroupAddress


@pytest.fixture
def net() -> NetConfig:
    """A fresh group and port per test on loopback only (ttl 0): concurrent runs and other
    tests do not hear each other."""
    rng = random.Random(os.getpid() * 7919 + random.randrange(1 << 30))
    group = GroupAddress(
        f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}", rng.randrange(20000, 60000)
    )
    return NetConfig(group=group, iface="127.0.0.1", ttl=0)
