"""The bash tool in an OS sandbox: what each policy lets a command write, the network, the
refusal when no mechanism works, and the runner's cleanup, caps and timeouts inside it.

Every escape attempt is tried by root on root-owned files when CI runs as root: file
permissions stop nothing there, so each refusal is the sandbox's. The same attempts under
``full-access`` succeed (``test_the_escape_attempts_succeed_without_a_sandbox``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import (
    LINUX_MECHANISMS,
    Layout,
    bash,
    escape_script,
    fails,
    gone,
    present,
    run,
    snapshot,
    wait_for,
)
from tools_helpers import wait_group_gone

from yoagent.core.support import Command
from yoagent.tools import (
    BashTool,
    CommandSandbox,
    SandboxPolicy,
    SandboxUnavailableError,
    ToolsError,
    default_tools,
)
from yoagent.tools._mechanisms import SEATBELT, launcher, render, seatbelt_profile

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Landlock, bubblewrap and /proc are Linux's"
)


# --- workspace-write --------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_workspace_write_changes_only_the_workspace_and_its_temp_folder(
    layout: Layout, mechanism: str
) -> None:
    tool = bash(layout, "workspace-write", mechanism)
    result = await run(
        tool,
        "echo a > new.txt && mv new.txt renamed.txt && rm inside.txt && mkdir -p sub/deep"
        ' && echo t > "$TMPDIR/scratch" && cat "$TMPDIR/scratch" && echo "$TMPDIR"'
        " && echo hook-free > .git/HEAD && echo quiet > /dev/null",
    )
    assert result.text.splitlines()[1] == "t"
    temp = Path(result.text.splitlines()[2])
    assert temp.name.startswith("yoagent-sandbox-") and (temp / "scratch").is_file()
    assert (layout.ws / "renamed.txt").read_text() == "a\n"
    assert not (layout.ws / "inside.txt").exists()
    assert (layout.ws / "sub" / "deep").is_dir()
    assert result.details["sandbox"] == {
        "policy": "workspace-write",
        "mechanism": mechanism,
        "network": False,
    }


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_shared_memory_is_the_commands_own_and_multiprocessing_works(
    layout: Layout, mechanism: str
) -> None:
    name = f"yoagent-sandbox-{uuid.uuid4().hex}"
    script = (
        "import multiprocessing as m, operator as o\n"
        "if __name__ == '__main__':\n"
        "    with m.Pool(2) as pool: print(pool.starmap(o.mul, [(2, 3), (4, 5)]))\n"
    )
    (layout.ws / "pool.py").write_text(script)
    for policy in ("workspace-write", "read-only"):
        tool = bash(layout, policy, mechanism)
        result = await run(tool, f"{sys.executable} pool.py && echo x > /dev/shm/{name}")
        assert "[6, 20]" in result.text
        assert not present(Path("/dev/shm", name))


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_workspace_write_refuses_every_way_out(
    layout: Layout, mechanism: str, real_home_file: Path
) -> None:
    tool = bash(layout, "workspace-write", mechanism)
    await run(tool, "true")  # the first command makes the .git files the sandbox pins
    before = layout.outside()
    error = await fails(tool, escape_script(layout, real_home_file))
    wait_for(layout.ws / "daemon-ran")  # the daemon outlived the command, still confined
    assert layout.outside() == before
    assert not present(real_home_file)
    assert (layout.ws / ".git").is_dir() and (layout.ws / "inside.txt").read_text() == "inside\n"
    assert "the sandbox refused part of this command" in str(error)
    assert error.details["sandbox_denied"] is True


@linux_only
async def test_the_escape_attempts_succeed_without_a_sandbox(
    layout: Layout, real_home_file: Path
) -> None:
    """The control: the same script under ``full-access`` changes everything it aims at."""
    before = layout.outside()
    tool = BashTool(
        cwd=layout.ws, sandbox=CommandSandbox("full-access"), env={"HOME": str(layout.home)}
    )
    await fails(tool, escape_script(layout, real_home_file))
    wait_for(layout.ws / "daemon-ran")
    after = layout.outside()
    assert present(real_home_file)
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    aims = ("home/created", "sibling/created", "out/dir", "out/daemon", ".git/hooks", ".git/config")
    for aim in aims:
        assert any(path.endswith(aim) for path in changed), aim
    assert not (layout.ws / ".git").exists()  # moved away
    assert (layout.ws / ".git.moved" / "commondir").read_text() == "../.cache/common\n"


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_sandboxed_command_cannot_reach_a_loopback_server(
    layout: Layout, mechanism: str
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        server.settimeout(0.2)
        connect = (
            f'{sys.executable} -c "import socket; '
            f"socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')\""
        )
        error = await fails(bash(layout, "workspace-write", mechanism), connect)
        assert "connected" not in str(error)
        with pytest.raises(TimeoutError):
            server.accept()
        # the control: with the network on, the same command connects
        allowed = await run(bash(layout, "workspace-write", mechanism, network=True), connect)
        assert "connected" in allowed.text
        accepted, _ = server.accept()
        accepted.close()


@pytest.fixture
def repository(layout: Layout) -> Layout:
    """The workspace as a fresh git repository (its .git made by ``git init``)."""
    shutil.rmtree(layout.ws / ".git")
    subprocess.run(["git", "init", "-q", str(layout.ws)], check=True)
    return layout


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_project_builds_tests_and_commits_inside_the_workspace(
    repository: Layout, mechanism: str
) -> None:
    layout = repository
    (layout.ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (layout.ws / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    )
    steps = [
        f"{sys.executable} -m compileall -q .",
        f"{sys.executable} -m unittest -q test_calc 2>&1",
        "git add -A",
        "git -c user.name=t -c user.email=t@t commit -qm first",
        "git log --oneline | wc -l",
    ]
    if shutil.which("cc") and shutil.which("make"):
        (layout.ws / "main.c").write_text("int main(void) { return 0; }\n")
        (layout.ws / "Makefile").write_text("test: main\n\t./main && echo built-and-ran\n")
        steps.insert(2, "make -s test")
    tool = bash(layout, "workspace-write", mechanism)
    result = await run(tool, " && ".join(steps), timeout=120)
    assert result.text.splitlines()[-1] == "1"
    # git works, but its config and hooks do not move
    error = await fails(tool, "git config user.name someone-else")
    assert "sandbox refused" in str(error)
    assert "someone-else" not in (layout.ws / ".git" / "config").read_text()


# --- read-only and full-access ----------------------------------------------------------------


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_read_only_writes_nothing_anywhere(
    layout: Layout, mechanism: str, real_home_file: Path
) -> None:
    before = {**layout.outside(), **snapshot(layout.ws)}
    tool = bash(layout, "read-only", mechanism)
    shown = await run(tool, "cat inside.txt")
    assert shown.text.endswith("inside\n") or shown.text.endswith("inside")
    await fails(
        tool,
        f'echo x > new; echo x >> inside.txt; mkdir d; rm inside.txt; echo x > "${{TMPDIR:-/tmp}}"/'
        f"yoagent-ro-{uuid.uuid4().hex}; echo x > {layout.sibling}/f; echo x > {real_home_file}; "
        "exit 1",
    )
    assert {**layout.outside(), **snapshot(layout.ws)} == before
    assert not present(real_home_file)
    assert CommandSandbox("read-only").temp_folder is None


async def test_full_access_leaves_the_command_as_it_is(tmp_path: Path) -> None:
    sandbox = CommandSandbox("full-access", writable_paths=[tmp_path])
    command = Command(["bash", "-c", "true"], cwd=str(tmp_path))
    assert sandbox.wrap(command) is command
    assert sandbox.resolve() is None and not sandbox.restricted and sandbox.network
    tool = BashTool(cwd=tmp_path, sandbox=sandbox)
    assert tool.description == BashTool(cwd=tmp_path).description
    result = await run(tool, f"echo x > {tmp_path.parent}/full-access-{tmp_path.name}")
    assert "sandbox" not in result.details
    assert (tmp_path.parent / f"full-access-{tmp_path.name}").read_text() == "x\n"


# --- refusal when nothing can enforce the policy ----------------------------------------------

_NO_LANDLOCK = textwrap.dedent(
    """\
    import ctypes, os, struct, sys
    # seccomp: landlock_create_ruleset (444) fails with ENOSYS, as on a kernel without it
    code = [(0x20, 0, 0, 0), (0x15, 0, 1, 444), (0x06, 0, 0, 0x00050000 | 38),
            (0x06, 0, 0, 0x7FFF0000)]
    program = b"".join(struct.pack("HBBI", *line) for line in code)
    buffer = ctypes.create_string_buffer(program)
    prog = struct.pack("HxxxxxxQ", len(code), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, 1, 0, 0, 0) == 0
    assert libc.prctl(22, 2, ctypes.c_char_p(prog), 0, 0) == 0, ctypes.get_errno()
    os.environ["PATH"] = sys.argv[2]  # no bwrap on it
    import anyio
    from yoagent.core import ToolContext
    from yoagent.tools import BashTool, CommandSandbox, SandboxUnavailableError

    async def main():
        tool = BashTool(cwd=sys.argv[1], sandbox=CommandSandbox(writable_paths=[sys.argv[1]]))
        try:
            ctx = ToolContext(tool_call_id="1", tool_name="bash")
            await tool.execute({"command": "touch ran"}, ctx)
        except SandboxUnavailableError as error:
            print("REFUSED:", error)

    anyio.run(main)
    """
)


@linux_only
def test_a_policy_no_mechanism_can_enforce_refuses_the_command(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for program in ("bash", "true"):
        found = shutil.which(program)
        assert found is not None
        (bare / program).symlink_to(found)
    done = subprocess.run(
        [sys.executable, "-c", _NO_LANDLOCK, str(tmp_path), str(bare)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert said.startswith("REFUSED: bash: the sandbox policy 'workspace-write' cannot be")
    assert "landlock: the kernel has no Landlock" in said
    assert "bubblewrap: bwrap is not installed" in said
    assert "the command was not run" in said
    assert not (tmp_path / "ran").exists()


@linux_only
async def test_one_unavailable_mechanism_refuses_and_the_command_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    sandbox = CommandSandbox(writable_paths=[tmp_path], mechanisms=["bubblewrap"])
    tool = BashTool(cwd=tmp_path, sandbox=sandbox, shell="/bin/bash")
    with pytest.raises(SandboxUnavailableError) as info:
        await run(tool, "/usr/bin/touch ran")
    assert isinstance(info.value, ToolsError)
    assert "bwrap is not installed" in str(info.value)
    assert not (tmp_path / "ran").exists()
    with pytest.raises(SandboxUnavailableError):
        sandbox.wrap(Command(["true"]))  # the failure is kept: no second probe, no run


def test_no_mechanism_on_this_platform_is_a_refusal(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailableError, match="no mechanism for this platform"):
        CommandSandbox("read-only", mechanisms=[]).resolve()


# --- the runner inside the sandbox ------------------------------------------------------------


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_timeout_kills_the_sandboxed_command_and_what_it_started(
    layout: Layout, mechanism: str
) -> None:
    tool = bash(layout, "workspace-write", mechanism, timeout=1)
    error = await fails(tool, "sleep 60 & setsid sleep 61 & echo pids $! ; wait")
    assert "timed out after 1 s" in str(error)
    assert wait_group_gone(error.details["pgid"]) == []
    daemon = int(str(error).split("pids ")[1].split()[0])
    assert gone(daemon)


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_output_caps_hold_inside_the_sandbox(layout: Layout, mechanism: str) -> None:
    tool = bash(layout, "workspace-write", mechanism, max_output_bytes=4096)
    result = await run(tool, "head -c 1000000 /dev/zero | tr '\\0' a")
    assert result.details["stdout_cut"] is True and result.details["stdout_bytes"] == 1_000_000
    assert len(result.text) < 10_000


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_failure_that_is_not_a_refusal_has_no_sandbox_note(
    layout: Layout, mechanism: str
) -> None:
    error = await fails(bash(layout, "workspace-write", mechanism), "echo no; exit 3")
    assert str(error) == "Exit code: 3\nno"
    assert error.details["sandbox_denied"] is False


@pytest.fixture
def outsider() -> Iterator[subprocess.Popen[bytes]]:
    """A process running outside any sandbox."""
    process = subprocess.Popen(["sleep", "30"])
    yield process
    process.kill()
    process.wait()


@linux_only
async def test_landlock_keeps_signals_inside_the_sandbox(
    layout: Layout, outsider: subprocess.Popen[bytes]
) -> None:
    """From Landlock ABI 6 a sandboxed command cannot signal a process outside it."""
    from yoagent.tools._confine import landlock_abi

    if landlock_abi() < 6:
        pytest.skip("Landlock ABI 6 (signal scoping) is not available here")
    error = await fails(bash(layout, "workspace-write", "landlock"), f"kill {outsider.pid}")
    assert "Operation not permitted" in str(error)
    assert outsider.poll() is None


# --- not root: the user-namespace path --------------------------------------------------------


@pytest.fixture
def open_layout() -> Iterator[Layout]:
    """A layout in a folder everyone may enter (pytest's own is the test user's alone)."""
    base = Path(tempfile.mkdtemp(prefix="yoagent-sandbox-test-"))
    base.chmod(0o755)
    try:
        yield Layout(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
def test_an_unprivileged_user_is_confined_the_same_way(open_layout: Layout, mechanism: str) -> None:
    """As root, the confinement step needs no user namespace; as anyone else it makes one.
    This runs the step as ``nobody`` (with the system's Python, which ``nobody`` can run)."""
    python = "/usr/bin/python3"
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.access(python, os.X_OK):
        pytest.skip("needs root, setpriv and /usr/bin/python3 to run a step as nobody")
    layout = open_layout
    for folder, dirs, files in os.walk(layout.base):
        for name in [folder, *(os.path.join(folder, entry) for entry in dirs + files)]:
            if not os.path.islink(name):
                os.chmod(name, 0o777 if os.path.isdir(name) else 0o666)
    sandbox = CommandSandbox(writable_paths=[layout.ws], mechanisms=[mechanism])  # type: ignore[list-item]
    script = f"id -u; echo in > mine; echo x > {layout.out}/file; echo x > .git/hooks/h; true"
    program = python if mechanism == "landlock" else launcher("bubblewrap", [str(layout.ws)])
    line = render(
        mechanism, sandbox.plan(), ["bash", "-c", script], str(layout.ws), launcher=program
    )  # type: ignore[arg-type]
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *line],
        cwd=layout.ws,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["65534"]
    assert (layout.ws / "mine").read_text() == "in\n"
    assert (layout.out / "file").read_text() == "outside\n"
    assert not (layout.ws / ".git" / "hooks" / "h").exists()


