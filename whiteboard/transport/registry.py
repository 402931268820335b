"""Transport names and where their cores live. Protocol packages are imported on demand, so a
build without one still runs the others and says clearly what is missing."""

from __future__ import annotations

import importlib

from whiteboard.transport.interface import CoreFactory

# name -> module exposing ``make_core`` (see ``interface.CoreFactory``)
TRANSPORT_MODULES: dict[str, str] = {
    "raw": "whiteboard.transport.raw",
    "rmp": "rmp",
    "mtp": "mtp",
}


class TransportUnavailable(ValueError):
    """The named transport does not exist or is not in this build (a bad argument, to the
    caller: the message says which transports there are)."""


def core_factory(name: str) -> CoreFactory:
    module_name = TRANSPORT_MODULES.get(name)
    if module_name is None:
        known = ", ".join(TRANSPORT_MODULES)
        raise TransportUnavailable(f"unknown transport {name!r}; choose one of: {known}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the package exists but is broken: a bug, not a missing transport
        raise TransportUnavailable(
            f"the {name!r} transport is not implemented in this build yet "
            f"(no package {module_name!r}); use --transport raw for now"
        ) from None
    factory = getattr(module, "make_core", None)
    if factory is None:
        raise TransportUnavailable(
            f"the {name!r} transport is not implemented in this build yet "
            f"({module_name!r} has no make_core)"
        )
    return factory
