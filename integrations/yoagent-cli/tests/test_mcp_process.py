"""MCP servers in the real ``yoagent`` (``-p`` runs as a subprocess): ``--mcp``,
``--mcp-http`` and the config file's ``[mcp_servers.<name>]``, against a real server on the
official SDK (``notes_mcp_server.py``) and the scripted model server."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_testing import RunCli
from sse_server import ScriptedServer, call, text

from yoagent.testing import free_port

NOTES_SERVER = Path(__file__).parent / "notes_mcp_server.py"
SECRET = "k3y-0123456789abcdef"


def notes_command() -> str:
    """``--mcp``'s value for the notes server."""
    return shlex.join([sys.executable, str(NOTES_SERVER), "stdio"])


def base(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.url, "--model", "scripted-model"]


def user_config(cli_env: dict[str, str], toml: str) -> Path:
    path = Path(cli_env["XDG_CONFIG_HOME"]) / "yoagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(toml)
    return path


def notes_table(name: str, extra: str = "") -> str:
    args = json.dumps([str(NOTES_SERVER), "stdio"])
    return f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n{extra}"


def tool_result(server: ScriptedServer) -> str:
    """What the model was sent as the last tool result."""
    message = server.requests[-1]["messages"][-1]
    assert message["role"] == "tool", message
    return str(message["content"])


