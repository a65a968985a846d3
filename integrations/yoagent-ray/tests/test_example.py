"""The example evaluation runs as documented (on the suite's cluster and server)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from model_server import COMPLETION_TOKENS, PROMPT_TOKENS, ModelServer

from yoagent.core import Usage
from yoagent.ray import WorkerPool

EXAMPLE = Path(__file__).parents[1] / "examples" / "evaluate_coding_tasks.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evaluate_coding_tasks", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_coding_evaluation_grades_each_repository_by_its_own_test(
    pool: WorkerPool, server: ModelServer, tmp_path: Path
) -> None:
    example = load_example()

    grades, report = example.evaluate(server.url, tmp_path, pool=pool)

    assert grades == {"add": True, "add-again": True, "add-twice": False}
    assert (report.succeeded, report.failed) == (3, 0)  # every run ended; one fix was wrong
    assert report.stats.usage == Usage(input=6 * PROMPT_TOKENS, output=6 * COMPLETION_TOKENS)
    assert "return a + b" in (tmp_path / "add" / "calc.py").read_text()
