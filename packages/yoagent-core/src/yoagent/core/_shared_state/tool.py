"""The ``shared_state`` tool: lets a model get, set, list and remove shared-state keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from yoagent.core._tools.arguments import ToolArguments
from yoagent.core._tools.contract import AgentTool, ToolContext, ToolError, ToolResult
from yoagent.core._tools.model_tool import ModelTool

from .store import SharedState, SharedStateError

TOOL_NAME = "shared_state"

DEFAULT_READ_CHARS = 20_000
"""How much of a value one ``get`` returns unless ``max_chars`` says otherwise."""

_DESCRIPTION = (
    "A key-value store of text shared with the other agents of this task: artifacts, "
    "notes, and full tool outputs that were cut short (keys 'tool-output-<call id>'). "
    "Actions: get (key; long values come in pages: offset, max_chars), set (key, value), "
    "list (optional prefix), remove (key). Keys: letters, digits, '-', '_', '.'; no '/'."
)


class SharedStateArguments(ToolArguments):
    """The arguments of ``shared_state``; each action's own fields are required for it."""

    action: Literal["get", "set", "list", "remove"] = Field(description="What to do.")
    key: str = Field("", description="The key (get, set, remove).", validate_default=True)
    value: str | SkipJsonSchema[None] = Field(
        None, description="The text to store (set).", validate_default=True
    )
    prefix: str = Field("", description="Only keys starting with this (list).")
    offset: int = Field(0, ge=0, description="First character to return (get).")
    max_chars: int = Field(
        DEFAULT_READ_CHARS,
        ge=1,
        description=f"Most characters to return (get; default {DEFAULT_READ_CHARS}).",
    )

    @field_validator("key")
    @classmethod
    def _key_for_its_actions(cls, key: str, info: ValidationInfo) -> str:
        action = info.data.get("action")
        if not key and action in ("get", "set", "remove"):
            raise PydanticCustomError("needed", "needed for {action}", {"action": action})
        return key

    @field_validator("value")
    @classmethod
    def _value_for_set(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("action") == "set":
            raise PydanticCustomError("needed", "needed for set")
        return value


class SharedStateTool(ModelTool[SharedStateArguments]):
    """A tool over a :class:`SharedState` (wire name ``shared_state``).

    Actions: ``get`` (with optional ``offset``/``max_chars`` to page through a long value),
    ``set``, ``list`` (optional ``prefix``) and ``remove``. Refusals come back as tool
    errors the model can read.
    """

    def __init__(self, state: SharedState) -> None:
        super().__init__(name=TOOL_NAME, description=_DESCRIPTION, arguments=SharedStateArguments)
        self.state = state

    async def run(self, arguments: SharedStateArguments, ctx: ToolContext) -> ToolResult:
        """Do the action."""
        action, key = arguments.action, arguments.key
        try:
            if action == "get":
                return await self._get(key, arguments.offset, arguments.max_chars)
            if action == "set":
                value = arguments.value or ""
                await self.state.set(key, value)
                return ToolResult.from_text(f"Stored {len(value)} characters under {key!r}.")
            if action == "list":
                return await self._list(arguments.prefix)
            if await self.state.remove(key):
                return ToolResult.from_text(f"Removed {key!r}.")
            raise ToolError(f"shared_state remove: no value under {key!r}")
        except SharedStateError as error:
            raise ToolError(f"shared_state {action}: {error}") from None

    async def _list(self, prefix: str) -> ToolResult:
        keys = await self.state.list(prefix)
        if not keys:
            return ToolResult.from_text(
                "No keys." if not prefix else f"No keys start with {prefix!r}."
            )
        return ToolResult.from_text("\n".join(keys), details={"keys": keys})

    async def _get(self, key: str, offset: int, max_chars: int) -> ToolResult:
        value = await self.state.get(key)
        if value is None:
            keys = await self.state.list()
            known = ", ".join(keys[:20]) if keys else "none"
            raise ToolError(f"shared_state get: no value under {key!r} (keys: {known})")
        total = len(value)
        if offset >= total and total:
            raise ToolError(
                f"shared_state get: offset {offset} is past the end ({total} characters)"
            )
        piece = value[offset : offset + max_chars]
        end = offset + len(piece)
        details = {"key": key, "offset": offset, "end": end, "total": total}
        if offset == 0 and end == total:
            return ToolResult.from_text(piece, details=details)
        note = f"\n[characters {offset}-{end} of {total}"
        note += f"; get again with offset={end} for more]" if end < total else "]"
        return ToolResult.from_text(piece + note, details=details)


def with_shared_state_tool(tools: Sequence[AgentTool], state: SharedState) -> list[AgentTool]:
    """``tools`` and a ``shared_state`` tool over ``state``, unless one of them has its name."""
    if any(tool.name == TOOL_NAME for tool in tools):
        return list(tools)
    return [*tools, SharedStateTool(state)]
