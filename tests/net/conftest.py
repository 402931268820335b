from __future__ import annotations

import os
import random

import pytest

from whiteboard.net.sockets import GroupAddress


@pytest.fixture
def group() -> GroupAddress:
    """A fresh administratively scoped group and port for each test (traffic stays on lo)."""
    rng = random.Random(os.getpid() * 7919 + random.randrange(1 << 30))
    return GroupAddress(
        f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}", rng.randrange(20000, 60000)
    )
