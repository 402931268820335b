"""The IPv4 interfaces a session can use, for the settings' interface list and its check.

QtNetwork, not widgets: ``settings.py`` checks a saved interface with it too."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtNetwork import QAbstractSocket, QNetworkInterface

SYSTEM_DEFAULT_LABEL = "System default"

_IPV4 = QAbstractSocket.NetworkLayerProtocol.IPv4Protocol
_Flag = QNetworkInterface.InterfaceFlag


@dataclass(frozen=True, slots=True)
class InterfaceChoice:
    label: str  # what the person reads
    address: str  # what NetConfig.iface takes; "" for the system's choice


def list_interfaces() -> list[InterfaceChoice]:
    """ "System default" first, then each IPv4 address of an interface that is up and can
    multicast, loopback included (labelled: a session on it stays on this computer)."""
    choices = [InterfaceChoice(SYSTEM_DEFAULT_LABEL, "")]
    for interface in QNetworkInterface.allInterfaces():
        flags = interface.flags()
        if not flags & _Flag.IsUp:
            continue
        loopback = bool(flags & _Flag.IsLoopBack)
        # Linux does not flag lo as multicast-capable, yet multicast on 127.0.0.1 works (the
        # tests and `--ttl 0` sessions use it), so loopback is listed regardless.
        if not loopback and not flags & _Flag.CanMulticast:
            continue
        name = interface.humanReadableName() or interface.name()
        for entry in interface.addressEntries():
            ip = entry.ip()
            if ip.protocol() != _IPV4:
                continue
            address = ip.toString()
            label = f"{name} — {address}"
            if loopback:
                label += " (loopback: this computer only)"
            choices.append(InterfaceChoice(label, address))
    return choices


def local_ipv4_addresses() -> frozenset[str]:
    """Every IPv4 address of this machine, up or not: what "on this machine" means when a
    setting names an interface (one that is merely down is the kernel's to refuse)."""
    return frozenset(
        address.toString()
        for address in QNetworkInterface.allAddresses()
        if address.protocol() == _IPV4
    )


__all__ = ["SYSTEM_DEFAULT_LABEL", "InterfaceChoice", "list_interfaces", "local_ipv4_addresses"]
