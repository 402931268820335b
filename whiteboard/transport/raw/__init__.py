"""The ``raw`` transport: plain multicast, no reliability. The physical-limit reference."""

from whiteboard.transport.raw.core import RawCore, RawParams, make_core
from whiteboard.transport.raw.description import DESCRIPTION
from whiteboard.transport.raw.wire import RawDecodeError, RawPacket, RawType

__all__ = [
    "DESCRIPTION",
    "RawCore", "RawDecodeError", "RawPacket", "RawParams", "RawType", "make_core"]
