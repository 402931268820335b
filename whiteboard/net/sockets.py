"""Opening the two sockets a member needs: the group socket (receives the session's multicast)
and the unicast socket (sends everything, so that a member's address seen by others is one it
also receives point-to-point packets on)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from dataclasses import dataclass

RECEIVE_BUFFER = 4 * 1024 * 1024  # the default 208 KiB overflows within ms of a burst


@dataclass(frozen=True, slots=True)
class GroupAddress:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> GroupAddress:
        """Parse ``ADDR:PORT``, where ADDR is an IPv4 multicast address."""
        host, sep, port_text = text.rpartition(":")
        if not sep or not host:
            raise ValueError(f"group {text!r} must be ADDR:PORT, for example 239.255.42.1:5000")
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(f"group address {host!r} is not an IPv4 address") from None
        if not address.is_multicast:
            raise ValueError(
                f"group address {host} is not a multicast address (224.0.0.0 to 239.255.255.255)"
            )
        if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
            raise ValueError(f"group port {port_text!r} must be a number from 1 to 65535")
        return cls(str(address), int(port_text))

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def check_interface(iface: str | None) -> str:
    """The IPv4 address of the interface to use, ``0.0.0.0`` meaning the system's choice."""
    if iface is None or iface == "":
        return "0.0.0.0"
    try:
        return str(ipaddress.IPv4Address(iface))
    except ValueError:
        raise ValueError(
            f"interface {iface!r} must be the IPv4 address of a local interface"
        ) from None


def grow_receive_buffer(sock: socket.socket) -> None:
    """Ask for RECEIVE_BUFFER. The kernel silently caps SO_RCVBUF at net.core.rmem_max (often
    208 KiB); as root, SO_RCVBUFFORCE goes past the cap."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    force = getattr(socket, "SO_RCVBUFFORCE", None)
    if force is not None and receive_buffer_size(sock) < RECEIVE_BUFFER:
        with contextlib.suppress(OSError):  # not root: keep what the kernel granted
            sock.setsockopt(socket.SOL_SOCKET, force, RECEIVE_BUFFER)


def receive_buffer_size(sock: socket.socket) -> int:
    """The receive buffer granted, in bytes (Linux reports twice the payload room it keeps)."""
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) // 2


def open_group_socket(group: GroupAddress, iface: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    try:
        # Several members on one host share the group port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        grow_receive_buffer(sock)
        # Binding to the group address (Linux) keeps other groups on the same port out.
        sock.bind((group.host, group.port))
        membership = socket.inet_aton(group.host) + socket.inet_aton(iface)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot join multicast group {group} on interface {iface}: {exc}") from exc
    return sock


def open_unicast_socket(iface: str, ttl: int, loopback: bool) -> socket.socket:
    if not 0 <= ttl <= 255:
        raise ValueError(f"TTL must be from 0 to 255, got {ttl}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    try:
        grow_receive_buffer(sock)
        sock.bind((iface, 0))
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, ttl)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, int(loopback))
        if iface != "0.0.0.0":
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(iface))
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot open a UDP socket on interface {iface}: {exc}") from exc
    return sock
