"""``served_models`` in-process: ``GET {base_url}/models`` against a loopback server
answering each way a server can (a list, an error status, not JSON, not a list, entries
without ids, nothing at all), and each way the request can fail, word for word."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from yoagent.cli import served
from yoagent.cli.served import ServedModels, served_models


class ModelsServer:
    """Answers every GET with ``status`` and ``body``, and keeps the paths asked for."""

    def __init__(self) -> None:
        self.status = 200
        self.body = b""
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                owner.paths.append(self.path)
                self.send_response(owner.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answer(self, payload: object, status: int = 200) -> None:
        self.status = status
        self.body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def models_server() -> Iterator[ModelsServer]:
    running = ModelsServer()
    try:
        yield running
    finally:
        running.close()


def test_the_ids_a_server_lists_in_its_order(models_server: ModelsServer) -> None:
    models_server.answer({"object": "list", "data": [{"id": "b"}, {"id": "a"}]})
    found = served_models(models_server.base + "/")
    assert found == ServedModels(models_server.base + "/models", ("b", "a"), None)
    assert models_server.paths == ["/v1/models"]


def test_entries_without_a_usable_id_are_skipped(models_server: ModelsServer) -> None:
    data = ["m", {"name": "x"}, {"id": ""}, {"id": 7}, {"id": "kept"}, None]
    models_server.answer({"data": data})
    assert served_models(models_server.base).ids == ("kept",)


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"data": []}, "it lists no models"),
        ({"data": [{"id": ""}]}, "it lists no models"),
        ({"models": [{"id": "m"}]}, "the answer is not a model list"),
        ({"data": {"id": "m"}}, "the answer is not a model list"),
        ([{"id": "m"}], "the answer is not a model list"),
        (b"<html>not found</html>", "the answer is not JSON"),
    ],
)
def test_an_answer_that_lists_nothing_says_why(
    models_server: ModelsServer, payload: object, problem: str
) -> None:
    models_server.answer(payload)
    assert served_models(models_server.base) == ServedModels(
        models_server.base + "/models", (), problem
    )


def test_an_error_status_is_named(models_server: ModelsServer) -> None:
    models_server.answer({"error": "no"}, status=503)
    assert served_models(models_server.base) == ServedModels(
        models_server.base + "/models", (), "HTTP 503"
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_server_nobody_listens_on_refuses_the_connection(scheme: str) -> None:
    base = f"{scheme}://127.0.0.1:{_closed_port()}/v1"
    assert served_models(base) == ServedModels(base + "/models", (), "connection refused")


@pytest.mark.parametrize("base", ["ftp://127.0.0.1/v1", "127.0.0.1:8000/v1"])
def test_only_http_and_https_are_asked(base: str) -> None:
    assert served_models(base) == ServedModels(
        base + "/models", (), "not an http:// or https:// URL"
    )


def test_the_url_shown_carries_no_credential_and_no_query() -> None:
    found = served_models(f"http://user:pw@127.0.0.1:{_closed_port()}/v1?key=abc")
    assert "pw" not in found.url and "abc" not in found.url
    assert found.url.startswith("http://127.0.0.1:")


def test_a_url_that_cannot_be_shown_is_named_as_the_model_list() -> None:
    assert served_models("http://[bad/v1").url == "the server's model list"


def _raising(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> list[float | None]:
    timeouts: list[float | None] = []

    def open_url(self: Any, url: str, data: Any = None, timeout: float | None = None) -> Any:
        timeouts.append(timeout)
        raise error

    # served_models opens through its own OpenerDirector (urlopen's handlers, its
    # connections known so they can be shut at the deadline)
    monkeypatch.setattr(served.urllib.request.OpenerDirector, "open", open_url)
    return timeouts


def test_the_request_is_bounded_by_three_seconds_unless_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timeouts = _raising(monkeypatch, TimeoutError())
    assert served_models("http://h/v1") == ServedModels(
        "http://h/v1/models", (), "no answer within 3 s"
    )
    assert served_models("http://h/v1", timeout=0.25).problem == "no answer within 0.25 s"
    assert timeouts == [3.0, 0.25]


def test_only_trailing_slashes_are_taken_off_the_base(monkeypatch: pytest.MonkeyPatch) -> None:
    _raising(monkeypatch, TimeoutError())
    assert served_models("http://h/X//").url == "http://h/X/models"
    assert served_models("http://h/apiX").url == "http://h/apiX/models"


@pytest.mark.parametrize(
    ("error", "problem"),
    [
        (urllib.error.URLError(TimeoutError()), "no answer in time"),
        (urllib.error.URLError(ConnectionRefusedError()), "connection refused"),
        (urllib.error.URLError(OSError(113, "No route to host")), "No route to host"),
        (urllib.error.URLError(OSError()), "OSError"),
        (urllib.error.URLError("unknown url type"), "unknown url type"),
        (urllib.error.URLError(""), "str"),
        (ConnectionResetError(104, "Connection reset by peer"), "Connection reset by peer"),
    ],
)
def test_each_failure_of_the_request_is_named(
    monkeypatch: pytest.MonkeyPatch, error: BaseException, problem: str
) -> None:
    _raising(monkeypatch, error)
    assert served_models("http://h/v1") == ServedModels("http://h/v1/models", (), problem)


def test_an_answer_nested_past_the_interpreter_is_not_json(models_server: ModelsServer) -> None:
    models_server.answer(b"[" * 200_000)
    assert served_models(models_server.base).problem == "the answer is not JSON"


def test_an_answer_past_the_bound_is_refused_unparsed(
    models_server: ModelsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(served, "MAX_LIST_BYTES", 64)
    models_server.answer({"data": [{"id": "m" * 60}]})
    assert served_models(models_server.base).problem == "the answer is larger than 64 bytes"
    models_server.answer({"data": [{"id": "m" * 40}]})  # 57 bytes: read whole
    assert served_models(models_server.base).ids == ("m" * 40,)
