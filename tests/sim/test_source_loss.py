"""``--source-loss``: a share of each sender's datagrams lost before the network, so that every
receiver misses them together, and the NACK packets such a loss costs (issue 18, point 4)."""

from __future__ import annotations

from typing import Any

import pytest

from rmp.wire import Nack, NackRange, RmpDecodeError, decode
from tests.sim.test_network import blast, build, probe, received
from whiteboard.sim.network import Impairment, SimNetwork
from whiteboard.sim.scenario import ScenarioConfig, run_scenario
from whiteboard.sim.session import SimSession


def test_a_source_loss_is_missed_by_every_receiver_and_heard_by_the_sender() -> None:
    network, stations = build(5, source_loss=0.2)
    blast(network, stations[0], 500)
    network.run(until=10.0)
    got = [set(received(s, stations[0])) for s in stations[1:]]
    # Every receiver has exactly the same datagrams: each was lost for all, or for none.
    assert all(g == got[0] for g in got)
    assert len(got[0]) + network.stats.source_losses_injected == 500
    # 500 draws at p=0.2: mean 100, sd ~9; five sigma either way.
    assert 55 < network.stats.source_losses_injected < 145
    assert network.stats.losses_injected == 0  # not a per-receiver loss
    assert received(stations[0], stations[0]) == list(range(500))  # looped back


def test_a_source_loss_drops_unicast_before_its_destination() -> None:
    network, stations = build(2, source_loss=1.0)
    for k in range(10):
        probe(stations[0]).send_to(k.to_bytes(4, "big"), stations[1].address)
    stations[0].transport.timer_fired()
    network.run(until=1.0)
    assert received(stations[1], stations[0]) == []
    assert network.stats.source_losses_injected == 10


def test_source_losses_tell_the_drop_observers_for_every_receiver_that_is_up() -> None:
    network, stations = build(4, source_loss=1.0)
    network.crash(stations[3])
    drops: list[tuple[int, int]] = []
    sources: list[int] = []
    network.drop_observers.append(lambda s, r, d: drops.append((s, r)))
    network.source_drop_observers.append(lambda s, d: sources.append(s))
    blast(network, stations[0], 3)
    network.run(until=1.0)
    assert sources == [0, 0, 0]
    assert drops == [(0, 1), (0, 2)] * 3


def test_without_source_loss_the_run_is_the_same_as_before() -> None:
    """No draw is made for source loss at 0: the per-receiver impairments draw as they did."""

    def arrivals(impairment: Impairment) -> list[int]:
        network, stations = build(3, seed=5, loss=0.3, reorder=0.2)
        network.impairment = impairment
        blast(network, stations[0], 200)
        network.run(until=10.0)
        return received(stations[2], stations[0])

    assert arrivals(Impairment(loss=0.3, reorder=0.2)) == arrivals(
        Impairment(loss=0.3, reorder=0.2, source_loss=0.0)
    )


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_source_loss_is_a_probability(bad: float) -> None:
    with pytest.raises(ValueError):
        Impairment(source_loss=bad)


def test_nack_packets_per_loss_event_is_nack_datagrams_over_lost_strokes() -> None:
    """Counted independently here: every datagram lost at its sender that carries a stroke
    anyone drew (a data packet or a repair), and every datagram sent with a NACK in it."""
    lost_with_stroke: list[float] = []  # when
    nack_datagrams: list[float] = []
    init, transmit = SimSession.__init__, SimNetwork._transmit
    sessions: list[SimSession] = []

    def observed_init(self: SimSession, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        sessions.append(self)

        def count(sender: int, data: bytes) -> None:
            if any(payload in data for payload in self.sent_at):
                lost_with_stroke.append(self.network.now)

        self.network.source_drop_observers.append(count)

    def observed_transmit(self: SimNetwork, sender: Any, data: bytes, dest: Any) -> None:
        try:
            options = decode(data).options
        except RmpDecodeError:
            options = ()
        if any(isinstance(o, Nack | NackRange) for o in options):
            nack_datagrams.append(self.now)
        transmit(self, sender, data, dest)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SimSession, "__init__", observed_init)
        patch.setattr(SimNetwork, "_transmit", observed_transmit)
        result = run_scenario(
            ScenarioConfig(
                transport="rmp",
                peers=4,
                messages=120,
                impairment=Impairment(source_loss=0.1),
                seed=3,
            )
        )
    assert result["complete"] is True
    # The result is taken when every member has every stroke, before they leave.
    end = result["virtual_ms"]
    assert isinstance(end, float)
    lost = [t for t in lost_with_stroke if t * 1000.0 <= end]
    # NACKs from the first stroke on: those of joining are not counted.
    first_stroke = min(sessions[0].sent_at.values())
    nacks = [t for t in nack_datagrams if first_stroke <= t and t * 1000.0 <= end]
    events = result["source_loss_events"]
    assert isinstance(events, int) and events == len(lost) > 0
    assert isinstance(result["source_losses_injected"], int)
    assert result["source_losses_injected"] > events  # control packets are lost too
    assert result["nack_packets"] == len(nacks) > 0
    assert result["nack_packets_per_loss_event"] == round(len(nacks) / events, 4)


def test_the_result_says_nothing_of_source_loss_without_it() -> None:
    result = run_scenario(ScenarioConfig(transport="raw", peers=2, messages=10))
    assert "nack_packets_per_loss_event" not in result
