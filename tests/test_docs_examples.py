"""Every ```python block of the documentation runs as written.

The pages: README.md, CONTRIBUTING.md, docs/**/*.md, every package's README.md and every
skills/*/SKILL.md (found by glob, so a new package's README is checked the day it lands).
Each block is one test (its id is ``file:line``) and runs as a script of its own with the
workspace's Python, in its page's folder: a fresh one per page, shared by the page's blocks
in order, as for a reader working down the page (a block may use a file an earlier block of
its page wrote; run alone with ``-k``, it may then fail). Every API key is removed from the
environment, so no block can reach a vendor. ``OPENAI_BASE_URL`` points at a loopback
OpenAI-compatible server that answers every chat request with one short text reply: a
block showing your own endpoint reads it (``os.environ.get("OPENAI_BASE_URL", ...)``) and
really runs.

A block that cannot run here (it needs a vendor's key) says so right above its fence:

    <!-- doc-test: skip (needs ANTHROPIC_API_KEY) -->

It is still compiled, and every ``yoagent`` name it imports must exist. Any other
``doc-test:`` comment, or one with no reason, is an error.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from yoagent.providers.testing import ScriptedSseServer

REPO = Path(__file__).resolve().parents[1]
PAGES = (
    "README.md",
    "CONTRIBUTING.md",
    "docs/**/*.md",
    "packages/*/README.md",
    "integrations/*/README.md",
    "skills/*/SKILL.md",
)
REPLY = "Hello from the local model."
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n", re.M)
_DIRECTIVE = re.compile(r"<!--\s*doc-test:(?P<body>.*?)-->", re.S)
_SKIP = re.compile(r"^\s*skip\s*\((?P<reason>[^)]*\S[^)]*)\)\s*$")
_KEY_VARIABLE = re.compile(r"(API_KEY|_TOKEN|SECRET_ACCESS_KEY|ACCESS_KEY_ID)$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: str  # relative to the repository
    line: int  # the fence's line, 1-based
    language: str
    code: str
    skip: str | None  # the reason given in a doc-test: skip (...) comment

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages(root: Path = REPO) -> list[Path]:
    """The documentation pages, sorted."""
    found = {path for pattern in PAGES for path in root.glob(pattern)}
    return sorted(path for path in found if "node_modules" not in path.parts)


def blocks(text: str, page: str) -> list[Block]:
    """The fenced blocks of ``text``, with the doc-test directive written above each."""
    found: list[Block] = []
    position = 0
    while (opening := _FENCE.search(text, position)) is not None:
        fence, indent = opening["fence"], opening["indent"]
        closing = re.compile(rf"^{indent}{fence[0]}{{{len(fence)},}}[ \t]*$", re.M)
        end = closing.search(text, opening.end())
        if end is None:
            raise ValueError(f"{page}:{_line(text, opening.start())}: a fence is never closed")
        before = text[position : opening.start()]
        directives = list(_DIRECTIVE.finditer(before))
        skip = None
        if directives and not before[directives[-1].end() :].strip():
            body = directives[-1]["body"]
            match = _SKIP.match(body)
            if match is None:
                raise ValueError(
                    f"{page}:{_line(text, opening.start())}: unknown doc-test directive "
                    f"{body.strip()!r}; the one there is: skip (reason)"
                )
            skip = match["reason"].strip()
            directives.pop()
        if directives:
            raise ValueError(
                f"{page}:{_line(text, position + directives[-1].start())}: "
                "a doc-test directive must sit right above a code fence"
            )
        code = text[opening.end() : end.start()]
        if indent:
            code = "\n".join(line.removeprefix(indent) for line in code.splitlines()) + "\n"
        language = opening["info"].strip().split(" ")[0].lower()
        found.append(Block(page, _line(text, opening.start()), language, code, skip))
        position = end.end()
    trailing = list(_DIRECTIVE.finditer(text, position))
    if trailing:
        raise ValueError(
            f"{page}:{_line(text, trailing[-1].start())}: a doc-test directive must sit "
            "right above a code fence"
        )
    return found


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def python_blocks(root: Path = REPO) -> list[Block]:
    """Every python block of every page."""
    found: list[Block] = []
    for path in pages(root):
        page = path.relative_to(root).as_posix()
        found += [
            block
            for block in blocks(path.read_text("utf-8"), page)
            if block.language in {"python", "py"}
        ]
    return found


def missing_names(code: str) -> list[str]:
    """The ``yoagent`` modules and names that ``code`` imports and that do not exist."""
    missing: list[str] = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules = [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [(node.module, [alias.name for alias in node.names])]
        else:
            continue
        for module, names in modules:
            if module.split(".")[0] != "yoagent":
                continue
            try:
                imported = importlib.import_module(module)
            except ImportError:
                missing.append(module)
                continue
            public = getattr(imported, "__all__", None)
            missing += [
                f"{module}.{name}"
                for name in names
                # a module's public names are its __all__ (a moved name's alias is not)
                if (name not in public if public is not None else not hasattr(imported, name))
            ]
    return missing


@pytest.fixture(scope="module")
def local_model() -> Iterator[ScriptedSseServer]:
    """A loopback OpenAI-compatible server answering every request with :data:`REPLY`."""
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 6}},
    ]
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    with ScriptedSseServer() as server:
        for _ in range(200):  # far more requests than all the blocks together make
            server.enqueue(body.encode())
        yield server


def _environment(server: ScriptedSseServer) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not _KEY_VARIABLE.search(name) and name not in {"PYTHONPATH", "OPENAI_BASE_URL"}
    }
    env["OPENAI_BASE_URL"] = f"{server.url}/v1"
    return env


ALL = python_blocks()


def test_the_documentation_has_python_blocks_to_check() -> None:
    assert len(ALL) >= 5
    assert {block.page for block in ALL} >= {"README.md", "skills/yoagent/SKILL.md"}


@pytest.fixture(scope="module")
def page_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One folder per page, made when its first block runs."""
    return {}


