"""A process that writes a session log until it is killed: the other half of
test_crash.py. ``python -m tests.sessionlog.writer_child PATH loop|torn``.

* ``loop``: appends records as fast as it can through :class:`SessionLogWriter`, on the real
  clock, so its own buffering and flushing decide what reaches the file.
* ``torn``: writes :data:`TORN_WHOLE` records, then the first half of one more straight to the
  file (a write the kernel cut short), then waits to be killed.

Records are a pure function of their number, so the test knows what each must be.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from whiteboard.sessionlog import LocalOpRecord, SessionHeader, SessionLogWriter
from whiteboard.sessionlog.format import encode_record, frame

TORN_WHOLE = 50
HEADER = SessionHeader(
    t_us=1_700_000_000_000_000,
    session_id="00c0ffee00c0ffee",
    app_version="test",
    transport="raw",
    params={"profile": "lan"},
    group="239.255.42.1:5000",
    iface="127.0.0.1",
    ttl=0,
    member_id=42,
    member_name="child",
)


def record(i: int) -> LocalOpRecord:
    # Every seventh record is large, so that flushes are large writes a kill can cut.
    size = 100_000 if i % 7 == 0 else 40 + i % 50
    return LocalOpRecord(i, i.to_bytes(4, "big") * (size // 4))


def frame_of(i: int) -> bytes:
    return frame(encode_record(record(i)))


def main(path: Path, mode: str) -> None:
    writer = SessionLogWriter(path, HEADER)
    if mode == "loop":
        i = 0
        while True:
            writer.append(record(i))
            writer.maybe_flush(time.time())
            i += 1
    for i in range(TORN_WHOLE):
        writer.append(record(i))
    writer.flush()
    half = frame_of(TORN_WHOLE)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, half[: len(half) // 2])
    while True:  # killed here
        time.sleep(60)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
