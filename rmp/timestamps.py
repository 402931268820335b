"""RMP's timestamps (RR-2100 §4.1): the RTP v1 header's 32 bits, the middle of an NTP time.

Apart from rmp/wire.py (which re-exports them) to keep that module to its one job's size."""

from __future__ import annotations

import math

NTP_UNIX_OFFSET = 2_208_988_800  # seconds from the NTP epoch (1900) to the POSIX epoch (1970)
MIDDLE32_WRAP_SECONDS = 65_536  # RR-2100 §4.1: the timestamp "wraps around approximately every
# 18 hours": 16 bits of whole seconds


def ntp_middle32(seconds: float) -> int:
    """The RTP v1 timestamp for POSIX time ``seconds``: the middle 32 bits of the NTP timestamp,
    i.e. 16 bits of whole seconds (modulo 65,536: it wraps every ~18.2 hours, §4.1) and 16 bits
    of fraction (units of 1/65,536 s, truncated)."""
    if not math.isfinite(seconds):
        raise ValueError(f"cannot timestamp {seconds}")
    return math.floor((seconds + NTP_UNIX_OFFSET) * 65_536) & 0xFFFF_FFFF


def seconds_from_middle32(value: int, near: float) -> float:
    """The POSIX time whose ``ntp_middle32`` is ``value`` and that lies nearest ``near`` (the
    receiver's clock): within [near - 9.1 h, near + 9.1 h). The 18-hour wrap is undone by
    assuming sender and receiver clocks are within half a wrap of each other (§2.8 assumes
    they are close)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"value must be an int, not {type(value).__name__}")
    if not 0 <= value < 1 << 32:
        raise ValueError(f"value {value} does not fit in 32 bits")
    if not math.isfinite(near):
        raise ValueError(f"cannot unwrap near {near}")
    reference = math.floor((near + NTP_UNIX_OFFSET) * 65_536)
    delta = (value - reference) & 0xFFFF_FFFF
    if delta >= 1 << 31:
        delta -= 1 << 32
    return (reference + delta) / 65_536 - NTP_UNIX_OFFSET