# --- the API ----------------------------------------------------------------------------------


def test_policies_and_mechanisms_are_checked_when_the_sandbox_is_made() -> None:
    assert [policy.value for policy in SandboxPolicy] == [
        "read-only",
        "workspace-write",
        "full-access",
    ]
    with pytest.raises(ValueError, match="unknown sandbox policy 'open'"):
        CommandSandbox("open")
    with pytest.raises(ValueError, match="unknown sandbox mechanism 'docker'"):
        CommandSandbox(mechanisms=["docker"])  # type: ignore[list-item]


def test_default_tools_confine_bash_to_the_allowed_paths(tmp_path: Path) -> None:
    tools = default_tools([tmp_path], sandbox="workspace-write")
    tool = tools[0]
    assert isinstance(tool, BashTool) and tool.sandbox is not None
    assert tool.sandbox.writable_paths == (str(tmp_path.resolve()),)
    assert "Commands run in an OS sandbox (workspace-write" in tool.description
    assert "outside_sandbox" not in tool.parameters["properties"]
    unconfined = default_tools([tmp_path])[0]
    assert isinstance(unconfined, BashTool) and unconfined.sandbox is None


@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_outside_sandbox_is_an_argument_only_when_allowed(
    layout: Layout, mechanism: str
) -> None:
    strict = bash(layout, "workspace-write", mechanism)
    refused = await fails(strict, "true", outside_sandbox=True)
    assert "outside_sandbox" in str(refused) and "Extra inputs" in str(refused)
    tool = bash(layout, "workspace-write", mechanism, allow_outside_sandbox=True)
    assert "outside_sandbox" in tool.parameters["properties"]
    result = await run(tool, f"echo x > {layout.out}/escalated", outside_sandbox=True)
    assert (layout.out / "escalated").read_text() == "x\n"
    assert result.details["sandbox"] == {"policy": "full-access", "outside_sandbox": True}
    error = await fails(tool, f"echo x > {layout.out}/not-escalated")
    assert "call bash again with `outside_sandbox: true`" in str(error)
    assert not (layout.out / "not-escalated").exists()


