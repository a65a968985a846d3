"""The ``shared_state`` tool: lets a model get, set, list and remove shared-state keys."""

from __future__ import annotations

from typing import Any, ClassVar

from yoagent.core._tools.contract import ToolContext, ToolError, ToolResult

from .store import SharedState, SharedStateError

DEFAULT_READ_CHARS = 20_000
"""How much of a value one ``get`` returns unless ``max_chars`` says otherwise."""


class SharedStateTool:
    """A tool over a :class:`SharedState` (wire name ``shared_state``).

    Actions: ``get`` (with optional ``offset``/``max_chars`` to page through a long value),
    ``set``, ``list`` (optional ``prefix``) and ``remove``. Refusals come back as tool
    errors the model can read.
    """

    name = "shared_state"
    description = (
        "A key-value store of text shared with the other agents of this task: artifacts, "
        "notes, and full tool outputs that were cut short (keys 'tool-output-<call id>'). "
        "Actions: get (key; long values come in pages: offset, max_chars), set (key, value), "
        "list (optional prefix), remove (key). Keys: letters, digits, '-', '_', '.'; no '/'."
    )
    _parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["get", "set", "list", "remove"]},
            "key": {"type": "string", "description": "The key (get, set, remove)."},
            "value": {"type": "string", "description": "The text to store (set)."},
            "prefix": {"type": "string", "description": "Only keys starting with this (list)."},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "First character to return (get).",
            },
            "max_chars": {
                "type": "integer",
                "minimum": 1,
                "description": f"Most characters to return (get; default {DEFAULT_READ_CHARS}).",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    def __init__(self, state: SharedState) -> None:
        self.state = state

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self._parameters

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = arguments.get("action")
        try:
            if action == "get":
                return await self._get(arguments)
            if action == "set":
                key = _text(arguments, "key", action)
                value = _text(arguments, "value", action)
                await self.state.set(key, value)
                return ToolResult.from_text(f"Stored {len(value)} characters under {key!r}.")
            if action == "list":
                prefix = arguments.get("prefix") or ""
                if not isinstance(prefix, str):
                    raise ToolError("shared_state list: 'prefix' must be a string")
                keys = await self.state.list(prefix)
                if not keys:
                    return ToolResult.from_text(
                        "No keys." if not prefix else f"No keys start with {prefix!r}."
                    )
                return ToolResult.from_text("\n".join(keys), details={"keys": keys})
            if action == "remove":
                key = _text(arguments, "key", action)
                if await self.state.remove(key):
                    return ToolResult.from_text(f"Removed {key!r}.")
                raise ToolError(f"shared_state remove: no value under {key!r}")
        except SharedStateError as error:
            raise ToolError(f"shared_state {action}: {error}") from None
        raise ToolError(
            f"shared_state: unknown action {action!r}; use one of get, set, list, remove"
        )

    async def _get(self, arguments: dict[str, Any]) -> ToolResult:
        key = _text(arguments, "key", "get")
        offset = _count(arguments, "offset", 0, minimum=0)
        max_chars = _count(arguments, "max_chars", DEFAULT_READ_CHARS, minimum=1)
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


def _text(arguments: dict[str, Any], name: str, action: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise ToolError(f"shared_state {action} needs '{name}' (a string)")
    return value


def _count(arguments: dict[str, Any], name: str, default: int, *, minimum: int) -> int:
    value = arguments.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ToolError(f"shared_state get: '{name}' must be an integer >= {minimum}")
    return value
