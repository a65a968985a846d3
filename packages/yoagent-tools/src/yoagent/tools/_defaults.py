"""default_tools: the six built-in tools sharing one sandbox."""

from __future__ import annotations

import os
from collections.abc import Iterable

from yoagent.core import AgentTool

from .bash import BashTool
from .command_sandbox import CommandSandbox, SandboxPolicy
from .edit_file import EditFileTool
from .list_files import ListFilesTool
from .read_file import ReadFileTool
from .sandbox import PathSandbox, StrPath
from .search import SearchTool
from .write_file import WriteFileTool


def default_tools(
    allowed_paths: Iterable[StrPath] | None = None,
    *,
    sandbox: CommandSandbox | SandboxPolicy | str | None = None,
    allow_outside_sandbox: bool = False,
) -> list[AgentTool]:
    """``bash``, ``read_file``, ``write_file``, ``edit_file``, ``list_files`` and ``search``.

    With ``allowed_paths``, every path the file tools touch must resolve inside one
    of them, relative paths are anchored at the first, and ``bash`` starts there.
    ``bash`` itself is confined only by ``sandbox``: a :class:`CommandSandbox`, or a
    policy name (``"workspace-write"``: commands write only under the allowed paths, or
    the working folder when none are given; network off). Without one it can reach
    whatever the process can. ``allow_outside_sandbox`` lets a call ask to run outside the
    sandbox: give it only with an approval step that asks the user for each such call
    (see :class:`BashTool`).
    """
    roots = list(allowed_paths) if allowed_paths is not None else []
    paths = PathSandbox(roots)
    cwd = paths.roots[0] if paths.restricted else None
    if sandbox is not None and not isinstance(sandbox, CommandSandbox):
        writable = paths.roots if paths.restricted else [os.getcwd()]
        sandbox = CommandSandbox(sandbox, writable_paths=writable)
    return [
        BashTool(cwd=cwd, sandbox=sandbox, allow_outside_sandbox=allow_outside_sandbox),
        ReadFileTool(paths),
        WriteFileTool(paths),
        EditFileTool(paths),
        ListFilesTool(paths),
        SearchTool(paths),
    ]
