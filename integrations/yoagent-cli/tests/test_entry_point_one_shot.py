"""``yoagent -p`` through the entry point in this process (``main.run``): the answer on
stdout, ``--json``'s lines, ``--resume``, the exit codes of each refusal and failure, the
progress drawn on a terminal's stderr, and ``--record``."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from cli_testing import saved_messages
from in_process_cli import MAIN, InProcess, Terminal, aged
from sse_server import Reply, ScriptedServer, call, text

from yoagent.cli.session_store import SessionStore
from yoagent.core import TextContent, UserMessage
from yoagent.gasp import restore

DENIAL = (
    "write_file is not allowed in a non-interactive run (yoagent -p) without --yes; "
    "tell the user what you would have done instead"
)


def test_the_answer_alone_goes_to_stdout_and_the_run_is_saved(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("hello ", "there"))
    result = yoagent.run("-p", "hi", served=server)
    assert (result.code, result.out, result.err) == (0, "hello there\n", "")
    [info] = SessionStore().list()
    assert info.cwd == str(yoagent.work)
    assert [m.role for m in saved_messages(info.path)] == ["user", "assistant"]


def test_the_task_is_read_from_stdin_for_a_dash(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(text("ok"))
    assert yoagent.run("-p", "-", served=server, input="from stdin\n").code == 0
    assert server.requests[0]["messages"][-1] == {"role": "user", "content": "from stdin\n"}


def test_resume_continues_the_last_session_of_this_folder(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("first answer"), text("second answer"))
    assert yoagent.run("-p", "first", served=server).code == 0
    result = yoagent.run("--resume", "-p", "second", served=server)
    assert (result.code, result.out) == (0, "second answer\n")
    sent = [(m["role"], m["content"]) for m in server.requests[1]["messages"][1:]]
    assert sent == [
        ("user", "first"),
        ("assistant", "first answer"),
        ("user", "second"),
    ]
    [info] = SessionStore().list()  # the same session, not a second one
    assert len(saved_messages(info.path)) == 4


def test_resume_by_id_continues_that_session(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(text("one"), text("two"))
    yoagent.run("-p", "first", served=server)
    [info] = SessionStore().list()
    assert yoagent.run("--resume", info.id, "-p", "again", served=server).code == 0
    assert len(server.requests[1]["messages"]) == 4  # the system prompt and three


def test_resume_with_nothing_saved_is_a_usage_error(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    result = yoagent.run("--resume", "-p", "x", served=server)
    assert (result.code, result.out) == (2, "")
    assert result.err == "yoagent: no saved session to resume\n"
    result = yoagent.run("--resume", "nosuch", "-p", "x", served=server)
    assert result.code == 2
    assert result.err == "yoagent: no saved session 'nosuch' (see /sessions)\n"
    assert server.requests == []


def test_json_writes_every_event_then_the_summary(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("a", "b"))
    result = yoagent.run("--json", "-p", "hi", served=server)
    assert (result.code, result.err) == (0, "")
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert lines[0] == {"type": "agent_start"}
    assert lines[-2]["type"] == "agent_end"
    summary = lines[-1]
    [info] = SessionStore().list()
    assert summary["type"] == "result"
    assert summary["result"] == "ab"
    assert summary["exit_code"] == 0
    assert summary["session_id"] == info.id


def test_a_refused_tool_call_is_said_on_stderr_but_not_with_json(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run("-p", "write", served=server)
    assert (result.code, result.out) == (0, "done\n")
    assert result.err == f"yoagent: refused write_file: {DENIAL}\n"
    assert not (yoagent.work / "f.txt").exists()
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run("--json", "-p", "write", served=server)
    assert (result.code, result.err) == (0, "")
    assert f"Tool call denied: {DENIAL}" in result.out


def test_yes_lets_the_write_run(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run("--yes", "-p", "write", served=server)
    assert (result.code, result.out, result.err) == (0, "done\n", "")
    assert (yoagent.work / "f.txt").read_text() == "x"


def test_a_refused_request_exits_1_with_the_reason(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(Reply(status=400, error="model not found"))
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out) == (1, "")
    assert "model not found" in result.err
    assert "Traceback" not in result.err


def test_a_terminal_stderr_gets_the_progress_and_stdout_the_answer(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    server.add(text("drawn"))
    result = yoagent.run("--plain", "-p", "x", served=server)
    assert (result.code, result.out) == (0, "drawn\n")
    [status] = stderr.getvalue().splitlines()  # the reply's text is stdout's alone
    assert status.startswith("tokens in 100 (cache hit 0%) · out 20 · context 0% of 200k · ")
    assert status.endswith("s · cost unknown")
    assert "\x1b" not in stderr.getvalue()


def test_a_terminal_stderr_with_colours_gets_the_rich_progress(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    monkeypatch.setenv("TERM", "xterm")
    server.add(text("drawn"))
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out) == (0, "drawn\n")
    assert "cost unknown" in stderr.getvalue()
    assert "drawn" not in stderr.getvalue()  # the Rich progress shows no text of the reply


def test_json_never_draws_progress_even_on_a_terminal(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    server.add(text("drawn"))
    assert yoagent.run("--json", "--plain", "-p", "x", served=server).code == 0
    assert stderr.getvalue() == ""


def test_an_interrupt_during_the_run_exits_130_on_a_new_line(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(MAIN, "run_once", interrupted)
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out, result.err) == (130, "", "\n")


def test_an_output_error_ends_the_run_with_1_and_the_error(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing(*args: object, **kwargs: object) -> int:
        raise OSError("no space left on device")

    monkeypatch.setattr(MAIN, "run_once", failing)
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.err) == (1, "yoagent: no space left on device\n")


def test_a_session_store_that_cannot_prune_is_a_warning_only(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cannot(*args: object, **kwargs: object) -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(SessionStore, "prune", cannot)
    server.add(text("ok"))
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out) == (0, "ok\n")
    assert result.err == "yoagent: warning: could not prune old sessions: read-only file system\n"


def test_pruning_keeps_the_session_being_resumed(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("one"), text("two"))
    yoagent.run("-p", "first", served=server)
    [info] = SessionStore().list()
    aged(info.path, days=3)
    yoagent.user_config("[sessions]\nmax_age_days = 2\n")
    result = yoagent.run("--resume", "-p", "again", served=server)
    assert (result.code, result.err) == (0, "")  # no notice of a session saved elsewhere
    assert [(i.id, i.title) for i in SessionStore().list()] == [(info.id, "first")]


def test_record_commits_the_run_into_a_new_repository(
    yoagent: InProcess, server: ScriptedServer, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    server.add(text("recorded"))
    result = yoagent.run("--record", str(repo), "-p", "x", served=server)
    assert (result.code, result.out, result.err) == (0, "recorded\n", "")
    assert (repo / "AGENT.md").is_file()
    subjects = git.Repo(repo).git.log("--reverse", "--format=%s").splitlines()
    assert subjects[0] == "gasp: agent scaffolding"
    assert len(subjects) == 2
    assert subjects[1].startswith("run run_")
    assert subjects[1].endswith(": completed")  # committed when the recording closed
    [info] = SessionStore().list()
    (goal,) = restore(repo, tmp_path / "clone").graph.of_kind("goal")
    assert goal.props["title"] == f"yoagent session {info.id}"


def test_a_record_path_that_is_a_file_is_refused_before_any_request(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    (yoagent.work / "afile").write_text("x")
    result = yoagent.run("--record", "afile", "-p", "x", served=server)
    assert (result.code, result.out) == (2, "")
    assert result.err == "yoagent: --record afile: not a folder\n"
    assert server.requests == []


def test_an_mcp_server_that_cannot_start_is_a_usage_error(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    result = yoagent.run("--mcp", "/nonexistent/cmd", "-p", "x", served=server)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "yoagent: --mcp: MCP server cmd: cannot start '/nonexistent/cmd': "
        "No such file or directory\n"
    )
    assert server.requests == []


def test_history_given_to_a_one_shot_run_is_replaced_not_appended(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("one"), text("two"))
    yoagent.run("-p", "first", served=server)
    yoagent.run("--resume", "-p", "second", served=server)
    [info] = SessionStore().list()
    saved = saved_messages(info.path)
    assert [m.role for m in saved] == ["user", "assistant", "user", "assistant"]
    first = saved[0]
    assert isinstance(first, UserMessage)
    assert first.content == [TextContent(text="first")]
