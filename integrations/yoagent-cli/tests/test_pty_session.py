"""The real ``yoagent`` at a terminal: project instructions, the config file, ``/undo``,
Tab completion, and the signals that end it (issue 10 item 9, issue 20)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pexpect
from pty_testing import PROMPT, Spawn, process_gone, see, spawn
from sse_server import Call, Reply, ScriptedServer, Text, text

__all__ = ["spawn"]  # the fixture


def test_pty_agents_md_and_the_config_files_model_reach_the_first_request(
    spawn: Spawn, server: ScriptedServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    (workdir.parent / ".git").mkdir()  # the repository root: instructions are read up to it
    (workdir.parent / "CLAUDE.md").write_text("Outer rule: be brief.\n")
    (workdir / "AGENTS.md").write_text("# Project\n\nRun `make test` before you finish.\n")
    project = workdir / ".yoagent"
    project.mkdir()
    (project / "config.toml").write_text(f'model = "configured-model"\nbase_url = "{server.url}"\n')
    user = Path(cli_env["XDG_CONFIG_HOME"]) / "yoagent"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(f'base_url = "{server.url}"\nmodel = "user-model"\n')
    server.add(text("Noted."))
    child = spawn()  # no flags: the model and the server come from the config files
    see(child, "base_url' is only read from the user config")  # reported, ignored
    see(child, "configured-model")
    see(child, PROMPT)
    child.send("hello\r")
    see(child, "Noted.")
    see(child, PROMPT)
    first = server.requests[0]
    assert first["model"] == "configured-model"  # the project file wins over the user's
    system = first["messages"][0]["content"]
    assert "Run `make test` before you finish." in system
    assert "Outer rule: be brief." in system
    assert system.index("Outer rule") < system.index("make test")  # nearer files come last
    child.sendeof()
    child.expect(pexpect.EOF)


def test_pty_undo_restores_only_the_files_the_agent_changed(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    (workdir / "app.py").write_text("print('old')\n")
    (workdir / "mine.txt").write_text("the user's file\n")
    server.add(
        Reply(
            [
                Call("edit_file", {"path": "app.py", "old_text": "old", "new_text": "new"}),
                Call("write_file", {"path": "added.py", "content": "x = 1\n"}),
            ]
        ),
        text("Edited app.py and added added.py."),
        text("Fresh start."),
    )
    child = spawn("--base-url", server.url, "--model", "scripted-model", "--yes")
    see(child, PROMPT)
    child.send("change it\r")
    see(child, "added added.py.")
    see(child, PROMPT)
    assert (workdir / "app.py").read_text() == "print('new')\n"
    assert (workdir / "added.py").exists()
    (workdir / "mine.txt").write_text("the user's file, edited by the user\n")
    child.send("/diff\r")
    see(child, "+print('new')")
    see(child, PROMPT)
    child.send("/undo\r")
    see(child, "restored app.py")
    see(child, "removed added.py")
    see(child, PROMPT)
    assert (workdir / "app.py").read_text() == "print('old')\n"
    assert not (workdir / "added.py").exists()
    assert (workdir / "mine.txt").read_text() == "the user's file, edited by the user\n"
    child.send("again\r")
    see(child, "Fresh start.")
    see(child, PROMPT)
    sent = [m.get("content") for m in server.requests[-1]["messages"][1:]]
    assert sent == ["again"]  # the undone turn left the conversation too
    child.send("/undo\r")
    see(child, "that turn changed no files")
    see(child, PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_pty_tab_completes_slash_commands_and_paths(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    (workdir / "notes-for-later.md").write_text("x")
    server.add(text("Read it."))
    child = spawn("--base-url", server.url, "--model", "scripted-model")
    see(child, PROMPT)
    child.send("/mo")
    child.send("\t")
    see(child, "del")  # the completion, drawn after what was typed
    child.send("\r")
    see(child, "model scripted-model (openai-compatible)")  # /model ran
    see(child, PROMPT)
    child.send("summarise notes-for")
    child.send("\t")
    see(child, "-later.md")
    child.send("\r")
    see(child, "Read it.")
    assert server.requests[0]["messages"][-1]["content"] == "summarise notes-for-later.md"
    see(child, PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)


def _bash_that_waits(workdir: Path) -> Reply:
    return Reply(
        [
            Text("Starting it.\n"),
            Call("bash", {"command": f"sleep 300 & echo $! > {workdir}/sleep.pid; wait"}),
        ]
    )


def _wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.1)
    raise AssertionError("the command never started")


def test_sigterm_to_interactive_yoagent_aborts_the_run_cleans_up_and_exits(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    server.add(_bash_that_waits(workdir))
    child = spawn("--base-url", server.url, "--model", "scripted-model", "--yes")
    see(child, PROMPT)
    child.send("wait for it\r")
    pid = _wait_for_pid(workdir / "sleep.pid")
    child.kill(signal.SIGTERM)
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 128 + signal.SIGTERM, (child.exitstatus, child.signalstatus)
    deadline = time.monotonic() + 10
    while not process_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process_gone(pid), "the command's process outlived yoagent"


def test_sighup_when_the_terminal_closes_aborts_the_run_and_cleans_up(
    spawn: Spawn, server: ScriptedServer, workdir: Path, sessions_dir: Path
) -> None:
    server.add(_bash_that_waits(workdir))
    child = spawn("--base-url", server.url, "--model", "scripted-model", "--yes")
    see(child, PROMPT)
    child.send("wait for it\r")
    pid = _wait_for_pid(workdir / "sleep.pid")
    child.kill(signal.SIGHUP)
    deadline = time.monotonic() + 30
    while child.isalive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not child.isalive(), "yoagent kept running after SIGHUP"
    while not process_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process_gone(pid), "the command's process outlived yoagent"
    saved = list(sessions_dir.glob("*.jsonl"))
    assert len(saved) == 1  # the conversation so far was saved on the way out
