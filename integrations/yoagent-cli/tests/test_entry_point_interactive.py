"""``yoagent`` without ``-p`` through the entry point in this process (``main.run``), its
lines read from a piped stdin: the banner line by line, each prompt and run, slash
commands, the session saved, ``--resume``'s last exchange, and the confirmation question
answered from the same stdin."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_testing import saved_messages
from in_process_cli import InProcess, Terminal
from sse_server import ScriptedServer, call, text

from yoagent.cli.arguments import package_version
from yoagent.cli.session_store import SessionStore

HELP = "/help for commands · Tab completes · Ctrl+C stops a run · Ctrl+C twice quits"
SANDBOX = "sandbox: workspace-write, network off"
QUESTION = "  allow? [y]es / [n]o / [a]lways: "
WHY_NOT = "  why not? (optional, the model reads it): "


def first_line(yoagent: InProcess, server: ScriptedServer) -> str:
    where = server.url.removesuffix("/v1")
    return (
        f"yoagent {package_version()} · scripted-model (openai-compatible at {where}) · "
        f"{yoagent.work.resolve()}"
    )


def status(line: str, tokens_in: int = 100, tokens_out: int = 20) -> bool:
    """Whether ``line`` is the status line of an unpriced run of that many tokens."""
    head = f"tokens in {tokens_in} (cache hit 0%) · out {tokens_out} · context 0% of 200k · "
    return line.startswith(head) and line.endswith("s · cost unknown")


def test_the_banner_then_one_prompt_per_line_until_the_end_of_input(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("first ", "answer"), text("second answer"))
    result = yoagent.run(input="  one  \n\n   \ntwo\n", served=server)
    assert (result.code, result.err) == (0, "")
    lines = result.out.split("\n")
    assert lines[:3] == [first_line(yoagent, server), SANDBOX, HELP]
    assert lines[3] == "❯ first answer"
    assert status(lines[4])
    assert lines[5] == "❯ ❯ ❯ second answer"  # the empty lines are read and skipped
    assert status(lines[6])
    assert lines[7:] == ["❯ "]
    sent = [r["messages"][-1]["content"] for r in server.requests]
    assert sent == ["one", "two"]  # stripped
    [info] = SessionStore().list()
    contents = [m.role for m in saved_messages(info.path)]
    assert contents == ["user", "assistant", "user", "assistant"]


def test_quit_leaves_without_reading_further(yoagent: InProcess, server: ScriptedServer) -> None:
    result = yoagent.run(input="/quit\nnever sent\n", served=server)
    assert result.code == 0
    assert result.out.endswith(f"{HELP}\n❯ ")
    assert server.requests == []


def test_a_slash_command_is_run_and_the_session_goes_on(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("answer"))
    result = yoagent.run(input="/frobnicate\nhi\n", served=server)
    assert result.code == 0
    assert "❯ error: unknown command /frobnicate (try /help)\n❯ answer\n" in result.out
    assert "❯ answer\n" in result.out
    assert len(server.requests) == 1


def test_retry_sends_the_last_prompt_again(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(text("one"), text("two"))
    result = yoagent.run(input="again please\n/retry\n", served=server)
    assert result.code == 0
    sent = [r["messages"][-1]["content"] for r in server.requests]
    assert sent == ["again please", "again please"]
    assert "❯ two\n" in result.out


def test_yes_config_instructions_and_record_each_add_a_banner_line(
    yoagent: InProcess, server: ScriptedServer, tmp_path: Path
) -> None:
    (yoagent.work / "AGENTS.md").write_text("be brief\n")
    config = yoagent.user_config('thinking = "low"\n')
    repo = tmp_path / "repo"
    result = yoagent.run("--yes", "--record", str(repo), served=server)
    assert (result.code, result.err) == (0, "")
    assert result.out.split("\n") == [
        first_line(yoagent, server),
        "--yes: writes, edits and shell commands run without asking",
        f"config: {config}",
        f"instructions: {yoagent.work.resolve() / 'AGENTS.md'}",
        f"recording: every run into {repo}",
        SANDBOX,
        HELP,
        "❯ ",
    ]


def test_a_project_that_turns_instructions_off_shows_none(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    (yoagent.work / "AGENTS.md").write_text("be brief\n")
    yoagent.user_config("project_instructions = false\n")
    result = yoagent.run(served=server)
    assert "instructions:" not in result.out


def test_the_sandbox_line_follows_the_flags(yoagent: InProcess, server: ScriptedServer) -> None:
    result = yoagent.run("--sandbox", "read-only", "--sandbox-network", served=server)
    assert result.out.split("\n")[1] == "sandbox: read-only, network on"


def test_a_provider_without_a_base_url_is_named_without_a_place(
    yoagent: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = yoagent.run("--provider", "openai", "--model", "gpt-4.1")
    assert result.code == 0
    assert result.out.split("\n")[0] == (
        f"yoagent {package_version()} · gpt-4.1 (openai) · {yoagent.work.resolve()}"
    )


def test_resume_shows_the_last_exchange_and_sends_the_history(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("first answer"), text("second answer"))
    yoagent.run(input="first question\n", served=server)
    [info] = SessionStore().list()
    result = yoagent.run("--resume", input="follow-up\n", served=server)
    assert result.code == 0
    lines = result.out.split("\n")
    assert lines[3:7] == [
        f"resumed session {info.id} (2 messages)",
        "you: first question",
        "  first answer",
        "❯ second answer",
    ]
    assert [m["role"] for m in server.requests[1]["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]
    assert len(saved_messages(info.path)) == 4


def test_a_no_with_a_reason_reaches_the_model(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run(input="write it\nn\nnot now\n", served=server)
    assert result.code == 0
    assert f"{QUESTION}{WHY_NOT}" in result.out
    assert "Tool call denied: the user declined; they said: not now" in result.out
    assert not (yoagent.work / "f.txt").exists()
    answer = server.requests[1]["messages"][-1]
    assert answer["role"] == "tool"
    assert "the user declined; they said: not now" in answer["content"]


def test_the_question_shows_the_call_and_its_diff(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run(input="write it\ny\n", served=server)
    assert result.code == 0
    assert (yoagent.work / "f.txt").read_text() == "x"
    assert (
        '❯ • write_file(path="f.txt", content="x")\n'
        "  write f.txt (1 line, 1 bytes)\n"
        "new file f.txt\n"
        "+x\n"
        f"{QUESTION}✓ write_file"
    ) in result.out


def test_always_allows_the_tool_for_the_rest_of_the_session(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(
        call("write_file", path="a.txt", content="a"),
        text("one"),
        call("write_file", path="b.txt", content="b"),
        text("two"),
    )
    result = yoagent.run(input="first\na\nsecond\n", served=server)
    assert result.code == 0
    assert result.out.count(QUESTION) == 1  # the second write is not asked about
    assert (yoagent.work / "b.txt").read_text() == "b"


def test_the_end_of_input_at_the_question_is_a_no(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run(input="write it\n", served=server)
    assert result.code == 0
    assert "Tool call denied: the user declined\n" in result.out
    assert WHY_NOT not in result.out
    assert not (yoagent.work / "f.txt").exists()


def test_a_call_holding_hidden_characters_is_flagged(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(call("write_file", path="f.txt", content="a\x1b[2Jb"), text("done"))
    result = yoagent.run(input="write it\nn\n\n", served=server)
    assert result.code == 0
    assert (
        "  ⚠ this holds control or invisible characters, each shown as an escape such as \\x1b\n"
        f"{QUESTION}"
    ) in result.out
    assert "\x1b" not in result.out


def test_a_plain_call_is_not_flagged(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(call("write_file", path="f.txt", content="ab"), text("done"))
    result = yoagent.run(input="write it\nn\n\n", served=server)
    assert "⚠" not in result.out


@pytest.mark.parametrize(("term", "rich"), [("xterm", True), ("dumb", False), ("unknown", False)])
def test_a_terminal_stdout_gets_markdown_unless_the_terminal_is_dumb(
    yoagent: InProcess,
    server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
    term: str,
    rich: bool,
) -> None:
    stdout = Terminal()
    monkeypatch.setattr("sys.stdout", stdout)
    monkeypatch.setenv("TERM", term)
    server.add(text("some **bold** words"))
    assert yoagent.run(input="hi\n", served=server).code == 0
    drawn = stdout.getvalue()
    assert ("some **bold** words" not in drawn) is rich
    assert "bold" in drawn


def test_plain_keeps_a_terminal_stdout_plain(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout = Terminal()
    monkeypatch.setattr("sys.stdout", stdout)
    monkeypatch.setenv("TERM", "xterm")
    server.add(text("some **bold** words"))
    assert yoagent.run("--plain", input="hi\n", served=server).code == 0
    assert "❯ some **bold** words\n" in stdout.getvalue()
