"""Installing from a clone works the way the documentation says, and only that way is shown.

Nothing is on PyPI yet. docs/install.md and every package's README give one way to install
any of the packages from a clone: build every wheel (``uv build --all-packages --wheel``),
then ``pip install --find-links <that folder> <names>``. The tests marked ``install`` do it
(the wheels built once for the module), into fresh virtual environments outside the
workspace, with the commands read from the pages themselves; they check that no installed
file links back into the clone and run a small program. CI runs them in one job
(``pytest -m install``), not once per Python version.

The other tests read every documentation page: no page shows an install that fails today
(``pip install ./packages/...`` cannot find the sibling packages; ``uv pip install`` of a
folder links them to the clone), and a PyPI install line says it is for once the packages
are published.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from install_helpers import install, links_into, run
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from test_docs_examples import blocks, pages

REPO = Path(__file__).resolve().parents[1]
MEMBERS = sorted(
    path.parent
    for pattern in ("packages/*/pyproject.toml", "integrations/*/pyproject.toml")
    for path in REPO.glob(pattern)
)
CLONE = "~/yoagent-python"  # the clone, as every page names it
BUILD = f"uv build --directory {CLONE} --all-packages --wheel"
INSTALL = f"pip install --find-links {CLONE}/dist"
SHELL = {"sh", "bash", "shell", "console", ""}

# `pip install ./packages/x`, `uv pip install ~/yoagent-python/integrations/y`, ...
_FOLDER_INSTALL = re.compile(
    r"\bpip install\s+(?:-\S+\s+)*['\"]?[.~]?[\w./-]*(?:packages|integrations)/yoagent"
)
# An install of one of our names from an index: pip, pipx, uvx, uv tool install, uv add.
_INDEX_INSTALL = re.compile(
    r"\b(?:(?:pip|pipx) install|uv tool install|uv add|uvx)\s+(?:-\S+\s+)*['\"]?yoagent\b"
)
_FUTURE = re.compile(r"\bonce\s+(?:\w+\s+){0,3}published\b", re.IGNORECASE)
_SAYS_IT_FAILS = re.compile(r"\b(?:fails?|does not work|cannot)\b", re.IGNORECASE)


def _units(text: str, page: str) -> list[tuple[int, str, bool]]:
    """``(line, text, in_code)``: each line of a shell block, and each paragraph or list item
    of the prose around them (code blocks of other languages left out)."""
    found: list[tuple[int, str, bool]] = []
    code_lines: set[int] = set()
    for block in blocks(text, page):
        length = block.code.count("\n") + 2
        code_lines.update(range(block.line, block.line + length))
        if block.language in SHELL:
            for offset, line in enumerate(block.code.splitlines(), start=1):
                found.append((block.line + offset, line, True))
    start, unit = 0, []
    for number, line in enumerate([*text.splitlines(), ""], start=1):
        item = re.match(r"\s*(?:[-*]|\d+\.)\s", line) is not None
        if number in code_lines or not line.strip() or (item and unit):
            if unit:
                found.append((start, " ".join(unit), False))
            start, unit = number, []
        if number not in code_lines and line.strip():
            start = start if unit else number
            unit.append(line.strip())
    return found


def install_problems(text: str, page: str) -> list[str]:
    """The install commands of a page that do not work today, by line."""
    found: list[str] = []
    for line, unit, in_code in _units(text, page):
        if _FOLDER_INSTALL.search(unit) and (in_code or not _SAYS_IT_FAILS.search(unit)):
            found.append(
                f"{page}:{line}: installs a package's folder, which cannot find (pip) or "
                f"links to the clone (uv) the packages it needs: {unit.strip()[:90]!r}"
            )
        for command in _INDEX_INSTALL.finditer(unit):
            rest = unit[command.start() :].split("&&")[0]
            if "--find-links" not in rest and not _FUTURE.search(unit):
                found.append(
                    f"{page}:{line}: {command.group(0)!r} works only once the packages are "
                    "published on PyPI: say so (`# once published`) or install from a clone"
                )
    return found


def install_lines(text: str, page: str) -> list[list[str]]:
    """Every documented install from built wheels in ``text``: each command's arguments
    after ``pip``, its comment left out."""
    return [
        shlex.split(line, comments=True)[1:]
        for block in blocks(text, page)
        if block.language in SHELL
        for line in block.code.splitlines()
        if line.startswith(INSTALL + " ")
    ]


def _project(member: Path) -> dict[str, object]:
    return tomllib.loads((member / "pyproject.toml").read_text("utf-8"))["project"]


# -- what the pages show --------------------------------------------------------------------


def test_the_install_page_builds_the_wheels_and_installs_from_them() -> None:
    text = (REPO / "docs" / "install.md").read_text("utf-8")
    shell = [b.code for b in blocks(text, "docs/install.md") if b.language in SHELL]
    assert any(line.startswith(BUILD + " ") for code in shell for line in code.splitlines())
    assert install_lines(text, "docs/install.md"), f"no `{INSTALL} ...` line"


@pytest.mark.parametrize("member", MEMBERS, ids=lambda path: path.name)
def test_every_package_readme_shows_how_to_install_it_today(member: Path) -> None:
    readme = f"{member.relative_to(REPO).as_posix()}/README.md"
    text = (REPO / readme).read_text("utf-8")
    shell = [b.code for b in blocks(text, readme) if b.language in SHELL]
    builds = [line for code in shell for line in code.splitlines() if line.startswith(BUILD)]
    assert builds, f"{readme}: no `{BUILD}` line"
    names = {
        canonicalize_name(Requirement(argument).name)
        for arguments in install_lines(text, readme)
        for argument in arguments[3:]
    }
    assert canonicalize_name(str(_project(member)["name"])) in names, (
        f"{readme}: no `{INSTALL} {_project(member)['name']}` line"
    )


@pytest.mark.parametrize(
    "page", [p.relative_to(REPO).as_posix() for p in pages()], ids=lambda page: page
)
def test_no_page_shows_an_install_that_fails_today(page: str) -> None:
    assert install_problems((REPO / page).read_text("utf-8"), page) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("```sh\npip install ./integrations/yoagent-openapi   # brings core\n```\n", "folder"),
        ("```\npip install ./packages/yoagent-gasp\n```\n", "folder"),
        ("```sh\nuv pip install ~/yoagent-python/packages/yoagent-providers\n```\n", "folder"),
        ("Run `pip install ./packages/yoagent-core` and you are done.\n", "folder"),
        ("```\npip install yoagent-mcp\n```\n", "published"),
        ('```bash\npip install "yoagent-testing[pytest]"\n```\n', "published"),
        ("```sh\nuvx yoagent                 # run it once, or\n```\n", "published"),
        ("Install it with `pipx install yoagent`.\n", "published"),
    ],
)
def test_the_installs_the_issue_found_are_refused(text: str, problem: str) -> None:
    found = install_problems(text, "page.md")
    assert len(found) == 1 and problem in found[0], found


@pytest.mark.parametrize(
    "text",
    [
        "```sh\npip install yoagent-mcp   # once it is published on PyPI\n```\n",
        "`uvx yoagent` and `pipx install yoagent` will work\nonce the packages are published.\n",
        f"```sh\n{INSTALL} yoagent-mcp\n```\n",
        "- `pip install ./packages/yoagent-x` fails: pip looks on PyPI.\n- Next item.\n",
        "```python\n# pip install yoagent-mcp\n```\n",
    ],
)
def test_what_works_today_or_says_it_does_not_passes(text: str) -> None:
    assert install_problems(text, "page.md") == []


# -- the installs themselves ----------------------------------------------------------------


def test_a_link_into_the_clone_is_found(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    site = tmp_path / "venv" / "lib" / "site-packages"
    (clone / "packages" / "yoagent-core" / "src").mkdir(parents=True)
    (site / "yoagent_core-0.1.0.dist-info").mkdir(parents=True)
    (site / "distutils-precedence.pth").write_text("import os; pass\n")
    assert links_into(tmp_path / "venv", clone) == []

    (site / "_editable_impl_yoagent_core.pth").write_text(
        f"{clone / 'packages' / 'yoagent-core' / 'src'}\n"
    )
    (site / "yoagent_core-0.1.0.dist-info" / "direct_url.json").write_text(
        json.dumps({"url": clone.as_uri(), "dir_info": {"editable": True}})
    )
    assert links_into(tmp_path / "venv", clone) == [
        f"_editable_impl_yoagent_core.pth adds {clone / 'packages' / 'yoagent-core' / 'src'}",
        "yoagent_core-0.1.0.dist-info is an editable install",
    ]


@pytest.mark.parametrize(
    ("message", "outcome"),
    [
        ("ERROR: No matching distribution found for yoagent-core<0.2,>=0.1", pytest.fail.Exception),
        ("Because yoagent-core was not found in the package registry", pytest.fail.Exception),
        ("ERROR: No matching distribution found for pydantic>=2", pytest.skip.Exception),
        ("error: Failed to fetch: `https://pypi.org/simple/httpx/`", pytest.skip.Exception),
    ],
)
def test_a_yoagent_package_not_found_fails_the_install_and_the_network_skips_it(
    message: str, outcome: type[BaseException], tmp_path: Path
) -> None:
    said = [sys.executable, "-c", f"import sys; print({message!r}); sys.exit(1)"]
    with pytest.raises(outcome):
        install(said, what="a package", cwd=tmp_path)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every package's wheel, built once for the module by the documented command."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    folder = tmp_path_factory.mktemp("dist")
    command = [uv, *shlex.split(BUILD)[1:], "--out-dir", str(folder), "--quiet"]
    command[command.index("--directory") + 1] = str(REPO)
    install(command, what="the wheels", cwd=folder)
    assert len(list(folder.glob("*.whl"))) == len(MEMBERS)
    return folder


PROBE = textwrap.dedent(
    """
    import importlib, importlib.metadata, json, sys
    names = sorted(
        d.metadata["Name"] for d in importlib.metadata.distributions()
        if d.metadata["Name"].startswith("yoagent")
    )
    files = {
        n: importlib.import_module("yoagent." + n.removeprefix("yoagent-")).__file__
        for n in names if n != "yoagent"
    }
    print(json.dumps({"distributions": names, "files": files}))
    """
)

CORE_ALONE = textwrap.dedent(
    """
    import asyncio

    from yoagent.core import (
        Agent, AssistantMessage, MockProvider, ModelConfig, StopReason, TextContent,
        ToolCall, ToolResultMessage, tool,
    )

    try:
        import yoagent.providers  # noqa: F401
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit("yoagent.providers is importable: the venv is not standalone")

    @tool
    async def add(a: int, b: int) -> str:
        '''Add two integers.'''
        return str(a + b)

    provider = MockProvider([
        AssistantMessage(
            content=[ToolCall(id="call_1", name="add", arguments={"a": 2, "b": 3})],
            stop_reason=StopReason.TOOL_USE,
        ),
        AssistantMessage(content=[TextContent(text="2 + 3 = 5")]),
    ])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[add])
    new = asyncio.run(agent.prompt("what is 2 + 3?"))
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    assert [r.text for r in results] == ["5"] and not results[0].is_error, results
    assert new[-1].text == "2 + 3 = 5", new[-1]
    """
)

PROVIDERS_AND_TOOLS = textwrap.dedent(
    """
    import pathlib
    import tempfile

    import anyio
    from yoagent.core import (
        Agent, AssistantMessage, MockProvider, ModelConfig, StopReason, TextContent,
        ToolCall, ToolResultMessage,
    )
    from yoagent.providers import models
    from yoagent.tools import default_tools

    # yoagent-providers' entry points are installed: a config finds its provider.
    agent = Agent.from_config(models.ollama("qwen3-coder"))
    assert type(agent.provider).__name__ == "OpenAiCompletionsProvider", agent.provider

    with tempfile.TemporaryDirectory() as folder:
        (pathlib.Path(folder) / "notes.txt").write_text("the answer is 42\\n")
        provider = MockProvider([
            AssistantMessage(
                content=[ToolCall(id="c1", name="read_file", arguments={"path": "notes.txt"})],
                stop_reason=StopReason.TOOL_USE,
            ),
            AssistantMessage(content=[TextContent(text="42")]),
        ])
        agent = Agent.from_provider(provider, ModelConfig.mock(), tools=default_tools([folder]))
        new = anyio.run(agent.prompt, "what is the answer?")
        result = next(m for m in new if isinstance(m, ToolResultMessage))
        assert "the answer is 42" in result.text and not result.is_error, result
    """
)


def first_python_block(page: str) -> str:
    """The first runnable python block of ``page``: the example its readers try first."""
    code = [b for b in blocks((REPO / page).read_text("utf-8"), page) if b.language == "python"]
    assert code and code[0].skip is None, f"{page}: no runnable python block"
    return code[0].code


@dataclass(frozen=True)
class Case:
    """A documented install, the distributions it must bring, and a program to run."""

    page: str
    installer: str  # "pip", or "uv" for `uv pip install` with the same arguments
    distributions: tuple[str, ...]
    program: str | None  # None: the page's first python block, its example
    command: str | None = None  # a console script it must install

    @property
    def id(self) -> str:
        return f"{self.page} ({self.installer})"


CASES = [
    Case("packages/yoagent-core/README.md", "pip", ("yoagent-core",), CORE_ALONE),
    Case(
        "docs/install.md",
        "pip",
        ("yoagent-core", "yoagent-providers", "yoagent-tools"),
        PROVIDERS_AND_TOOLS,
    ),
    Case(
        "integrations/yoagent-openapi/README.md",
        "pip",
        ("yoagent-core", "yoagent-openapi"),
        None,
    ),
    Case(
        "packages/yoagent-gasp/README.md",
        "uv",
        ("yoagent-core", "yoagent-gasp"),
        None,
        command="yoagent-gasp",
    ),
]


@pytest.mark.install
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_documented_install_from_the_wheels_needs_nothing_of_the_clone(
    case: Case, wheels: Path, tmp_path: Path
) -> None:
    lines = install_lines((REPO / case.page).read_text("utf-8"), case.page)
    assert lines, f"{case.page}: no `{INSTALL} ...` line"
    arguments = [str(wheels) if a == f"{CLONE}/dist" else a for a in lines[0][1:]]
    assert arguments[:2] == ["--find-links", str(wheels)], lines[0]

    venv = tmp_path / "venv"
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    uv = shutil.which("uv")
    if case.installer == "uv":
        if uv is None:
            pytest.skip("uv is not on PATH")
        made = run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=60, cwd=tmp_path
        )
        command = [uv, "pip", "install", "--python", str(python), *arguments]
    else:
        made = run([sys.executable, "-m", "venv", str(venv)], timeout=120, cwd=tmp_path)
        command = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *arguments]
    assert made.returncode == 0, made.stderr
    install(command, what=f"{case.page}'s install line", cwd=tmp_path)

    assert links_into(venv, REPO) == []
    # -I: no PYTHONPATH, no user site, not the current folder (which is outside the clone)
    probed = run([str(python), "-I", "-c", PROBE], timeout=60, cwd=tmp_path)
    assert probed.returncode == 0, probed.stderr
    found = json.loads(probed.stdout)
    assert found["distributions"] == sorted(case.distributions)
    for name, file in found["files"].items():
        assert Path(file).resolve().is_relative_to(venv.resolve()), (name, file)

    script = tmp_path / "program.py"
    script.write_text(case.program or first_python_block(case.page), "utf-8")
    ran = run([str(python), "-I", str(script)], timeout=120, cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    if case.command is not None:
        helped = run([str(bin_dir / case.command), "--help"], timeout=60, cwd=tmp_path)
        assert helped.returncode == 0, helped.stderr
