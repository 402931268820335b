"""Former name of :mod:`whiteboard.app.scene_index`, kept only because
``tests/sessionlog/test_export.py`` (outside the app's files) still imports
``content_bounds`` from here. New code imports :mod:`whiteboard.app.scene_index`; drop this
module once that test does."""

from __future__ import annotations

from whiteboard.app.scene_index import content_bounds

__all__ = ["content_bounds"]
