"""The model list of a base URL with a query (a gateway's key): ``GET /v1/models?key=…``,
not ``GET /v1?key=…/models``."""

from __future__ import annotations

import socket
import threading

from yoagent.cli.served import ServedModels, served_models

LIST = b'{"data": [{"id": "m"}]}'


def test_the_base_url_s_query_stays_the_query() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    asked: list[bytes] = []

    def answer() -> None:
        connection, _ = listener.accept()
        with connection:
            asked.append(connection.recv(65536).split(b"\r\n", 1)[0])
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(LIST)}\r\n\r\n".encode()
            connection.sendall(head + LIST)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/?key=k1"
    try:
        found = served_models(base, timeout=5.0)
    finally:
        thread.join(5)
        listener.close()
    assert asked == [b"GET /v1/models?key=k1 HTTP/1.1"]
    assert found == ServedModels(found.url, ("m",))
    assert found.url.endswith("/v1/models?…")  # shown without the key
