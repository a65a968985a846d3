"""Evaluate a coding agent on a few tiny repositories, each with a failing test, on Ray.

Each task is one repository; its agent (the real ``bash`` tool, in that repository) is
asked to make the test pass; afterwards the driver runs each test itself to grade the
run. The model is the scripted OpenAI-compatible server of this package's tests, on
loopback, so it runs offline: it "fixes" ``a - b`` into ``a + b``, which mends two of
the three repositories. Run it from the repository's root (the variable keeps Ray's
workers on this environment rather than a ``uv run`` of their own):

    export RAY_ENABLE_UV_RUN_RUNTIME_ENV=0
    uv run python integrations/yoagent-ray/examples/evaluate_coding_tasks.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import ray

from yoagent.core import Agent, ApiProtocol, ModelConfig
from yoagent.ray import AgentTask, Batch, BatchReport, WorkerPool

TESTS = Path(__file__).resolve().parents[1] / "tests"

REPOSITORIES = {
    "add": "def add(a, b):\n    return a - b\n",  # the bug the model knows how to fix
    "add-again": "def add(a, b):\n    return a - b  # same bug, elsewhere\n",
    "add-twice": "def add(a, b):\n    return 2 * a + b\n",  # a bug it does not fix
}
TEST = "from calc import add\n\nassert add(2, 3) == 5, add(2, 3)\nprint('passed')\n"


def make_repositories(root: Path) -> dict[str, Path]:
    """One folder per task: ``calc.py`` with a bug, ``test_calc.py`` that catches it."""
    folders: dict[str, Path] = {}
    for name, source in REPOSITORIES.items():
        folder = root / name
        folder.mkdir()
        (folder / "calc.py").write_text(source)
        (folder / "test_calc.py").write_text(TEST)
        folders[name] = folder
    return folders


def coding_agent(task: AgentTask) -> Agent:
    """Built on the worker: the model, and ``bash`` in the task's repository."""
    from yoagent.tools import BashTool

    data: dict[str, Any] = task.data
    model = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS, provider="scripted", id="coder", base_url=data["url"]
    )
    return Agent.from_config(
        model,
        system_prompt="You fix failing tests.",
        tools=[BashTool(cwd=data["repo"], timeout=60)],
    )


def passes(folder: Path) -> bool:
    """The grade: does the repository's test pass now?"""
    run = subprocess.run(
        [sys.executable, "test_calc.py"], cwd=folder, capture_output=True, timeout=60
    )
    return run.returncode == 0


def evaluate(
    url: str, root: Path, pool: WorkerPool | None = None
) -> tuple[dict[str, bool], BatchReport]:
    """Run the agent on every repository under ``root``; each task's grade, and the report."""
    folders = make_repositories(root)
    tasks = [
        AgentTask(
            id=name,
            prompt=f"fix {folder} so that `python test_calc.py` passes",
            data={"url": url, "repo": str(folder)},
        )
        for name, folder in folders.items()
    ]
    batch = Batch(tasks, coding_agent, pool=pool, concurrency=3, timeout=120)
    grades: dict[str, bool] = {}
    for result in batch:
        grades[result.task_id] = result.ok and passes(folders[result.task_id])
        print(f"{result.task_id}: {'PASS' if grades[result.task_id] else 'FAIL'}", flush=True)
    return grades, batch.report


def main() -> None:
    sys.path.insert(0, str(TESTS))
    from model_server import ModelServer

    ray.init(num_cpus=2, include_dashboard=False)
    try:
        with ModelServer() as server, tempfile.TemporaryDirectory() as root:
            grades, report = evaluate(server.url, Path(root))
        print(f"{sum(grades.values())}/{len(grades)} tasks solved; {report.summary()}")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
