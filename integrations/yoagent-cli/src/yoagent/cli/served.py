"""What an OpenAI-compatible server says it serves: ``GET {base_url}/models``, and why not
when it does not say."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, cast

from yoagent.core.support import display_url, endpoint_from_base


@dataclass(frozen=True, slots=True)
class ServedModels:
    """The ids a server lists, in its order, or why there are none (``problem``)."""

    url: str
    """Where they were asked for, for display (no credential)."""
    ids: tuple[str, ...] = ()
    problem: str | None = None


MAX_LIST_BYTES = 4 * 1024 * 1024
"""The most of a model list read: a server's list of models is kilobytes."""


def served_models(base_url: str, timeout: float = 3.0) -> ServedModels:
    """Ask ``GET {base_url}/models`` which models the server serves, within ``timeout``
    seconds in all.

    ``urlopen``'s own timeout bounds each socket operation, not the exchange: a server
    that trickles its answer a byte at a time would hold the agent's start-up as long as
    it liked. The exchange runs in a daemon thread; at the deadline it is given up and
    its connection shut, which ends the thread's read at once.
    """
    url = endpoint_from_base(base_url, lambda base: f"{base}/models")
    shown = display_url(url, invalid="the server's model list")
    if not url.startswith(("http://", "https://")):
        return ServedModels(shown, problem="not an http:// or https:// URL")
    deadline = time.monotonic() + timeout
    connections = _Connections()
    found: list[ServedModels] = []
    worker = threading.Thread(
        target=lambda: found.append(_ask(url, shown, timeout, deadline, connections)),
        name="yoagent-served-models",
        daemon=True,
    )
    worker.start()
    worker.join(timeout)
    if found:
        return found[0]
    connections.shut()
    return ServedModels(shown, problem=f"no answer within {timeout:g} s")


class _Connections:
    """The sockets one exchange connects, so that the caller can shut them at its deadline
    (a read blocked on a shut socket returns at once). A socket is known from its connect
    on, also after ``urllib`` hands it to the response; one that connects after the
    deadline is shut at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._shut = False

    def opener(self) -> urllib.request.OpenerDirector:
        """``urlopen``'s handlers (proxies from the environment, redirects), with the
        sockets their connections make known here."""
        connections = self

        class Http(http.client.HTTPConnection):
            def connect(self) -> None:
                super().connect()
                connections.connected(self.sock)

        class Https(http.client.HTTPSConnection):
            def connect(self) -> None:
                super().connect()
                connections.connected(self.sock)

        class HttpHandler(urllib.request.HTTPHandler):
            def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(Http, req)

        class HttpsHandler(urllib.request.HTTPSHandler):
            def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                # No context given: http.client's default one, as urlopen's handler has it.
                return self.do_open(Https, req)

        return urllib.request.build_opener(HttpHandler, HttpsHandler)

    def connected(self, sock: socket.socket) -> None:
        with self._lock:
            if not self._shut:
                self._sockets.append(sock)
                return
        _shut_down(sock)
        raise OSError("given up at the deadline")

    def shut(self) -> None:
        """Shut every socket connected (and any connected later)."""
        with self._lock:
            self._shut = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut_down(sock)


def _shut_down(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


def _ask(
    url: str, shown: str, timeout: float, deadline: float, connections: _Connections
) -> ServedModels:
    try:
        with connections.opener().open(url, timeout=timeout) as response:
            body = _read_until(response, deadline)
    except urllib.error.HTTPError as error:
        return ServedModels(shown, problem=f"HTTP {error.code}")
    except urllib.error.URLError as error:
        return ServedModels(shown, problem=_reason(error.reason))
    except TimeoutError:
        return ServedModels(shown, problem=f"no answer within {timeout:g} s")
    except OSError as error:
        return ServedModels(shown, problem=_reason(error))
    except (ValueError, http.client.InvalidURL):  # a host urlopen refuses: `[::1`, `a b`
        return ServedModels(shown, problem="not a valid URL")
    except http.client.IncompleteRead:  # fewer bytes than the answer announced
        return ServedModels(shown, problem="the answer broke off")
    except http.client.HTTPException:  # a status line or body that is not HTTP's
        return ServedModels(shown, problem="the answer is not HTTP")
    if body is None:
        return ServedModels(shown, problem=f"no answer within {timeout:g} s")
    if len(body) > MAX_LIST_BYTES:
        return ServedModels(shown, problem=f"the answer is larger than {MAX_LIST_BYTES} bytes")
    try:
        payload: object = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: JSON nested past the interpreter
        return ServedModels(shown, problem="the answer is not JSON")
    data = cast(dict[str, Any], payload).get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return ServedModels(shown, problem="the answer is not a model list")
    ids: list[str] = []
    for raw in cast(list[Any], data):
        model_id = cast(dict[str, Any], raw).get("id") if isinstance(raw, dict) else None
        if isinstance(model_id, str) and model_id:
            ids.append(model_id)
    return ServedModels(shown, tuple(ids), None if ids else "it lists no models")


def _read_until(response: http.client.HTTPResponse, deadline: float) -> bytes | None:
    """At most ``MAX_LIST_BYTES + 1`` bytes of the body, or ``None`` past ``deadline``."""
    pieces: list[bytes] = []
    size = 0
    while size <= MAX_LIST_BYTES:
        if time.monotonic() > deadline:
            return None
        piece = response.read1(MAX_LIST_BYTES + 1 - size)
        if not piece:
            if response.length:  # the connection ended before the announced length
                raise http.client.IncompleteRead(b"".join(pieces), response.length)
            break
        pieces.append(piece)
        size += len(piece)
    return b"".join(pieces)


def _reason(reason: object) -> str:
    if isinstance(reason, TimeoutError):
        return "no answer in time"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__
