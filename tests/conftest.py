import os

# Qt tests run headless; set before any QApplication exists.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
