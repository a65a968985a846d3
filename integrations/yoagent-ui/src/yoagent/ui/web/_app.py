"""The web app: the page and its files, the chat's AG-UI endpoint, the recorded runs, all
behind a token in the URL (``/<token>/``); anything else is refused."""

from __future__ import annotations

import hmac
import importlib.resources
import os
import re
import secrets
from collections.abc import Callable, Sequence
from typing import Any, cast

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from yoagent.core import Agent
from yoagent.core.loop import AgentFactory, agent_from
from yoagent.ui._errors import UiError
from yoagent.ui._store import ThreadStore

from ._approvals import WebApprovals
from ._chat import WebChat
from ._library import RunLibrary, RunSource
from ._runs import RunFilter, listing

STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_STATIC_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*\.(html|js|css|svg)")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")

SECURITY_HEADERS: dict[str, str] = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
"""Sent with every answer: the page runs only its own files, talks only to this server,
and its URL (with the token) is never sent to another site."""

REFUSED = "refused: this yoagent web server needs the URL it printed (with its token)\n"


def new_token() -> str:
    """A fresh random token: 32 URL-safe characters (192 bits)."""
    return secrets.token_urlsafe(24)


def _static(name: str) -> bytes | None:
    if not _STATIC_NAME.fullmatch(name):
        return None
    resource = importlib.resources.files(__package__ or "yoagent.ui.web") / "static" / name
    try:
        return resource.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


class WebApp:
    """The local web app (an ASGI app): chat with an agent, answer its held calls, and look
    at recorded runs. Every path starts with ``/<token>/``; a request without the token
    gets 403. :meth:`url` is the address to open."""

    def __init__(
        self,
        agent: Agent | AgentFactory | None,
        *,
        token: str | None = None,
        runs: Sequence[str | os.PathLike[str]] = (),
        approvals: WebApprovals | None = None,
        store: ThreadStore | None = None,
        title: str = "yoagent",
    ) -> None:
        if token is not None and not _TOKEN.fullmatch(token):
            raise UiError(
                "a web app token must be 16 to 128 characters of A-Z, a-z, 0-9, '-' and '_'"
            )
        self.token = token if token is not None else new_token()
        self.title = title
        self.approvals = approvals if approvals is not None else WebApprovals()
        self.chat: WebChat | None = None
        self._single = isinstance(agent, Agent)
        self._single_busy = False
        """One Agent: a conversation holds it from its request's arrival to its run's end."""
        self._agent_model: dict[str, Any] | None = None
        if agent is not None:
            factory: AgentFactory = (lambda: agent) if isinstance(agent, Agent) else agent
            self.chat = WebChat(factory, approvals=self.approvals, store=store)
            if isinstance(agent, Agent):
                self._agent_model = _model_json(agent)
        self.library = RunLibrary()
        for path in runs:
            self.library.open(path)
        routes = [
            Route("/", self._page),
            Route("/static/{name}", self._file),
            Route("/api/info", self._info),
            Route("/api/agui", self._agui, methods=["POST"]),
            Route("/api/threads/{thread_id}", self._thread),
            Route("/api/threads/{thread_id}/held", self._held),
            Route("/api/sources", self._sources, methods=["GET", "POST"]),
            Route("/api/runs", self._runs),
            Route("/api/runs/{source}/{run_id}", self._run),
        ]
        self._app = Starlette(routes=routes)

    def url(self, host: str = "127.0.0.1", port: int = 8000, *, prefix: str = "") -> str:
        """The address of the page when this app is served at ``host``:``port``, mounted
        under ``prefix`` (``"/web"`` for an app mounted there; none by default)."""
        shown = f"[{host}]" if ":" in host else host
        mount = "/" + prefix.strip("/") if prefix.strip("/") else ""
        return f"http://{shown}:{port}{mount}/{self.token}/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here: the handshake is refused by the server
        root: str = scope.get("root_path", "")
        head, slash, rest = _route_path(scope).removeprefix("/").partition("/")
        if not hmac.compare_digest(head.encode(), self.token.encode()):
            await PlainTextResponse(REFUSED, status_code=403, headers=SECURITY_HEADERS)(
                scope, receive, send
            )
            return
        if not slash:  # /<token> → /<token>/, so the page's relative paths resolve
            await RedirectResponse(f"{root}/{self.token}/", headers=SECURITY_HEADERS)(
                scope, receive, send
            )
            return
        inner = dict(scope)  # the token joins the mount prefix: the routes see the rest
        inner["root_path"] = f"{root}/{self.token}"
        inner["path"] = f"{root}/{self.token}/{rest}"

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (key, value)
                    for key, value in message.get("headers", [])
                    if key.decode("latin-1").lower() not in SECURITY_HEADERS
                ]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self._app(inner, receive, secured)

    # --- the page ---------------------------------------------------------------------------

    async def _page(self, request: Request) -> Response:
        del request
        body = _static("index.html")
        assert body is not None, "the package is missing its static/index.html"
        return Response(body, media_type=STATIC_TYPES[".html"])

    async def _file(self, request: Request) -> Response:
        name: str = request.path_params["name"]
        body = _static(name)
        if body is None:
            return PlainTextResponse("not found\n", status_code=404)
        return Response(body, media_type=STATIC_TYPES[os.path.splitext(name)[1]])

    async def _info(self, request: Request) -> JSONResponse:
        del request
        model = self._agent_model
        if model is None and self.chat is not None:
            model = self._agent_model = await self._factory_model()
        return JSONResponse(
            {
                "title": self.title,
                "chat": self.chat is not None,
                "model": model,
                "sources": [source.to_json() for source in await self._all_sources()],
            }
        )

    async def _factory_model(self) -> dict[str, Any] | None:
        assert self.chat is not None
        try:
            agent = await agent_from(self.chat.factory)
        except Exception:
            return None
        return _model_json(agent)

    # --- chat -------------------------------------------------------------------------------

    async def _agui(self, request: Request) -> Response:
        chat = self.chat
        if chat is None:
            return JSONResponse({"error": "this web app has no agent to chat with"}, 404)
        if not self._single:
            return await chat.handle(request)
        # One Agent, one conversation at a time: held before anything is awaited (the
        # request's body included), so no second request can touch the agent meanwhile.
        if self._single_busy:
            return JSONResponse(
                {"error": "the agent is busy with another conversation; wait for it to end"},
                status_code=409,
            )
        self._single_busy = True
        try:
            answer = await chat.handle(request)
        except BaseException:
            self._single_busy = False
            raise
        return _ThenRun(answer, self._free_single)

    def _free_single(self) -> None:
        self._single_busy = False

    async def _thread(self, request: Request) -> Response:
        if self.chat is None:
            return JSONResponse({"messages": []})
        return await self.chat.thread(request)

    async def _held(self, request: Request) -> Response:
        if self.chat is None:
            return JSONResponse({"calls": []})
        return await self.chat.held(request)

    # --- recorded runs ----------------------------------------------------------------------

    async def _sources(self, request: Request) -> JSONResponse:
        if request.method == "POST":
            try:
                body: Any = await request.json()
            except ValueError:
                body = None
            fields = cast("dict[str, Any]", body) if isinstance(body, dict) else {}
            path = fields.get("path")
            if not isinstance(path, str) or not path.strip():
                return JSONResponse({"error": 'send {"path": "..."}'}, status_code=400)
            source = await anyio.to_thread.run_sync(self.library.open, path.strip())
            return JSONResponse(source.to_json())
        return JSONResponse({"sources": [s.to_json() for s in await self._all_sources()]})

    async def _all_sources(self) -> list[RunSource]:
        # Reading a record blocks (a large log, a slow disk): never on the event loop.
        return await anyio.to_thread.run_sync(self.library.sources)

    async def _source(self, source_id: str) -> RunSource | None:
        return await anyio.to_thread.run_sync(self.library.get, source_id)

    async def _runs(self, request: Request) -> JSONResponse:
        query = request.query_params
        source = await self._source(query.get("source", ""))
        if source is None:
            return JSONResponse({"error": "no such source"}, status_code=404)
        try:
            where = RunFilter(
                outcome=query.get("outcome") or None,
                model=query.get("model") or None,
                min_cost=_number(query.get("min_cost")),
                max_cost=_number(query.get("max_cost")),
                text=query.get("q", ""),
                delegated=query.get("delegated") == "1",
            )
            offset, limit = int(query.get("offset", "0")), int(query.get("limit", "50"))
        except ValueError as error:
            return JSONResponse({"error": f"bad query: {error}"}, status_code=400)
        return JSONResponse(
            {"source": source.to_json(), **listing(source.runs, where, offset, limit)}
        )

    async def _run(self, request: Request) -> JSONResponse:
        source = await self._source(request.path_params["source"])
        run_id: str = request.path_params["run_id"]
        found = next((run for run in source.runs if run.id == run_id), None) if source else None
        if found is None:
            return JSONResponse({"error": f"no run {run_id!r} here"}, status_code=404)
        try:
            offset = int(request.query_params.get("offset", "0"))
            limit = int(request.query_params.get("limit", "100"))
        except ValueError as error:
            return JSONResponse({"error": f"bad query: {error}"}, status_code=400)
        return JSONResponse(found.detail_json(offset, limit))


