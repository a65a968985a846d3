"""The real ``yoagent`` process: flags, exit codes, ``-p`` output, ``--json``, sessions."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from cli_testing import YOAGENT, RunCli
from sse_server import Call, Reply, ScriptedServer, Text, Think, call, text

from yoagent.core import AgentEnd, AgentStart, MessageUpdate, Session, TextDelta, event_adapter


def base(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.url, "--model", "scripted-model"]


def test_no_key_prints_what_to_set_and_exits_2(run_cli: RunCli) -> None:
    result = run_cli("-p", "hello")
    assert result.returncode == 2
    assert result.stdout == ""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "--base-url"):
        assert name in result.stderr
    assert "Traceback" not in result.stderr


def test_a_remote_base_url_with_no_key_exits_2_naming_the_variable(run_cli: RunCli) -> None:
    for mode in (("-p", "hello"), ()):
        result = run_cli("--provider", "anthropic", "--base-url", "https://gw.example.com", *mode)
        assert result.returncode == 2
        assert "no API key for anthropic: set ANTHROPIC_API_KEY" in result.stderr
        assert "Traceback" not in result.stderr


def test_no_key_in_interactive_mode_exits_2_too(run_cli: RunCli) -> None:
    result = run_cli()
    assert result.returncode == 2
    assert "--base-url" in result.stderr


def test_a_bad_flag_exits_2_with_usage(run_cli: RunCli) -> None:
    result = run_cli("--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: yoagent")
    assert "unrecognized arguments: --no-such-flag" in result.stderr


def test_a_bad_flag_value_exits_2_with_usage(run_cli: RunCli) -> None:
    result = run_cli("--thinking", "extreme", "-p", "x")
    assert result.returncode == 2
    assert "usage: yoagent" in result.stderr
    result = run_cli("--max-turns", "0", "-p", "x")
    assert result.returncode == 2


def test_json_without_p_is_a_usage_error(run_cli: RunCli, server: ScriptedServer) -> None:
    result = run_cli(*base(server), "--json")
    assert result.returncode == 2
    assert "--json needs -p" in result.stderr


def test_help_exits_0(run_cli: RunCli) -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for flag in ("--provider", "--model", "--base-url", "--allow-path", "--yes", "--skills"):
        assert flag in result.stdout


def test_p_prints_only_the_final_answer_and_exits_0(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(
        Reply([Text("Let me look.\n"), Call("list_files", {"path": "."})]),
        text("The folder ", "is empty."),
    )
    result = run_cli(*base(server), "-p", "what is here?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The folder is empty.\n"
    assert len(server.requests) == 2
    first = server.requests[0]
    assert first["model"] == "scripted-model"
    assert first["messages"][-1] == {"role": "user", "content": "what is here?"}
    assert "authorization" not in {k.lower() for k in first["_headers"]}
    assert {tool["function"]["name"] for tool in first["tools"]} >= {
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "search",
    }


def test_p_reads_the_task_from_stdin_with_a_dash(run_cli: RunCli, server: ScriptedServer) -> None:
    server.add(text("ok"))
    result = run_cli(*base(server), "-p", "-", input="from stdin\n")
    assert result.returncode == 0
    assert server.requests[0]["messages"][-1]["content"] == "from stdin\n"


def test_p_exits_1_with_the_error_on_stderr_when_the_server_refuses(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(Reply(status=401, error="invalid api key"))
    result = run_cli(*base(server), "-p", "hello")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "401" in result.stderr or "AUTH" in result.stderr
    assert "Traceback" not in result.stderr


def test_p_exits_1_on_a_bad_request(run_cli: RunCli, server: ScriptedServer) -> None:
    server.add(Reply(status=400, error="model not found"))
    result = run_cli(*base(server), "-p", "hello")
    assert result.returncode == 1
    assert "model not found" in result.stderr


def test_p_exits_1_when_nothing_listens(run_cli: RunCli) -> None:
    result = run_cli("--base-url", "http://127.0.0.1:9/v1", "--model", "m", "-p", "hello")
    assert result.returncode == 1
    assert result.stderr.strip()


def test_p_refuses_writes_without_yes(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("write_file", path="out.txt", content="data\n"), text("I could not write it."))
    result = run_cli(*base(server), "-p", "write out.txt")
    assert result.returncode == 0
    assert not (workdir / "out.txt").exists()
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "--yes" in tool_message["content"]
    assert "refused write_file" in result.stderr


def test_p_with_yes_writes_and_runs_commands(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(
        call("write_file", path="out.txt", content="data\n"),
        call("bash", command="cat out.txt"),
        text("Wrote and read it."),
    )
    result = run_cli(*base(server), "--yes", "-p", "write out.txt")
    assert result.returncode == 0, result.stderr
    assert (workdir / "out.txt").read_text() == "data\n"
    assert "data" in server.requests[2]["messages"][-1]["content"]
    assert result.stdout == "Wrote and read it.\n"


def test_provider_openai_talks_the_responses_api_with_reasoning_text_and_tool_calls(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(
        Reply(
            [
                Think("Need a file."),
                Text("Writing.\n"),
                Call("write_file", {"path": "o.txt", "content": "hi\n"}),
            ]
        ),
        text("Wrote ", "it."),
    )
    openai = ["--provider", "openai", "--model", "gpt-5.5", "--base-url", server.url]
    result = run_cli(*openai, "--yes", "-p", "write o.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Wrote it.\n"
    assert (workdir / "o.txt").read_text() == "hi\n"
    assert [r["_path"] for r in server.requests] == ["/v1/responses", "/v1/responses"]
    first, second = server.requests
    assert first["input"] == [{"role": "user", "content": "write o.txt"}]
    assert "write_file" in {tool["name"] for tool in first["tools"]}
    call_item, output = second["input"][-2:]
    assert (call_item["type"], call_item["name"]) == ("function_call", "write_file")
    assert output["type"] == "function_call_output"
    assert output["call_id"] == call_item["call_id"]


def test_tools_are_sandboxed_to_the_working_folder(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("hidden")
    server.add(call("read_file", path=str(outside / "secret.txt")), text("done"))
    run_cli(*base(server), "-p", "read it")
    assert "hidden" not in server.requests[1]["messages"][-1]["content"]

    server.add(call("read_file", path=str(outside / "secret.txt")), text("done"))
    run_cli(*base(server), "--allow-path", str(outside), "-p", "read it")
    assert "hidden" in server.requests[3]["messages"][-1]["content"]


def test_json_prints_one_parseable_event_per_line(run_cli: RunCli, server: ScriptedServer) -> None:
    server.add(text("Hello ", "world"))
    result = run_cli(*base(server), "--json", "-p", "hi")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    events = [event_adapter.validate_json(line) for line in lines[:-1]]
    assert json.loads(lines[-1])["type"] == "result"
    assert isinstance(events[0], AgentStart)
    assert isinstance(events[-1], AgentEnd)
    deltas = [
        e.delta.delta
        for e in events
        if isinstance(e, MessageUpdate) and isinstance(e.delta, TextDelta)
    ]
    assert "".join(deltas) == "Hello world"
    assert all(json.loads(line)["type"] for line in lines)


def test_json_failure_still_exits_1(run_cli: RunCli, server: ScriptedServer) -> None:
    server.add(Reply(status=401))
    result = run_cli(*base(server), "--json", "-p", "hi")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert isinstance(event_adapter.validate_json(lines[-2]), AgentEnd)
    summary = json.loads(lines[-1])
    assert (summary["type"], summary["subtype"], summary["is_error"]) == ("result", "error", True)


def test_max_turns_stops_the_run_and_exits_1(run_cli: RunCli, server: ScriptedServer) -> None:
    server.add(call("list_files", path="."), text("never reached"))
    result = run_cli(*base(server), "--max-turns", "1", "-p", "look")
    assert result.returncode == 1
    assert "turn limit" in result.stderr
    assert len(server.requests) == 1


def test_system_file_replaces_the_default_prompt(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    system = tmp_path / "system.md"
    system.write_text("You are a pirate.")
    server.add(text("Arr"), text("plain"))
    run_cli(*base(server), "--system", str(system), "-p", "hi")
    run_cli(*base(server), "-p", "hi")
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "You are a pirate."}
    default = server.requests[1]["messages"][0]["content"]
    assert "coding agent" in default


def test_missing_system_file_is_a_usage_error(run_cli: RunCli, server: ScriptedServer) -> None:
    result = run_cli(*base(server), "--system", "nope.md", "-p", "hi")
    assert result.returncode == 2
    assert "nope.md" in result.stderr


def test_skills_are_listed_and_readable(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    skill = tmp_path / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release\ndescription: How to cut a release.\n---\n\nBump the version.\n"
    )
    server.add(call("read_skill", name="release"), text("ok"))
    result = run_cli(*base(server), "--skills", str(tmp_path / "skills"), "-p", "release it")
    assert result.returncode == 0, result.stderr
    system = server.requests[0]["messages"][0]["content"]
    assert "release: How to cut a release." in system
    assert "Bump the version." in server.requests[1]["messages"][-1]["content"]


def test_skill_problems_are_warnings_and_the_run_goes_on(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    (skills / "good").mkdir(parents=True)
    (skills / "good" / "SKILL.md").write_text("---\nname: good\ndescription: Fine.\n---\nBody\n")
    (skills / "bad").mkdir()
    (skills / "bad" / "SKILL.md").write_text("no frontmatter here\n")
    server.add(text("ok"))
    result = run_cli(
        *base(server),
        *("--skills", str(skills)),
        *("--skills", str(tmp_path / "nope")),
        *("--skills", str(skills / "good")),
        *("-p", "hi"),
    )
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 3
    assert any("good" in line and "a skill's own folder" in line for line in warnings)
    assert any("bad" in line and "frontmatter" in line for line in warnings)
    assert any("nope" in line and "does not exist" in line for line in warnings)
    system = server.requests[0]["messages"][0]["content"]
    assert "good: Fine." in system and "bad" not in system


def test_thinking_level_reaches_the_request(run_cli: RunCli, server: ScriptedServer) -> None:
    server.add(text("ok"))
    result = run_cli(
        "--base-url",
        server.url,
        "--provider",
        "deepseek",
        "--thinking",
        "high",
        "--model",
        "deepseek-flash",
        "-p",
        "hi",
    )
    assert result.returncode == 0, result.stderr
    assert server.requests[0]["thinking"] == {"type": "enabled"}


def test_runs_are_saved_and_resume_continues_the_last(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path, workdir: Path
) -> None:
    server.add(text("The answer is 4."), text("You asked about 2+2."))
    assert run_cli(*base(server), "-p", "what is 2+2?").returncode == 0
    files = list(sessions_dir.glob("*.jsonl"))
    assert len(files) == 1
    assert len(Session.load(files[0]).path_messages()) == 2
    meta = json.loads(files[0].with_name(f"{files[0].stem}.meta.json").read_text())
    assert meta["cwd"] == str(workdir.resolve())
    assert meta["model"] == "scripted-model"
    assert meta["title"] == "what is 2+2?"

    result = run_cli(*base(server), "--resume", "-p", "what did I ask?")
    assert result.returncode == 0, result.stderr
    sent = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert sent == ["what is 2+2?", "The answer is 4.", "what did I ask?"]
    assert list(sessions_dir.glob("*.jsonl")) == files  # continued, not a new file
    assert len(files[0].read_text().splitlines()) == 4  # one entry per message, appended


def test_resume_reports_a_corrupt_last_line_and_continues_the_rest(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    server.add(text("The answer is 4."), text("You asked about 2+2."))
    assert run_cli(*base(server), "-p", "what is 2+2?").returncode == 0
    path = next(sessions_dir.glob("*.jsonl"))
    with path.open("a") as file:
        file.write('{"id": "half-writ')
    result = run_cli(*base(server), "--resume", "-p", "what did I ask?")
    assert result.returncode == 0, result.stderr
    assert "warning" in result.stderr and "line 3" in result.stderr
    sent = [m["content"] for m in server.requests[1]["messages"][1:]]
    assert sent == ["what is 2+2?", "The answer is 4.", "what did I ask?"]
    assert len(Session.load(path).path_messages()) == 4
    assert "half-writ" not in path.read_text()


def test_resume_of_a_corrupt_session_exits_2(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    server.add(text("The answer is 4."))
    assert run_cli(*base(server), "-p", "what is 2+2?").returncode == 0
    path = next(sessions_dir.glob("*.jsonl"))
    path.write_text("garbage\n" + path.read_text())
    result = run_cli(*base(server), "--resume", "-p", "again")
    assert result.returncode == 2
    assert "line 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_resume_with_nothing_saved_exits_2(run_cli: RunCli, server: ScriptedServer) -> None:
    result = run_cli(*base(server), "--resume", "-p", "hi")
    assert result.returncode == 2
    assert "no saved session" in result.stderr


def test_resume_by_id(run_cli: RunCli, server: ScriptedServer, sessions_dir: Path) -> None:
    server.add(text("first"), text("second"), text("third"))
    run_cli(*base(server), "-p", "one")
    first_id = next(sessions_dir.glob("*.jsonl")).stem
    run_cli(*base(server), "-p", "two")
    run_cli(*base(server), "--resume", first_id, "-p", "three")
    sent = [m["content"] for m in server.requests[2]["messages"][1:]]
    assert sent == ["one", "first", "three"]


def test_interactive_mode_reads_piped_lines(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("write_file", path="a.txt", content="A\n"), text("Wrote a.txt."))
    result = run_cli(*base(server), input="please write a.txt\ny\n/cost\n/quit\n")
    assert result.returncode == 0, result.stderr
    assert (workdir / "a.txt").read_text() == "A\n"
    assert "• write_file(" in result.stdout
    assert "✓ write_file(" in result.stdout
    assert "Wrote a.txt." in result.stdout
    status = next(line for line in result.stdout.splitlines() if "tokens in 200" in line)
    assert "tokens in 200 (cache hit 0%) · out 40 · context " in status
    assert "compact" not in status


def test_interactive_no_declines_the_write(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("bash", command="touch made.txt"), text("Understood."))
    result = run_cli(*base(server), input="make it\nn\n")
    assert result.returncode == 0
    assert "run: touch made.txt" in result.stdout
    assert "✗ bash(" in result.stdout
    assert not (workdir / "made.txt").exists()
    assert "the user declined" in server.requests[1]["messages"][-1]["content"]


def test_ctrl_c_during_p_exits_130(
    server: ScriptedServer, cli_env: dict[str, str], workdir: Path
) -> None:
    server.add(Reply([Text(f"tick{i} ", 0.2) for i in range(100)]))
    process = subprocess.Popen(
        [str(YOAGENT), *base(server), "-p", "count"],
        cwd=workdir,
        env=cli_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert stdout == ""
    assert "interrupted" in stderr


def test_thinking_is_shown_unless_hidden(run_cli: RunCli, server: ScriptedServer) -> None:
    reply = Reply([Think("pondering the question"), Text("The answer.")])
    server.add(reply, reply)
    shown = run_cli(*base(server), input="why?\n")
    assert "pondering the question\nThe answer.\n" in shown.stdout
    hidden = run_cli(*base(server), "--hide-thinking", input="why?\n")
    assert "pondering" not in hidden.stdout
    assert "The answer." in hidden.stdout
