"""The mutation-testing plan: mutants.toml names every package, the weekly workflow mutates
exactly its tables, and .ci/mutation.py's slices (``--only``) and per-module scores are
right."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / ".ci"))

import mutation  # noqa: E402
import workspace  # noqa: E402

WORKFLOW = REPO / ".github" / "workflows" / "mutation.yml"


def plan_tables() -> dict[str, Any]:
    return tomllib.loads(mutation.PLAN.read_text("utf-8"))


# -- mutants.toml and the weekly workflow -------------------------------------------------


def test_every_package_with_code_has_a_table_and_every_table_loads() -> None:
    with_code = {
        package.folder.name
        for package in workspace.packages()
        if any((package.folder / "src").rglob("*.py"))
    }
    assert set(plan_tables()) == with_code
    for name in plan_tables():
        target = mutation.load_target(name)
        assert target.root.as_posix() in {f"packages/{name}", f"integrations/{name}"}
        for path in (*target.paths_to_mutate, *target.tests):
            assert (REPO / target.root / path).is_dir(), f"{name}: {path} is missing"
        assert mutation.modules(target), f"{name}: nothing to mutate"


def test_every_exclusion_matches_a_file_and_gives_its_reason() -> None:
    lines = mutation.PLAN.read_text("utf-8").splitlines()
    for index, line in enumerate(lines):
        if line.startswith("do_not_mutate"):
            assert lines[index - 1].startswith("#"), f"no reason above line {index + 1}"
    for name in plan_tables():
        target = mutation.load_target(name)
        package_dir = REPO / target.root
        for pattern in target.do_not_mutate:
            assert list(package_dir.glob(pattern)), f"{name}: {pattern} matches no file"


def _plan_step() -> str:
    workflow: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    steps: list[dict[str, Any]] = workflow["jobs"]["plan"]["steps"]
    [step] = [step for step in steps if step.get("id") == "plan"]
    matrix = workflow["jobs"]["mutmut"]["strategy"]["matrix"]["package"]
    assert matrix == "${{ fromJSON(needs.plan.outputs.packages) }}"
    return str(step["run"])


@pytest.mark.parametrize("asked", ["", "yoagent-tools"])
def test_the_weekly_matrix_is_the_tables_of_mutants_toml(tmp_path: Path, asked: str) -> None:
    output = tmp_path / "github_output"
    subprocess.run(
        ["bash", "-c", _plan_step()],
        cwd=REPO,
        env={**os.environ, "ASKED": asked, "GITHUB_OUTPUT": str(output)},
        check=True,
    )
    match = re.fullmatch(r"packages=(.*)\n", output.read_text("utf-8"))
    assert match is not None
    assert json.loads(match.group(1)) == ([asked] if asked else list(plan_tables()))


# -- slices: --only --------------------------------------------------------------------------


def test_only_selects_modules_by_dotted_name() -> None:
    core = mutation.load_target("yoagent-core")
    assert mutation.select_modules(core, ["yoagent.core._support.url_parts"]) == [
        "src/yoagent/core/_support/url_parts.py"
    ]
    # a glob, several patterns, overlap counted once, sorted
    assert mutation.select_modules(
        core, ["yoagent.core._support.s*", "yoagent.core._support.scrub"]
    ) == [
        "src/yoagent/core/_support/scrub.py",
        "src/yoagent/core/_support/secrets.py",
        "src/yoagent/core/_support/surrogates.py",
    ]
    # a package's __init__ is the package's own name
    assert mutation.select_modules(core, ["yoagent.core._support"]) == [
        "src/yoagent/core/_support/__init__.py"
    ]


def test_only_refuses_a_pattern_that_matches_nothing() -> None:
    core = mutation.load_target("yoagent-core")
    with pytest.raises(SystemExit, match=r"'yoagent\.core\.nothing\*' matches no module"):
        mutation.select_modules(core, ["yoagent.core._support.scrub", "yoagent.core.nothing*"])
    # an excluded module is not there to select
    with pytest.raises(SystemExit, match="matches no module"):
        mutation.select_modules(core, ["yoagent.core._loop.telemetry"])


def test_a_slice_reaches_mutmut_as_only_mutate() -> None:
    tools = mutation.load_target("yoagent-tools")
    whole = tomllib.loads(mutation.staged_pyproject(tools))["tool"]["mutmut"]
    assert "only_mutate" not in whole
    files = mutation.select_modules(tools, ["yoagent.tools.sandbox", "yoagent.tools._fs"])
    sliced = tomllib.loads(mutation.staged_pyproject(tools, files))["tool"]["mutmut"]
    assert sliced["only_mutate"] == ["src/yoagent/tools/_fs.py", "src/yoagent/tools/sandbox.py"]
    assert sliced["source_paths"] == whole["source_paths"]  # the rest is still imported


def test_dry_run_shows_the_slice(capsys: pytest.CaptureFixture[str]) -> None:
    assert mutation.main(["yoagent-tools", "--dry-run", "--only", "yoagent.tools.sandbox"]) == 0
    out = capsys.readouterr().out
    assert "mutates:     src/yoagent/tools/sandbox.py\n" in out
    assert 'only_mutate = ["src/yoagent/tools/sandbox.py"]' in out


# -- slow tests left out of mutation runs ----------------------------------------------------


def test_every_slow_test_left_out_gives_its_reason() -> None:
    lines = mutation.PLAN.read_text("utf-8").splitlines()
    for index, line in enumerate(lines):
        if line.startswith("slow_tests"):
            assert lines[index - 1].startswith("#"), f"no reason above line {index + 1}"
            rest = lines[index + 1 :]
            entries = rest[: next(i for i, text in enumerate(rest) if text.startswith("]"))]
            for offset, text in enumerate(entries):
                if text.strip().startswith('"'):
                    above = entries[offset - 1].strip() if offset else ""
                    assert above.startswith("#"), f"no reason above line {index + offset + 2}"


def test_slow_tests_are_deselected_in_the_staged_folder(tmp_path: Path) -> None:
    gasp = mutation.load_target("yoagent-gasp")
    assert gasp.slow_tests, "the plan leaves out none of yoagent-gasp's tests any more"
    folder = tmp_path / "yoagent-gasp"
    mutation.stage(gasp, folder)
    staged = tomllib.loads((folder / "pyproject.toml").read_text("utf-8"))["tool"]["mutmut"]
    arguments: list[str] = staged["pytest_add_cli_args"]
    assert arguments[::2] == ["--deselect"] * len(gasp.slow_tests)
    assert tuple(arguments[1::2]) == gasp.slow_tests
    # pytest as mutmut runs it there (from the staged folder, rootdir "."): every one of
    # them is collected, then deselected, and no other test is.
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--rootdir=.", "tests"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    kept = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "--rootdir=.",
            "tests",
            *arguments,
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    every = {line for line in listed.splitlines() if "::" in line}
    rest = {line for line in kept.splitlines() if "::" in line}
    assert set(gasp.slow_tests) <= every
    assert every - rest == set(gasp.slow_tests)
    assert f"{len(gasp.slow_tests)} deselected" in kept


def test_a_slow_test_that_names_no_test_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "mutants.toml"
    table = (
        "[yoagent-gasp]\n"
        'paths_to_mutate = ["packages/yoagent-gasp/src/yoagent/gasp"]\n'
        'tests = ["packages/yoagent-gasp/tests"]\n'
        "min_score = 0.5\n"
    )
    cases = {
        "tests/test_extension.py": "is not a test node id",
        "tests/test_extension.py::": "is not a test node id",
        "tests/test_gone.py::test_x": "names no file (tests/test_gone.py is missing)",
        "tests/test_extension.py::test_renamed_since": "names no test function of",
    }
    for node, reason in cases.items():
        plan.write_text(f"{table}slow_tests = [{json.dumps(node)}]\n", "utf-8")
        with pytest.raises(SystemExit, match=re.escape(reason)):
            mutation.load_target("yoagent-gasp", plan)
    real = mutation.load_target("yoagent-gasp").slow_tests[0]
    plan.write_text(f"{table}slow_tests = [{json.dumps(real + '[param]')}]\n", "utf-8")
    assert mutation.load_target("yoagent-gasp", plan).slow_tests == (real + "[param]",)


# -- scores per module -----------------------------------------------------------------------


def _meta(folder: Path, relative: str, codes: dict[str, int | None]) -> None:
    meta = folder / "mutants" / f"{relative}.meta"
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"exit_code_by_key": codes}), "utf-8")


def test_module_stats_count_mutmuts_verdicts_per_module(tmp_path: Path) -> None:
    # mutmut's exit codes: 1 killed, 0 survived, 33 no tests, 36 timeout, 34 skipped
    _meta(tmp_path, "src/a.py", {"a.f__mutmut_1": 1, "a.f__mutmut_2": 0, "a.f__mutmut_3": 36})
    _meta(tmp_path, "src/b.py", {"b.g__mutmut_1": 33, "b.g__mutmut_2": 34, "b.g__mutmut_3": 1})
    _meta(tmp_path, "src/empty.py", {})
    files = {"a": "src/a.py", "b": "src/b.py", "empty": "src/empty.py", "unrun": "src/c.py"}
    stats = mutation.module_stats(tmp_path, files)
    assert stats == {
        "a": {"killed": 1, "survived": 1, "no_tests": 0, "timeout": 1, "skipped": 0, "total": 3},
        "b": {"killed": 1, "survived": 0, "no_tests": 1, "timeout": 0, "skipped": 1, "total": 3},
    }
    assert mutation.score_of(stats["a"]) == pytest.approx(2 / 3)  # timeout counts as killed
    assert mutation.score_of(stats["b"]) == pytest.approx(1 / 2)  # skipped is left out
    assert mutation.score_of({"total": 2, "skipped": 2}) is None


def test_the_summary_has_a_row_per_module(tmp_path: Path) -> None:
    target = replace(mutation.load_target("yoagent-tools"), min_score=0.75)
    summary = tmp_path / "summary.md"
    per_module = {
        "yoagent.tools.sandbox": {"killed": 9, "survived": 1, "total": 10},
        "yoagent.tools._fs": {"killed": 1, "survived": 3, "total": 4},
    }
    total = {"killed": 10, "survived": 4, "total": 14}
    kept = mutation.report(
        target, 10 / 14, total, summary, per_module, only=["yoagent.tools.sandbox"]
    )
    assert kept is False  # a slice is held to the package's minimum too
    text = summary.read_text("utf-8")
    assert "### Mutation testing: yoagent-tools (only yoagent.tools.sandbox)\n" in text
    assert "Minimum 75%: BELOW THRESHOLD.\n" in text
    assert "| **total** | 71.4% | 10 | 4 | 0 | 0 | 14 |\n" in text
    assert "| `yoagent.tools.sandbox` | 90.0% | 9 | 1 | 0 | 0 | 10 |\n" in text
    assert "| `yoagent.tools._fs` | 25.0% | 1 | 3 | 0 | 0 | 4 |\n" in text


# -- --recheck: the survivors of the staged run against the tests as they are now ---------


def test_survivors_are_read_from_mutmuts_verdicts_of_the_modules_asked(tmp_path: Path) -> None:
    _meta(tmp_path, "src/a.py", {"a.f__mutmut_2": 0, "a.f__mutmut_1": 0, "a.f__mutmut_3": 1})
    _meta(tmp_path, "src/b.py", {"b.g__mutmut_1": 0, "b.g__mutmut_2": 33, "b.g__mutmut_3": 36})
    both = {"a": "src/a.py", "b": "src/b.py", "unrun": "src/c.py"}
    assert mutation.survivors(tmp_path, both) == [
        "a.f__mutmut_1",
        "a.f__mutmut_2",
        "b.g__mutmut_1",
        "b.g__mutmut_2",  # no test reached it: a new test may
    ]
    assert mutation.survivors(tmp_path, {"b": "src/b.py"}) == ["b.g__mutmut_1", "b.g__mutmut_2"]


def _package(root: Path) -> mutation.Target:
    (root / "packages/p/src/yoagent/p").mkdir(parents=True)
    (root / "packages/p/src/yoagent/p/m.py").write_text("def f(): return 1\n", "utf-8")
    (root / "packages/p/tests").mkdir()
    (root / "packages/p/tests/test_m.py").write_text("def test_f(): pass\n", "utf-8")
    return mutation.Target(
        package="p",
        root=Path("packages/p"),
        paths_to_mutate=(Path("src/yoagent/p"),),
        tests=(Path("tests"),),
        do_not_mutate=(),
        min_score=0.5,
    )


def test_a_changed_source_is_named_and_tests_are_copied_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    target = _package(tmp_path)
    staged = tmp_path / ".mutation/p"
    mutation.stage(target, staged)
    assert mutation.changed_sources(target, staged, tmp_path) == []

    package = tmp_path / "packages/p"
    (package / "src/yoagent/p/m.py").write_text("def f(): return 2\n", "utf-8")
    (package / "src/yoagent/p/new.py").write_text("X = 1\n", "utf-8")
    assert mutation.changed_sources(target, staged, tmp_path) == [
        "src/yoagent/p/m.py",
        "src/yoagent/p/new.py",
    ]

    shutil.copytree(staged / "tests", staged / "mutants/tests")  # what mutmut copied
    (package / "tests/test_m.py").unlink()
    (package / "tests/test_edges.py").write_text("def test_edge(): pass\n", "utf-8")
    mutation.refresh_tests(target, staged)
    assert sorted(p.name for p in (staged / "tests").iterdir()) == ["test_edges.py"]
    assert not (staged / "mutants/tests").exists()  # mutmut copies them anew, deleted ones gone


def test_recheck_refuses_without_a_staged_run_or_after_the_source_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    target = _package(tmp_path)
    staged = tmp_path / ".mutation/p"
    with pytest.raises(SystemExit, match="no run of p is staged"):
        mutation._recheck_plan(target, staged, None)  # pyright: ignore[reportPrivateUsage]
    mutation.stage(target, staged)
    _meta(staged, "src/yoagent/p/m.py", {"yoagent.p.m.f__mutmut_1": 0})
    assert mutation._recheck_plan(target, staged, None) == ["yoagent.p.m.f__mutmut_1"]  # pyright: ignore[reportPrivateUsage]
    (tmp_path / "packages/p/src/yoagent/p/m.py").write_text("def f(): return 3\n", "utf-8")
    with pytest.raises(
        SystemExit, match=r"source changed since the staged run \(src/yoagent/p/m.py\)"
    ):
        mutation._recheck_plan(target, staged, None)  # pyright: ignore[reportPrivateUsage]


# -- pull requests: the modules a change touched -------------------------------------------


def test_changed_modules_are_the_mutated_files_a_change_touched() -> None:
    tools = mutation.load_target("yoagent-tools")
    changed = [
        "packages/yoagent-tools/src/yoagent/tools/sandbox.py",
        "packages/yoagent-tools/tests/test_sandbox.py",  # a test: not mutated
        "packages/yoagent-core/src/yoagent/core/_agent.py",  # another package
        "docs/tools.md",
    ]
    assert mutation.changed_modules(tools, changed) == ["src/yoagent/tools/sandbox.py"]
    core = mutation.load_target("yoagent-core")
    telemetry = "packages/yoagent-core/src/yoagent/core/_loop/telemetry.py"  # do_not_mutate
    assert mutation.changed_modules(core, [telemetry]) == []


def test_changed_files_come_from_git_since_the_merge_base(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "kept.py").write_text("a = 1\n", "utf-8")
    (tmp_path / "gone.py").write_text("b = 1\n", "utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    (tmp_path / "moved.py").write_text("d = 1\n" * 20, "utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "more")
    git("checkout", "-q", "-b", "change")
    (tmp_path / "kept.py").write_text("a = 2\n", "utf-8")
    (tmp_path / "new.py").write_text("c = 1\n", "utf-8")
    (tmp_path / "gone.py").unlink()
    git("mv", "moved.py", "renamed.py")
    git("add", "-A")
    git("commit", "-q", "-m", "change")
    git("checkout", "-q", "main")  # the base moves on after the branch
    (tmp_path / "later.py").write_text("e = 1\n", "utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "later on main")
    git("checkout", "-q", "change")
    # what the branch changed since its merge base: not main's later file; not the deleted
    # one; a renamed file under its new name
    assert mutation.changed_files("main", tmp_path) == ["kept.py", "new.py", "renamed.py"]


def test_a_change_with_no_mutated_module_runs_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(mutation, "changed_files", lambda since: ["docs/tools.md"])
    monkeypatch.setattr(mutation, "stage", lambda *a: pytest.fail("nothing to stage"))
    assert mutation.main(["yoagent-tools", "--changed-since", "origin/main"]) == 0
    assert "no mutated module changed since origin/main" in capsys.readouterr().out


def test_a_change_of_too_many_modules_is_left_to_the_weekly_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = mutation.load_target("yoagent-tools")
    every = [f"{tools.root.as_posix()}/{f}" for f in mutation.modules(tools).values()]
    monkeypatch.setattr(mutation, "changed_files", lambda since: every)
    monkeypatch.setattr(mutation, "stage", lambda *a: pytest.fail("nothing to stage"))
    assert mutation.main(["yoagent-tools", "--changed-since", "x", "--max-changed", "2"]) == 0
    assert f"{len(every)} modules changed since x, more than --max-changed 2" in (
        capsys.readouterr().out
    )


def test_the_pull_request_workflow_mutates_the_changed_modules_of_each_package() -> None:
    workflow: dict[str, Any] = yaml.safe_load(
        (REPO / ".github/workflows/mutation-diff.yml").read_text("utf-8")
    )
    on: dict[str, Any] = workflow[True]  # YAML reads the key `on` as true
    assert set(on) == {"pull_request"}
    plan = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["plan"]["steps"])
    assert '.ci/mutation_changed.py "$BASE"' in plan
    run = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["mutmut"]["steps"])
    assert '.ci/mutation.py "$PACKAGE" --changed-since "$BASE"' in run
    for job in ("plan", "mutmut"):  # the merge base needs the base branch's history
        [checkout] = [s for s in workflow["jobs"][job]["steps"] if "checkout" in s.get("uses", "")]
        assert checkout["with"]["fetch-depth"] == 0


@pytest.mark.parametrize("name", ["mutation.yml", "mutation-diff.yml"])
def test_both_workflows_install_the_packages_real_parts_before_mutating(name: str) -> None:
    workflow: dict[str, Any] = yaml.safe_load(
        (REPO / ".github/workflows" / name).read_text("utf-8")
    )
    steps: list[dict[str, Any]] = workflow["jobs"]["mutmut"]["steps"]
    runs = [str(step.get("run", "")) for step in steps]
    [parts] = [i for i, run in enumerate(runs) if run == 'bash .ci/parts.sh "$PACKAGE"']
    [mutate] = [i for i, run in enumerate(runs) if ".ci/mutation.py" in run]
    assert parts < mutate
    assert steps[parts]["env"]["PACKAGE"] == "${{ matrix.package }}"  # unset, it installs none


def test_the_plan_lists_the_packages_with_a_changed_mutated_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import mutation_changed  # pyright: ignore[reportMissingImports]

    changed = [
        "packages/yoagent-tools/src/yoagent/tools/sandbox.py",
        "integrations/yoagent-dbos/src/yoagent/dbos/_runtime.py",
        "packages/yoagent-mcp/tests/test_stdio_edges.py",  # tests only: nothing to mutate
    ]
    monkeypatch.setattr(mutation_changed, "changed_files", lambda since: changed)
    assert mutation_changed.changed_packages("origin/main") == ["yoagent-tools", "yoagent-dbos"]
    tools = mutation.load_target("yoagent-tools")
    every = [f"{tools.root.as_posix()}/{f}" for f in mutation.modules(tools).values()]
    monkeypatch.setattr(mutation_changed, "changed_files", lambda since: [*changed, *every])
    # too many changed modules in tools: left to the weekly run, no job
    assert mutation_changed.changed_packages("origin/main", most=3) == ["yoagent-dbos"]


def test_recheck_reruns_the_survivors_of_the_staged_run_and_scores_the_modules_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(mutation, "ROOT", tmp_path)
    monkeypatch.setattr(mutation, "STAGING", tmp_path / ".mutation")
    target = _package(tmp_path)
    (tmp_path / "packages/p/src/yoagent/p/other.py").write_text("def g(): pass\n", "utf-8")
    monkeypatch.setattr(mutation, "load_target", lambda name: target)
    staged = tmp_path / ".mutation/p"
    mutation.stage(target, staged)
    _meta(
        staged, "src/yoagent/p/m.py", {"yoagent.p.m.f__mutmut_1": 0, "yoagent.p.m.f__mutmut_2": 1}
    )
    _meta(staged, "src/yoagent/p/other.py", {"yoagent.p.other.g__mutmut_1": 0})
    ran: list[list[str]] = []

    def mutmut(command: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        ran.append(command)
        if command[-1] == "yoagent.p.m.f__mutmut_1":  # the triage's new test kills it
            _meta(
                staged,
                "src/yoagent/p/m.py",
                {"yoagent.p.m.f__mutmut_1": 1, "yoagent.p.m.f__mutmut_2": 1},
            )
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(mutation.subprocess, "run", mutmut)
    monkeypatch.setattr(mutation, "read_score", lambda folder: (0.5, {"total": 99}))
    assert mutation.main(["p", "--recheck", "--only", "yoagent.p.m"]) == 0
    assert [command[3:] for command in ran] == [["run", "yoagent.p.m.f__mutmut_1"]]
    assert (staged / "mutants/src/yoagent/p/m.py.meta").is_file()  # the run was kept
    out = capsys.readouterr().out
    assert "p: re-running 1 survivors" in out
    assert "mutation score 100.0%" in out  # m's two mutants, not the staged run's total


def test_every_package_whose_code_signals_processes_runs_in_its_own_pid_namespace() -> None:
    signalling = re.compile(r"\bos\.kill(pg)?\(")
    for package in tomllib.loads(mutation.PLAN.read_text("utf-8")):
        target = mutation.load_target(package)
        sources = (mutation.ROOT / target.root / "src").rglob("*.py")
        signals = any(signalling.search(path.read_text("utf-8")) for path in sources)
        assert target.own_pid_namespace == signals, package


def test_an_isolated_package_runs_mutmut_behind_unshare() -> None:
    core = mutation.load_target("yoagent-core")
    command = mutation.mutmut_command(1, isolated=core.own_pid_namespace)
    prefix = mutation.pid_namespace_prefix()
    assert prefix[0] == "unshare" and {"--pid", "--fork", "--mount-proc"} <= set(prefix)
    assert prefix[-3:-1] == [sys.executable, "-c"]  # the namespace's first process
    assert command == [*prefix, sys.executable, "-m", "mutmut", "run", "--max-children", "1"]
    assert mutation.mutmut_command(None) == [sys.executable, "-m", "mutmut", "run"]


def test_own_pid_namespace_must_be_a_boolean(tmp_path: Path) -> None:
    plan = tmp_path / "mutants.toml"
    plan.write_text(
        "[yoagent-core]\n"
        'paths_to_mutate = ["packages/yoagent-core/src/yoagent/core"]\n'
        'tests = ["packages/yoagent-core/tests"]\n'
        "min_score = 0.5\n"
        'own_pid_namespace = "yes"\n',
        "utf-8",
    )
    with pytest.raises(SystemExit, match="own_pid_namespace is true or false"):
        mutation.load_target("yoagent-core", plan)


@pytest.mark.skipif(
    mutation.check_pid_namespace(mutation.pid_namespace_prefix()) is not None,
    reason="no PID namespace can be made here (not Linux, no unshare, or not permitted)",
)
def test_the_namespace_sees_only_its_own_processes() -> None:
    # What a mutant killing "every process but the marked ones" would find in /proc.
    seen = subprocess.run(
        [
            *mutation.pid_namespace_prefix(),
            sys.executable,
            "-c",
            "import os; print(sorted(int(n) for n in os.listdir('/proc') if n.isdigit()))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert seen.stdout.strip() == "[1, 2]"  # the first process, and the program


@pytest.mark.skipif(
    mutation.check_pid_namespace(mutation.pid_namespace_prefix()) is not None,
    reason="no PID namespace can be made here (not Linux, no unshare, or not permitted)",
)
def test_the_namespace_passes_the_programs_exit_status_on() -> None:
    program = "import sys; sys.exit(7)"
    ran = subprocess.run([*mutation.pid_namespace_prefix(), sys.executable, "-c", program])
    assert ran.returncode == 7
    killed = subprocess.run(
        [
            *mutation.pid_namespace_prefix(),
            sys.executable,
            "-c",
            "import os; os.kill(os.getpid(), 9)",
        ]
    )
    assert killed.returncode == 128 + 9


@pytest.mark.skipif(
    mutation.check_pid_namespace(mutation.pid_namespace_prefix()) is not None,
    reason="no PID namespace can be made here (not Linux, no unshare, or not permitted)",
)
def test_a_sigterm_to_the_namespace_reaches_the_program() -> None:
    program = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(5))\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    run = subprocess.Popen(
        [*mutation.pid_namespace_prefix(), sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert run.stdout is not None and run.stdout.readline() == "ready\n"
    listed = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True)
    first = int(listed.stdout.split()[0])  # unshare's child: the namespace's first process
    os.kill(first, signal.SIGTERM)  # as a cancelled CI job sends it
    assert run.wait(timeout=20) == 5


def test_a_run_is_refused_where_no_pid_namespace_can_be_made(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(mutation, "pid_namespace_prefix", lambda: ["no-such-unshare-here"])
    monkeypatch.setattr(mutation, "STAGING", tmp_path)  # nothing real is restaged if it ran
    assert mutation.main(["yoagent-core"]) == 1
    assert list(tmp_path.iterdir()) == []
    said = capsys.readouterr().out
    assert "yoagent-core: not run: its mutants may signal any process" in said
    assert "PID namespaces need Linux and util-linux's unshare" in said
