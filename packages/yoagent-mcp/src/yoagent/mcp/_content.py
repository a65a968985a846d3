"""An MCP tool result as a yoagent ToolResult: what the model reads, and what the app keeps.

Text and images pass through; an embedded text resource gives its text, an embedded
image blob an image; audio, other blobs and resource links become a short text saying
what was there. Structured content is kept in ``details`` and, when the server sent no
content blocks, is what the model reads (as JSON).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from yoagent.core import ImageContent, TextContent, ToolResult

UserContent = TextContent | ImageContent

if TYPE_CHECKING:
    from mcp_types import CallToolResult, ContentBlock


def _size(data: str) -> str:
    approx = len(data.rstrip("=")) * 3 // 4  # base64, padding not counted
    return f"{approx} bytes" if approx < 10_000 else f"{approx // 1024} KiB"


def _block(block: ContentBlock) -> UserContent:
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ResourceLink,
        TextResourceContents,
    )
    from mcp_types import (
        ImageContent as McpImage,
    )
    from mcp_types import (
        TextContent as McpText,
    )

    match block:
        case McpText():
            return TextContent(text=block.text)
        case McpImage():
            return ImageContent(data=block.data, mime_type=block.mime_type)
        case AudioContent():
            return TextContent(text=f"[audio: {block.mime_type}, {_size(block.data)}]")
        case ResourceLink():
            about = f" ({block.description})" if block.description else ""
            return TextContent(text=f"[resource link: {block.name} <{block.uri}>{about}]")
        case EmbeddedResource(resource=TextResourceContents() as resource):
            return TextContent(text=resource.text)
        case EmbeddedResource(resource=BlobResourceContents() as resource):
            mime = resource.mime_type or "application/octet-stream"
            if mime.startswith("image/"):
                return ImageContent(data=resource.blob, mime_type=mime)
            return TextContent(text=f"[resource <{resource.uri}>: {mime}, {_size(resource.blob)}]")
        case _:  # pragma: no cover - the SDK's union is exhaustive
            return TextContent(text=json.dumps(block.model_dump(mode="json", by_alias=True)))


def result_details(result: CallToolResult) -> dict[str, Any] | None:
    """What the application keeps beside the content: the structured content, if any."""
    if result.structured_content is None:
        return None
    return {"structured_content": result.structured_content}


def converted_content(result: CallToolResult) -> list[UserContent]:
    """The result's content blocks for the model (its structured content when it has none)."""
    content: list[UserContent] = [_block(block) for block in result.content]
    if not content and result.structured_content is not None:
        content = [TextContent(text=json.dumps(result.structured_content, ensure_ascii=False))]
    return content


def to_tool_result(result: CallToolResult) -> ToolResult:
    """``result`` as a :class:`ToolResult` (the caller raises for ``is_error`` results)."""
    return ToolResult(content=converted_content(result), details=result_details(result))


def error_text(result: CallToolResult) -> str:
    """An ``is_error`` result's text for a ToolError: its text blocks, images named."""
    parts = [
        block.text if isinstance(block, TextContent) else f"[image: {block.mime_type}]"
        for block in converted_content(result)
    ]
    return "\n".join(parts) or "the tool reported an error without saying what"
