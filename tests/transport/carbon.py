"""A fourth transport that lives only in the tests: ``carbon`` sends every payload ``copies``
times and delivers the first copy to arrive. Registered for the length of a test with
``REGISTRY.registered("carbon", "tests.transport.carbon")``, it proves that the simulator, the
CLI and the settings take a new transport from its description alone (issue 16, item 3).

Members are writers, who draw, or readers, who only watch: a reader's core refuses to send.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace

from coreapi import Address, MemberState, OrderKey, Outgoing, UpperLayer
from coreapi.description import (
    PROFILES,
    EventKind,
    ParamNote,
    Role,
    TransportDescription,
    describe_params,
)
from coreapi.ephemeral import (
    EphemeralOut,
    EphemeralReceiver,
    EphemeralSender,
    ephemeral_counters,
)

_HEADER = struct.Struct(">BIIQ")  # kind, origin, seq, timestamp (µs)
_DATA, _BYE, _SIDE = 1, 2, 3
MAX_DATAGRAM = 1400


@dataclass(frozen=True, slots=True)
class CarbonParams:
    copies: int = 2  # each payload goes out this many times
    role: str = "writer"


def params_from_mapping(params: Mapping[str, object]) -> CarbonParams:
    result = CarbonParams()
    for key, value in params.items():
        if key == "profile":
            if value not in PROFILES:
                raise ValueError(f"unknown carbon profile {value!r}")
        elif key == "copies":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 4:
                raise ValueError(f"carbon parameter copies must be from 1 to 4, got {value!r}")
            result = replace(result, copies=value)
        elif key == "role":
            if value not in ("writer", "reader"):
                raise ValueError(f"carbon role must be writer or reader, got {value!r}")
            result = replace(result, role=str(value))
        else:
            raise ValueError(f"unknown carbon parameter {key!r}")
    return result


class CarbonCore:
    max_payload = MAX_DATAGRAM - _HEADER.size
    max_message = max_payload

    def __init__(
        self, member_id: int, upper: UpperLayer, rng: random.Random, params: CarbonParams
    ) -> None:
        self.member_id = member_id
        self._upper = upper
        self._params = params
        self._seq = 0
        self._seen: set[tuple[int, int]] = set()
        self._members: set[int] = set()
        self._outbox: list[Outgoing] = []
        self._counters = dict.fromkeys(
            ("sent", "delivered", "datagrams_sent", "datagrams_received", "nacks_sent",
             "nacks_received", "retransmissions", "duplicates_dropped", "malformed_dropped",
             "late_delivered"), 0
        )  # fmt: skip
        self._finished = False
        self._side_out, self._side_in = EphemeralSender(), EphemeralReceiver()

    def introduce(self, introduction: bytes) -> None:
        """Carbon has no join to carry it: members are named by what they send."""

    def start(self, now: float) -> None:
        self._upper.member_changed(self.member_id, MemberState.ACTIVE)
        self._upper.ready()

    def send(self, payload: bytes, now: float) -> None:
        if self._params.role == "reader":
            raise RuntimeError("a carbon reader cannot send")
        if len(payload) > self.max_payload:
            raise ValueError("payload too large")
        self._seq += 1
        stamp = round(now * 1e6)
        datagram = _HEADER.pack(_DATA, self.member_id, self._seq, stamp) + payload
        self._outbox.extend((datagram, None) for _ in range(self._params.copies))
        for copy in range(2, self._params.copies + 1):
            self._upper.protocol_event("copy_sent", {"seq": self._seq, "copy": copy})
        self._counters["sent"] += 1
        self._deliver(self.member_id, self._seq, stamp, payload)

    def send_ephemeral(self, payload: bytes, now: float) -> None:
        """The side channel from coreapi's parts: a datagram of its own kind."""
        self._emit_side(self._side_out.offer(payload, now))

    def _emit_side(self, out: EphemeralOut | None) -> None:
        if out is not None:
            side = _HEADER.pack(_SIDE, self.member_id, out.seq, 0) + out.payload
            self._outbox.append((side, None))

    def leave(self, now: float) -> None:
        self._outbox.append((_HEADER.pack(_BYE, self.member_id, self._seq, 0), None))
        self._finished = True

    def provide_board_state(self, request: int, state: bytes, now: float) -> None:
        pass  # never asks: not resyncable

    def receive_datagram(self, data: bytes, addr: Address, now: float) -> None:
        self._counters["datagrams_received"] += 1
        if len(data) < _HEADER.size:
            self._counters["malformed_dropped"] += 1
            return
        kind, origin, seq, stamp = _HEADER.unpack_from(data)
        if origin == self.member_id:
            return
        if origin not in self._members and kind == _DATA:
            self._members.add(origin)
            self._upper.member_changed(origin, MemberState.ACTIVE)
        if kind == _BYE:
            self._members.discard(origin)
            self._upper.member_changed(origin, MemberState.LEFT)
        elif kind == _DATA:
            self._deliver(origin, seq, stamp, data[_HEADER.size :])
        elif kind == _SIDE and self._side_in.accept(origin, seq, now):
            self._upper.ephemeral(origin, data[_HEADER.size :])
        else:
            self._counters["malformed_dropped"] += 1

    def _deliver(self, origin: int, seq: int, stamp: int, payload: bytes) -> None:
        if (origin, seq) in self._seen:
            self._counters["duplicates_dropped"] += 1
            return
        self._seen.add((origin, seq))
        self._counters["delivered"] += 1
        key: OrderKey = (stamp, origin, seq)
        self._upper.deliver(origin, key, stamp / 1e6, payload, False)

    def handle_timer(self, now: float) -> None:
        self._emit_side(self._side_out.due(now))

    def get_timer(self) -> float | None:
        return self._side_out.deadline()

    def datagrams_to_send(self, now: float) -> list[Outgoing]:
        out, self._outbox = self._outbox, []
        self._counters["datagrams_sent"] += len(out)
        return out

    def counters(self) -> dict[str, int]:
        return {**self._counters, **ephemeral_counters(self._side_out, self._side_in)}

    @property
    def finished(self) -> bool:
        return self._finished


def make_core(
    member_id: int, upper: UpperLayer, rng: random.Random, params: Mapping[str, object]
) -> CarbonCore:
    return CarbonCore(member_id, upper, rng, params_from_mapping(params))


DESCRIPTION = TransportDescription(
    name="carbon",
    title="Carbon: every stroke sent several times (a test transport)",
    summary="Redundancy instead of repair.",
    params=describe_params(
        dict.fromkeys(PROFILES, CarbonParams()),
        {"copies": ParamNote("Times each payload is sent", 1, 4)},
        hidden=frozenset({"role"}),
    ),
    check=params_from_mapping,
    live_strokes=False,
    resyncable=False,
    roles=(
        Role("writer", "writer", "Writer", sends=True, help="draws"),
        Role("reader", "reader", "Reader", sends=False, help="watches"),
    ),
    events={"copy_sent": EventKind.RETRANSMISSION},
)
