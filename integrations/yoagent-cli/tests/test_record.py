"""``--record <repo>``: the real ``yoagent`` process against the scripted server, then the
repository checked with yoagent-gasp's own checker and ``git log``."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from cli_testing import YOAGENT, RunCli
from sse_server import Reply, ScriptedServer, Text, call, text

from yoagent.cli.settings import load_settings
from yoagent.gasp import AgentRepo, Lease, restore

CHECKER = YOAGENT.with_name("yoagent-gasp" + YOAGENT.suffix)


def base(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.url, "--model", "scripted-model"]


def check(repo: Path) -> subprocess.CompletedProcess[str]:
    """``yoagent-gasp check <repo>``, the conformance checker's own command."""
    return subprocess.run(
        [str(CHECKER), "check", str(repo)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def log_subjects(repo: Path) -> list[str]:
    """``git log`` subjects, oldest first."""
    out = git.Repo(repo).git.log("--reverse", "--format=%s")
    return out.splitlines()


def test_record_p_commits_the_run_and_the_repo_passes_the_checker(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "agent-log"
    server.add(call("list_files", path="."), text("The folder is empty."))
    result = run_cli(*base(server), "--record", str(repo), "-p", "what is here?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The folder is empty.\n"
    subjects = log_subjects(repo)
    assert subjects[0] == "gasp: agent scaffolding"
    assert len(subjects) == 2 and subjects[1].startswith("run run_")
    assert subjects[1].endswith(": completed")
    checked = check(repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    restored = restore(repo, tmp_path / "clone").graph
    (run,) = restored.of_kind("run")
    assert run.props["task"] == "what is here?"
    (tool_call,) = restored.of_kind("tool_call")
    assert tool_call.props["tool"] == "list_files"
    (goal,) = restored.of_kind("goal")
    assert str(goal.props["title"]).startswith("yoagent session ")


def test_record_interactive_commits_each_run_and_a_second_session_adds_to_the_repo(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "agent-log"
    server.add(text("one"), text("two"), text("three"))
    first = run_cli(*base(server), "--record", str(repo), input="first\nsecond\n/quit\n")
    assert first.returncode == 0, first.stderr
    assert f"recording: every run into {repo}" in first.stdout
    second = run_cli(*base(server), "--record", str(repo), "-p", "third")
    assert second.returncode == 0, second.stderr
    runs = [subject for subject in log_subjects(repo) if subject.startswith("run ")]
    assert [subject.rsplit(": ", 1)[1] for subject in runs] == ["completed"] * 3
    assert check(repo).returncode == 0
    graph = restore(repo, tmp_path / "clone").graph
    assert sorted(str(run.props["task"]) for run in graph.of_kind("run")) == [
        "first",
        "second",
        "third",
    ]
    assert len(graph.of_kind("goal")) == 2  # one per session


def test_a_run_that_fails_is_still_recorded(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "agent-log"
    server.add(Reply(status=401, error="invalid api key"))
    result = run_cli(*base(server), "--record", str(repo), "-p", "hello")
    assert result.returncode == 1
    subjects = log_subjects(repo)
    assert len(subjects) == 2 and subjects[1].endswith(": error")
    assert check(repo).returncode == 0


def test_a_record_path_that_is_a_file_is_a_usage_error_before_any_request(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    result = run_cli(*base(server), "--record", str(target), "-p", "hello")
    assert result.returncode == 2
    assert f"yoagent: --record {target}: not a folder" in result.stderr
    assert "Traceback" not in result.stderr
    assert server.requests == []
    assert target.read_text() == "mine\n"


def test_a_folder_that_is_not_an_agent_repository_is_refused_not_scaffolded(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    (workdir / "main.py").write_text("print('hi')\n")
    for mode in (("-p", "hello"), ()):
        result = run_cli(*base(server), "--record", ".", *mode)
        assert result.returncode == 2
        assert "not an agent repository (no AGENT.md)" in result.stderr
    assert sorted(path.name for path in workdir.iterdir()) == ["main.py"]
    assert server.requests == []


def test_a_repository_another_live_writer_holds_is_a_usage_error(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "agent-log"
    server.add(text("ok"))
    assert run_cli(*base(server), "--record", str(repo), "-p", "first").returncode == 0
    Lease(AgentRepo.open(repo).root, "another-host-1-abc").acquire()
    result = run_cli(*base(server), "--record", str(repo), "-p", "second")
    assert result.returncode == 2
    assert f"--record {repo}:" in result.stderr and "another-host-1-abc" in result.stderr
    assert len(server.requests) == 1


def test_the_user_config_record_key_records_and_a_project_file_cannot_set_it(
    run_cli: RunCli,
    server: ScriptedServer,
    cli_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
) -> None:
    repo = tmp_path / "from-config"
    user_file = Path(cli_env["XDG_CONFIG_HOME"]) / "yoagent" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(f"record = {str(repo)!r}\n")
    server.add(text("ok"), text("ok again"))
    result = run_cli(*base(server), "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert log_subjects(repo)[-1].endswith(": completed")

    user_file.unlink()
    project = workdir / ".yoagent" / "config.toml"
    project.parent.mkdir()
    project.write_text("record = 'elsewhere'\n")
    result = run_cli(*base(server), "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert "'record' is only read from the user config" in result.stderr
    assert not (workdir / ".yoagent" / "elsewhere").exists()
    assert not (workdir / "elsewhere").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the failing commit hook is a shell script")
def test_a_recording_that_fails_mid_session_is_reported_and_the_session_goes_on(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "agent-log"
    server.add(text("ok"), text("still answering"))
    assert run_cli(*base(server), "--record", str(repo), "-p", "first").returncode == 0
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.write_text('#!/bin/sh\ngrep -q "^run " "$1" && exit 1\nexit 0\n')
    hook.chmod(0o755)  # run commits are refused from now on; the scaffolding is not
    result = run_cli(*base(server), "--record", str(repo), "-p", "second")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still answering\n"
    (failure,) = [line for line in result.stderr.splitlines() if "GASP" in line]
    assert failure.startswith("yoagent: error: GASP recording of run run_")
    assert "recording stops, the run goes on: git commit failed" in failure
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_a_run_stopped_by_a_signal_is_committed_before_yoagent_exits(
    server: ScriptedServer,
    cli_env: dict[str, str],
    workdir: Path,
    tmp_path: Path,
    sent: signal.Signals,
    code: int,
) -> None:
    repo = tmp_path / "agent-log"
    server.add(Reply([Text(f"tick{i} ", 0.2) for i in range(100)]))
    process = subprocess.Popen(
        [str(YOAGENT), *base(server), "--record", str(repo), "-p", "count"],
        cwd=workdir,
        env=cli_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr
    subjects = log_subjects(repo)
    assert len(subjects) == 2 and subjects[1].endswith(": aborted")
    assert check(repo).returncode == 0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("agent-log", lambda user: user.parent / "agent-log"),
        ("~/agents/helper", lambda user: Path.home() / "agents" / "helper"),
        ("/srv/agent", lambda user: Path("/srv/agent")),
    ],
    ids=["relative", "home", "absolute"],
)
def test_the_record_key_is_read_like_the_other_paths_of_the_user_file(
    tmp_path: Path, value: str, expected: Callable[[Path], Path]
) -> None:
    user = tmp_path / "config" / "config.toml"
    user.parent.mkdir()
    user.write_text(f"record = {value!r}\n")
    settings = load_settings(tmp_path / "nowhere", user).settings
    assert settings.record == expected(user)
