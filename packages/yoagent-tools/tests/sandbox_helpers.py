"""Helpers for the command sandbox tests: which mechanisms run here, file-tree snapshots, and
the workspace layout the escape attempts are tried in."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tools_helpers import is_alive, make_ctx

from yoagent.core import ToolError, ToolResult
from yoagent.tools import BashTool
from yoagent.tools.command_sandbox import CommandSandbox, SandboxUnavailableError


def _why_not(mechanism: str) -> str | None:
    try:
        CommandSandbox("read-only", mechanisms=[mechanism]).resolve()  # type: ignore[list-item]
    except SandboxUnavailableError as error:
        return str(error)
    return None


def mechanism_expected(mechanism: str) -> str | None:
    """Why ``mechanism`` must work here (so its tests fail rather than skip), or ``None``.

    ``.ci/run`` sets ``YOAGENT_REQUIRE_SANDBOX``: it installs bubblewrap, and the project's
    machines have Landlock and unprivileged user namespaces. A machine that restricts user
    namespaces (Ubuntu 24.04's AppArmor default) skips, saying why.
    """
    if mechanism == "seatbelt":
        return "this is macOS" if sys.platform == "darwin" else None
    if sys.platform.startswith("linux") and os.environ.get("YOAGENT_REQUIRE_SANDBOX"):
        return "YOAGENT_REQUIRE_SANDBOX is set"
    return None


def mechanism_param(mechanism: str) -> object:
    """``mechanism`` as a parameter, skipped only where it neither works nor is expected."""
    reason = _why_not(mechanism)
    skip = reason is not None and mechanism_expected(mechanism) is None
    return pytest.param(
        mechanism,
        marks=pytest.mark.skipif(skip, reason=f"{mechanism} unavailable here: {reason}"),
    )


LINUX_MECHANISMS = [mechanism_param("landlock"), mechanism_param("bubblewrap")]
"""Both Linux mechanisms, for ``@pytest.mark.parametrize("mechanism", LINUX_MECHANISMS)``."""


def snapshot(*roots: Path) -> dict[str, str]:
    """Every path under ``roots`` with what it is: a file's content, a link's target, ``dir``."""
    seen: dict[str, str] = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            seen[str(root)] = "missing"
            continue
        for folder, dirs, files in os.walk(root):
            seen[folder] = "dir"
            for name in [*dirs, *files]:
                path = Path(folder, name)
                if path.is_symlink():
                    seen[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_file():
                    seen[str(path)] = path.read_text(errors="replace")
    return seen


class Layout:
    """A workspace (a git repository) and what lies outside it: a home folder, a sibling
    folder beside the workspace, and a folder holding a file, a folder and a link target."""

    def __init__(self, base: Path) -> None:
        self.base = base.resolve()
        self.ws = self.base / "ws"
        self.home = self.base / "home"
        self.sibling = self.base / "sibling"
        self.out = self.base / "out"
        for folder in (self.ws, self.home, self.sibling, self.out / "dir"):
            folder.mkdir(parents=True)
        (self.home / ".bashrc").write_text("# rc\n")
        (self.out / "file").write_text("outside\n")
        (self.ws / "inside.txt").write_text("inside\n")
        (self.ws / "out-link").symlink_to(self.out)
        git = self.ws / ".git"
        (git / "hooks").mkdir(parents=True)
        (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n")

    def outside(self) -> dict[str, str]:
        """What must not change: everything outside the workspace, and its .git protections."""
        git = self.ws / ".git"
        kept = [git / name for name in ("hooks", "config", "commondir", "config.worktree", "info")]
        return snapshot(self.home, self.sibling, self.out, *kept)


def bash(layout: Layout, policy: str, mechanism: str, **options: object) -> BashTool:
    sandbox = CommandSandbox(
        policy,
        writable_paths=[layout.ws],
        mechanisms=[mechanism],  # type: ignore[list-item]
        network=bool(options.pop("network", False)),
    )
    return BashTool(cwd=layout.ws, sandbox=sandbox, env={"HOME": str(layout.home)}, **options)  # type: ignore[arg-type]


async def run(tool: BashTool, command: str, **arguments: object) -> ToolResult:
    return await tool.execute({"command": command, **arguments}, make_ctx("bash"))


async def fails(tool: BashTool, command: str, **arguments: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        await run(tool, command, **arguments)
    return info.value


def escape_script(layout: Layout, home_file: Path) -> str:
    """Every way out the issue lists, each allowed to fail; the daemon reports when it ran."""
    out, ws = layout.out, layout.ws
    return textwrap.dedent(
        f"""\
        echo new > "$HOME/created"; echo x >> "$HOME/.bashrc"; echo x > {home_file}
        echo new > {layout.sibling}/created
        echo x >> {out}/file; truncate -s 0 {out}/file; mv {out}/file {out}/renamed
        rm -f {out}/file; rmdir {out}/dir; mkdir {out}/newdir
        echo hook > .git/hooks/pre-commit; ln -s /bin/true .git/hooks/post-checkout
        echo "[core] hooksPath = /x" >> .git/config; mv .git/config .git/config.old
        mkdir -p .cache/common/hooks; echo hook > .cache/common/hooks/pre-commit
        rm -f .git/commondir; echo ../.cache/common > .git/commondir
        rm -f .git/config.worktree; echo "[core] hooksPath = /x" > .git/config.worktree
        echo "* filter=x" > .git/info/attributes; mv .git/info .git/info.old
        mv .git/hooks .git/hooks.old; rm -rf .git/hooks; mv .git .git.moved
        ln -s {out}/file link-out; echo x >> link-out; echo x > out-link/through-link
        ln {out}/file hard-out && echo x >> hard-out
        mv inside.txt {out}/; mv {out}/file {ws}/moved-in
        setsid bash -c 'sleep 0.3; echo x > {out}/daemon; echo ran > {ws}/daemon-ran' \\
            </dev/null >/dev/null 2>&1 &
        exit 1
        """
    )


def gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while is_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not is_alive(pid)


def present(path: Path) -> bool:
    return path.exists()


def wait_for(path: Path, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path.exists(), f"{path} never appeared"
