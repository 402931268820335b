from __future__ import annotations

import os
import random
import tempfile

import pytest
from hypothesis import HealthCheck, settings

from whiteboard.net.sockets import GroupAddress

# Qt tests run headless; set before any QApplication exists.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every session the app or a peer runs is recorded (docs/session-log.md): the tests' sessions
# go to a folder of their own, not the user's data folder. Child processes inherit it.
os.environ["WHITEBOARD_LOG_DIR"] = tempfile.mkdtemp(prefix="whiteboard-test-logs-")

# The VM stalls for up to a second or two at random: a per-example deadline or the too-slow
# health check would turn a stall into a failure that says nothing about the code.
settings.register_profile("whiteboard", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("whiteboard")


@pytest.fixture
def group() -> GroupAddress:
    """A fresh administratively scoped group and port for each test, so that tests (and
    concurrent runs) do not hear each other. Ports stay below Linux's ephemeral range
    (32768+), where the members' own unicast sockets live."""
    rng = random.SystemRandom()
    return GroupAddress(
        f"239.255.{rng.randrange(1, 255)}.{rng.randrange(1, 255)}", rng.randrange(20000, 32768)
    )
