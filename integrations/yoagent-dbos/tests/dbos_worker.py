"""A worker process for the crash tests: the durable agent of :func:`build`, a runtime on
the database given, and one action (started as ``python worker.py ARGS``).

    worker.py DB SERVER EXECUTOR EFFECTS start RUN_ID PROMPT OUT   start a run, wait, write
    worker.py DB SERVER EXECUTOR EFFECTS wait RUN_ID OUT           wait for a run (recovered)
    worker.py DB SERVER EXECUTOR EFFECTS serve LIMIT [RUN=PROMPT ...]
        enqueue the runs given, then take queued runs until killed (LIMIT: the provider's
        max_concurrent across workers, or "-" for none)

``OUT`` receives the run's result as JSON. The ``effect`` tool appends its idempotency
key to the file ``EFFECTS`` (one line per time it really ran).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from yoagent.core import (
    Agent,
    ApiProtocol,
    Defer,
    ModelConfig,
    RetryConfig,
    RunSettings,
    SubAgentTool,
    ToolCallRequest,
    ToolContext,
    ToolDecision,
    tool,
)
from yoagent.dbos import DurableAgent, DurableRuntime, ProviderLimit, RunQueue, idempotency_key

QUEUE = RunQueue("crash-runs", worker_concurrency=2)
FAST_RETRIES = RetryConfig(max_retries=8, initial_delay=0.05, max_delay=0.2)


def scripted_model(base_url: str) -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS, provider="scripted", id="scripted", base_url=base_url
    )


def build(server_url: str, effects: Path, *, limit: int | None = None) -> DurableAgent:
    """The agent every crash test runs: ``effect``, ``guarded`` (deferred for approval) and
    the sub-agent ``helper``, on the scripted server."""

    @tool
    async def effect(n: int, ctx: ToolContext) -> str:
        """Do something that must happen once."""
        with effects.open("a") as out:
            out.write(idempotency_key(ctx) + "\n")
        return f"effect {n}"

    @tool
    async def guarded(n: int) -> str:
        """Something a person approves first."""
        with effects.open("a") as out:
            out.write(f"guarded {n}\n")
        return f"guarded {n}"

    def approval(request: ToolCallRequest) -> ToolDecision | None:
        if request.tool_name == "guarded":
            return Defer("a person decides")
        return None

    model = scripted_model(server_url)
    helper = SubAgentTool(
        "helper", "Delegate a task.", provider=_provider(model), model=model, retry=FAST_RETRIES
    )
    agent = Agent(
        _provider(model),
        model,
        tools=[effect, guarded, helper],
        settings=RunSettings(retry=FAST_RETRIES, tool_middleware=[approval]),
    )
    limits = [ProviderLimit("scripted", max_concurrent=limit)] if limit else []
    return DurableAgent(agent, name="crash", queue=QUEUE, limits=limits)


def _provider(model: ModelConfig) -> Any:
    from yoagent.providers.openai_completions import OpenAiCompletionsProvider

    return OpenAiCompletionsProvider(model)


def plain(data: Any) -> Any:
    """JSON data without the wall-clock fields a recovered run stamps anew."""
    if isinstance(data, dict):
        return {k: plain(v) for k, v in data.items() if k != "timestamp"}  # pyright: ignore
    if isinstance(data, list):
        return [plain(v) for v in data]  # pyright: ignore
    return data


def write_result(out: Path, result: Any) -> None:
    from yoagent.core import messages_adapter

    messages = messages_adapter.dump_python(result.messages, mode="json")
    out.write_text(json.dumps({"messages": plain(messages), "turns": result.stats.turns}))


async def main(argv: list[str]) -> None:
    database, server, executor, effects, action, *rest = argv
    limit = int(rest[0]) if action == "serve" and rest[0] != "-" else None
    durable = build(server, Path(effects), limit=limit)
    runtime = DurableRuntime(database, executor_id=executor, recover_after=2.0, heartbeat=0.5)
    with runtime:
        if action == "start":
            run_id, prompt, out = rest
            run = await durable.start(prompt, run_id=run_id)
            write_result(Path(out), await run.result())
        elif action == "wait":
            run_id, out = rest
            run = await durable.get(run_id)
            write_result(Path(out), await run.result())
        else:
            for item in rest[1:]:
                run_id, prompt = item.split("=", 1)
                await durable.enqueue(prompt, run_id=run_id)
            await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
