"""A worker process for the crash tests: the durable agent of :func:`build`, a runtime on
the database given, and one action (started as ``python dbos_worker.py ARGS``).

    dbos_worker.py DB SERVER EXECUTOR EFFECTS start OUTDIR RUN=PROMPT ...
        start the runs, wait for them, write each result to OUTDIR/RUN.json
    dbos_worker.py DB SERVER EXECUTOR EFFECTS wait OUTDIR RUN ...
        wait for the runs (recovered at launch), write their results
    dbos_worker.py DB SERVER EXECUTOR EFFECTS serve LIMIT [RUN=PROMPT ...]
        enqueue the runs given, then take queued runs until killed (LIMIT: the provider's
        max_concurrent across workers, or "-" for none)
    dbos_worker.py DB SERVER EXECUTOR EFFECTS enqueue RUN=PROMPT ...
        enqueue the runs given and exit, taking none (a ``worker=False`` runtime)

The ``effect`` tool appends its idempotency key to the file ``EFFECTS`` (one line per time
it really ran). The model is priced, so results carry what the run cost.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from dbos_helpers import without_timestamps

from yoagent.core import (
    Agent,
    ApiProtocol,
    CostConfig,
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
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider="scripted",
        id="scripted",
        base_url=base_url,
        cost=CostConfig(input=3.0, output=15.0),
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
    async def guarded(n: int, ctx: ToolContext) -> str:
        """Something a person approves first."""
        with effects.open("a") as out:
            out.write(f"{idempotency_key(ctx)} {n}\n")
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


def write_result(out: Path, result: Any) -> None:
    from yoagent.core import messages_adapter

    messages = messages_adapter.dump_python(result.messages, mode="json")
    stats = {"turns": result.stats.turns, "cost_usd": result.stats.cost_usd}
    out.write_text(json.dumps({"messages": without_timestamps(messages), "stats": stats}))


async def main(argv: list[str]) -> None:
    database, server, executor, effects, action, *rest = argv
    limit = int(rest[0]) if action == "serve" and rest[0] != "-" else None
    durable = build(server, Path(effects), limit=limit)
    if action == "enqueue":
        with DurableRuntime(database, executor_id=executor, worker=False, recover_after=None):
            for item in rest:
                run_id, prompt = item.split("=", 1)
                await durable.enqueue(prompt, run_id=run_id)
        return
    # A live worker is taken for dead only after 6 s without a heartbeat: a loaded
    # machine can stall one for a second or two, and a run recovered from a live worker
    # would run twice.
    runtime = DurableRuntime(database, executor_id=executor, recover_after=6.0, heartbeat=0.5)
    with runtime:
        if action in ("start", "wait"):
            folder, *runs = rest
            handles = []
            for item in runs:
                if action == "start":
                    run_id, prompt = item.split("=", 1)
                    handles.append(await durable.start(prompt, run_id=run_id))
                else:
                    handles.append(await durable.get(item))
            for handle in handles:
                write_result(Path(folder) / f"{handle.run_id}.json", await handle.result())
        else:
            for item in rest[1:]:
                run_id, prompt = item.split("=", 1)
                await durable.enqueue(prompt, run_id=run_id)
            await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
