"""An MCP server's tools under names every provider accepts.

MCP lets a tool be called ``files.read`` and be up to 128 characters long; the model APIs
take only ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI, Anthropic; Bedrock and Gemini are no wider
where it matters). One tool outside that rule would make every request of the session
fail, so :class:`ProviderSafeTools` offers each tool whose ``<prefix>__<name>`` breaks it
under a name that keeps it: every other character becomes ``_``, and a name that is then
too long, or taken by another tool of the server, is cut and ends in ``_`` and eight hex
digits of a hash of the server's own name (the same name every listing, so the history's
calls keep meaning the same tool). The call still reaches the server under its own name:
only the name the model sees changes. Each renaming is warned about once.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from typing import Any

from yoagent.core import AgentTool, ToolContext, ToolResult, ToolSource

NAME_LIMIT = 64
"""The longest tool name the providers accept."""
_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_HASH_DIGITS = 8

logger = logging.getLogger("yoagent.cli")


class RenamedTool:
    """``tool`` under ``name``; everything else (and the call to the server) is its own."""

    def __init__(self, tool: AgentTool, name: str) -> None:
        self.tool = tool
        self._name = name

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self._name

    @property
    def original(self) -> str:
        """The tool's own name (with the server's prefix)."""
        return self.tool.name

    @property
    def description(self) -> str:
        """The tool's description."""
        return self.tool.description

    @property
    def parameters(self) -> dict[str, Any]:
        """The tool's input schema."""
        return self.tool.parameters

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool (the server is called under its own name)."""
        return await self.tool.execute(arguments, ctx)


def _hashed(name: str, base: str) -> str:
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]
    return f"{base[: NAME_LIMIT - _HASH_DIGITS - 1]}_{digest}"


def safe_names(tools: Sequence[AgentTool]) -> list[AgentTool]:
    """``tools`` with each name a provider would refuse replaced (see the module
    docstring); a name that is already fine never changes."""
    taken = {tool.name for tool in tools if _VALID.fullmatch(tool.name)}
    out: list[AgentTool] = []
    for tool in tools:
        name = tool.name
        if _VALID.fullmatch(name):
            out.append(tool)
            continue
        safe = _INVALID_CHARS.sub("_", name) or "_"
        if len(safe) > NAME_LIMIT or safe in taken:
            safe = _hashed(name, safe)
        while safe in taken:  # two hashes alike: practically never, but never a duplicate
            safe = _hashed(safe, safe)
        taken.add(safe)
        out.append(RenamedTool(tool, safe))
    return out


class ProviderSafeTools:
    """A :class:`~yoagent.core.ToolSource` offering ``source``'s tools under safe names."""

    def __init__(self, source: ToolSource, server: str) -> None:
        self.source = source
        self.server = server
        self._warned: set[str] = set()

    def generation(self) -> int:
        """The wrapped source's generation."""
        return self.source.generation()

    async def tools(self) -> Sequence[AgentTool]:
        """The wrapped source's tools, renamed where a provider would refuse the name."""
        tools = safe_names(await self.source.tools())
        for tool in tools:
            if isinstance(tool, RenamedTool) and tool.original not in self._warned:
                self._warned.add(tool.original)
                logger.warning(
                    "MCP server %s: the tool %r is offered to the model as %r (tool names "
                    "hold only letters, digits, '_' and '-', at most %d)",
                    self.server,
                    tool.original,
                    tool.name,
                    NAME_LIMIT,
                )
        return tools
