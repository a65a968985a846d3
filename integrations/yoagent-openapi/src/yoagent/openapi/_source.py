"""OpenApiToolSource: a document's tools offered to an agent at every run."""

from __future__ import annotations

from collections.abc import Sequence

from ._tool import OpenApiTool


class OpenApiToolSource:
    """A :class:`~yoagent.core.ToolSource` of fixed OpenAPI tools (the generation never moves:
    a document's operations do not change while it is loaded)."""

    def __init__(self, tools: Sequence[OpenApiTool]) -> None:
        self._tools = tuple(tools)

    async def tools(self) -> Sequence[OpenApiTool]:
        """The tools, the same every time."""
        return self._tools

    def generation(self) -> int:
        """Always 0."""
        return 0

    def __repr__(self) -> str:
        return f"OpenApiToolSource({len(self._tools)} tools)"
