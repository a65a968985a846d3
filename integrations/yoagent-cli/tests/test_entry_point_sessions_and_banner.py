"""More of ``main.run`` in this process: ``--resume`` prefers this folder's session, old
sessions pruned by size, the banner's config files joined, ``/sessions`` in the REPL, a
run recorded from the REPL, and ``yoagent web``'s remaining help texts."""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from cli_testing import saved_messages
from in_process_cli import InProcess
from sse_server import ScriptedServer, text

from yoagent.cli.session_store import SessionStore
from yoagent.cli.web import web_parser


def test_resume_takes_this_folder_s_session_over_a_newer_one_elsewhere(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server.add(text("here"), text("elsewhere"), text("again"))
    yoagent.run("-p", "in work", served=server)
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    yoagent.run("-p", "in other", served=server)
    monkeypatch.chdir(yoagent.work)
    assert yoagent.run("--resume", "-p", "continue", served=server).code == 0
    sent = [m["content"] for m in server.requests[2]["messages"][1:]]
    assert sent == ["in work", "here", "continue"]


def test_sessions_past_the_size_limit_are_pruned_oldest_first(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    root = SessionStore().root
    root.mkdir(parents=True)
    big = root / "20200101-000000-0001.jsonl"
    big.write_text("x" * (2 * 1024 * 1024))
    yoagent.user_config("[sessions]\nmax_total_mb = 1\nmax_age_days = 0\n")
    server.add(text("ok"))
    assert yoagent.run("-p", "new", served=server).code == 0
    assert not big.exists()
    assert [info.title for info in SessionStore().list()] == ["new"]


def test_two_config_files_are_both_named_in_the_banner(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    user = yoagent.user_config('thinking = "low"\n')
    project = yoagent.work / ".yoagent" / "config.toml"
    project.parent.mkdir()
    project.write_text('thinking = "high"\n')
    result = yoagent.run(served=server)
    assert f"\nconfig: {user}, {project.resolve()}\n" in result.out


def test_sessions_lists_this_session_from_the_repl(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("ok"))
    result = yoagent.run(input="first prompt\n/sessions\n", served=server)
    assert result.code == 0
    [info] = SessionStore().list()
    assert f"{info.id}" in result.out.split("❯ ")[-2]
    assert "first prompt" in result.out.split("❯ ")[-2]


def test_a_run_in_the_repl_is_recorded(
    yoagent: InProcess, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    server.add(text("recorded"))
    result = yoagent.run("--record", str(repo), input="hello\n", served=server)
    assert (result.code, result.err) == (0, "")
    subjects = git.Repo(repo).git.log("--reverse", "--format=%s").splitlines()
    assert len(subjects) == 2
    assert subjects[1].endswith(": completed")
    [info] = SessionStore().list()
    assert [m.role for m in saved_messages(info.path)] == ["user", "assistant"]


def test_the_web_parser_s_host_and_runs_help() -> None:
    help_text = " ".join(web_parser().format_help().split())
    assert "--host HOST listen here (default 127.0.0.1)" in help_text
    assert "--runs PATH open a GASP repository or a cassette in the run viewer (repeatable)" in (
        help_text
    )
