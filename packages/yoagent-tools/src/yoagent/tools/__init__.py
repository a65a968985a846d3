"""yoagent.tools: the built-in coding tools and the path sandbox they share."""

from ._defaults import default_tools
from ._errors import ToolsError
from .bash import BashTool
from .command_sandbox import CommandSandbox, SandboxPolicy, SandboxUnavailableError
from .edit_file import EditFileTool
from .list_files import ListFilesTool
from .read_file import ReadFileTool
from .sandbox import MAX_SYMLINK_HOPS, PathSandbox, SandboxError
from .search import SearchTool, find_ripgrep
from .write_file import WriteFileTool

__all__ = [
    "MAX_SYMLINK_HOPS",
    "BashTool",
    "CommandSandbox",
    "EditFileTool",
    "ListFilesTool",
    "PathSandbox",
    "ReadFileTool",
    "SandboxError",
    "SandboxPolicy",
    "SandboxUnavailableError",
    "SearchTool",
    "ToolsError",
    "WriteFileTool",
    "default_tools",
    "find_ripgrep",
]
