"""Replaying a recorded session (a session log, docs/session-log.md): the board at any moment,
played at a chosen speed, with or without some members, and what the network did. Qt-free;
the window is whiteboard/app/replay_window.py. See docs/replay.md.

* :mod:`~whiteboard.replay.timeline`: a log as steps (changes to the board, each at its time),
  members and network marks;
* :mod:`~whiteboard.replay.network`: the network lane's marks;
* :mod:`~whiteboard.replay.keyframes`: boards every few thousand steps, for fast seeks;
* :mod:`~whiteboard.replay.player`: :class:`Replay`, the board shown and moving it;
* :mod:`~whiteboard.replay.filter`: hiding and highlighting members;
* :mod:`~whiteboard.replay.clock`: the playback clock (speed, skipping idle time).
"""

from whiteboard.replay.clock import (
    SPEEDS,
    IdleGap,
    PlaybackClock,
    TimeWarp,
    format_elapsed,
    idle_gaps,
)
from whiteboard.replay.filter import MemberFilter, highlighted_objects, without_members
from whiteboard.replay.keyframes import Keyframes, apply_step, board_after
from whiteboard.replay.network import MarkKind, NetworkMark, count_by_kind, network_marks
from whiteboard.replay.player import Replay, Update
from whiteboard.replay.timeline import (
    MemberInfo,
    OpStep,
    StateStep,
    Step,
    Timeline,
    load_timeline,
    timeline_of,
)

__all__ = [
    "SPEEDS",
    "IdleGap",
    "Keyframes",
    "MarkKind",
    "MemberFilter",
    "MemberInfo",
    "NetworkMark",
    "OpStep",
    "PlaybackClock",
    "Replay",
    "StateStep",
    "Step",
    "TimeWarp",
    "Timeline",
    "Update",
    "apply_step",
    "board_after",
    "count_by_kind",
    "format_elapsed",
    "highlighted_objects",
    "idle_gaps",
    "load_timeline",
    "network_marks",
    "timeline_of",
    "without_members",
]
