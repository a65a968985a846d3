"""A loopback server that answers each connection with a function of its own, for tests
of what the CLI makes of an answer that is slow, cut, or not HTTP at all."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator

Answer = Callable[[socket.socket], None]
Serve = Callable[[Answer], str]


@contextlib.contextmanager
def loopback_answers() -> Iterator[Serve]:
    """``start(answer)`` serves ``answer(connection)`` (after reading the request) on a new
    loopback port and gives its ``/v1`` base URL; every listener is closed on leaving."""
    listeners: list[socket.socket] = []

    def start(answer: Answer) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)

        def loop() -> None:
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                with connection:
                    connection.recv(65536)
                    with contextlib.suppress(OSError):  # the client gave up
                        answer(connection)

        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/v1"

    try:
        yield start
    finally:
        for listener in listeners:
            listener.close()
