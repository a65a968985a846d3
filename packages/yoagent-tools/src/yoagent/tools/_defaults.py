"""default_tools: the six built-in tools sharing one sandbox."""

from __future__ import annotations

from collections.abc import Iterable

from yoagent.core import AgentTool

from .bash import BashTool
from .edit_file import EditFileTool
from .list_files import ListFilesTool
from .read_file import ReadFileTool
from .sandbox import PathSandbox, StrPath
from .search import SearchTool
from .write_file import WriteFileTool


def default_tools(allowed_paths: Iterable[StrPath] | None = None) -> list[AgentTool]:
    """``bash``, ``read_file``, ``write_file``, ``edit_file``, ``list_files`` and ``search``.

    With ``allowed_paths``, every path the file tools touch must resolve inside one
    of them, relative paths are anchored at the first, and ``bash`` starts there
    (bash itself is not confined: it can reach whatever the process can).
    """
    roots = list(allowed_paths) if allowed_paths is not None else []
    sandbox = PathSandbox(roots)
    cwd = sandbox.roots[0] if sandbox.restricted else None
    return [
        BashTool(cwd=cwd),
        ReadFileTool(sandbox),
        WriteFileTool(sandbox),
        EditFileTool(sandbox),
        ListFilesTool(sandbox),
        SearchTool(sandbox),
    ]
