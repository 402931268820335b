"""The laser pointer: a trail that everyone sees fade within about a second, to point at
something while explaining. It makes no op; the window's pointers (whiteboard/app/pointers.py)
send its points on the transport's side channel and draw the trails, ours included."""

from __future__ import annotations

from whiteboard.app.tools.base import BaseTool, Pointer, ToolHost, ToolKind


class LaserTool(BaseTool):
    def __init__(self, host: ToolHost) -> None:
        super().__init__(host, ToolKind.LASER)
        self._pressed = False

    @property
    def active(self) -> bool:
        return self._pressed

    def press(self, pointer: Pointer) -> None:
        self._pressed = True

    def release(self, pointer: Pointer) -> None:
        self._pressed = False

    def cancel(self) -> None:
        self._pressed = False
