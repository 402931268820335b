"""A deterministic network simulator that drives the same sans-I/O cores as the real runtime."""

from whiteboard.sim.network import Impairment, SimNetwork, SimStation

__all__ = ["Impairment", "SimNetwork", "SimStation"]
