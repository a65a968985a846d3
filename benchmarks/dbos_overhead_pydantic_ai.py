"""pydantic-ai's side of ``dbos_overhead.py``: its ``Agent.run`` and its ``DBOSAgent`` on
the same scripted server, run by a Python that has ``pydantic-ai-slim[openai,dbos]`` (kept
out of the workspace). Arguments: URL TURNS REPEAT POSTGRES_URL|-. Prints one JSON line:
``{variant: {turns: median seconds}}``.

Its ``DBOSAgent`` makes each model request a step; function tools run inline in the
workflow (they are not checkpointed unless the tool itself is a ``@DBOS.step``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from dbos import DBOS
from pydantic_ai import Agent
from pydantic_ai.durable_exec.dbos import DBOSAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

sys.path.insert(0, str(Path(__file__).parent))
from dbos_timing import timed

warnings.simplefilter("ignore")  # DBOSAgent is deprecated in favour of DBOSDurability


async def main(url: str, turns: int, repeat: int, postgres: str) -> None:
    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=url, api_key="none"))
    agent = Agent(model, name="bench")

    @agent.tool_plain
    async def effect(n: int) -> str:
        """Do the turn's work."""
        return f"effect {n}"

    durable = DBOSAgent(agent, name="bench")

    async def plain(prompt: str) -> Any:
        return await agent.run(prompt)

    async def dbos_run(prompt: str) -> Any:
        return await durable.run(prompt)

    results: dict[str, dict[int, float]] = {
        "pydantic-ai": {t: await timed(plain, t, repeat) for t in (0, turns)}
    }
    databases = {"pydantic-ai DBOSAgent:sqlite": f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite"}
    if postgres != "-":
        databases["pydantic-ai DBOSAgent:postgres"] = postgres
    for name, database in databases.items():
        DBOS(config={"name": "bench", "system_database_url": database, "log_level": "WARNING"})
        DBOS.launch()
        results[name] = {t: await timed(dbos_run, t, repeat) for t in (0, turns)}
        DBOS.destroy()
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
