"""A free loopback port for a test's own server (one copy for every package's tests)."""

from __future__ import annotations

import random
import socket

_LOW, _HIGH = 20_000, 32_768  # below Linux's ephemeral range (32768 and up)


def free_port() -> int:
    """A loopback TCP port nobody listens on, picked below the kernel's ephemeral range:
    no ``bind(0)`` and no outgoing connection elsewhere can take it between this probe
    and the server's own bind, as they can a port the kernel chose."""
    for _ in range(200):
        port = random.randrange(_LOW, _HIGH)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:  # in use (or lingering): try another
                continue
            return port
    raise RuntimeError(f"no free loopback port between {_LOW} and {_HIGH - 1}")
