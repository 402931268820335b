"""Session logs: every session the app or ``whiteboard peer`` runs, recorded in one
append-only, crash-safe file. Qt-free (Qt is asked only where the default folder is).

See docs/session-log.md for the format byte by byte, the records, the export schema and
what survives a crash.

* :mod:`~whiteboard.sessionlog.format`: the bytes: preamble, frames, record kinds and records.
* :mod:`~whiteboard.sessionlog.writer`: :class:`SessionLogWriter`, buffered, flushed within 1 s.
* :mod:`~whiteboard.sessionlog.recording`: transport events to records (:func:`recording_handler`).
* :mod:`~whiteboard.sessionlog.paths`: the default folder and file names.
* :mod:`~whiteboard.sessionlog.reader`: reading back, torn tails and damage included.
* :mod:`~whiteboard.sessionlog.sealing`: a private session's recording encrypted at rest.
* :mod:`~whiteboard.sessionlog.rows`, :mod:`~whiteboard.sessionlog.export`,
  :mod:`~whiteboard.sessionlog.summary`, :mod:`~whiteboard.sessionlog.cli`: ``whiteboard log``.
"""

from whiteboard.sessionlog.format import (
    FORMAT_VERSION,
    SCHEMA_VERSION,
    CountersRecord,
    DeliveredRecord,
    EndRecord,
    FailureRecord,
    FollowRecord,
    JoinProgressRecord,
    LocalOpRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    Record,
    RecordKind,
    SessionHeader,
    SessionLogError,
    SideRecord,
    StateReceivedRecord,
    StateSentRecord,
    UndeliveredRecord,
)
from whiteboard.sessionlog.paths import ENV_LOG_DIR, default_log_dir
from whiteboard.sessionlog.reader import (
    ReadReport,
    SessionLog,
    SessionLogReader,
    op_authority,
    open_log,
    read_log,
)
from whiteboard.sessionlog.recording import (
    RecordingHandler,
    header_on,
    keep_flushing,
    new_header,
    recording_handler,
)
from whiteboard.sessionlog.sealing import LogSealer, RecordingLocked, Unlock
from whiteboard.sessionlog.writer import SessionLogWriter

__all__ = [
    "ENV_LOG_DIR",
    "FORMAT_VERSION",
    "SCHEMA_VERSION",
    "CountersRecord",
    "DeliveredRecord",
    "EndRecord",
    "FailureRecord",
    "FollowRecord",
    "JoinProgressRecord",
    "LocalOpRecord",
    "LogSealer",
    "MemberRecord",
    "ProtocolRecord",
    "ReadReport",
    "ReadyRecord",
    "Record",
    "RecordKind",
    "RecordingHandler",
    "RecordingLocked",
    "SessionHeader",
    "SessionLog",
    "SessionLogError",
    "SessionLogReader",
    "SessionLogWriter",
    "SideRecord",
    "StateReceivedRecord",
    "StateSentRecord",
    "UndeliveredRecord",
    "Unlock",
    "default_log_dir",
    "header_on",
    "keep_flushing",
    "new_header",
    "op_authority",
    "open_log",
    "read_log",
    "recording_handler",
]
