"""The canvas's tools, one module per family: freehand (pen, highlighter), shapes, text,
eraser and select. :func:`make_tool` builds the tool of a kind for a canvas."""

from __future__ import annotations

from whiteboard.app.tools.base import BaseTool, Pointer, ToolHost, ToolKind
from whiteboard.app.tools.eraser import EraserTool
from whiteboard.app.tools.laser import LaserTool
from whiteboard.app.tools.pen import PenTool
from whiteboard.app.tools.select import SelectTool
from whiteboard.app.tools.shapes import ShapeTool
from whiteboard.app.tools.text import TextTool


def make_tool(kind: ToolKind, host: ToolHost) -> BaseTool:
    if kind in (ToolKind.PEN, ToolKind.HIGHLIGHTER):
        return PenTool(host, kind)
    if kind in (ToolKind.LINE, ToolKind.RECT, ToolKind.ELLIPSE, ToolKind.ARROW):
        return ShapeTool(host, kind)
    if kind is ToolKind.TEXT:
        return TextTool(host)
    if kind is ToolKind.ERASER:
        return EraserTool(host)
    if kind is ToolKind.LASER:
        return LaserTool(host)
    return SelectTool(host)


__all__ = [
    "BaseTool",
    "EraserTool",
    "LaserTool",
    "PenTool",
    "Pointer",
    "SelectTool",
    "ShapeTool",
    "TextTool",
    "ToolHost",
    "ToolKind",
    "make_tool",
]
