"""One ignore engine: both search engines and list_files agree with git and ripgrep."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from tools_helpers import needs_rg

from yoagent.core import ToolContext
from yoagent.tools import ListFilesTool, PathSandbox, SearchTool
from yoagent.tools._ignore import GlobFilter, expand_braces

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = [
    ".gitignore",
    ".hidden.txt",
    ".env",
    "app.py",
    "app.log",
    "keep.log",
    "top-only.txt",
    "notes.tmp",
    "build/out.txt",
    "docs/guide.md",
    "docs/draft.tmp",
    "docs/sub/deep.tmp",
    "src/main.py",
    "src/top-only.txt",
    "src/gen.gen.py",
    "src/.gitignore",
    "src/important.log",
    "src/secret/key.txt",
    "src/inner/.gitignore",
    "src/inner/kept.gen.py",
    "src/inner/other.gen.py",
    "src/inner/data.csv",
    "vendor/lib/x.py",
    "vendor/lib/keep.py",
    "weird name #1.txt",
    "a[1].txt",
]
ROOT_IGNORE = """\
# comment
*.log
!keep.log
build/
/top-only.txt
docs/*.tmp
!.env
vendor/lib/*
!vendor/lib/keep.py
\\#*
"""
SRC_IGNORE = "!important.log\nsecret/\n*.gen.py\n"
INNER_IGNORE = "!kept.gen.py\n*.csv\n"


def _tree(root: Path) -> Path:
    for rel in FILES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"needle in {rel}\n")
    (root / ".gitignore").write_text(ROOT_IGNORE)
    (root / "src" / ".gitignore").write_text(SRC_IGNORE)
    (root / "src" / "inner" / ".gitignore").write_text(INNER_IGNORE)
    return root


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=root, input=stdin, capture_output=True, text=True, env=env
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = _tree(tmp_path / "repo")
    if shutil.which("git") is not None:
        _git(root, "init", "-q")
    else:
        (root / ".git").mkdir()
    return root


def _matches(text: str) -> set[str]:
    return {line.split(":", 1)[0] for line in text.splitlines()}


QUERIES = [
    {},
    {"glob": "*.py"},
    {"glob": "!*.txt"},
    {"glob": "src/**"},
    {"glob": "*.{py,md}"},
    {"glob": "*.log"},  # a glob includes even what .gitignore ignores, as in ripgrep
    {"glob": ".*"},
    {"path": "src"},
    {"path": "src/inner", "glob": "*.py"},
    {"path": "docs", "glob": "*.md"},
]


@needs_rg
@pytest.mark.parametrize("query", QUERIES, ids=[str(q) for q in QUERIES])
async def test_ripgrep_and_the_python_engine_find_the_same_lines(
    repo: Path, ctx: ToolContext, query: dict[str, str]
) -> None:
    sandbox = PathSandbox([repo])
    arguments = {"pattern": "needle", "max_results": 1000, **query}
    rg = await SearchTool(sandbox, engine="ripgrep").execute(arguments, ctx)
    python = await SearchTool(sandbox, engine="python").execute(arguments, ctx)
    assert sorted(python.text.splitlines()) == sorted(rg.text.splitlines())
    assert python.text.splitlines(), "the query should find something"


async def test_the_python_engine_honours_nested_gitignores_and_negations(
    repo: Path, ctx: ToolContext
) -> None:
    result = await SearchTool(PathSandbox([repo]), engine="python").execute(
        {"pattern": "needle", "max_results": 1000}, ctx
    )
    assert _matches(result.text) == {
        ".env",  # hidden, but re-included by `!.env`
        "app.py",
        "keep.log",
        "notes.tmp",
        "a[1].txt",
        "docs/guide.md",
        "docs/sub/deep.tmp",
        "src/main.py",
        "src/top-only.txt",
        "src/important.log",
        "src/inner/kept.gen.py",
        "vendor/lib/keep.py",
        "weird name #1.txt",
    }


def _every_path(repo: Path) -> list[str]:
    """Every path below ``repo`` but .git, relative; folders end in "/"."""
    every: list[str] = []
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [name for name in dirs if name != ".git"]
        rel = os.path.relpath(folder, repo)
        prefix = "" if rel == "." else rel + "/"
        every += [prefix + name + "/" for name in dirs] + [prefix + name for name in files]
    return every


@needs_git
async def test_list_files_agrees_with_git_check_ignore(repo: Path, ctx: ToolContext) -> None:
    listing = await ListFilesTool(PathSandbox([repo])).execute({"depth": 10, "limit": 5000}, ctx)
    listed: set[str] = set()
    skipped: set[str] = set()
    for line in listing.text.splitlines():
        if line == ".git/ (skipped)":
            continue  # git's own folder, skipped by name
        if line.endswith("/ (skipped)"):
            skipped.add(line.removesuffix(" (skipped)"))
        elif not line.endswith("/"):
            listed.add(line)
    every = _every_path(repo)
    # folders are asked without their slash (git looks at the tree to know they are folders;
    # "vendor/lib/" would match `vendor/lib/*` as an empty name)
    asked = "\n".join(path.rstrip("/") for path in every) + "\n"
    ignored_names = set(_git(repo, "check-ignore", "--stdin", stdin=asked).splitlines())
    ignored = {path for path in every if path.rstrip("/") in ignored_names}
    # git reports every ignored path; list_files never enters an ignored folder
    inside_ignored = {
        path
        for path in every
        if any(
            path.startswith(folder) and path != folder for folder in ignored if folder.endswith("/")
        )
    }
    visible = set(every) - inside_ignored
    assert listed == {p for p in visible if not p.endswith("/") and p not in ignored}
    assert skipped == {p for p in visible if p.endswith("/") and p in ignored}
    assert "build/" in skipped and "src/secret/" in skipped


async def test_an_anchored_pattern_of_a_parent_gitignore_follows_git_in_a_subfolder(
    repo: Path, ctx: ToolContext
) -> None:
    """`docs/*.tmp` ignores docs/draft.tmp, not docs/sub/deep.tmp, wherever the search starts.

    (ripgrep 14 drops docs/sub/deep.tmp when it searches `docs` itself, unlike git; the
    parity test above therefore leaves that query out.)
    """
    result = await SearchTool(PathSandbox([repo]), engine="python").execute(
        {"pattern": "needle", "path": "docs"}, ctx
    )
    assert _matches(result.text) == {"docs/guide.md", "docs/sub/deep.tmp"}


async def test_outside_a_repository_gitignore_files_do_not_apply(
    tmp_path: Path, ctx: ToolContext
) -> None:
    root = _tree(tmp_path / "plain")
    listing = await ListFilesTool(PathSandbox([root])).execute({"depth": 10}, ctx)
    assert "app.log" in listing.text.splitlines()
    found = await SearchTool(PathSandbox([root]), engine="python").execute(
        {"pattern": "needle", "max_results": 1000}, ctx
    )
    assert "app.log" in _matches(found.text)


def test_brace_alternatives_expand_like_ripgreps_globs() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b{c,d}}/x") == ["a/x", "bc/x", "bd/x"]
    assert expand_braces("{x}.py") == ["{x}.py"]
    assert expand_braces("plain") == ["plain"]


def test_glob_filter_uses_gitignore_semantics_and_the_last_glob_wins() -> None:
    only_py = GlobFilter(["*.py"])
    assert only_py.decide("a/b/c.py", False) is True
    assert only_py.decide("a/b/c.txt", False) is False
    assert only_py.decide("a/b", True) is None  # folders are still entered
    anchored = GlobFilter(["build/*.o"])
    assert anchored.decide("build/x.o", False) is True
    assert anchored.decide("build/sub/x.o", False) is False  # fnmatch said yes; git says no
    ordered = GlobFilter(["!*.txt", "keep.txt"])
    assert ordered.decide("a/keep.txt", False) is True
    assert ordered.decide("a/other.txt", False) is False
