"""``--sandbox``: bash's commands in the OS sandbox by default, the flags and config keys, and
a refused command leaving the sandbox only after the user approves that one call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_testing import Asker, RunCli
from pty_testing import PROMPT, Spawn, see, spawn
from sse_server import ScriptedServer, call, text

from yoagent.cli.app import Options, build_tools
from yoagent.cli.arguments import build_parser, make_options
from yoagent.cli.confirm import OUTSIDE_NEEDS_A_PERSON, Answer, ConfirmMiddleware, describe
from yoagent.cli.settings import LoadedSettings, load_settings
from yoagent.core import Allow, Deny, ToolCallRequest
from yoagent.tools import BashTool, SandboxPolicy

__all__ = ["spawn"]  # the fixture

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox's refusals are checked on Linux"
)


def bash_call(command: str, **extra: Any) -> ToolCallRequest:
    return ToolCallRequest(
        tool_call_id="c1", tool_name="bash", arguments={"command": command, **extra}
    )


def options_for(argv: list[str], cwd: Path, loaded: LoadedSettings | None = None) -> Options:
    parser = build_parser()
    return make_options(parser.parse_args(argv), parser, loaded or LoadedSettings(), cwd)


def the_bash(options: Options) -> BashTool:
    (tool,) = [tool for tool in build_tools(options) if isinstance(tool, BashTool)]
    return tool


# -- the options ---------------------------------------------------------------------------------


def test_the_default_sandbox_is_workspace_write_with_the_network_off(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    options = options_for(["--allow-path", str(extra)], tmp_path)
    assert options.sandbox is SandboxPolicy.WORKSPACE_WRITE and not options.sandbox_network
    sandbox = the_bash(options).sandbox
    assert sandbox is not None and sandbox.policy is SandboxPolicy.WORKSPACE_WRITE
    assert sandbox.writable_paths == (str(tmp_path.resolve()), str(extra.resolve()))
    assert not sandbox.network
    assert the_bash(options).allow_outside_sandbox


def test_the_flags_choose_the_policy_and_the_network(tmp_path: Path) -> None:
    options = options_for(["--sandbox", "read-only", "--sandbox-network"], tmp_path)
    sandbox = the_bash(options).sandbox
    assert sandbox is not None and sandbox.policy is SandboxPolicy.READ_ONLY and sandbox.network
    full = options_for(["--sandbox", "full-access"], tmp_path)
    assert the_bash(full).sandbox is None
    with pytest.raises(SystemExit):
        options_for(["--sandbox", "everything"], tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_user_file_sets_the_policy_and_the_network(tmp_path: Path) -> None:
    user = write(tmp_path / "user.toml", 'sandbox = "full-access"\nsandbox_network = true\n')
    loaded = load_settings(tmp_path, user)
    assert loaded.settings.sandbox is SandboxPolicy.FULL_ACCESS
    options = options_for([], tmp_path, loaded)
    assert options.sandbox is SandboxPolicy.FULL_ACCESS and options.sandbox_network
    assert options_for(["--sandbox", "read-only"], tmp_path, loaded).sandbox is (
        SandboxPolicy.READ_ONLY
    )


def test_a_project_file_may_tighten_the_sandbox_but_never_loosen_it(tmp_path: Path) -> None:
    user = tmp_path / "none.toml"
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    write(project / ".yoagent" / "config.toml", 'sandbox = "read-only"\n')
    assert load_settings(project, user).settings.sandbox is SandboxPolicy.READ_ONLY

    write(project / ".yoagent" / "config.toml", 'sandbox = "full-access"\nsandbox_network = true\n')
    loaded = load_settings(project, user)
    assert loaded.settings.sandbox is None and loaded.settings.sandbox_network is None
    assert any("'sandbox' ignored: a project config can make the sandbox stricter" in w
               for w in loaded.warnings)  # fmt: skip
    assert any("'sandbox_network' is only read from the user config" in w for w in loaded.warnings)

    write(user, 'sandbox = "read-only"\n')
    write(project / ".yoagent" / "config.toml", 'sandbox = "workspace-write"\n')
    loaded = load_settings(project, user)
    assert loaded.settings.sandbox is SandboxPolicy.READ_ONLY


# -- the approvals -------------------------------------------------------------------------------


async def test_leaving_the_sandbox_is_asked_every_time_despite_yes_and_always() -> None:
    asker = Asker(Answer.ALWAYS, Answer.NO)
    middleware = ConfirmMiddleware(asker, assume_yes=True)
    assert await middleware(bash_call("make")) == Allow()  # --yes: not asked
    outside = bash_call("make install", outside_sandbox=True)
    assert await middleware(outside) == Allow()
    assert isinstance(await middleware(bash_call("make install", outside_sandbox="true")), Deny)
    assert asker.asked == ["run outside the sandbox: make install"] * 2
    assert middleware.always == set()  # "always" was a yes for that one call


async def test_an_always_grant_for_bash_does_not_cover_leaving_the_sandbox() -> None:
    asker = Asker(Answer.ALWAYS, Answer.YES)
    middleware = ConfirmMiddleware(asker)
    assert await middleware(bash_call("ls")) == Allow()
    assert await middleware(bash_call("ls -a")) == Allow()
    assert await middleware(bash_call("ls ~", outside_sandbox=True)) == Allow()
    assert asker.asked == ["run: ls", "run outside the sandbox: ls ~"]


async def test_without_a_person_leaving_the_sandbox_is_denied_even_with_yes() -> None:
    denied: list[str] = []
    middleware = ConfirmMiddleware(
        None, assume_yes=True, on_denied=lambda request, reason: denied.append(reason)
    )
    assert await middleware(bash_call("ls", outside_sandbox=True)) == Deny(OUTSIDE_NEEDS_A_PERSON)
    assert denied == [OUTSIDE_NEEDS_A_PERSON]
    assert await middleware(bash_call("ls", outside_sandbox=False)) == Allow()


async def test_with_the_sandbox_off_every_command_says_it_runs_outside() -> None:
    asker = Asker(Answer.YES)
    middleware = ConfirmMiddleware(asker, sandboxed=False)
    assert await middleware(bash_call("rm -rf build")) == Allow()
    assert asker.asked == ["run outside the sandbox: rm -rf build"]
    assert describe(bash_call("ls")) == "run: ls"
    assert describe(bash_call("ls", outside_sandbox=1)) == "run outside the sandbox: ls"


# -- the real process ----------------------------------------------------------------------------


def tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]


def base(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.url, "--model", "scripted-model"]


@linux_only
def test_by_default_a_command_cannot_write_outside_and_cannot_leave_in_p_mode(
    run_cli: RunCli, server: ScriptedServer, workdir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    server.add(
        call("bash", command=f"echo inside > inside.txt && echo x > {outside}"),
        call("bash", command=f"echo x > {outside}", outside_sandbox=True),
        text("I could not."),
    )
    result = run_cli(*base(server), "--yes", "-p", "write both files")
    assert result.returncode == 0, result.stderr
    assert (workdir / "inside.txt").read_text() == "inside\n"
    assert not outside.exists()
    (refused,) = tool_results(server.requests[1])
    assert "the sandbox refused part of this command" in refused
    assert "outside_sandbox: true" in refused
    denied = tool_results(server.requests[2])[-1]
    assert "needs the user's approval each time" in denied


@linux_only
def test_full_access_runs_commands_unsandboxed(
    run_cli: RunCli, server: ScriptedServer, workdir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    server.add(call("bash", command=f"echo x > {outside}"), text("Done."))
    result = run_cli(*base(server), "--yes", "--sandbox", "full-access", "-p", "write it")
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "x\n"


@linux_only
def test_pty_a_refused_command_runs_outside_only_after_the_user_says_yes(
    spawn: Spawn, server: ScriptedServer, workdir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    command = f"echo x > {outside}"
    server.add(
        call("bash", command=command),
        call("bash", command=command, outside_sandbox=True),
        text("Written outside."),
    )
    child = spawn(*base(server), "--yes")
    see(child, "sandbox: workspace-write, network off")
    see(child, PROMPT)
    child.send("write the file\r")
    # --yes ran the first call unasked (and the sandbox refused it); leaving it is asked
    child.expect("allow\\?")
    assert f"run outside the sandbox: {command}" in (child.before or "")
    assert not outside.exists()
    child.send("y\r")
    see(child, "Written outside.")
    see(child, PROMPT)
    assert outside.read_text() == "x\n"
    refused = tool_results(server.requests[1])[-1]
    assert "the sandbox refused part of this command" in refused
    child.sendeof()
    child.expect(pexpect.EOF)
