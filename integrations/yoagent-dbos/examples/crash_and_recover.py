"""A durable run whose worker dies with SIGKILL in the middle, finished by a new worker.

    python crash_and_recover.py

The first worker process runs an agent that writes a note (a tool call, checkpointed),
then starts a deploy and is killed before the deploy returns. A second worker process
launches on the same SQLite file, recovers the run and finishes it: the model is not
asked again for the replies it gave, the note is not written again, and only the deploy
that was under way runs again. Offline: the model is a scripted ``MockProvider``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from yoagent.core import (
    Agent,
    ApiProtocol,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    tool,
)
from yoagent.core.provider import StreamConfig
from yoagent.dbos import DurableAgent, DurableRuntime, get_run

FOLDER = Path(os.environ.get("DEMO_FOLDER", tempfile.gettempdir()))
NOTES = FOLDER / "notes.txt"


def model_reply(config: StreamConfig) -> AssistantMessage:
    """The scripted model: write a note, then deploy, then say it is done."""
    done = [m.tool_name for m in config.messages if isinstance(m, ToolResultMessage)]
    if not done:
        call = ToolCall(id="call_note", name="write_note", arguments={"text": "deploying v2"})
    elif done == ["write_note"]:
        call = ToolCall(id="call_deploy", name="deploy", arguments={"version": "v2"})
    else:
        return AssistantMessage(content=[TextContent(text="v2 is deployed")])
    return AssistantMessage(content=[call], stop_reason=StopReason.TOOL_USE)


@tool
def write_note(text: str) -> str:
    """Append a note to the team's log."""
    with NOTES.open("a") as notes:
        notes.write(text + "\n")
    return "noted"


@tool
def deploy(version: str) -> str:
    """Deploy a version."""
    print(f"  deploying {version} (pid {os.getpid()})", flush=True)
    if os.environ.get("DEMO_CRASH"):
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-call
    return f"{version} is live"


provider = MockProvider([model_reply] * 10, validate=False)
model = ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider="demo", id="scripted")
durable = DurableAgent(Agent(provider, model, tools=[write_note, deploy]), name="demo")


async def worker() -> None:
    with DurableRuntime(f"sqlite:///{FOLDER / 'demo.sqlite'}"):
        if os.environ.get("DEMO_CRASH"):
            run = await durable.start("ship v2", run_id="deploy-v2")
        else:
            run = await get_run("deploy-v2")  # recovered at launch: just wait for it
        result = await run.result()
        print(f"  the run says: {result.messages[-1].text!r}")  # type: ignore[union-attr]
        print(f"  model requests sent by this worker: {len(provider.requests)}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "DEMO_FOLDER": folder}
        print("worker 1: starts the run, and is killed during the deploy")
        first = subprocess.run([sys.executable, __file__, "worker"], env={**env, "DEMO_CRASH": "1"})
        print(f"worker 1 exited with {first.returncode} (SIGKILL is {-signal.SIGKILL})")
        print("worker 2: launches on the same database and recovers the run")
        subprocess.run([sys.executable, __file__, "worker"], env=env, check=True)
        notes = (Path(folder) / "notes.txt").read_text().splitlines()
        print(f"notes written: {notes} (once: that step was checkpointed)")


if __name__ == "__main__":
    if sys.argv[1:] == ["worker"]:
        asyncio.run(worker())
    else:
        main()
