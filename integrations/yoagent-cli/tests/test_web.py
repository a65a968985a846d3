"""``yoagent web``: the page holds exactly the calls the terminal asks about, described as
the terminal describes them, and the command serves on loopback behind its token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from yoagent.cli.app import confirmation
from yoagent.cli.arguments import make_options
from yoagent.cli.confirm import READ_ONLY_TOOLS, ConfirmMiddleware, declined, describe
from yoagent.cli.settings import LoadedSettings
from yoagent.cli.web import HoldForThePage, web_parser
from yoagent.core import Allow, Defer, ToolCallRequest

CALLS = [
    ("read_file", {"path": "a.py"}),
    ("list_files", {}),
    ("search", {"pattern": "x"}),
    ("read_skill", {"name": "s"}),
    ("bash", {"command": "rm -rf build\x1b[2J"}),
    ("write_file", {"path": "a.py", "content": "x\n"}),
    ("edit_file", {"path": "a.py", "old_text": "x", "new_text": "y"}),
    ("notes__add", {"text": "hi"}),
    ("trusted__add", {"text": "hi"}),
]


def request(name: str, arguments: dict[str, object]) -> ToolCallRequest:
    return ToolCallRequest(tool_call_id="c1", tool_name=name, arguments=dict(arguments))


@pytest.mark.parametrize("assume_yes", [False, True])
def test_the_page_holds_what_the_terminal_asks_about(assume_yes: bool) -> None:
    confirm = ConfirmMiddleware(
        None, assume_yes=assume_yes, trusted=lambda name: name.startswith("trusted__")
    )
    hold = HoldForThePage(confirm)
    for name, arguments in CALLS:
        call = request(name, arguments)
        decision = hold(call)
        asks = not assume_yes and confirm.guards(name)
        assert decision == (Defer(describe(call)) if asks else Allow()), name
    assert not any(isinstance(hold(request(name, {})), Defer) for name in READ_ONLY_TOOLS)


@pytest.mark.parametrize("assume_yes", [False, True])
def test_the_page_holds_a_command_leaving_the_sandbox_even_with_yes(assume_yes: bool) -> None:
    """The terminal's rule: a call asking to run outside the sandbox waits for a person
    every time; ``--yes`` let it run unapproved in the page."""
    hold = HoldForThePage(ConfirmMiddleware(None, assume_yes=assume_yes))
    for leave in (True, "true", 1):
        call = request("bash", {"command": "echo x > ~/.bashrc", "outside_sandbox": leave})
        assert hold(call) == Defer("run outside the sandbox: echo x > ~/.bashrc")
    inside = request("bash", {"command": "make", "outside_sandbox": False})
    assert hold(inside) == (Allow() if assume_yes else Defer("run: make"))


def test_yoagent_web_says_when_commands_run_without_the_sandbox(tmp_path: Path) -> None:
    """``--sandbox full-access``: the page describes every command as the terminal does,
    as running outside the sandbox (and ``--yes`` still allows it, as in the terminal)."""
    parser = web_parser()
    for argv, shown in (
        ([], "run: ls"),
        (["--sandbox", "full-access"], "run outside the sandbox: ls"),
    ):
        options = make_options(parser.parse_args(argv), parser, LoadedSettings(), tmp_path)
        assert HoldForThePage(confirmation(options))(request("bash", {"command": "ls"})) == Defer(
            shown
        )
        yes = make_options(parser.parse_args([*argv, "--yes"]), parser, LoadedSettings(), tmp_path)
        assert HoldForThePage(confirmation(yes))(request("bash", {"command": "ls"})) == Allow()


def test_a_no_in_the_page_reads_to_the_model_as_in_the_terminal() -> None:
    assert declined("not now") == "the user declined; they said: not now"
    assert declined("") == "the user declined"


def test_yoagent_web_serves_on_loopback_behind_its_token(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    command = [sys.executable, "-m", "yoagent.cli", "web", "--base-url", "http://127.0.0.1:9/v1"]
    with subprocess.Popen(
        [*command, "--port", "0", "--pricing", "off"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            found = re.search(r"open (http://127\.0\.0\.1:(\d+)/([\w-]+)/)", line)
            assert found is not None, line + (server.stderr.read() if server.poll() else "")
            url, port, token = found.group(1), found.group(2), found.group(3)
            assert len(token) >= 32
            base = f"http://127.0.0.1:{port}"
            assert httpx.get(f"{base}/").status_code == 403
            assert httpx.get(f"{base}/{'x' * 32}/api/info").status_code == 403
            info = httpx.get(f"{url}api/info").json()
            assert info["chat"] is True and info["model"]["id"]
        finally:
            server.terminate()
            server.wait(timeout=20)


def test_yoagent_web_refuses_the_terminal_only_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from yoagent.cli.web import run_web

    with pytest.raises(SystemExit) as exit_info:
        run_web(["-p", "hello"])
    assert exit_info.value.code == 2
    assert "not yoagent web" in capsys.readouterr().err
