"""A simulated session whose losses every member shares (``--source-loss``), for the tests of
NACK suppression (RMP) and the NAK spread (MTP), issue 18."""

from __future__ import annotations

from whiteboard.sim.network import Impairment
from whiteboard.sim.scenario import ScenarioConfig, run_scenario


def nack_packets_per_shared_loss(transport: str, profile: str) -> float:
    """10 members, 200 strokes, 5% of every sender's datagrams lost before the network: the
    NACK (or NAK) packets per loss event, once everything was delivered."""
    result = run_scenario(
        ScenarioConfig(
            transport=transport,
            peers=10,
            messages=200,
            impairment=Impairment(source_loss=0.05),
            params={"profile": profile},
        )
    )
    assert result["complete"] is True
    assert isinstance(result["source_loss_events"], int) and result["source_loss_events"] >= 10
    per_event = result["nack_packets_per_loss_event"]
    assert isinstance(per_event, float), result
    return per_event