def test_the_seatbelt_profile_keeps_paths_out_of_its_text(tmp_path: Path) -> None:
    """Paths are parameters (``-D``), so a quote or a parenthesis in one cannot change the
    profile."""
    odd = tmp_path / 'we"ird) (allow default'
    odd.mkdir()
    sandbox = CommandSandbox(writable_paths=[odd])
    profile, params = seatbelt_profile(sandbox.plan())
    assert str(odd) not in profile and str(odd) in params.values()
    assert "(deny network-outbound" in profile
    line = render("seatbelt", sandbox.plan(), ["true"], None, launcher=SEATBELT)
    assert line[:3] == ["/usr/bin/sandbox-exec", "-p", profile] and line[-2:] == ["--", "true"]


@pytest.mark.skipif(sys.platform != "darwin", reason="Seatbelt is macOS only")
async def test_seatbelt_confines_writes_on_macos(layout: Layout) -> None:  # pragma: no cover
    before = layout.outside()
    tool = bash(layout, "workspace-write", "seatbelt")
    await fails(tool, f"echo x > {layout.out}/file; echo x > .git/hooks/h; exit 1")
    result = await run(tool, "echo x > inside.txt && cat inside.txt")
    assert result.text.endswith("x")
    assert layout.outside() == before


@pytest.mark.parametrize(
    "options",
    [
        ["--bogus", "x"],  # an option it does not know
        ["--write"],  # an option without its path
        ["--write", "/nonexistent/yoagent-sandbox-test"],  # a rule it cannot add
    ],
)
def test_the_confinement_step_fails_closed(tmp_path: Path, options: list[str]) -> None:
    """Whatever goes wrong before the ``exec``, the command does not run."""
    from yoagent.tools import _confine

    if _confine.landlock_abi() < 1:
        pytest.skip("no Landlock here")
    marker = tmp_path / "ran"
    line = [sys.executable, "-I", "-S", _confine.__file__, *options, "--", "touch", str(marker)]
    done = subprocess.run(line, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == _confine.SETUP_FAILED
    assert done.stderr.startswith("yoagent sandbox: ") and "not run" in done.stderr
    assert not marker.exists()


def test_a_removed_temp_folder_is_made_again(tmp_path: Path) -> None:
    sandbox = CommandSandbox(writable_paths=[tmp_path])
    first = sandbox.temp_folder
    assert first is not None and os.path.isdir(first)
    shutil.rmtree(first)
    second = sandbox.temp_folder
    assert second is not None and second != first and os.path.isdir(second)
    assert second in sandbox.plan().write
