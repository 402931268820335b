"""The Qt reactor: timers fire on time (never early) and are freed once fired."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from whiteboard.app.qt_reactor import QtReactor


def test_fired_and_cancelled_timers_are_freed_and_none_fires_early(qtbot) -> None:
    parent = QObject()
    reactor = QtReactor(parent)
    fired: list[tuple[float, float]] = []
    start = reactor.time()
    for k in range(50):
        when = start + 0.001 * k
        reactor.call_at(when, lambda when=when: fired.append((when, reactor.time())))
    cancelled = [reactor.call_at(start + 60.0, lambda: fired.append((0.0, 0.0))) for _ in range(20)]
    for handle in cancelled:
        handle.cancel()
    qtbot.waitUntil(lambda: len(fired) == 50, timeout=20_000)
    assert all(at >= when for when, at in fired)
    qtbot.waitUntil(lambda: not parent.findChildren(QTimer), timeout=20_000)
