"""The web app's server without a browser: the token guards every path, the answers carry
the page's security headers, the server listens on loopback unless asked, and the chat's
spend events say what each reply cost."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import replace

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from yoagent.core import (
    Agent,
    AssistantMessage,
    CostConfig,
    MockProvider,
    ModelConfig,
    TextContent,
    Usage,
    cost_of,
)
from yoagent.ui import UiError
from yoagent.ui.web import SPEND_EVENT, WebApp, is_loopback, serve, to_web

TOKEN = "a" * 24


def client(app: WebApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://web")


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/static/app.js",
        "/api/info",
        "/x" + TOKEN + "/",
        f"/{TOKEN[:-1]}/api/info",
        "/favicon.ico",
    ],
)
async def test_a_request_without_the_token_is_refused(path: str) -> None:
    async with client(to_web(None, token=TOKEN)) as web:
        answer = await web.get(path)
    assert answer.status_code == 403
    assert "token" in answer.text and "yoagent" in answer.text


async def test_the_token_opens_the_page_its_files_and_its_api() -> None:
    async with client(to_web(None, token=TOKEN)) as web:
        bare = await web.get(f"/{TOKEN}")
        page = await web.get(f"/{TOKEN}/")
        script = await web.get(f"/{TOKEN}/static/chat.js")
        info = await web.get(f"/{TOKEN}/api/info")
        missing = await web.get(f"/{TOKEN}/static/..%2f_app.py")
    assert bare.status_code == 307 and bare.headers["location"] == f"/{TOKEN}/"
    assert page.status_code == 200 and "<main" in page.text
    assert script.headers["content-type"].startswith("text/javascript")
    assert info.json() == {"title": "yoagent", "chat": False, "model": None, "sources": []}
    assert missing.status_code == 404
    for answer in (page, script, info, missing):
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "connect-src 'self'" in policy
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert answer.headers["x-content-type-options"] == "nosniff"


def test_a_token_too_short_or_of_odd_characters_is_refused() -> None:
    for token in ("short", "a" * 15, "a" * 20 + "/x"):
        with pytest.raises(UiError, match="16 to 128 characters"):
            to_web(None, token=token)
    assert len(to_web(None).token) == 32 and to_web(None).token != to_web(None).token


def test_loopback_is_told_apart() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.2", "example.com", "::"]))


def test_the_server_listens_on_loopback_by_default() -> None:
    app = to_web(None)
    found: list[str] = []
    ready = threading.Event()

    async def main() -> None:
        async with anyio.create_task_group() as group:

            def on_ready(url: str) -> None:
                found.append(url)
                ready.set()
                group.cancel_scope.cancel()

            group.start_soon(lambda: serve(app, on_ready=on_ready))

    anyio.run(main)
    assert ready.is_set()
    (url,) = found
    assert url.startswith("http://127.0.0.1:") and url.endswith(f"/{app.token}/")


def test_a_port_in_use_is_said_in_words() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UiError, match=f"cannot listen on 127.0.0.1:{port}"):
            anyio.run(lambda: serve(to_web(None), port=port))


async def test_each_reply_sends_what_it_cost_and_the_context_it_filled() -> None:
    prices = CostConfig(input=3.0, output=15.0)
    usage = Usage(input=1200, output=300)
    model = replace(ModelConfig.mock(), cost=prices, context_window=10_000)
    reply = AssistantMessage(content=[TextContent(text="hi")], usage=usage)
    agent = Agent.from_provider(MockProvider([reply]), model)
    app = to_web(agent, token=TOKEN)
    run = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
    }
    async with client(app) as web:
        answer = await web.post(f"/{TOKEN}/api/agui", json=run)
        thread = await web.get(f"/{TOKEN}/api/threads/t")
    events = [
        json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")
    ]
    (spend,) = [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == SPEND_EVENT]
    assert spend["costUsd"] == cost_of(usage, prices)
    assert spend["contextTokens"] == 1200 and spend["contextWindow"] == 10_000
    (total,) = [e["value"] for e in events if e.get("name") == "yoagent.run_spend"]
    assert total["costUsd"] == cost_of(usage, prices)
    assert [m["role"] for m in thread.json()["messages"]] == ["user", "assistant"]
    assert thread.json()["running"] is False


async def test_the_app_mounted_under_a_prefix_serves_behind_its_token() -> None:
    agent = Agent.from_provider(MockProvider.text("mounted"), ModelConfig.mock())
    web_app = to_web(agent, token=TOKEN)
    host = Starlette(routes=[Mount("/web", app=web_app)])
    transport = httpx.ASGITransport(app=host)
    async with httpx.AsyncClient(transport=transport, base_url="http://host") as web:
        page = await web.get(f"/web/{TOKEN}/")
        script = await web.get(f"/web/{TOKEN}/static/app.js")
        info = await web.get(f"/web/{TOKEN}/api/info")
        bare = await web.get(f"/web/{TOKEN}")
        refused = await web.get(f"/web/{'b' * 24}/api/info")
        unmounted = await web.get(f"/{TOKEN}/api/info")
        body = {
            "threadId": "t",
            "runId": "r",
            "messages": [{"id": "u", "role": "user", "content": "hi"}],
        }
        chat = await web.post(f"/web/{TOKEN}/api/agui", json=body)
        thread = await web.get(f"/web/{TOKEN}/api/threads/t")

    assert page.status_code == 200 and "<html" in page.text
    assert script.status_code == 200
    assert info.status_code == 200 and info.json()["chat"] is True
    assert bare.status_code == 307 and bare.headers["location"] == f"/web/{TOKEN}/"
    assert refused.status_code == 403
    assert unmounted.status_code == 404  # the host app has nothing there
    assert chat.status_code == 200 and '"RUN_FINISHED"' in chat.text
    assert [m["content"] for m in thread.json()["messages"]] == ["hi", "mounted"]
    assert web_app.url(port=8000, prefix="/web") == f"http://127.0.0.1:8000/web/{TOKEN}/"
    assert web_app.url(port=8000, prefix="web/") == f"http://127.0.0.1:8000/web/{TOKEN}/"
    assert web_app.url(port=8000) == f"http://127.0.0.1:8000/{TOKEN}/"


async def test_a_server_that_strips_the_prefix_from_the_path_is_served_too() -> None:
    """An ASGI server given a root path (``uvicorn --root-path``) may leave it out of
    ``path``: the app goes by ``path`` then."""
    transport = httpx.ASGITransport(app=to_web(None, token=TOKEN), root_path="/proxied")
    async with httpx.AsyncClient(transport=transport, base_url="http://host") as web:
        info = await web.get(f"/{TOKEN}/api/info")
        bare = await web.get(f"/{TOKEN}")
    assert info.status_code == 200 and info.json()["chat"] is False
    assert bare.headers["location"] == f"/proxied/{TOKEN}/"
