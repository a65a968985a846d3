"""What durability costs: the same agent run with and without DBOS, and beside pydantic-ai.

Each run is one agent on the scripted OpenAI-compatible server of yoagent-dbos's tests
(loopback, in a process of its own, so it takes no GIL from either side). A run of
``T`` tool turns makes ``T + 1`` model requests and ``T`` tool calls (a trivial tool):
``T = 0`` (one request) and ``T = --turns`` (default 8). Variants:

- **plain**: ``Agent.prompt`` (no DBOS);
- **dbos:sqlite** / **dbos:postgres**: ``DurableAgent.run`` on a SQLite file / on a
  PostgreSQL 15 server of its own (Debian's binaries, ``fsync=off`` as in the tests; the
  PostgreSQL variant is left out when they are absent);
- with ``--pydantic-ai PYTHON`` (a Python with ``pydantic-ai-slim[openai,dbos]``, kept
  out of the workspace): pydantic-ai's ``Agent.run`` and its ``DBOSAgent`` on the same
  server and databases (``benchmarks/dbos_overhead_pydantic_ai.py``).

Per run overhead is the ``T = 0`` difference; per tool turn (one more request and one more
tool call), the growth of the difference from ``T = 0`` to ``T = --turns``, divided by
``--turns``. Each figure is the median of ``--repeat`` runs after 2 warm-up runs. Run it
with ``uv run python benchmarks/dbos_overhead.py``; it prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

TESTS = Path(__file__).parents[1] / "integrations" / "yoagent-dbos" / "tests"
sys.path[:0] = [str(TESTS), str(Path(__file__).parent)]

from dbos_helpers import postgres_bin, postgres_server  # noqa: E402
from dbos_timing import timed  # noqa: E402

from yoagent.core import Agent, ApiProtocol, ModelConfig, tool  # noqa: E402
from yoagent.dbos import DurableAgent, DurableRuntime  # noqa: E402
from yoagent.providers.openai_completions import OpenAiCompletionsProvider  # noqa: E402

Runner = Callable[[str], Awaitable[object]]


@tool
async def effect(n: int) -> str:
    """Do the turn's work."""
    return f"effect {n}"


def model(url: str) -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS, provider="scripted", id="scripted", base_url=url
    )


@contextlib.contextmanager
def scripted_server() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(TESTS / "scripted_server.py")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait()


async def measure(
    url: str, turns: int, repeat: int, postgres: str | None
) -> dict[str, dict[int, float]]:
    provider = OpenAiCompletionsProvider(model(url))
    durable = DurableAgent(Agent(provider, model(url), tools=[effect]), name="bench")

    async def plain(prompt: str) -> object:
        return await Agent(provider, model(url), tools=[effect]).prompt(prompt)

    async def durable_run(prompt: str) -> object:
        return await durable.run(prompt)

    results: dict[str, dict[int, float]] = {"plain": {}}
    for t in (0, turns):
        results["plain"][t] = await timed(plain, t, repeat)
    databases = {"dbos:sqlite": f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite"}
    if postgres is not None:
        databases["dbos:postgres"] = postgres
    for name, database in databases.items():
        with DurableRuntime(database, recover_after=None):
            results[name] = {t: await timed(durable_run, t, repeat) for t in (0, turns)}
    await provider.aclose()
    return results


def pydantic_ai(
    python: str, url: str, turns: int, repeat: int, postgres: str | None
) -> dict[str, dict[int, float]]:
    script = Path(__file__).with_name("dbos_overhead_pydantic_ai.py")
    command = [python, str(script), url, str(turns), str(repeat), postgres or "-"]
    done = subprocess.run(command, check=True, capture_output=True, text=True, timeout=1800)
    raw: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: {int(t): s for t, s in figures.items()} for name, figures in raw.items()}


CHECKPOINTS = {
    "dbos": "the request and the tool call (2 steps), the events (2 stream records)",
    "pydantic-ai DBOSAgent": "the request (1 step); the tool call runs inline",
}


def table(results: dict[str, dict[int, float]], turns: int) -> str:
    lines = [
        f"| variant | ms/run, 0 tool turns | ms/run, {turns} tool turns | "
        "overhead per run (ms) | overhead per tool turn (ms) | a tool turn checkpoints |",
        "|---|---|---|---|---|---|",
    ]
    for name, figures in results.items():
        base = results["pydantic-ai" if name.startswith("pydantic-ai") else "plain"]
        zero, many = figures[0] * 1000, figures[turns] * 1000
        if name in ("plain", "pydantic-ai"):
            lines.append(f"| {name} | {zero:.1f} | {many:.1f} | – | – | nothing |")
            continue
        per_run = zero - base[0] * 1000
        per_turn = ((many - base[turns] * 1000) - per_run) / turns
        what = CHECKPOINTS[name.split(":")[0]]
        lines.append(
            f"| {name} | {zero:.1f} | {many:.1f} | {per_run:.1f} | {per_turn:.2f} | {what} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--pydantic-ai", metavar="PYTHON", help="a Python with pydantic-ai")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(scripted_server())
        postgres = None
        if postgres_bin() is not None:
            server = stack.enter_context(postgres_server())
            postgres = server.database()
        results = asyncio.run(measure(url, args.turns, args.repeat, postgres))
        if args.pydantic_ai:
            other = server.database() if postgres is not None else None
            results.update(pydantic_ai(args.pydantic_ai, url, args.turns, args.repeat, other))
    print(table(results, args.turns))


if __name__ == "__main__":
    main()
