"""free_port: a loopback port below the kernel's ephemeral range that a server can bind."""

from __future__ import annotations

import socket

import pytest

from yoagent.testing import _ports, free_port


def test_the_port_is_below_the_ephemeral_range_and_can_be_bound() -> None:
    for _ in range(20):
        port = free_port()
        assert 20_000 <= port < 32_768
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))


def test_a_port_in_use_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        busy = taken.getsockname()[1]
        taken.listen()
        picks = iter([busy, busy, 23_456])
        monkeypatch.setattr(_ports.random, "randrange", lambda low, high: next(picks))
        assert free_port() == 23_456


def test_no_free_port_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        monkeypatch.setattr(_ports.random, "randrange", lambda low, high: busy)
        with pytest.raises(RuntimeError, match="no free loopback port between 20000 and 32767"):
            free_port()
