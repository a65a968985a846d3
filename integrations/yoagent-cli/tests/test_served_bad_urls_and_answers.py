"""``served_models`` given a base URL ``urlopen`` refuses, or a server that does not answer
in HTTP: a problem named in words, never an exception out of start-up (``yoagent
--base-url 'http://exa mple/v1'`` crashed with a traceback) nor "the answer is not JSON"."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from yoagent.cli.served import ServedModels, served_models


@pytest.mark.parametrize(
    ("base", "shown"),
    [
        ("http://exa mple/v1", "http://exa mple/v1/models"),
        ("http://[::1/v1", "the server's model list"),
    ],
)
def test_a_base_url_urlopen_refuses_is_named_as_not_valid(base: str, shown: str) -> None:
    found = served_models(base)
    assert (found.ids, found.problem) == ((), "not a valid URL")
    assert found.url == shown


@pytest.fixture
def not_http() -> Iterator[str]:
    """A loopback server that answers each connection with a line that is not HTTP's."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        listener.close()


def test_a_server_that_does_not_speak_http_is_named(not_http: str) -> None:
    assert served_models(not_http) == ServedModels(
        not_http + "/models", (), "the answer is not HTTP"
    )
