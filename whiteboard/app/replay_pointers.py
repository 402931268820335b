"""Pointers and laser trails in a replay (issue 19): where members pointed, as the recording
sampled it (docs/session-log.md "SIDE"), drawn by the live window's overlay over the replayed
board at the replay's time: a pointer for 3 s after its last sample at most, a laser trail's
points for their second."""

from __future__ import annotations

from whiteboard.app.canvas import BoardCanvas
from whiteboard.app.pointers import LASER_FADE_S, STILL_HIDE_S, CursorOverlay, LaserTrails
from whiteboard.pointer import PointerKind
from whiteboard.replay.timeline import Timeline


class ReplayPointers:
    def __init__(self, canvas: BoardCanvas, timeline: Timeline) -> None:
        self._timeline = timeline
        self._at_us = timeline.start_us
        self.overlay = CursorOverlay(canvas, self._label, lambda: self._at_us / 1e6)

    def show(self, t_us: int) -> None:
        """The pointers and trails as they were at ``t_us``."""
        self._at_us = t_us
        overlay = self.overlay
        for member in overlay.cursors.members():
            overlay.cursors.forget(member)
        overlay.lasers = LaserTrails()
        recent = self._timeline.pointers_between(t_us - round(STILL_HIDE_S * 1e6), t_us)
        laser_since = t_us - round(LASER_FADE_S * 1e6)
        for sample in recent:  # oldest first: each origin ends at its latest
            seconds = sample.t_us / 1e6
            overlay.cursors.update(sample.origin, sample.position, seconds)
            if sample.position.kind is PointerKind.LASER and sample.t_us > laser_since:
                overlay.lasers.add(sample.origin, sample.position.x, sample.position.y, seconds)
        overlay.refresh()

    def _label(self, member: int) -> tuple[str, int | None]:
        info = self._timeline.member(member)
        if info is None:
            return f"member {member:08x}", None
        return info.name, info.colour
