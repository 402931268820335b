import os

from hypothesis import HealthCheck, settings

# Qt tests run headless; set before any QApplication exists.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# The VM stalls for up to a second or two at random: a per-example deadline or the too-slow
# health check would turn a stall into a failure that says nothing about the code.
settings.register_profile("whiteboard", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("whiteboard")
