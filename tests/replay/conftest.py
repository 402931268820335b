from __future__ import annotations

import pytest

from tests.replay.recorded import RecordedSession, record_session


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> RecordedSession:
    """One simulated, recorded session for all the replay tests (it takes ~2 s)."""
    return record_session(tmp_path_factory.mktemp("recorded"))
