"""A packet's confirmations, worked out once: which of them can tell a member anything.

A data packet piggybacks a Confirm for every station whose last packet its sender has not
confirmed yet (RR-2100 §2.3): in a group drawing in turns, one per member. A member reads
each against its own list (§2.6: a third station confirms a packet we never got). Almost all
of them name a packet it already has, and reading them one by one in Python was most of what
a simulated member did at 100 members (issue 18). So a packet with many of them is digested
once (shared by every member the simulator hands the same packet) and a member compares the
digest with the last numbers it holds, as two dictionaries' items, in C: only the Confirms
that differ are read one by one, in the order they came.

Reading them in any other way changes nothing: the Confirms that are skipped are the ones that
would have done nothing (a station whose start is settled, at the very number we hold), and
the others are read as before, before the options that follow them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from coreapi.memo import DecodeMemo
from rmp.wire import Confirm, Join, Nack, NackRange, Option, Retransmit, RmpPacket

# Below this many options a packet is read option by option: digesting costs about what it
# saves when a single member reads it.
DIGEST_FROM = 16

_ACTING = (Nack, NackRange, Retransmit)  # options whose reading may depend on a Confirm's


@dataclass(frozen=True, slots=True)
class ConfirmDigest:
    on_wire: dict[int, int]  # each Confirm's source -> the number it confirms (16 bits)
    confirms: dict[int, Confirm]  # the same Confirms, by source, in option order
    place: dict[int, int]  # each source's place among them
    rest: tuple[Option, ...]  # every other option, in order
    # Reads, from a member's held numbers, those of the confirmed sources, in order; compared
    # with the numbers confirmed, as read from on_wire by the same getter.
    held_of: Callable[[Mapping[int, int]], object]
    wire_values: object
    # Every Confirm comes before every option that acts, and no source is confirmed twice:
    # only then may the Confirms that differ be read first, and by source.
    usable: bool
    join: Join | None  # the first Join option (rest holds every option but the Confirms)


def digest(packet: RmpPacket) -> ConfirmDigest:
    on_wire: dict[int, int] = {}
    confirms: dict[int, Confirm] = {}
    rest: list[Option] = []
    usable, acted = True, False
    for option in packet.options:
        if type(option) is Confirm:
            if option.source in confirms or acted:
                usable = False
            on_wire[option.source] = option.seq
            confirms[option.source] = option
        else:
            acted = acted or type(option) in _ACTING
            rest.append(option)
    place = {source: index for index, source in enumerate(confirms)}
    held_of: Callable[[Mapping[int, int]], object] = (
        operator.itemgetter(*on_wire) if on_wire else _nothing
    )
    join = next((option for option in rest if type(option) is Join), None)
    return ConfirmDigest(
        on_wire, confirms, place, tuple(rest), held_of, held_of(on_wire), usable, join
    )


def _nothing(_: Mapping[int, int]) -> object:
    return ()


# Packets are frozen records, and the simulator hands one to every member (coreapi/memo.py).
digest_once: DecodeMemo[RmpPacket, ConfirmDigest] = DecodeMemo(digest, kinds=(RmpPacket,))


def join_of(packet: RmpPacket) -> Join | None:
    """The packet's first Join option, if any: found among the few options that are not
    Confirms (a join answer or a data packet may carry one per station, §2.3, §2.8)."""
    options = packet.options
    if len(options) >= DIGEST_FROM:
        return digest_once(packet).join
    if Join not in map(type, options):  # in C
        return None
    return next(o for o in options if type(o) is Join)


def options_to_read(packet: RmpPacket, held: dict[int, int], own: int) -> Sequence[Option]:
    """The options of ``packet`` a member must read, in order, given ``held``: the last number
    (16 bits) of each station whose start it has settled. The caller makes sure the Confirms
    skipped would do nothing else: its sender did not just restart (a Confirm of its own
    number is then its resumption marker, §2.8). A stranger's are skipped too: a Confirm of
    what we hold is no hearsay (Reminder.on_confirm). A Confirm of ``own`` packets (the
    member's: never in ``held``) is always read: it says how far its sender has got (§2.4)."""
    options = packet.options
    if len(options) < DIGEST_FROM:
        return options
    summary = digest_once(packet)
    if not summary.usable:
        return options
    # The usual data packet confirms the member's own last packet too (every member reads a
    # packet of a group drawing in turns): compared as if held, then read first.
    ours = own in summary.on_wire and own not in held
    if ours:
        held[own] = summary.on_wire[own]
    try:
        # The usual case, every Confirm at the number we hold: one C call and one tuple
        # comparison (a KeyError: a station we hold nothing settled for, read below).
        same = summary.held_of(held) == summary.wire_values
    except KeyError:
        same = False
    finally:
        if ours:
            del held[own]
    if same:
        return (summary.confirms[own], *summary.rest) if ours else summary.rest
    differ = summary.on_wire.items() - held.items()
    place = summary.place
    sources = sorted((source for source, _ in differ), key=place.__getitem__)
    return (*(summary.confirms[source] for source in sources), *summary.rest)
