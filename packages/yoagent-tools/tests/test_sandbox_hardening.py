"""The sandbox holds against a command that works on the sandbox itself: the programs that
start the confinement, the capabilities root would keep, every Landlock ABI, and the ``.git``
files a later unsandboxed ``git`` reads.

Each test is a way out a review found; it fails on the code before its fix.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sandbox_helpers import LINUX_MECHANISMS, Layout, bash, fails, run

from yoagent.core import ToolError
from yoagent.tools import BashTool, CommandSandbox, SandboxUnavailableError, _confine

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Landlock, bubblewrap and /proc are Linux's"
)
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="root's capabilities are what is tested (CI runs as root)",
)

# --- the launchers: what starts the confinement cannot be changed from inside ----------------

_INSTALLED_IN_THE_WORKSPACE = textwrap.dedent(
    """\
    import os, sys
    ws, target, mechanism = sys.argv[1:4]
    # yoagent installed in the workspace (`uv run yoagent` in a clone, a project .venv), its
    # interpreter a link there, and the .venv's bin first on PATH (an activated .venv)
    sys.executable = os.path.join(ws, ".venv", "bin", "python")
    os.environ["PATH"] = os.path.join(ws, ".venv", "bin") + os.pathsep + os.environ["PATH"]
    sys.path.insert(0, os.path.join(ws, "site"))
    import anyio
    import yoagent.tools
    from yoagent.core import ToolContext, ToolError
    from yoagent.tools import BashTool, CommandSandbox

    assert yoagent.tools.__file__.startswith(ws), yoagent.tools.__file__
    sandbox = CommandSandbox(writable_paths=[ws], mechanisms=[mechanism])
    tool = BashTool(cwd=ws, sandbox=sandbox)
    ctx = ToolContext(tool_call_id="1", tool_name="bash")
    UNCONFINED = '#!/bin/sh\\nwhile [ "$1" != -- ]; do shift; done; shift; exec "$@"\\n'
    STEP = "import os, sys\\na = sys.argv; i = a.index('--'); os.execvp(a[i + 1], a[i + 1:])\\n"

    async def main():
        step = os.path.join(os.path.dirname(yoagent.tools.__file__), "_confine.py")
        await tool.execute({"command": "true"}, ctx)  # the sandbox is set up
        tamper = (
            f"printf '{STEP}' > {step} && rm .venv/bin/python"
            f" && printf '{UNCONFINED}' > .venv/bin/python && chmod +x .venv/bin/python"
            f" && printf '{UNCONFINED}' > .venv/bin/bwrap && chmod +x .venv/bin/bwrap"
        )
        await tool.execute({"command": tamper}, ctx)
        print("tampered:", "execvp" in open(step).read(), os.path.islink(sys.executable))
        try:
            await tool.execute({"command": f"echo escaped > {target}"}, ctx)
            print("ESCAPED")
        except ToolError as error:
            print("refused:", str(error).splitlines()[2:4])

    anyio.run(main)
    """
)


def _workspace_with_yoagent(ws: Path) -> None:
    """``ws`` holding a copy of yoagent.tools, an interpreter link and a ``.venv/bin``."""
    import yoagent.tools

    site = ws / "site" / "yoagent"
    site.mkdir(parents=True)
    shutil.copytree(Path(yoagent.tools.__file__).parent, site / "tools")
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "python").symlink_to(os.path.realpath(sys.executable))


@linux_only
@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
def test_a_command_cannot_replace_the_launchers_of_the_next_one(
    tmp_path: Path, mechanism: str
) -> None:
    """Command 1 rewrites the confinement step where yoagent is installed, the interpreter
    link and a ``bwrap`` on PATH, all inside the workspace; command 2 still writes nothing
    outside."""
    ws = (tmp_path / "ws").resolve()
    target = tmp_path / "escaped"
    _workspace_with_yoagent(ws)
    done = subprocess.run(
        [sys.executable, "-c", _INSTALLED_IN_THE_WORKSPACE, str(ws), str(target), mechanism],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "tampered: True False" in done.stdout  # command 1 did replace all three
    assert "ESCAPED" not in done.stdout
    assert "refused:" in done.stdout
    assert not target.exists()


@linux_only
def test_an_interpreter_in_a_writable_folder_is_refused_for_landlock() -> None:
    python = Path(os.path.realpath(sys.executable))
    sandbox = CommandSandbox(writable_paths=[python.parent], mechanisms=["landlock"])
    with pytest.raises(SandboxUnavailableError) as info:
        sandbox.resolve()
    said = str(info.value)
    assert f"landlock: the Python interpreter {python} lies in the writable folder" in said
    assert "commands are refused rather than run unsandboxed" in said


@linux_only
def test_a_bwrap_only_in_a_writable_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    planted = bin_folder / "bwrap"
    planted.write_text("#!/bin/sh\nexit 0\n")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}relative/bin")
    sandbox = CommandSandbox(writable_paths=[tmp_path], mechanisms=["bubblewrap"])
    with pytest.raises(SandboxUnavailableError) as info:
        sandbox.resolve()
    assert f"bubblewrap: the bwrap on PATH ({planted.resolve()}) lies in the writable" in str(
        info.value
    )


# --- root keeps no capability -----------------------------------------------------------------


@as_root
@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_root_runs_sandboxed_commands_without_any_capability(
    layout: Layout, mechanism: str
) -> None:
    """Landlock stops writes, not ``hostname``, the clock, module loading or ``setns``; a
    command of root keeps none of the capabilities those need (nothing on the host is
    changed to show it: the capability sets are read)."""
    tool = bash(layout, "workspace-write", mechanism)
    shown = await run(tool, "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status")
    sets = dict(line.split(":") for line in shown.text.splitlines()[-5:])
    assert {name: int(value, 16) for name, value in sets.items()} == {
        "CapInh": 0,
        "CapPrm": 0,
        "CapEff": 0,
        "CapBnd": 0,
        "CapAmb": 0,
    }


@as_root
@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_root_cannot_remount_the_file_system_writable(layout: Layout, mechanism: str) -> None:
    if shutil.which("mount") is None:
        pytest.skip("no mount program here")
    tool = bash(layout, "workspace-write", mechanism)
    error = await fails(
        tool, f"mount -o remount,bind,rw / && echo via-remount > {layout.out}/file && echo wrote"
    )
    assert "wrote" not in str(error)
    assert (layout.out / "file").read_text() == "outside\n"


# --- every Landlock ABI -----------------------------------------------------------------------

_AT_ABI = "import sys; from yoagent.tools import _confine\n" + (
    "_confine.landlock_abi = lambda: int(sys.argv[1]); _confine.main(sys.argv[2:])"
)


@linux_only
def test_the_confinement_step_works_at_every_landlock_abi(tmp_path: Path) -> None:
    """A kernel of Landlock ABI 1 or 2 (Linux 5.13 to 6.1) handles no TRUNCATE: a rule
    asking for it is refused (EINVAL). Each rule asks only for what the ruleset handles."""
    current = _confine.landlock_abi()
    if current < 1:
        pytest.skip("no Landlock here")
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    for abi in range(1, current + 1):
        script = (
            f"echo in > {ws}/{abi} && echo x > /dev/null || exit 3; "
            f"echo x 2>/dev/null > {out}/{abi} && exit 4; exit 0"
        )
        options = ["--write", str(ws), "--device", "/dev/null"]
        done = subprocess.run(
            [sys.executable, "-c", _AT_ABI, str(abi), *options, "--", "sh", "-c", script],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, (abi, done.stderr)
        assert (ws / str(abi)).read_text() == "in\n"
        assert not (out / str(abi)).exists()


# --- .git: what a later, unsandboxed git reads ------------------------------------------------


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
    return subprocess.run(
        ["git", *identity, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


_PLANT_A_COMMON_DIR = """\
mkdir -p .cache/c && cp -r .git/objects .git/refs .git/HEAD .cache/c/ && mkdir .cache/c/hooks
printf '[core]\\n\\trepositoryformatversion = 0\\n' > .cache/c/config
printf '#!/bin/sh\\necho ran > {marker}\\n' > .cache/c/hooks/pre-commit
chmod +x .cache/c/hooks/pre-commit
rm -f .git/commondir; echo ../.cache/c > .git/commondir
echo {to_common} > .git/worktrees/linked/commondir
"""


@linux_only
@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_planted_common_dir_runs_no_hook_on_the_users_next_commit(
    tmp_path: Path, mechanism: str
) -> None:
    """``.git/commondir`` (and a linked worktree's, in ``.git/worktrees``) names where git
    reads config and hooks from: planted, the user's next commit outside the sandbox ran a
    hook the command wrote."""
    layout = Layout(tmp_path)
    ws, marker = layout.ws, layout.out / "hooked"
    shutil.rmtree(ws / ".git")
    assert _git("init", "-q", cwd=ws).returncode == 0
    assert _git("commit", "-q", "--allow-empty", "-m", "first", cwd=ws).returncode == 0
    linked = tmp_path / "linked"
    assert _git("worktree", "add", "-q", str(linked), cwd=ws).returncode == 0
    tool = bash(layout, "workspace-write", mechanism)
    plant = _PLANT_A_COMMON_DIR.format(marker=marker, to_common=ws / ".cache" / "c")
    error = await fails(tool, plant)
    assert "sandbox refused" in str(error)
    # the user, later, outside any sandbox, in the workspace and in the linked worktree
    for where in (ws, linked):
        done = _git("commit", "-q", "--allow-empty", "-m", "next", cwd=where)
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), where
    common = _git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=linked)
    assert common.stdout.strip() == str(ws / ".git")
    # and git inside the sandbox still works
    result = await run(tool, "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x")
    assert result.details["sandbox_denied"] is False


@linux_only
@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_git_link_out_of_the_workspace_is_not_followed(
    tmp_path: Path, mechanism: str
) -> None:
    """A command makes ``.git`` a link to a folder outside; the next command's setup, which
    runs unsandboxed, must not create ``hooks`` and ``config`` there."""
    layout = Layout(tmp_path)
    shutil.rmtree(layout.ws / ".git")
    victim = layout.out / "dir"
    tool = bash(layout, "workspace-write", mechanism)
    await run(tool, f"ln -s {victim} .git")
    await run(tool, "true")
    assert os.listdir(victim) == []


@linux_only
@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)
async def test_a_writable_folder_replaced_by_a_link_is_not_made_writable(
    tmp_path: Path, mechanism: str
) -> None:
    """One writable folder inside another: a command replaces the inner one with a link to
    a folder outside; the next command's rules, made by path, must not follow it."""
    layout = Layout(tmp_path)
    inner = layout.ws / "inner"
    inner.mkdir()
    sandbox = CommandSandbox(writable_paths=[layout.ws, inner], mechanisms=[mechanism])  # type: ignore[list-item]
    tool = BashTool(cwd=layout.ws, sandbox=sandbox)
    with contextlib.suppress(ToolError):  # bubblewrap: the folder is a mount point (EBUSY)
        await run(tool, f"rm -r inner && ln -s {layout.out} inner")
    assert inner.is_symlink() or mechanism == "bubblewrap"
    with contextlib.suppress(ToolError):
        await run(tool, "echo x > inner/file")
    assert (layout.out / "file").read_text() == "outside\n"
