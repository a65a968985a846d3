"""What the six built-in tools share: output that is always valid text."""

from __future__ import annotations

from typing import Any, TypeVar

from yoagent.core import ModelTool, TextContent, ToolArguments, ToolContext, ToolError, ToolResult
from yoagent.core.support import utf8_safe

ArgumentsT = TypeVar("ArgumentsT", bound=ToolArguments)


class BuiltinTool(ModelTool[ArgumentsT]):
    """A built-in tool: whatever it reports is valid UTF-8 text.

    Paths echoed from the arguments or read from the OS may hold lone surrogates
    (undecodable bytes, or a JSON ``\\udXXX`` escape); one of them in a result would
    make every later request of the conversation fail to encode. Every text block of a
    result and every error message is passed through the floor's
    :func:`~yoagent.core.support.utf8_safe` here, once,
    for all six tools.
    """

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate, run, and make the outcome valid text."""
        try:
            result = await super().execute(arguments, ctx)
        except ToolError as error:
            text = str(error)
            safe = utf8_safe(text)
            if safe == text:
                raise
            raise type(error)(safe, details=error.details) from None
        for block in result.content:
            if isinstance(block, TextContent):
                block.text = utf8_safe(block.text)
        return result