class _ThenRun(Response):
    """``answer``, then ``after`` once it is sent (or its sending failed)."""

    def __init__(self, answer: Response, after: Callable[[], None]) -> None:
        super().__init__(status_code=answer.status_code)
        self.answer = answer
        self.after = after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.answer(scope, receive, send)
        finally:
            self.after()


def _route_path(scope: Scope) -> str:
    """The request's path below where the app is mounted: ``path`` without ``root_path``
    (an ASGI server or a ``Mount`` keeps the prefix in both; a server that strips it from
    ``path`` leaves ``path`` as it is)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
        return path[len(root) :]
    return path


def _number(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    return float(text)


def _model_json(agent: Agent) -> dict[str, Any]:
    model = agent.model
    return {"provider": model.provider, "id": model.id, "contextWindow": model.context_window}


def to_web(
    agent: Agent | AgentFactory | None,
    *,
    token: str | None = None,
    runs: Sequence[str | os.PathLike[str]] = (),
    approvals: WebApprovals | None = None,
    store: ThreadStore | None = None,
    title: str = "yoagent",
) -> WebApp:
    """The local web app for ``agent`` (an ASGI app): chat with it, answer its held calls,
    and look at the recorded ``runs`` (GASP repositories and cassettes).

    ``agent`` is an :class:`~yoagent.core.Agent` (one conversation runs at a time on it) or
    a factory building a fresh one per request (conversations run side by side); ``None``
    serves the run viewer alone. ``token`` (default: a random one) must begin every path:
    open :meth:`WebApp.url`. ``approvals`` says which calls wait for a person and what
    they see; ``store`` keeps the conversations (default: in memory).
    """
    return WebApp(agent, token=token, runs=runs, approvals=approvals, store=store, title=title)
