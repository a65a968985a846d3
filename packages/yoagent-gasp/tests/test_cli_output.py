"""The ``yoagent-gasp`` command's words: its report line by line, ``--fixture``, its version,
help and usage errors (pinned from a mutation run of yoagent-gasp, docs/mutation.md)."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import git
import pytest

from yoagent.gasp import CheckReport, NewGoal, Recorder, run_all
from yoagent.gasp.cli import main

VERSION = version("yoagent-gasp")


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # argparse wraps help text at the terminal's width


def _report(reports: list[CheckReport]) -> list[str]:
    lines: list[str] = []
    for report in reports:
        verdict = "PASS" if report.passed else "FAIL"
        lines.append(f"[{verdict}] check {report.number} — {report.name}")
        lines += [f"       note: {note}" for note in report.notes]
        lines += [f"       {failure}" for failure in report.failures]
    return lines


def test_a_conformant_repository_is_reported_check_by_check(
    repo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Recorder.init(repo_dir, "cli-agent", NewGoal("be checked"))
    reports = run_all(repo_dir)
    assert all(report.passed for report in reports)
    assert main(["check", str(repo_dir)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"yoagent-gasp {VERSION} — GASP conformance check of {repo_dir}",
        *_report(reports),
        "conformant: all checks passed",
    ]


def test_a_failing_repository_prints_its_notes_and_failures_indented(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git.Repo.init(root)
    reports = run_all(root)
    assert any(report.notes for report in reports)
    assert any(report.failures for report in reports)
    assert main(["check", str(root)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"yoagent-gasp {VERSION} — GASP conformance check of {root}",
        *_report(reports),
    ]


def test_fixture_also_asserts_the_fixture_graph(
    repo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Recorder.init(repo_dir, "cli-agent", NewGoal("not the fixture"))
    assert main(["check", str(repo_dir)]) == 0
    capsys.readouterr()
    assert main(["check", "--fixture", str(repo_dir)]) == 1
    out = capsys.readouterr().out
    assert "       fixture: goal_retry missing" in out.splitlines()
    assert "conformant" not in out


def test_version_names_the_command_and_its_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"yoagent-gasp {VERSION}\n"


def test_help_describes_the_command_and_its_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: yoagent-gasp [-h] [--version] COMMAND ...\n")
    assert "\nGASP agent repositories: conformance checks.\n" in out
    assert re.search(
        r"\n +check +run the seven GASP conformance checks on an agent repository\n", out
    )
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: yoagent-gasp check [-h] [--fixture] repo\n")
    assert "\nRun the seven GASP conformance checks. Exit 0: conformant; 1: not; 2: usage.\n" in out
    assert re.search(
        r"\n +repo +the agent repository \(check a fresh clone: restore is a clone\)\n", out
    )
    assert re.search(r"\n +--fixture +also assert the Part VI fixture graph facts\n", out)


def test_a_missing_command_is_named_in_the_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "yoagent-gasp: error: the following arguments are required: COMMAND"
    )
