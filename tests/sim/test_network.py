"""The simulator's medium: every impairment is applied, and only as configured."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.sim.probe import ProbeCore, make_probe
from whiteboard.sim.network import Impairment, SimNetwork, SimStation


def build(n: int, seed: int = 7, **impairment: float) -> tuple[SimNetwork, list[SimStation]]:
    network = SimNetwork(seed, Impairment(**impairment))
    stations = [network.add_station() for _ in range(n)]
    for i, station in enumerate(stations):
        network.start(
            station,
            name="probe",
            factory=make_probe,
            member_id=i + 1,
            params={},
            handler=lambda event: None,
        )
    return network, stations


def probe(station: SimStation) -> ProbeCore:
    core = station.transport.core
    assert isinstance(core, ProbeCore)
    return core


def blast(network: SimNetwork, sender: SimStation, count: int, spacing: float = 0.001) -> None:
    """``count`` numbered multicast datagrams from ``sender``, ``spacing`` seconds apart."""
    for k in range(count):

        def send(k: int = k) -> None:
            probe(sender).send_to(k.to_bytes(4, "big"), None)
            sender.transport.timer_fired()  # pumps the outbox through the driver

        network.schedule(network.now + k * spacing, send)


def received(station: SimStation, sender: SimStation) -> list[int]:
    return [int.from_bytes(d, "big") for _, d, a in probe(station).arrivals if a == sender.address]


def test_clean_network_delivers_everything_once_in_order_after_the_delay() -> None:
    network, stations = build(3, delay_ms=5.0)
    blast(network, stations[0], 50)
    network.run(until=10.0)
    for receiver in stations:
        assert received(receiver, stations[0]) == list(range(50))
    first_arrival = probe(stations[1]).arrivals[0][0]
    assert first_arrival == pytest.approx(0.005)
    assert network.stats.losses_injected == 0


def test_sender_hears_its_own_multicast_unimpaired() -> None:
    network, stations = build(2, loss=1.0)
    blast(network, stations[0], 10)
    network.run(until=1.0)
    assert received(stations[0], stations[0]) == list(range(10))
    assert received(stations[1], stations[0]) == []
    assert network.stats.losses_injected == 10


def test_loss_drops_the_configured_share_and_nothing_else() -> None:
    network, stations = build(5, loss=0.2)
    blast(network, stations[0], 1000)
    network.run(until=10.0)
    got = sum(len(received(s, stations[0])) for s in stations[1:])
    assert got + network.stats.losses_injected == 4 * 1000
    # 4000 trials at p=0.2: mean 800, sd ~25; six sigma either way.
    assert 650 < network.stats.losses_injected < 950


def test_duplication_repeats_datagrams_and_is_counted() -> None:
    network, stations = build(2, dup=0.3)
    blast(network, stations[0], 500)
    network.run(until=10.0)
    got = received(stations[1], stations[0])
    assert len(got) == 500 + network.stats.duplicates_injected
    assert 100 < network.stats.duplicates_injected < 200
    assert sorted(set(got)) == list(range(500))


def test_reordering_lets_later_datagrams_overtake() -> None:
    network, stations = build(2, reorder=0.2, reorder_ms=30.0)
    blast(network, stations[0], 500)
    network.run(until=10.0)
    got = received(stations[1], stations[0])
    assert sorted(got) == list(range(500))
    inversions = sum(1 for a, b in itertools.pairwise(got) if a > b)
    assert network.stats.reorders_injected > 50
    assert inversions > 20


def test_jitter_spreads_arrival_times_within_bounds() -> None:
    network, stations = build(2, delay_ms=10.0, jitter_ms=40.0)
    blast(network, stations[0], 200, spacing=1.0)
    network.run(until=1000.0)
    delays = [
        (t - k * 1.0) * 1000.0
        for (t, d, _), k in zip(probe(stations[1]).arrivals, range(200), strict=True)
    ]
    assert all(10.0 <= d < 50.0 for d in delays)
    assert max(delays) - min(delays) > 30.0


def test_partition_separates_components_until_healed() -> None:
    network, stations = build(4)
    network.partition([{0, 1}, {2, 3}])
    blast(network, stations[0], 10)
    network.run(until=1.0)
    assert received(stations[1], stations[0]) == list(range(10))
    assert received(stations[2], stations[0]) == []
    assert network.stats.partition_drops == 20
    network.heal()
    blast(network, stations[0], 5)
    network.run(until=2.0)
    assert received(stations[2], stations[0]) == list(range(5))


def test_unicast_reaches_only_its_destination() -> None:
    network, stations = build(3)
    probe(stations[0]).send_to(b"only-for-2", stations[2].address)
    stations[0].transport.timer_fired()
    probe(stations[0]).send_to(b"nobody", ("station-99", 1))
    stations[0].transport.timer_fired()
    network.run(until=1.0)
    assert [d for _, d, _ in probe(stations[2]).arrivals] == [b"only-for-2"]
    assert probe(stations[1]).arrivals == []
    assert network.stats.unroutable == 1


def test_crash_drops_in_flight_datagrams_and_restart_boots_a_fresh_core() -> None:
    network, stations = build(2, delay_ms=100.0)
    blast(network, stations[0], 3)
    network.run(until=0.01)  # sent, still in flight
    old_core = probe(stations[1])
    network.crash(stations[1])
    network.run(until=1.0)
    assert old_core.arrivals == []
    assert network.stats.crash_drops == 3
    network.start(
        stations[1],
        name="probe",
        factory=make_probe,
        member_id=2,
        params={},
        handler=lambda event: None,
    )
    assert probe(stations[1]) is not old_core
    blast(network, stations[0], 2)
    network.run(until=2.0)
    assert received(stations[1], stations[0]) == [0, 1]


def test_timers_fire_at_their_deadline_and_rearming_replaces_them() -> None:
    network, stations = build(1)
    core = probe(stations[0])
    core.timer = 5.0
    stations[0].transport.timer_fired()  # pumps: the driver arms the 5.0 deadline
    core.timer = 3.0
    stations[0].transport.timer_fired()  # pumps again: 3.0 replaces 5.0
    core.timer_calls.clear()
    network.run(until=10.0)
    assert core.timer_calls == [3.0]


def test_same_seed_same_run_other_seed_other_run() -> None:
    def run(seed: int) -> list[tuple[float, bytes, tuple[str, int]]]:
        network, stations = build(3, seed=seed, loss=0.1, dup=0.1, reorder=0.1, jitter_ms=5.0)
        blast(network, stations[0], 300)
        blast(network, stations[1], 300)
        network.run(until=10.0)
        return probe(stations[2]).arrivals

    assert run(11) == run(11)
    assert run(11) != run(12)


@pytest.mark.parametrize("bad", [{"loss": 1.5}, {"dup": -0.1}, {"delay_ms": -1.0}])
def test_impairment_rejects_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Impairment(**bad)


def test_a_link_override_impairs_only_that_direction() -> None:
    network, stations = build(3)
    network.set_link(0, 2, Impairment(loss=1.0))
    blast(network, stations[0], 20)
    blast(network, stations[2], 20)
    network.run(until=1.0)
    assert received(stations[1], stations[0]) == list(range(20))
    assert received(stations[2], stations[0]) == []
    assert received(stations[0], stations[2]) == list(range(20))
    assert network.stats.losses_injected == 20


def test_a_station_clock_can_run_ahead_and_fast() -> None:
    network, stations = build(2)
    network.set_clock(stations[1], offset=3600.0, drift=0.001)
    network.run(until=10.0)
    assert stations[0].now() == pytest.approx(10.0)
    assert stations[1].now() == pytest.approx(3600.0 + 10.0 * 1.001)
    core = probe(stations[1])
    core.timer = stations[1].now() + 1.001  # one second of network time, in local time
    stations[1].transport.timer_fired()
    core.timer_calls.clear()
    network.run(until=20.0)
    assert len(core.timer_calls) == 1
    assert core.timer_calls[0] == pytest.approx(3600.0 + 11.0 * 1.001)


def test_a_datagram_over_the_mtu_fails_loudly() -> None:
    _, stations = build(2)
    probe(stations[0]).send_to(b"x" * 1473, None)
    with pytest.raises(ValueError, match="MTU allows 1472"):
        stations[0].transport.timer_fired()


def test_no_loss_is_rolled_for_a_station_that_is_down() -> None:
    network, stations = build(3, loss=1.0)
    network.crash(stations[2])
    blast(network, stations[0], 10)
    network.run(until=1.0)
    assert network.stats.losses_injected == 10  # station 1 only


def test_a_core_whose_timer_never_advances_is_reported_not_spun_on() -> None:
    _, stations = build(1)
    core = probe(stations[0])

    def handle_timer(now: float) -> None:
        core.timer_calls.append(now)  # never clears its timer: a bug

    core.handle_timer = handle_timer  # type: ignore[method-assign]
    core.timer = 1.0
    stations[0].transport.timer_fired()
    with pytest.raises(RuntimeError, match="without its deadline moving"):
        stations[0].network.run(until=5.0)


@pytest.mark.parametrize(("offset", "drift"), [(0.3, 0.001), (-0.4, 0.002), (-7.25, 0.001)])
def test_a_station_is_never_woken_before_its_local_deadline(offset: float, drift: float) -> None:
    # A local deadline mapped to network time and back can lose a hair to float rounding: a
    # station woken a hair early finds its timer not yet due, asks for the same instant again,
    # and spins there until the simulator's spin limit stops the run (found by a differential
    # fuzz with clock offsets). Each of these clocks spun within its first 50 deadlines.
    network, stations = build(2)
    network.set_clock(stations[1], offset=offset, drift=drift)
    core = probe(stations[1])
    rng = random.Random(5)
    for k in range(2000):
        core.timer = stations[1].now() + rng.uniform(0.0, 0.05)
        stations[1].transport.timer_fired()
        core.timer_calls.clear()
        network.run(until=network.now + 0.1)
        assert core.timer is None, f"deadline {k} never fired"
        assert len(core.timer_calls) == 1  # woken once, when due


def _arrival_log(network: SimNetwork, stations: list[SimStation]) -> list[tuple[float, int, int]]:
    return sorted(
        (at, stations.index(s), int.from_bytes(d, "big"))
        for s in stations
        for at, d, a in probe(s).arrivals
        if a == stations[0].address
    )


@pytest.mark.parametrize("loss", [0.0, 0.3])
def test_a_multicast_fanned_out_at_one_instant_is_the_same_as_one_entry_each(
    loss: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without jitter, duplication, reordering, links of their own or a partition, one
    multicast datagram's arrivals are queued as one entry (issue 18): the same arrivals, in
    the same order, the same loss draws and the same count of events."""

    def run() -> tuple[list[tuple[float, int, int]], int, int, list[list[bytes]]]:
        network, stations = build(6, loss=loss)
        blast(network, stations[0], 200)
        network.run(until=5.0)
        order = [[d for _, d, _ in probe(s).arrivals] for s in stations]
        log = _arrival_log(network, stations)
        return log, network.events_processed, network.stats.losses_injected, order

    fanned = run()
    monkeypatch.setattr(SimNetwork, "_uniform", lambda self: False)
    assert run() == fanned


def test_a_stop_in_the_middle_of_a_fan_out_leaves_the_rest_for_the_next_run() -> None:
    network, stations = build(5)
    blast(network, stations[0], 1)
    got = lambda: sum(len(received(s, stations[0])) for s in stations[1:])  # noqa: E731
    assert network.run(until=1.0, stop=lambda: got() == 2)
    assert got() == 2 and [len(received(s, stations[0])) for s in stations[1:3]] == [1, 1]
    assert not network.run(until=1.0)
    assert [received(s, stations[0]) for s in stations] == [[0]] * 5
    assert network.events_processed == 1 + 5  # the send, then an arrival at each (its own too)
