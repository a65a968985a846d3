"""The real ``yoagent`` process: tampered and cut sessions, signals in ``-p`` mode, the JSON
summary, what a failed run leaves behind, and errors in the user's words."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from cli_testing import YOAGENT, RunCli
from pty_testing import process_gone
from sse_server import Call, Reply, ScriptedServer, Text, text

from yoagent.core import (
    AssistantMessage,
    Session,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    event_adapter,
)


def base(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.url, "--model", "scripted-model"]


def _saved_one(run_cli: RunCli, server: ScriptedServer, sessions_dir: Path) -> Path:
    server.add(text("The answer is 4."))
    assert run_cli(*base(server), "-p", "what is 2+2?").returncode == 0
    return next(sessions_dir.glob("*.jsonl"))


def test_resume_of_a_tampered_session_line_exits_2_with_a_message(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    path = _saved_one(run_cli, server, sessions_dir)
    path.write_text('{"head": []}\n' + path.read_text())
    result = run_cli(*base(server), "--resume", "-p", "again")
    assert result.returncode == 2, result.stderr
    assert "line 1" in result.stderr
    assert "Traceback" not in result.stderr
    assert "TypeError" not in result.stderr


def test_resume_of_a_session_cut_inside_a_tool_result_closes_the_dangling_call(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path, workdir: Path
) -> None:
    sessions_dir.mkdir(parents=True)
    path = sessions_dir / "20250101-000000-abcd.jsonl"
    session = Session()
    session.extend(
        [
            UserMessage.from_text("list the files"),
            AssistantMessage(
                content=[ToolCall(id="call_1", name="list_files", arguments={"path": "."})],
                stop_reason=StopReason.TOOL_USE,
            ),
            ToolResultMessage(
                tool_call_id="call_1",
                tool_name="list_files",
                content=[TextContent(text="a.txt\n" * 50)],
            ),
        ]
    )
    session.save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 80])  # a crash in the middle of the result line
    server.add(text("Carrying on."))
    result = run_cli(*base(server), "--resume", "20250101", "-p", "go on")
    assert result.returncode == 0, result.stderr
    assert "has no result" in result.stderr
    sent = server.requests[0]["messages"]
    closing = [m for m in sent if m.get("role") == "tool"]
    assert len(closing) == 1 and closing[0]["tool_call_id"] == "call_1"
    assert "Tool result lost" in closing[0]["content"]


def test_sigterm_during_p_aborts_the_run_cleans_up_and_exits_143(
    server: ScriptedServer, cli_env: dict[str, str], workdir: Path
) -> None:
    server.add(
        Reply([Call("bash", {"command": f"sleep 300 & echo $! > {workdir}/sleep.pid; wait"})])
    )
    process = subprocess.Popen(
        [str(YOAGENT), *base(server), "--yes", "-p", "wait"],
        cwd=workdir,
        env=cli_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pid_file = workdir / "sleep.pid"
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.1)
        pid = int(pid_file.read_text())
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted" in stderr
    deadline = time.monotonic() + 10
    while not process_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process_gone(pid), "the command's process outlived yoagent"


def test_json_ends_with_a_summary_and_message_start_claims_no_stop_reason(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    server.add(Reply([Text("Hello "), Text("world")], usage=(120, 30, 20)))
    result = run_cli(*base(server), "--json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    starts = [json.loads(line) for line in lines[:-1] if '"message_start"' in line]
    reply_start = next(s for s in starts if s["message"]["role"] == "assistant")
    assert "stop_reason" not in reply_start["message"]
    for line in lines[:-1]:
        event_adapter.validate_json(line)  # every event line still parses
    summary = json.loads(lines[-1])
    session_id = next(sessions_dir.glob("*.jsonl")).stem
    assert summary == {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "exit_code": 0,
        "result": "Hello world",
        "error": None,
        "usage": {"input": 100, "output": 30, "cache_read": 20, "cache_write": 0},
        "cost_usd": None,
        "session_id": session_id,
        "num_turns": 1,
        "duration_ms": summary["duration_ms"],
    }
    assert isinstance(summary["duration_ms"], int)


def test_a_run_that_cannot_connect_is_not_saved_and_says_where_in_plain_words(
    run_cli: RunCli, sessions_dir: Path
) -> None:
    result = run_cli(
        "--base-url", "http://user:secret@127.0.0.1:9/v1?key=k", "--model", "m", "-p", "hello"
    )
    assert result.returncode == 1
    assert "could not reach the model server at http://127.0.0.1:9" in result.stderr
    assert "NETWORK" not in result.stderr
    assert "secret" not in result.stderr and "key=k" not in result.stderr
    assert list(sessions_dir.glob("*.jsonl")) == []


def test_a_refused_key_is_explained_without_raw_kind_names(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(Reply(status=401, error="invalid api key"))
    result = run_cli(*base(server), "-p", "hello")
    assert result.returncode == 1
    assert f"{server.url.removesuffix('/v1')} refused the credentials" in result.stderr
    assert "AUTH:" not in result.stderr


def test_a_base_url_without_a_scheme_is_a_usage_error(run_cli: RunCli) -> None:
    result = run_cli("--base-url", "localhost:11434/v1", "-p", "hello")
    assert result.returncode == 2
    assert "http://localhost:11434/v1" in result.stderr  # what to write instead
    assert "Traceback" not in result.stderr


def test_a_failed_prompt_is_not_merged_into_the_next_and_retry_sends_it_again(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    server.add(
        Reply(status=401, error="bad key"),
        Reply(status=401, error="bad key"),
        text("Done it."),
        text("Rated."),
    )
    script = "err please\nrate please\n/retry\nand now?\n/quit\n"
    result = run_cli(*base(server), input=script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("/retry sends the prompt again") == 2
    second = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert second == ["rate please"]  # the failed prompt left nothing behind
    retried = [m["content"] for m in server.requests[2]["messages"][1:]]
    assert retried == ["rate please"]  # /retry: the last prompt, once
    last = [m["content"] for m in server.requests[3]["messages"][1:]]
    assert last == ["rate please", "Done it.", "and now?"]


def test_config_file_errors_name_the_file_and_key_and_exit_2(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    project = workdir / ".yoagent"
    project.mkdir()
    (project / "config.toml").write_text('max_turns = "many"\n')
    result = run_cli(*base(server), "-p", "hi")
    assert result.returncode == 2
    assert "config.toml: max_turns:" in result.stderr
    (project / "config.toml").write_text('modle = "typo"\nmax_turns = 3\n')
    server.add(text("ok"))
    result = run_cli(*base(server), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "unknown key 'modle'" in result.stderr


def test_help_lists_the_slash_commands(run_cli: RunCli) -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("/undo", "/diff", "/compact", "/retry", "/model", "/init", "/revoke"):
        assert command in result.stdout


def test_resume_shows_the_last_exchange(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    _saved_one(run_cli, server, sessions_dir)
    result = run_cli(*base(server), "--resume", input="/quit\n")
    assert result.returncode == 0, result.stderr
    assert "you: what is 2+2?" in result.stdout
    assert "The answer is 4." in result.stdout


def test_a_server_that_lists_no_models_gets_default_with_a_warning_naming_model(
    run_cli: RunCli,
) -> None:
    """No ``GET /v1/models``: the model id ``default`` was used without a word, and the
    server's refusal showed up later as its raw HTML page (issue 27)."""
    with ScriptedServer(serves=("chat/completions",)) as bare:
        bare.add(text("hello back"))
        result = run_cli("--base-url", bare.url, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert bare.requests[0]["model"] == "default"
    warning = (
        f"yoagent: warning: could not list the models at {bare.url}/models (HTTP 404); "
        "using the model id 'default': pass --model"
    )
    assert warning in result.stderr
    assert "<html" not in result.stderr.lower()


def test_a_server_that_lists_models_or_a_given_model_gives_no_warning(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(text("one"), text("two"))
    assert "warning" not in run_cli("--base-url", server.url, "-p", "hi").stderr
    with ScriptedServer(serves=("chat/completions",)) as bare:
        bare.add(text("three"))
        given = run_cli("--base-url", bare.url, "--model", "mine", "-p", "hi")
    assert given.returncode == 0 and "warning" not in given.stderr


def test_responses_against_a_chat_completions_only_server_names_the_other_flag(
    run_cli: RunCli,
) -> None:
    """``--provider openai`` speaks Responses; a server without ``/v1/responses`` printed
    its raw 404 page (issue 27)."""
    with ScriptedServer(serves=("models", "chat/completions")) as chat_only:
        result = run_cli(
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            chat_only.url,
            "-p",
            "hi",
            env={"OPENAI_API_KEY": "sk-test-0123456789abcdef"},
        )
    assert result.returncode == 1
    assert "<html" not in result.stderr.lower() and "<center>" not in result.stderr
    assert "has no OpenAI Responses endpoint (HTTP 404" in result.stderr
    assert "--provider openai-compatible" in result.stderr


def test_chat_completions_against_a_responses_only_server_names_the_other_flag(
    run_cli: RunCli,
) -> None:
    with ScriptedServer(serves=("models", "responses")) as responses_only:
        result = run_cli("--base-url", responses_only.url, "--model", "m", "-p", "hi")
    assert result.returncode == 1
    assert "<html" not in result.stderr.lower()
    assert "has no Chat Completions endpoint (HTTP 404" in result.stderr
    assert "--provider openai" in result.stderr
