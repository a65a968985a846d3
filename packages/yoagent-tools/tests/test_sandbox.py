"""PathSandbox: resolution rules and adversarial escapes, through the resolver and the tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yoagent.core import ToolContext, ToolError
from yoagent.tools import (
    EditFileTool,
    ListFilesTool,
    PathSandbox,
    ReadFileTool,
    SandboxError,
    SearchTool,
    WriteFileTool,
    default_tools,
)
from yoagent.tools.sandbox import MAX_SYMLINK_HOPS, resolve_path

# -- the resolver -------------------------------------------------------------


def test_relative_paths_are_anchored_at_the_working_folder(root: Path) -> None:
    sandbox = PathSandbox([root])
    assert sandbox.cwd == str(root)
    assert sandbox.check("src/a.py") == str(root / "src" / "a.py")
    assert sandbox.check(".") == str(root)


def test_dotdot_climbs_out_and_is_refused(root: Path) -> None:
    sandbox = PathSandbox([root])
    with pytest.raises(SandboxError, match="is outside the allowed paths"):
        sandbox.check("../outside/secret.txt")
    with pytest.raises(SandboxError):
        sandbox.check(f"{root}/a/b/../../../outside/secret.txt")


def test_dotdot_through_a_missing_folder_is_resolved_before_the_check(root: Path) -> None:
    sandbox = PathSandbox([root])
    for escape in ["missing/../../escaped.txt", "x/y/../../../escaped.txt"]:
        with pytest.raises(SandboxError):
            sandbox.check(escape)
    assert sandbox.check("missing/../ok.txt") == str(root / "ok.txt")


def test_dotdot_through_a_missing_folder_into_a_symlink_out_is_refused(root: Path) -> None:
    (root / "link").symlink_to(root.parent / "outside")
    with pytest.raises(SandboxError):
        PathSandbox([root]).check("new/../link/secret.txt")


def test_symlink_out_of_the_root_is_refused_with_its_target(root: Path) -> None:
    (root / "link").symlink_to(root.parent / "outside")
    with pytest.raises(SandboxError) as info:
        PathSandbox([root]).check("link/secret.txt", tool="read_file")
    message = str(info.value)
    assert message.startswith("read_file: link/secret.txt is outside the allowed paths (")
    assert str(root) in message
    assert "resolves to" in message


def test_dangling_symlink_is_followed_to_where_it_would_land(root: Path) -> None:
    (root / "dangling").symlink_to(root.parent / "outside" / "new-file.txt")
    (root / "ok-dangling").symlink_to(root / "sub" / "later.txt")
    sandbox = PathSandbox([root])
    with pytest.raises(SandboxError):
        sandbox.check("dangling")
    assert sandbox.check("ok-dangling") == str(root / "sub" / "later.txt")


def test_relative_symlink_chain_inside_the_root_is_allowed(root: Path) -> None:
    (root / "a").mkdir()
    (root / "a" / "f.txt").write_text("x")
    (root / "l1").symlink_to("a")
    (root / "l2").symlink_to("l1/f.txt")
    assert PathSandbox([root]).check("l2") == str(root / "a" / "f.txt")


def test_symlink_loop_is_refused(root: Path) -> None:
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    with pytest.raises(SandboxError, match="too many levels of symbolic links"):
        PathSandbox([root]).check("loop1/x")
    assert resolve_path(root / "loop1") is None


def test_a_long_but_finite_chain_is_followed(root: Path) -> None:
    (root / "target.txt").write_text("x")
    previous = "target.txt"
    for index in range(MAX_SYMLINK_HOPS):
        (root / f"hop{index}").symlink_to(previous)
        previous = f"hop{index}"
    assert PathSandbox([root]).check(previous) == str(root / "target.txt")
    (root / "one-more").symlink_to(previous)
    with pytest.raises(SandboxError, match="symbolic links"):
        PathSandbox([root]).check("one-more")


def test_absolute_paths_outside_are_refused(root: Path) -> None:
    sandbox = PathSandbox([root])
    for path in ["/etc/passwd", "/", str(root.parent), f"{root}-sibling/x", "~/x"]:
        with pytest.raises(SandboxError, match="outside the allowed paths"):
            sandbox.check(path)


def test_a_sibling_with_the_root_as_prefix_is_not_inside(root: Path) -> None:
    sibling = root.parent / (root.name + "2")
    sibling.mkdir()
    with pytest.raises(SandboxError):
        PathSandbox([root]).check(str(sibling / "x"))


def test_nul_bytes_are_refused_even_unrestricted(root: Path) -> None:
    for sandbox in (PathSandbox([root]), PathSandbox()):
        with pytest.raises(SandboxError, match="NUL byte"):
            sandbox.check("a\0b")


def test_empty_sandbox_allows_anything_and_keeps_the_callers_spelling(tmp_path: Path) -> None:
    sandbox = PathSandbox()
    assert not sandbox.restricted
    assert sandbox.check("/etc/passwd") == "/etc/passwd"
    assert sandbox.io_path("rel/a.txt") == "rel/a.txt"


def test_io_path_is_the_checked_path_when_restricted(root: Path) -> None:
    (root / "real").mkdir()
    (root / "alias").symlink_to("real")
    sandbox = PathSandbox([root])
    assert sandbox.io_path("alias/../real/./x.txt") == str(root / "real" / "x.txt")
    assert sandbox.io_path("real/../x.txt") == str(root / "x.txt")
    assert sandbox.io_path("alias/x.txt") == str(root / "real" / "x.txt")


def test_a_root_given_through_a_symlink_is_resolved(tmp_path: Path, root: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    sandbox = PathSandbox([alias])
    assert sandbox.roots == (str(root),)
    assert sandbox.check(str(alias / "f.txt")) == str(root / "f.txt")


def test_several_roots(tmp_path: Path, root: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    sandbox = PathSandbox([root, other])
    assert sandbox.check(str(other / "x")) == str(other.resolve() / "x")
    assert sandbox.check("y") == str(root / "y")  # anchored at the first root
    assert not sandbox.is_allowed(str(tmp_path / "third"))


# -- property: the resolver agrees with the OS -----------------------------------

_NAMES = st.sampled_from(["a", "b", "link_in", "link_out", "dangling", "loop", "..", ".", ""])


def _make_tree(base: Path) -> Path:
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (base / "outside").mkdir()
    (root / "a" / "file.txt").write_text("x")
    (root / "link_in").symlink_to("a")
    (root / "a" / "link_out").symlink_to(base / "outside")
    (root / "a" / "b" / "dangling").symlink_to("../../../outside/nothing")
    (root / "loop").symlink_to("loop")
    return root.resolve()


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_NAMES, max_size=8), absolute=st.booleans())
def test_accepted_paths_resolve_inside_a_root_like_realpath(
    tmp_path: Path, parts: list[str], absolute: bool
) -> None:
    """Invariant: an accepted path's resolution lies inside a root and equals
    ``os.path.realpath`` (where realpath is defined, i.e. no symlink loop)."""
    root = tmp_path.resolve() / "tree" / "root"
    if not root.exists():
        root.parent.mkdir(exist_ok=True)
        _make_tree(root.parent)
    relative = "/".join(parts) or "."
    path = f"{root}/{relative}" if absolute else relative
    sandbox = PathSandbox([root])
    resolved = resolve_path(path, root)
    anchored = os.path.join(root, path)
    try:
        checked = sandbox.check(path)
    except SandboxError:
        assert resolved is None or not (resolved == str(root) or resolved.startswith(f"{root}/"))
        return
    assert checked == resolved
    assert checked == str(root) or checked.startswith(f"{root}/")
    assert checked == os.path.realpath(anchored)


# -- the tools refuse every escape --------------------------------------------------


def _escapes(root: Path) -> list[str]:
    outside = root.parent / "outside"
    (root / "link").symlink_to(outside)
    (root / "file-link").symlink_to(outside / "secret.txt")
    (root / "dangling").symlink_to(outside / "created-by-escape.txt")
    return [
        str(outside / "secret.txt"),
        "../outside/secret.txt",
        "link/secret.txt",
        "file-link",
        "dangling",
        "missing/../../outside/secret.txt",
        "new/../link/secret.txt",
        "a\0b",
    ]


_CALLS: list[tuple[type[Any], dict[str, Any]]] = [
    (ReadFileTool, {}),
    (WriteFileTool, {"content": "pwned"}),
    (EditFileTool, {"old_text": "top secret", "new_text": "pwned"}),
    (ListFilesTool, {}),
    (SearchTool, {"pattern": "secret"}),
]


@pytest.mark.parametrize(("tool_class", "extra"), _CALLS, ids=lambda v: getattr(v, "__name__", ""))
async def test_every_tool_refuses_every_escape(
    root: Path, ctx: ToolContext, tool_class: type[Any], extra: dict[str, Any]
) -> None:
    tool = tool_class(PathSandbox([root]))
    for path in _escapes(root):
        with pytest.raises(ToolError) as info:
            await tool.execute({"path": path, **extra}, ctx)
        message = str(info.value)
        assert message.startswith(f"{tool.name}: "), message
        assert "outside the allowed paths" in message or "NUL byte" in message, message
    outside = root.parent / "outside"
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (outside / "created-by-escape.txt").exists()


async def test_default_tools_share_the_sandbox_and_bash_starts_in_the_first_root(
    root: Path, ctx: ToolContext
) -> None:
    tools = {tool.name: tool for tool in default_tools([root])}
    result = await tools["bash"].execute({"command": "pwd"}, ctx)
    assert result.text.splitlines()[-1] == str(root)
    with pytest.raises(ToolError, match="outside the allowed paths"):
        await tools["read_file"].execute({"path": "/etc/hostname"}, ctx)


def test_swapping_a_folder_for_a_symlink_after_the_check_is_refused(root: Path) -> None:
    """The I/O walks the checked path with O_NOFOLLOW: a symlink swapped in is not followed."""
    from yoagent.tools._fs import open_for_read, sandboxed_write

    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside\n")
    sandbox = PathSandbox([root])
    checked = sandbox.check("sub/f.txt")
    # the attacker swaps the folder for a link to the outside between check and use
    (root / "sub").rename(root / "sub-moved")
    (root / "sub").symlink_to(root.parent / "outside")
    (root.parent / "outside" / "f.txt").write_text("outside\n")
    with pytest.raises(ToolError, match="symbolic link appeared"):
        open_for_read("read_file", "sub/f.txt", checked, nofollow=True)
    with pytest.raises(ToolError, match="symbolic link appeared"):
        sandboxed_write("write_file", "sub/f.txt", checked, b"pwned", nofollow=True)
    assert (root.parent / "outside" / "f.txt").read_text() == "outside\n"


def test_swapping_the_file_itself_for_a_symlink_is_refused(root: Path) -> None:
    from yoagent.tools._fs import open_for_read, sandboxed_write

    (root / "f.txt").write_text("inside\n")
    checked = PathSandbox([root]).check("f.txt")
    (root / "f.txt").unlink()
    (root / "f.txt").symlink_to(root.parent / "outside" / "secret.txt")
    with pytest.raises(ToolError, match="symbolic link appeared"):
        open_for_read("read_file", "f.txt", checked, nofollow=True)
    with pytest.raises(ToolError, match="symbolic link appeared"):
        sandboxed_write("write_file", "f.txt", checked, b"pwned", nofollow=True)
    assert (root.parent / "outside" / "secret.txt").read_text() == "top secret\n"
