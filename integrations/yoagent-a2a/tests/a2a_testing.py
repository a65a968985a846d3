"""Helpers for yoagent-a2a's tests: the agents, and servers on loopback (in a thread, or in
a process of their own that a test can kill)."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from a2a.types import Message, Part, Role, SendMessageRequest
from starlette.applications import Starlette

from yoagent.core import Agent, AgentTool, ApiProtocol, ModelConfig, RetryConfig, RunOutcome, tool
from yoagent.core.extension import RunContext, RunHooks

REMOTE_SCRIPT = Path(__file__).resolve().parent / "a2a_remote.py"


def scripted_model(base_url: str) -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider="scripted",
        id="scripted-model",
        base_url=base_url,
    )


@tool
async def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}"


class Ends:
    """An extension recording how each run ended."""

    name = "ends"

    def __init__(self) -> None:
        self.outcomes: list[str] = []
        self.finished = threading.Event()

    def start_run(self, run: RunContext) -> RunHooks:
        owner = self

        class Hooks(RunHooks):
            async def finish(self, outcome: RunOutcome) -> None:
                owner.outcomes.append(outcome.end.value)
                owner.finished.set()

        return Hooks()


def agent_factory(
    model_url: str, ends: Ends | None = None, tools: list[AgentTool] | None = None
) -> Callable[[], Agent]:
    model = scripted_model(model_url)

    def build() -> Agent:
        agent = Agent.from_config(
            model,
            system_prompt="You are a test agent.",
            tools=tools if tools is not None else [get_weather],
            retry=RetryConfig.none(),
        )
        if ends is not None:
            agent.with_extension(ends)
        return agent

    return build


def free_port() -> int:
    """A loopback TCP port nobody listens on, picked below the kernel's ephemeral range
    (32768 and up): no ``bind(0)`` and no outgoing connection elsewhere can take it
    between this probe and the server's own bind, as they can a port the kernel chose."""
    for _ in range(200):
        port = random.randrange(20_000, 32_768)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:  # in use (or lingering): try another
                continue
            return port
    raise RuntimeError("no free loopback port between 20000 and 32767")


@contextmanager
def serve(app: Any, port: int) -> Iterator[str]:
    """Serve ``app`` with uvicorn on ``port`` in a thread; yields its URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@contextmanager
def remote_process(model_url: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The A2A server in a process of its own (``a2a_remote.py``); yields (URL, process)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(REMOTE_SCRIPT), model_url, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the remote agent exited with {process.returncode}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the remote agent did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", process
    finally:
        process.kill()
        process.wait(timeout=30)


def message(text: str, context_id: str = "") -> SendMessageRequest:
    """A user message of ``text`` in the context ``context_id`` (a new one when empty)."""
    return SendMessageRequest(
        message=Message(
            role=Role.ROLE_USER,
            message_id=f"m-{text[:8]}",
            parts=[Part(text=text)],
            context_id=context_id,
        )
    )


@asynccontextmanager
async def in_process(app: Starlette, url: str) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client talking to ``app`` (started) in this process, at ``url``."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=url, timeout=30) as http:
            yield http
