"""``whiteboard log info``: what one log says about its session, in a few lines."""

from __future__ import annotations

import os
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from whiteboard.presence import is_presence
from whiteboard.sessionlog.format import (
    CountersRecord,
    DeliveredRecord,
    FailureRecord,
    LocalOpRecord,
    MemberRecord,
    ProtocolRecord,
    ReadyRecord,
    StateReceivedRecord,
    StateSentRecord,
    UndeliveredRecord,
)
from whiteboard.sessionlog.reader import NO_SECRET, open_log
from whiteboard.sessionlog.sealing import Unlock

MAX_FAILURES_SHOWN = 5


def summarize(path: str | os.PathLike[str], unlock: Unlock = NO_SECRET) -> dict[str, Any]:
    """A JSON-ready summary of one log, read in one pass (``unlock`` opens an encrypted
    one). Raises ``SessionLogError`` for a file that is not a usable log."""
    with open_log(path, unlock) as reader:
        encrypted = reader.encrypted
        header = reader.header
        kinds: Counter[str] = Counter()
        events: Counter[str] = Counter()
        origins: set[int] = set()
        members: dict[int, str] = {}
        failures: list[str] = []
        delivered = {"total": 0, "presences": 0, "late": 0}
        local = {"total": 0, "presences": 0}
        states_received: list[dict[str, int]] = []
        states_sent = 0
        undelivered = 0
        ready_us: int | None = None
        counters: dict[str, int] = {}
        last_us = header.t_us
        for record in reader:
            kinds[record.kind.name.lower()] += 1
            last_us = max(last_us, record.t_us)
            match record:
                case DeliveredRecord():
                    delivered["total"] += 1
                    delivered["presences"] += is_presence(record.payload)
                    delivered["late"] += record.late
                    origins.add(record.origin)
                case LocalOpRecord():
                    local["total"] += 1
                    local["presences"] += is_presence(record.payload)
                case MemberRecord():
                    members[record.member] = record.state
                case ReadyRecord():
                    ready_us = record.t_us if ready_us is None else ready_us
                case StateReceivedRecord():
                    states_received.append(
                        {"bytes": record.size, "join_ms": record.join_us // 1000}
                    )
                case StateSentRecord():
                    states_sent += 1
                case FailureRecord():
                    failures.append(record.reason)
                case ProtocolRecord():
                    events[record.name] += 1
                case CountersRecord():
                    counters = dict(record.counters)
                case UndeliveredRecord():
                    undelivered += 1
        report = reader.report
    others = {m: s for m, s in members.items() if m != header.member_id}
    return {
        "file": os.fspath(path),
        "bytes": report.size,
        "session_id": header.session_id,
        "app_version": header.app_version,
        "schema_version": header.schema_version,
        "started": _iso(header.t_us),
        "last_record": _iso(last_us),
        "duration_s": round((last_us - header.t_us) / 1e6, 3),
        "transport": header.transport,
        "params": dict(header.params),
        "group": header.group,
        "iface": header.iface,
        "private": header.key_id is not None,
        "key_id": header.key_id,
        "encrypted": encrypted,
        "ttl": header.ttl,
        "member_id": f"{header.member_id:08x}",
        "member_name": header.member_name,
        "records": report.records,
        "records_by_kind": dict(sorted(kinds.items())),
        "joined_after_ms": None if ready_us is None else (ready_us - header.t_us) // 1000,
        "delivered": {
            **delivered,
            "ops": delivered["total"] - delivered["presences"],
            "origins": len(origins),
        },
        "sent": {**local, "ops": local["total"] - local["presences"]},
        "undelivered": undelivered,
        "members_seen": len(others),
        "members_last_state": dict(sorted(Counter(others.values()).items())),
        "states_received": states_received,
        "states_sent": states_sent,
        "protocol_events": dict(events.most_common()),
        "failures": len(failures),
        "first_failures": failures[:MAX_FAILURES_SHOWN],
        "last_counters": counters,
        "ended_cleanly": report.clean_end,
        "torn_bytes": report.torn_bytes,
        "corrupt_offset": report.corrupt_offset,
        "skipped_records": report.skipped,
        "warnings": list(report.warnings),
    }


def format_summary(summary: dict[str, Any]) -> str:
    """The summary for a person to read."""
    s = summary
    params = ", ".join(f"{k}={v}" for k, v in sorted(s["params"].items())) or "defaults"
    delivered, sent = s["delivered"], s["sent"]
    lines = [
        f"{s['file']}: session {s['session_id']} ({s['bytes']:,} bytes, app {s['app_version']})",
        f"  started      {s['started']}, last record {s['duration_s']:.1f} s later",
        f"  transport    {s['transport']} ({params}) on {s['group']}, ttl {s['ttl']}"
        + (f", interface {s['iface']}" if s["iface"] else "")
        + (f", private (key id {s['key_id']})" if s["private"] else "")
        + (", recording encrypted" if s["encrypted"] else ""),
        f"  member       {s['member_name']} ({s['member_id']})",
        "  joined       "
        + ("never" if s["joined_after_ms"] is None else f"after {s['joined_after_ms']} ms"),
        f"  delivered    {delivered['ops']:,} ops from {delivered['origins']} members "
        f"({delivered['late']:,} late), {delivered['presences']:,} presences",
        f"  sent         {sent['ops']:,} ops, {sent['presences']:,} presences"
        + (f", {s['undelivered']:,} not delivered by the end" if s["undelivered"] else ""),
        f"  members      {s['members_seen']} other{'s' if s['members_seen'] != 1 else ''} seen"
        + _states(s["members_last_state"]),
    ]
    for state in s["states_received"]:
        lines.append(
            f"  board        received {state['bytes']:,} bytes, {state['join_ms']} ms after start"
        )
    if s["states_sent"]:
        sent = s["states_sent"]
        lines.append(f"  board        sent to {sent} joiner{'s' if sent != 1 else ''}")
    if s["protocol_events"]:
        shown = ", ".join(f"{name} {count:,}" for name, count in s["protocol_events"].items())
        lines.append(f"  protocol     {shown}")
    if s["failures"]:
        lines.append(f"  failures     {s['failures']}:")
        lines += [f"    - {reason}" for reason in s["first_failures"]]
    lines.append(
        f"  records      {s['records']:,}: "
        + ", ".join(f"{k} {v:,}" for k, v in s["records_by_kind"].items())
    )
    lines.append(
        "  ended        "
        + (
            "cleanly"
            if s["ended_cleanly"]
            else "without an end record (still running, or its process was stopped)"
        )
    )
    lines += [f"  warning: {warning}" for warning in s["warnings"]]
    return "\n".join(lines)


def _states(states: dict[str, int]) -> str:
    if not states:
        return ""
    return " (last seen: " + ", ".join(f"{n} {state}" for state, n in states.items()) + ")"


def _iso(t_us: int) -> str:
    try:
        return datetime.fromtimestamp(t_us / 1e6, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, ValueError, OSError):
        return f"{t_us} us (not a date)"


__all__ = ["format_summary", "summarize"]
