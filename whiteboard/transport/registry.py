"""Transport names, where their cores live and how they describe themselves.

The one place that knows which transports exist: everything else asks :func:`describe` for a
:class:`~coreapi.description.TransportDescription` rather than comparing names. Protocol
packages are imported on demand, so a build without one still runs the others and says
clearly what is missing."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from coreapi.description import TransportDescription
from whiteboard.transport.interface import CoreFactory

# name -> module exposing ``make_core`` (see ``interface.CoreFactory``) and ``DESCRIPTION``,
# in the order the app offers them (the first is the default).
_BUILT_IN: dict[str, str] = {
    "rmp": "rmp",
    "mtp": "mtp",
    "raw": "whiteboard.transport.raw",
}


class TransportUnavailable(ValueError):
    """The named transport does not exist or is not in this build (a bad argument, to the
    caller: the message says which transports there are)."""


class Registry:
    """Transport name -> its package. One instance, :data:`REGISTRY`, serves the process;
    tests register transports of their own for the length of a ``with``."""

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = dict(modules)

    def names(self) -> tuple[str, ...]:
        return tuple(self._modules)

    def module(self, name: str) -> ModuleType:
        module_name = self._modules.get(name)
        if module_name is None:
            known = ", ".join(self._modules)
            raise TransportUnavailable(f"unknown transport {name!r}; choose one of: {known}")
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise  # the package exists but is broken: a bug, not a missing transport
            raise TransportUnavailable(
                f"the {name!r} transport is not in this build (no package {module_name!r})"
            ) from None

    def core_factory(self, name: str) -> CoreFactory:
        factory: CoreFactory | None = getattr(self.module(name), "make_core", None)
        if factory is None:
            raise TransportUnavailable(f"the {name!r} transport's package has no make_core")
        return factory

    def describe(self, name: str) -> TransportDescription:
        description = getattr(self.module(name), "DESCRIPTION", None)
        if not isinstance(description, TransportDescription) or description.name != name:
            raise TransportUnavailable(f"the {name!r} transport's package has no DESCRIPTION")
        return description

    def available(self) -> tuple[TransportDescription, ...]:
        """The descriptions of every transport this build has, in the registry's order."""
        found = []
        for name in self._modules:
            try:
                found.append(self.describe(name))
            except TransportUnavailable:
                continue
        return tuple(found)

    @contextmanager
    def registered(self, name: str, module_name: str) -> Iterator[None]:
        """``name`` served by ``module_name`` inside the ``with`` (a transport of the tests')."""
        if name in self._modules:
            raise ValueError(f"a transport is already called {name!r}")
        self._modules[name] = module_name
        try:
            yield
        finally:
            del self._modules[name]


REGISTRY = Registry(_BUILT_IN)


def transport_names() -> tuple[str, ...]:
    return REGISTRY.names()


def core_factory(name: str) -> CoreFactory:
    return REGISTRY.core_factory(name)


def describe(name: str) -> TransportDescription:
    return REGISTRY.describe(name)


def available_transports() -> tuple[TransportDescription, ...]:
    return REGISTRY.available()
