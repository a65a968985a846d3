"""``import yoagent.core`` leaves out what only some runs need (issue 12: import time)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

DEFERRED = (
    "opentelemetry",
    "opentelemetry.trace",
    "docstring_parser",
    "importlib.metadata",
    "yoagent.core._tools.arguments",
    "pydantic",
    "pydantic_core",
    "yoagent.core._session",
    "yoagent.core._provider.mock",
    "yoagent.core._hooks.budget",
)


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_importing_core_defers_telemetry_docstrings_metadata_pydantic_and_rarer_parts() -> None:
    loaded = _modules_after("import yoagent.core")
    assert loaded.isdisjoint(DEFERRED), sorted(loaded.intersection(DEFERRED))


def test_the_first_tool_reads_its_docstring_and_a_run_without_tracing_skips_opentelemetry() -> None:
    code = """
import anyio
from yoagent.core import Agent, MockProvider, ModelConfig, tool

@tool
async def echo(text: str) -> str:
    '''Echo it.

    Args:
        text: What to echo.
    '''
    return text

assert echo.description == "Echo it.", echo.description
assert echo.parameters["properties"]["text"]["description"] == "What to echo."
agent = Agent(MockProvider.text("done"), ModelConfig.mock(), tools=[echo])
anyio.run(agent.prompt, "hi")
"""
    loaded = _modules_after(code)
    assert "docstring_parser" in loaded
    # Plain parameter types are validated by pydantic-core; no model is built (pydantic's
    # schema generator is ≈ 5 MB) until a tool's argument types need one.
    assert "pydantic_core" in loaded
    assert "pydantic.main" not in loaded
    assert "pydantic._internal._generate_schema" not in loaded
    assert "opentelemetry.trace" not in loaded


def test_tool_arguments_is_importable_from_core_and_refuses_unknown_keys() -> None:
    import pydantic

    from yoagent.core import ToolArguments

    class Arguments(ToolArguments):
        path: str

    assert Arguments(path="a").path == "a"
    with pytest.raises(pydantic.ValidationError, match="extra_forbidden"):
        Arguments.model_validate({"path": "a", "extra": 1})


def test_names_made_on_first_use_are_public_and_their_exceptions_named_from_core() -> None:
    # A fresh process: the exceptions of a module loaded through one lazy name (Session,
    # validate_transcript, Skill) are named yoagent.core.X as the eager ones are.
    code = """
import yoagent.core as core
from yoagent.core import Session, Skill
from yoagent.core.provider import validate_transcript
names = []
try:
    validate_transcript([])
except Exception as error:
    names.append(type(error).__module__ + "." + type(error).__qualname__)
try:
    Session.from_jsonl('{"a": 1}\\n{"b": 2}\\n')
except Exception as error:
    names.append(type(error).__module__ + "." + type(error).__qualname__)
import yoagent.core._skill_frontmatter as frontmatter
names.append(frontmatter.SkillError.__module__)
listed = set(dir(core))
print(names, sorted({"Session", "MockProvider", "Budget", "ToolArguments"} - listed))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    names, missing = out.stdout.strip().rsplit("] ", 1)
    assert names == (
        "['yoagent.core.provider.TranscriptError', 'yoagent.core.session.SessionCorruptError',"
        " 'yoagent.core'"
    )
    assert missing == "[]"


def test_importing_core_and_its_floor_loads_neither_httpx_nor_the_process_runner() -> None:
    loaded = _modules_after("import yoagent.core, yoagent.core.support")
    assert "httpx" not in loaded
    assert "yoagent.core._support.process" not in loaded
    assert "yoagent.core.support" in loaded


def test_without_httpx_the_http_names_say_which_extra_to_install() -> None:
    code = """
import sys
sys.modules["httpx"] = None  # as if it were not installed
from yoagent.core.support import atomic_write  # the rest of the floor still loads
try:
    from yoagent.core.support import http_client
except ModuleNotFoundError as error:
    print("ERROR", error)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == (
        "ERROR yoagent.core.support.http_client needs httpx: pip install 'yoagent-core[http]'"
    )


def test_without_httpx_a_star_import_and_a_walk_over_the_floor_skip_the_http_names() -> None:
    """``from yoagent.core.support import *``, ``dir()`` and a walk over ``__all__`` (help,
    completion, docs tools) see what can load; ``__all__`` and ``dir()`` leave the HTTP
    names out while httpx is missing. A direct access still says which extra to install."""
    code = """
import sys
sys.modules["httpx"] = None  # as if it were not installed
import yoagent.core.support as support
from yoagent.core.support import *
print(sorted({"http_client", "HTTP_TIMEOUT"} & set(globals())), "atomic_write" in globals())
print([name for name in support.__all__ if getattr(support, name, None) is None])
print(sorted({"http_client", "HTTP_POOL_LIMITS", "shared_ssl_context"} & set(dir(support))))
try:
    support.HTTP_TIMEOUT
except ModuleNotFoundError as error:
    print("ERROR", error)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.splitlines() == [
        "[] True",
        "[]",
        "[]",
        "ERROR yoagent.core.support.HTTP_TIMEOUT needs httpx: pip install 'yoagent-core[http]'",
    ]
