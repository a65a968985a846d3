"""Lenient reading of a ``tools/call`` result, before the SDK validates it.

The SDK validates every result against the negotiated schema, and one content block of
a type it does not model (a newer revision's, or a server's own) would fail the whole
call. Here each block that is not a well-formed text, image, audio, resource link or
embedded resource becomes a text block instead: a text resource's own text, else the
block as JSON with any ``data`` / ``blob`` over 1 KiB replaced by its size. Each such
type is warned about once.
"""

from __future__ import annotations

import json
from typing import Any, Final, cast

from yoagent.core.support import warn_once

from ._log import logger

_BIG_FIELD: Final = 1024
_BINARY_FIELDS: Final = ("data", "blob")


def _str(block: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(block.get(key), str) for key in keys)


def _resource_ok(resource: object) -> bool:
    if not isinstance(resource, dict):
        return False
    fields = cast(dict[str, Any], resource)
    return _str(fields, "uri") and (_str(fields, "text") or _str(fields, "blob"))


def _well_formed(block: dict[str, Any]) -> bool:
    match block.get("type"):
        case "text":
            return _str(block, "text")
        case "image" | "audio":
            return _str(block, "data", "mimeType")
        case "resource_link":
            return _str(block, "uri", "name")
        case "resource":
            return _resource_ok(block.get("resource"))
        case _:
            return False


def _shrunk(value: Any) -> Any:
    if isinstance(value, dict):
        fields = cast(dict[str, Any], value)
        return {
            key: (
                f"<{len(item)} characters>"
                if key in _BINARY_FIELDS and isinstance(item, str) and len(item) > _BIG_FIELD
                else _shrunk(item)
            )
            for key, item in fields.items()
        }
    if isinstance(value, list):
        return [_shrunk(item) for item in cast(list[Any], value)]
    return value


def _as_text(block: object) -> dict[str, Any]:
    if isinstance(block, dict):
        fields = cast(dict[str, Any], block)
        kind = str(fields.get("type", "<no type>"))
        resource = fields.get("resource")
        resource_text = (
            cast(dict[str, Any], resource).get("text") if isinstance(resource, dict) else None
        )
        if isinstance(resource_text, str):
            text = resource_text
        else:
            text = json.dumps(_shrunk(fields), ensure_ascii=False)
    else:
        kind = type(block).__name__
        text = json.dumps(_shrunk(block), ensure_ascii=False)
    warn_once(
        logger,
        f"content-type:{kind}",
        "an MCP tool result held a %r block this client does not model; passed on as text",
        kind,
    )
    return {"type": "text", "text": text}


def lenient_tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (a ``tools/call`` result) with every block the SDK could refuse made text."""
    content = result.get("content")
    if content is None:
        return result
    blocks: list[Any] = cast(list[Any], content) if isinstance(content, list) else [content]
    fixed: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, dict) and _well_formed(cast(dict[str, Any], block)):
            fixed.append(cast(dict[str, Any], block))
        else:
            fixed.append(_as_text(cast(object, block)))
    out = dict(result)
    out["content"] = fixed
    structured = out.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        out.pop("structuredContent")
        fixed.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    if "isError" in out and not isinstance(out["isError"], bool):
        out["isError"] = bool(out["isError"])
    return out
