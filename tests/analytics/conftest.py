"""One SparkSession for every analytics test: starting one takes from ten seconds to a few
minutes on these machines, so a test run starts it once (and only if an analytics test that
needs it runs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("pyspark", reason="the analytics extra is not installed")

from pyspark.sql import SparkSession

from analytics.session import build_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = build_session()  # Spark's default master: local[*], as the command's
    yield session
    session.stop()