@pytest.mark.parametrize("block", ALL, ids=[block.id for block in ALL])
def test_the_block_runs_as_written(
    block: Block,
    local_model: ScriptedSseServer,
    page_folders: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    if block.page not in page_folders:
        page_folders[block.page] = tmp_path_factory.mktemp("page")
    run_block(block, local_model, page_folders[block.page])


def run_block(block: Block, local_model: ScriptedSseServer, folder: Path) -> None:
    """Compile ``block``; unless it is marked skip, run it in ``folder`` and check the run."""
    code = compile(block.code, block.id, "exec")  # a syntax error fails here, skip or not
    assert code is not None
    if block.skip is not None:
        assert missing_names(block.code) == [], f"{block.id} imports names that do not exist"
        pytest.skip(f"doc-test: skip ({block.skip}); compiled and its imports checked")
    script = folder / f"example_{block.line}.py"
    script.write_text(block.code, "utf-8")
    requests_before = len(local_model.requests)
    ran = subprocess.run(
        # A name the docs import from an old home (a deprecation alias) fails the example.
        [sys.executable, "-W", "error::DeprecationWarning:__main__", str(script)],
        cwd=folder,
        env=_environment(local_model),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, f"{block.id} failed:\n{ran.stdout}\n{ran.stderr}"
    if "OPENAI_BASE_URL" in block.code:  # it says it talks to your endpoint: it must have
        assert len(local_model.requests) > requests_before, (
            f"{block.id} reads OPENAI_BASE_URL but never reached the local model:\n{ran.stdout}"
        )


# -- the checker itself ------------------------------------------------------------------


def test_blocks_are_found_with_their_directive_and_line() -> None:
    text = (
        "# Title\n"
        "\n"
        "```python\n"
        "print(1)\n"
        "```\n"
        "\n"
        "<!-- doc-test: skip (needs a live key) -->\n"
        "```python\n"
        "print(2)\n"
        "```\n"
        "\n"
        "````sh\n"
        "echo '```python'\n"
        "````\n"
    )
    found = blocks(text, "page.md")
    assert [(b.line, b.language, b.code, b.skip) for b in found] == [
        (3, "python", "print(1)\n", None),
        (8, "python", "print(2)\n", "needs a live key"),
        (12, "sh", "echo '```python'\n", None),
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("<!-- doc-test: skip -->\n```python\nx = 1\n```\n", "unknown doc-test directive"),
        ("<!-- doc-test: run-twice -->\n```python\nx = 1\n```\n", "unknown doc-test directive"),
        ("<!-- doc-test: skip (why) -->\n\nSome prose.\n\n```python\nx\n```\n", "right above"),
        ("```python\nx = 1\n```\n<!-- doc-test: skip (why) -->\n", "right above"),
        ("```python\nx = 1\n", "never closed"),
    ],
)
def test_a_misplaced_or_unknown_directive_is_an_error(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        blocks(text, "page.md")


def test_names_a_block_imports_from_yoagent_must_exist() -> None:
    code = (
        "import json\n"
        "import yoagent.core\n"
        "import yoagent.nowhere\n"
        "from yoagent.core import Agent, NoSuchThing\n"
        "from somewhere_else import anything\n"
    )
    assert missing_names(code) == ["yoagent.nowhere", "yoagent.core.NoSuchThing"]


def test_a_failing_block_fails_its_test(tmp_path: Path, local_model: ScriptedSseServer) -> None:
    """The runner reports a block that raises (so a broken example cannot pass)."""
    broken = Block("page.md", 1, "python", "from yoagent.core import Agent\n1 / 0\n", None)
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        run_block(broken, local_model, tmp_path)


def test_blocks_run_without_keys_and_with_the_local_model(
    local_model: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "should-not-leak")
    env = _environment(local_model)
    assert not {"ANTHROPIC_API_KEY", "API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} & set(env)
    assert env["OPENAI_BASE_URL"] == f"{local_model.url}/v1"
    assert env["PATH"] == os.environ["PATH"]


def test_a_block_that_names_the_local_model_must_reach_it(
    tmp_path: Path, local_model: ScriptedSseServer
) -> None:
    code = "import os\nBASE_URL = os.environ['OPENAI_BASE_URL']  # and then never used\n"
    block = Block("page.md", 1, "python", code, None)
    with pytest.raises(AssertionError, match="never reached the local model"):
        run_block(block, local_model, tmp_path)


def test_a_block_finds_what_an_earlier_block_of_its_page_wrote(
    tmp_path: Path, local_model: ScriptedSseServer
) -> None:
    writer = Block("page.md", 1, "python", "open('server.py', 'w').write('print(5)')\n", None)
    user = Block("page.md", 9, "python", "import runpy\nrunpy.run_path('server.py')\n", None)
    run_block(writer, local_model, tmp_path)
    run_block(user, local_model, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "example_1.py",
        "example_9.py",
        "server.py",
    ]
