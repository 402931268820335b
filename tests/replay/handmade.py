"""Small logs written record by record, for tests that need exact contents."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from whiteboard.sessionlog import Record, SessionLogWriter, new_header

T0 = 1_700_000_000.0  # seconds
T0_US = 1_700_000_000_000_000
ME = 0x0A


def write_log(path: Path, records: Iterable[Record], transport: str = "rmp") -> Path:
    header = new_header(
        transport=transport,
        params={"profile": "lan"},
        group="239.255.1.2:20000",
        iface=None,
        ttl=1,
        member_id=ME,
        member_name="ann",
        now=T0,
    )
    with SessionLogWriter(path, header) as writer:
        for record in records:
            writer.append(record)
        writer.close(T0 + 100.0)
    return path


def at(seconds: float) -> int:
    """Microseconds ``seconds`` after the log's start."""
    return T0_US + round(seconds * 1_000_000)
