"""A payload too long for one packet, sent as a run of pieces (our extension, issue 20;
docs/rmp-wire.md "Piece", docs/rmp.md "Large payloads").

RR-2100 carries one application unit per data packet (§2.2). A payload longer than
``max_payload`` (1,200 bytes) is cut here into pieces that fill a data packet each; the sender
sends them as a run of consecutive sequence numbers, nothing of ours in between, each a data
packet whose final option is Piece(index, count) in place of Data. Every piece is sequenced,
stored, confirmed, NACKed, repaired and reminded like any data packet (§2.2-§2.7); the receiver
concatenates the run (rmp/reassembly.py) and delivers the payload once, whole.

This module knows the numbers and the rules of a run; it imports nothing of the wire module
(which checks packets against ``piece_problem``), as rmp/batch.py does for Batch.
"""

from __future__ import annotations

# The largest payload RmpCore.send accepts (coreapi's max_message): 4 MiB.
MAX_MESSAGE = 4 << 20
# What a data packet of a piece spends besides the piece: the RTP header (8), our Source
# option (8), the Piece option (8), a Remind (4) that a reminder puts first when it repeats the
# packet (§2.4), and room for two Confirms (16): a long run still confirms others' packets,
# two stations a piece in turn (§2.3), so their send windows stay open while it lasts.
PIECE_OVERHEAD = 8 + 8 + 8 + 4 + 2 * 8
# The most pieces of one run on the wire: MAX_MESSAGE cut to the smallest pieces a member makes
# (max_datagram 1,300, less a Retransmit's 24 and PIECE_OVERHEAD: 1,232 bytes) takes 3,405.
MAX_PIECES = 4096


def piece_size(max_packet: int) -> int:
    """The bytes of payload each piece carries when a data packet may be ``max_packet`` bytes
    (Shared.max_packet: ``max_datagram`` less a Retransmit's wrapping): 1,404 by default."""
    return max_packet - PIECE_OVERHEAD


def split_message(payload: bytes, size: int) -> list[bytes]:
    """``payload`` cut into as few pieces of at most ``size`` bytes as it takes, but at least
    two (a payload just over max_payload fits one packet, but a run has two pieces or more),
    of even sizes (the last may be shorter)."""
    if size <= 0 or len(payload) < 2:
        raise ValueError(f"a payload of {len(payload)} bytes is not cut in pieces of {size}")
    count = max(2, -(-len(payload) // size))
    step = -(-len(payload) // count)
    pieces = [payload[at : at + step] for at in range(0, len(payload), step)]
    if len(pieces) > MAX_PIECES:
        raise ValueError(f"{len(pieces)} pieces of {size} bytes, more than {MAX_PIECES}")
    return pieces


def piece_problem(index: int, count: int, s_bit: bool, data_size: int | None) -> str | None:
    """What is wrong with a data packet whose final option is Piece(index, count), or None."""
    if not 2 <= count <= MAX_PIECES:
        return f"a Piece of a run of {count} pieces, not 2..{MAX_PIECES} (our extension)"
    if index >= count:
        return f"Piece {index} of a run of {count}: pieces are numbered from 0 to {count - 1}"
    last = index == count - 1
    if s_bit != last:
        return (
            f"the RTP header's S bit ({int(s_bit)}) must mark the last piece of a run, and only "
            f"it: this is piece {index} of {count} (our extension, as Image does, §4.2.5)"
        )
    if not data_size:
        return f"piece {index} of {count} has an empty data part: every piece carries bytes"
    return None
