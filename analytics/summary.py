"""The few lines printed after a ``metrics`` run: per board session its headline numbers and
a line per member; then network health per transport. The tables hold everything; this is
for a person at a terminal, so it shows at most a few board sessions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

SHOWN_BOARDS = 10  # board sessions shown, the earliest first

Row = Mapping[str, Any]


def collect_summary(
    tables: Mapping[str, DataFrame], limit: int = SHOWN_BOARDS
) -> tuple[list[Row], list[Row], list[Row], int]:
    """``(boards, members, transports, total boards)``: the small part of the tables the
    summary shows, brought to the driver (at most ``limit`` board sessions)."""
    strongest = Window.partitionBy("board_session").orderBy(
        F.desc("weight"), "member_a", "member_b"
    )
    top_pairs = (
        tables["interactions"]
        .filter(F.col("weight") > 0)
        .withColumn("rank", F.row_number().over(strongest))
        .filter("rank = 1")
        .select(
            "board_session",
            F.struct("member_a", "name_a", "member_b", "name_b", "weight").alias("top_pair"),
        )
    )
    boards_df = (
        tables["sessions"]
        .join(tables["participation"].select("board_session", "gini"), "board_session", "left")
        .join(tables["turns"].drop("ops_per_turn"), "board_session", "left")
        .join(tables["simultaneity"].drop("active_s"), "board_session", "left")
        .join(top_pairs, "board_session", "left")
    )
    total = boards_df.count()
    boards: list[Row] = [
        row.asDict(recursive=True)
        for row in boards_df.orderBy("board_session").limit(limit).collect()
    ]
    shown = [board["board_session"] for board in boards]
    members_df = (
        tables["contribution"]
        .filter(F.col("board_session").isin(shown))
        .join(
            tables["turns_by_member"].select("board_session", "member", "turns"),
            ["board_session", "member"],
            "left",
        )
        .join(tables["edits"].drop("name", "erases", "moves"), ["board_session", "member"], "left")
        .join(
            tables["territory"].select("board_session", "member", "territoriality"),
            ["board_session", "member"],
            "left",
        )
        .join(
            tables["network"].select(
                "board_session", "member", "join_ms", "nacks_sent", "late_deliveries"
            ),
            ["board_session", "member"],
            "left",
        )
    )
    members: list[Row] = [
        row.asDict()
        for row in members_df.orderBy("board_session", F.desc("ops"), "member").collect()
    ]
    transports: list[Row] = [row.asDict() for row in tables["network_by_transport"].collect()]
    return boards, members, sorted(transports, key=lambda t: t["transport"]), total


def format_summary(
    boards: Sequence[Row], members: Sequence[Row], transports: Sequence[Row], total: int
) -> str:
    lines: list[str] = []
    for board in boards:
        lines += _board_lines(board)
        lines += _member_lines([m for m in members if m["board_session"] == board["board_session"]])
        lines.append("")
    if total > len(boards):
        lines += [f"... and {total - len(boards)} more board sessions (see the tables)", ""]
    for transport in transports:
        lines.append(
            f"network {transport['transport']}: {_count(transport['members'], 'member')} in "
            f"{_count(transport['board_sessions'], 'board session')}; "
            f"{_int(transport['nacks_sent'])} "
            f"NACKs sent, {_int(transport['retransmissions'])} retransmissions, "
            f"{_percent(transport['late_share'])} of deliveries late; join "
            f"{_ms(transport['join_ms_mean'])} on average, {_ms(transport['join_ms_max'])} "
            f"at most"
            + (f", {transport['never_ready']} never ready" if transport["never_ready"] else "")
        )
    return "\n".join(lines).rstrip("\n")


def _board_lines(board: Row) -> list[str]:
    span = board["op_span_s"]
    return [
        f"{board['board_session']}: {_count(board['members'], 'member')}, "
        f"{_count(board['ops'], 'op')}"
        + (f" over {span / 60:.1f} min" if span is not None else "")
        + f", {_count(board['logs'], 'log')}",
        f"  participation Gini {_number(board['gini'])}; {board['turns']} turns, "
        f"{_number(board['handoffs_per_min'])} hand-offs/min, turn entropy "
        f"{_number(board['turn_entropy_bits'])} bits",
        f"  2+ members active {_percent(board['simultaneity'])} of the active time; "
        f"{_count(board['idle_gaps'], 'idle gap')}, {board['idle_s'] / 60:.1f} min in all",
        f"  {_count(board['co_edits'], 'co-edit')}"
        + _top_pair(board["top_pair"])
        + f"; {_percent(board['overlap_index'])} of the drawn area shared",
    ]


def _top_pair(pair: Row | None) -> str:
    if pair is None:
        return ""
    a = pair["name_a"] or f"{pair['member_a']:08x}"
    b = pair["name_b"] or f"{pair['member_b']:08x}"
    return f", strongest tie {a} & {b} (weight {pair['weight']:,})"


def _member_lines(members: Sequence[Row]) -> list[str]:
    header = (
        f"  {'member':<16} {'ops':>11} {'ink':>16} {'active':>9} {'turns':>5} "
        f"{'edits of others':>15} {'own':>4} {'NACKs':>5} {'late':>5} {'join':>8}"
    )
    lines = [header]
    for m in members:
        ink = f"{m['ink_length']:,.0f} ({_percent(m['ink_share']):>3})"
        edits = f"{m['erases_of_others']} er, {m['moves_of_others']} mv"
        name = m["name"] or f"{m['member']:08x}"
        lines.append(
            f"  {name[:16]:<16} {m['ops']:>5} ({_percent(m['op_share']):>3}) "
            f"{ink:>16} {m['active_s'] / 60:>5.1f} min "
            f"{m['turns'] or 0:>5} {edits:>15} {_percent(m['territoriality']):>4} "
            f"{_int(m['nacks_sent']):>5} "
            f"{_int(m['late_deliveries']):>5} {_ms(m['join_ms']):>8}"
        )
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.1f} s"


__all__ = ["SHOWN_BOARDS", "collect_summary", "format_summary"]
