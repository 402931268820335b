"""What a protocol core and the whiteboard share, and nothing else: the sans-I/O contract.

The protocol packages (``rmp``, ``mtp``, the ``raw`` reference) and the whiteboard both import
this package; it imports only the standard library, so a core never depends on the
whiteboard and the whiteboard never reaches into a core's private names.

* :mod:`coreapi.upper` — the upper-layer protocol a core reports through, the core's own
  protocol, and the plain types that cross between them;
* :mod:`coreapi.members` — the typed member states;
* :mod:`coreapi.seqnum` — 16-bit serial-number arithmetic (RR-2100 §4.1, RFC 1301 §2.2.6);
* :mod:`coreapi.counters` — the counter names every core reports;
* :mod:`coreapi.description` — how a transport describes itself to the layers above.
"""

from coreapi.counters import COUNTER_NAMES
from coreapi.members import MemberState
from coreapi.upper import (
    MAX_INTRODUCTION,
    Address,
    CoreFactory,
    OrderKey,
    Outgoing,
    TransportCore,
    UpperLayer,
)

__all__ = [
    "COUNTER_NAMES",
    "MAX_INTRODUCTION",
    "Address",
    "CoreFactory",
    "MemberState",
    "OrderKey",
    "Outgoing",
    "TransportCore",
    "UpperLayer",
]
