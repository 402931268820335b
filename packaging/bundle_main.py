"""The entry point of the self-contained bundle (``make bundle``, packaging/bundle.sh): the
``whiteboard`` command, every subcommand of it, without a Python installation."""

import sys

from whiteboard.cli import main

if __name__ == "__main__":
    sys.exit(main())