def test_an_mcp_tool_from_the_flag_runs_and_its_result_reaches_the_model(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("notes__add_note", text="buy milk"), text("Noted."))
    result = run_cli(*base(server), "--yes", "--mcp", notes_command(), "-p", "note it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Noted.\n"
    offered = {tool["function"]["name"] for tool in server.requests[0]["tools"]}
    assert {"notes__add_note", "notes__owner", "notes__shutdown", "bash", "read_file"} <= offered
    assert tool_result(server) == "noted 'buy milk'; the notebook holds 1 note(s)"
    assert (workdir / "notes.txt").read_text() == "buy milk\n"  # it ran in the working folder


def test_a_server_that_exits_mid_run_has_its_tools_withdrawn_and_says_why(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(
        call("notes__shutdown"),
        call("bash", command="sleep 1"),  # time for the server's exit to be seen
        text("It has gone."),
    )
    result = run_cli(*base(server), "--yes", "--mcp", notes_command(), "-p", "stop it")
    assert result.returncode == 0, result.stderr
    offered = [{t["function"]["name"] for t in request["tools"]} for request in server.requests]
    assert "notes__add_note" in offered[0]
    assert not any(name.startswith("notes__") for name in offered[2])
    assert (
        "yoagent: warning: MCP server notes (prefix 'notes') exited with status 3" in result.stderr
    )
    assert "its tools are withdrawn" in result.stderr


def test_without_yes_a_p_run_refuses_an_mcp_call_like_bash(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("notes__add_note", text="buy milk"), text("I could not."))
    result = run_cli(*base(server), "--mcp", notes_command(), "-p", "note it")
    assert result.returncode == 0, result.stderr
    assert "refused notes__add_note" in result.stderr
    assert "not allowed in a non-interactive run" in tool_result(server)
    assert not (workdir / "notes.txt").exists()


def test_a_config_file_server_gets_its_env_and_a_confirm_false_one_runs_without_yes(
    run_cli: RunCli, server: ScriptedServer, cli_env: dict[str, str], workdir: Path
) -> None:
    user_config(
        cli_env,
        notes_table("jot", 'env = { NOTES_OWNER = "${TEST_NOTES_OWNER}" }\nconfirm = false\n'),
    )
    server.add(call("jot__owner"), call("jot__add_note", text="x"), text("Done."))
    result = run_cli(*base(server), "-p", "who owns it?", env={"TEST_NOTES_OWNER": "ada lovelace"})
    assert result.returncode == 0, result.stderr
    assert server.requests[1]["messages"][-1]["content"] == "owner: ada lovelace"
    assert (workdir / "notes.txt").read_text() == "x\n"  # confirm = false: no --yes needed
    assert "refused" not in result.stderr


def test_a_stdio_server_gets_none_of_the_hosts_keys(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(call("notes__owner"), text("Done."))
    result = run_cli(
        *base(server),
        "--yes",
        "--mcp",
        notes_command(),
        "-p",
        "who?",
        env={"NOTES_OWNER": "leaked"},
    )
    assert result.returncode == 0, result.stderr
    assert tool_result(server) == "owner: unset"


def test_a_disabled_config_server_is_not_started(
    run_cli: RunCli, server: ScriptedServer, cli_env: dict[str, str]
) -> None:
    user_config(cli_env, notes_table("jot", "enabled = false\n"))
    server.add(text("Hi."))
    result = run_cli(*base(server), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert not any(t["function"]["name"].startswith("jot__") for t in server.requests[0]["tools"])


def test_a_flag_server_that_cannot_start_exits_2_naming_it(
    run_cli: RunCli, server: ScriptedServer, sessions_dir: Path
) -> None:
    missing = shlex.join([sys.executable, "no_such_server.py", "--token", SECRET])
    result = run_cli(*base(server), "--mcp", missing, "-p", "hi")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("yoagent: --mcp: ")
    assert "python no_such_server.py" in lines[0]
    assert "exited with status 2" in lines[0]
    assert SECRET not in result.stderr
    assert server.requests == []  # the model was never called
    assert not list(sessions_dir.glob("*.jsonl"))

    result = run_cli(*base(server), "--mcp", "no-such-program --flag", "-p", "hi")
    assert result.returncode == 2
    assert "cannot start 'no-such-program'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_config_server_that_cannot_start_says_how_to_start_without_it(
    run_cli: RunCli, server: ScriptedServer, cli_env: dict[str, str]
) -> None:
    config = user_config(cli_env, '[mcp_servers.broken]\ncommand = "no-such-program"\n')
    result = run_cli(*base(server), "-p", "hi")
    assert result.returncode == 2
    assert result.stderr.startswith("yoagent: config: MCP server broken: cannot start")
    assert f"(enabled = false in [mcp_servers.broken] of {config} starts without it)" in (
        result.stderr
    )


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        (
            '[mcp_servers.jot]\ncommand = "x"\nenv = { KEY = "${NO_SUCH_VARIABLE_X}" }\n',
            "mcp_servers.jot.env.KEY: ${NO_SUCH_VARIABLE_X} is not set in the environment",
        ),
        (
            '[mcp_servers.jot]\ncommand = "x"\nurl = "http://127.0.0.1/mcp"\n',
            "mcp_servers.jot: give either command",
        ),
        (
            f'[mcp_servers.jot]\nurl = "ftp://{SECRET}@host/mcp"\n',
            "mcp_servers.jot: the URL must start with http:// or https://",
        ),
        ('[mcp_servers."a__b"]\ncommand = "x"\n', "'a__b': a server's name is up to 32"),
    ],
)
def test_bad_mcp_server_tables_are_config_errors(
    run_cli: RunCli, cli_env: dict[str, str], table: str, problem: str
) -> None:
    user_config(cli_env, table)
    result = run_cli("--base-url", "http://127.0.0.1:9/v1", "-p", "hi")
    assert result.returncode == 2
    assert problem in result.stderr
    assert SECRET not in result.stderr


def test_a_project_config_cannot_start_mcp_servers(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    project = workdir / ".yoagent"
    project.mkdir()
    (project / "config.toml").write_text(notes_table("jot"))
    server.add(text("Hi."))
    result = run_cli(*base(server), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "'mcp_servers' is only read from the user config" in result.stderr
    assert not any(t["function"]["name"].startswith("jot__") for t in server.requests[0]["tools"])


def test_mcp_http_needs_an_http_url(run_cli: RunCli) -> None:
    result = run_cli("--base-url", "http://127.0.0.1:9/v1", "--mcp-http", f"ws://h/{SECRET}")
    assert result.returncode == 2
    assert "--mcp-http: the URL must start with http:// or https://" in result.stderr
    assert SECRET not in result.stderr


@pytest.fixture
def http_notes(tmp_path: Path) -> Iterator[str]:
    """The notes server over Streamable HTTP on loopback, at a path holding a key."""
    port = free_port()
    folder = tmp_path / "http-server"
    folder.mkdir()
    process = subprocess.Popen(
        [sys.executable, str(NOTES_SERVER), "http", str(port), f"/{SECRET}/mcp"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the HTTP MCP server exited"
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the HTTP MCP server never listened"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/{SECRET}/mcp"
    finally:
        process.kill()
        process.wait()


def test_an_http_server_from_the_flag_serves_its_tools_and_its_url_key_is_never_shown(
    run_cli: RunCli, server: ScriptedServer, http_notes: str
) -> None:
    server.add(call("notes__add_note", text="over http"), text("Noted."))
    result = run_cli(*base(server), "--yes", "--mcp-http", http_notes, "-p", "note it", "--json")
    assert result.returncode == 0, result.stderr
    assert tool_result(server) == "noted 'over http'; the notebook holds 1 note(s)"
    assert SECRET not in result.stdout + result.stderr

    gone = http_notes.replace(http_notes.split("/")[2], f"127.0.0.1:{free_port()}")
    result = run_cli(*base(server), "--mcp-http", gone, "-p", "hi")
    assert result.returncode == 2
    assert result.stderr.startswith("yoagent: --mcp-http: MCP server http://127.0.0.1:")
    assert SECRET not in result.stderr


PROVIDER_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_mcp_tool_names_a_provider_would_refuse_are_offered_under_safe_unique_names(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    """``notes.count`` (a dot) and a 76-character name are fine in MCP but would make every
    request fail: they are offered renamed, warned about, and still called by their own
    names on the server."""
    hashed_dot = "notes__notes_count_" + hashlib.sha256(b"notes.count").hexdigest()[:8]
    long_name = "count_" + "x" * 70  # the server's own name: the hash is of it
    hashed_long = f"notes__count_{'x' * 42}_" + hashlib.sha256(long_name.encode()).hexdigest()[:8]
    server.add(call(hashed_dot), call(hashed_long), call("notes__notes_count"), text("Counted."))
    command = shlex.join([sys.executable, str(NOTES_SERVER), "stdio", "odd-names"])
    result = run_cli(*base(server), "--yes", "--mcp", command, "-p", "count")
    assert result.returncode == 0, result.stderr
    offered = [tool["function"]["name"] for tool in server.requests[0]["tools"]]
    assert [name for name in offered if not PROVIDER_TOOL_NAME.fullmatch(name)] == []
    assert len(set(offered)) == len(offered)
    assert {hashed_dot, hashed_long, "notes__notes_count"} <= set(offered)  # the valid one kept
    results = [request["messages"][-1]["content"] for request in server.requests[1:]]
    assert results == ["notes.count: 0", "long: 0", "notes_count: 0"]
    assert result.stderr.count("yoagent: warning: MCP server notes: the tool ") == 2
    assert f"'notes.count' is offered to the model as '{hashed_dot}'" in result.stderr
