"""Loopback ports for servers the tests start (or for addresses where nothing listens)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback TCP port nothing listens on now (connecting to it is refused until someone binds it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
