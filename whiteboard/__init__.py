"""A shared desktop whiteboard whose peers talk over reliable IP multicast (RMP or MTP)."""

__version__ = "0.1.0"
